"""A Python program whose calls a test counts, for `recce trace 'py:...'`:
says "trace-target: ready", waits for SIGUSR1, then makes exactly these
calls on its main thread and exits: handle(i) for i in 0..19, each
calling leaf(i); catcher(), which calls boom(), which raises; gen(3)
run to its end (an entry at its start and at each resume, a return at
each yield and at its end); rec(70), 71 calls nested; zlib.compress()
once (C code: no Python call); and gc.collect(1); then exits at once, with no collection at its exit. Each
line a call is shown at is marked with a comment the test looks for.
With the argument "hold", it waits for a second SIGUSR1 before it exits
(its code objects still there to be read).
"""
import gc
import os
import signal
import sys
import zlib


def leaf(n):  # mark: leaf
    return n * 2


def handle(i):  # mark: handle
    return leaf(i) + 1  # mark: calls-leaf


def boom():  # mark: boom
    raise ValueError("boom")


def catcher():  # mark: catcher
    try:
        boom()
    except ValueError:
        return -1


def gen(k):  # mark: gen
    for i in range(k):
        yield i  # mark: yield


def rec(n):  # mark: rec
    return 0 if n == 0 else 1 + rec(n - 1)


def burst():
    for i in range(20):
        handle(i)  # mark: calls-handle
    catcher()
    list(gen(3))  # mark: calls-gen
    rec(70)
    zlib.compress(b"recce")  # mark: calls-compress
    gc.collect(1)


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("trace-target: ready", flush=True)
signal.sigwait({signal.SIGUSR1})
burst()  # mark: calls-burst
if sys.argv[1:] == ["hold"]:
    signal.sigwait({signal.SIGUSR1})
os._exit(0)  # no collections at the exit
