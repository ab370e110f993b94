"""Threads that write librecce events one after another, through ctypes,
for the test that every event is shown or counted when there are more
threads over a run than rings.

    ctypes-threads.py LIBRECCE THREADS EVENTS

Starts THREADS threads in turn (each joined before the next), thread T
writing EVENTS events named "t-T", then prints "done" and exits.
"""
import ctypes
import sys
import threading

lib = ctypes.CDLL(sys.argv[1])
threads, events = int(sys.argv[2]), int(sys.argv[3])


def work(t):
    name = ("t-%d" % t).encode()
    for _ in range(events):
        lib.recce_event(name)


for t in range(threads):
    th = threading.Thread(target=work, args=(t,))
    th.start()
    th.join()
print("done", flush=True)
