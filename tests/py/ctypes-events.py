"""A Python program that writes librecce events through ctypes, as any
language without a C compiler at hand would: names built at run time,
in buffers the interpreter reuses.

    ctypes-events.py LIBRECCE N GO_FILE END_FILE

Loads LIBRECCE, prints "ready", waits until GO_FILE exists (a reader may
start before the first event), writes N events named "kind-I%3" and
"done", then waits until END_FILE exists and exits.
"""
import ctypes
import os
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2])
print("ready", flush=True)
while not os.path.exists(sys.argv[3]):
    time.sleep(0.001)
for i in range(n):
    lib.recce_event(("kind-%d" % (i % 3)).encode())
lib.recce_event(b"done")
while not os.path.exists(sys.argv[4]):
    time.sleep(0.001)
