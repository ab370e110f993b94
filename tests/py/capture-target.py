"""A Python program for `recce capture -p PID 'py:handle'`: says
"capture-target: ready", waits for SIGUSR1, then calls handle(i) for i
in 0..4 on its main thread and exits. Each handle(i) spends a quarter of
its CPU time in parse() and three quarters in compute(): the same loop,
run once and three times, in rounds, so that a machine that is slower
for a while (a busy neighbour) slows both alike.
"""
import os
import signal


ROUNDS = 20


def spin():
    s = 0
    for k in range(300000 // ROUNDS):
        s += k
    return s


def parse(i):
    return spin()


def compute(i):
    return spin() + spin() + spin()


def handle(i):  # mark: handle
    s = 0
    for r in range(ROUNDS):
        s += parse(i) + compute(i)
    return s


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("capture-target: ready", flush=True)
signal.sigwait({signal.SIGUSR1})
for i in range(5):
    handle(i)
os._exit(0)
