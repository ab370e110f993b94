"""A Python program whose threads wait where a test knows, for `recce
dump`: each line a frame is shown at is marked with a comment the test
looks for.

    dump-target.py sleep   the main thread sleeps in time.sleep under
                           mitte_眠() and schläfer(); a thread named
                           "spinner-ü" spins in spin(), called by
                           Worker.run() from outer()
    dump-target.py gil     a thread sleeps in libc's sleep through
                           ctypes.PyDLL, which keeps the GIL: the main
                           thread, which wants it, is stuck

Prints "ready" once set up (in gil mode before the thread starts, which
prints "holding" just before it sleeps), "spinning" from spin(), then
runs until killed.
"""
import ctypes
import sys
import threading
import time


# Names CPython keeps one byte a character (Latin-1) and two (here CJK).
def schläfer():
    time.sleep(100000)  # mark: sleeper


def mitte_眠():
    schläfer()  # mark: middle


def spin(n):
    print("spinning", flush=True)
    while True:
        n += 1


class Worker:
    def run(self):
        spin(0)  # mark: run


def outer():
    Worker().run()  # mark: outer


def hog():
    # libc through PyDLL keeps the GIL: print() would let it go.
    libc = ctypes.PyDLL(None)
    libc.write(1, b"holding\n", 8)
    libc.sleep(100000)  # mark: hog


if sys.argv[1] == "sleep":
    threading.Thread(target=outer, name="spinner-ü", daemon=True).start()
    print("ready", flush=True)
    mitte_眠()  # mark: module
else:
    # The main thread waits for the GIL without waking every 5 ms.
    sys.setswitchinterval(1000)
    print("ready", flush=True)
    threading.Thread(target=hog, daemon=True).start()
    while True:
        pass
