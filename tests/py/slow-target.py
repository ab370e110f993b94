"""A Python program with two slow calls among fast ones, for `recce trace
'py:handle' --slow DUR --profile FILE`: says "slow-target: ready", waits
for SIGUSR1, then calls handle(i) for i in 0..9 on its main thread and
exits. Each handle(i) adds up a range; handle(3) and handle(7) also call
wait_db(), which sleeps 0.3 s (at least: time.sleep sleeps again when
woken early).
"""
import os
import signal
import time


def wait_db():
    time.sleep(0.3)


def handle(i):
    s = sum(range(2000))
    if i in (3, 7):
        wait_db()
    return s + i


signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("slow-target: ready", flush=True)
signal.sigwait({signal.SIGUSR1})
for i in range(10):
    handle(i)
os._exit(0)
