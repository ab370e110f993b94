"""A Python program whose threads run where a test knows, for `recce
record`: the main thread spins in spin(), called by sorted() (C code,
so a second C call of the interpreter runs spin) as the key function of
Worker.run(), called from outer(); a thread hashes in C (OpenSSL, the
GIL let go) in a list comprehension of hasher() (on 3.11 a function of
its own, made and freed at each run, named after the module it was made
in); a thread sleeps 2 ms at a time in napper(); a thread waits in
waiter() for an event that never comes, off its CPU from start to end.
Each line a frame is shown at is marked with a comment the test looks
for.

The three threads are named "napper-ü", "hasher-ü" and "waiter-ü"
(threading.Thread's name), the main thread "main-ü" (renamed from
threading's "MainThread", so that a name shown is read, not assumed).
Prints "napper TID", "hasher TID" and "waiter TID" as those threads
start, "ready" once all run, then runs until killed.
"""
import hashlib
import threading
import time


def spin(n):
    # One line: the jump back of a loop on two is on the `while` line.
    while True: n ^= 1  # mark: spin


class Worker:
    def run(self):
        sorted([0], key=spin)  # mark: run


def outer():
    Worker().run()  # mark: outer


def hasher(started):
    data = b"x" * 1000000
    print("hasher", threading.get_native_id(), flush=True)
    started.set()
    while True:
        [hashlib.sha256(data).digest() for _ in range(4)]  # mark: hash


def napper(started):
    print("napper", threading.get_native_id(), flush=True)
    started.set()
    while True:
        time.sleep(0.002)  # mark: nap


threading.main_thread().name = "main-ü"
def waiter(started):
    print("waiter", threading.get_native_id(), flush=True)
    never = threading.Event()
    started.set()
    never.wait()  # mark: wait


for target in (napper, hasher, waiter):
    started = threading.Event()
    threading.Thread(target=target, name=target.__name__ + "-ü", args=(started,), daemon=True).start()
    started.wait()
print("ready", flush=True)
outer()  # mark: module
