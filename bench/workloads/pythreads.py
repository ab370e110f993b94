"""The many-threads Python workload, for the time `recce dump` takes on a
CPython with 100 threads: 100 threads each waiting a few calls deep on
one Event, the main thread waiting for them. Prints "ready" once all
wait, then runs until killed.

    pythreads.py [THREADS]
"""
import sys
import threading


def wait_here(ev, depth):
    if depth:
        return wait_here(ev, depth - 1)
    ev.wait()


def worker(ev, started):
    started.release()
    wait_here(ev, 5)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    ev = threading.Event()
    started = threading.Semaphore(0)
    for i in range(n - 1):
        threading.Thread(target=worker, args=(ev, started), name="w%d" % i, daemon=True).start()
    for _ in range(n - 1):
        started.acquire()
    print("ready", flush=True)
    wait_here(ev, 5)


main()
