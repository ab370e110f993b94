"""A property test of librecce's rings against a model: random programs
write events through ctypes, and what `recce events --postmortem` shows
must be exactly what the model says: per thread, the last events it wrote,
in order, each once; and every event not shown counted in the figures
recce prints (overwritten, no free ring, ring taken over by a new thread).

    events-model.py RECCE LIBRECCE CASES SEED

Runs CASES random cases from SEED; prints one line per failing case and
"model: N cases, M events, F failures"; exits 1 if any failed.

A case: 1-10 threads, started one after another or all at once, each
writing 0-300 events whose values count 0, 1, ... ; rings of 16-256
events (RECCE_RING_EVENTS), 1-6 of them (RECCE_THREADS); the program ends
by a clean exit (RECCE_KEEP=1 keeps its file) or a SIGKILL.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile

WRITER = r'''
import ctypes, os, signal, sys, threading
lib = ctypes.CDLL(sys.argv[1])
counts = [int(c) for c in sys.argv[2].split(",")]
together = sys.argv[3] == "1"
kill = sys.argv[4] == "1"
lib.recce_event_value.argtypes = [ctypes.c_char_p, ctypes.c_int64]
def work(t):
    for i in range(counts[t]):
        lib.recce_event_value(b"ev", i)
ths = [threading.Thread(target=work, args=(t,)) for t in range(len(counts))]
if together:
    for th in ths: th.start()
    for th in ths: th.join()
else:
    for th in ths:
        th.start()
        th.join()
sys.stdout.flush()
if kill:
    os.kill(os.getpid(), signal.SIGKILL)
'''


def run_case(recce, lib, rnd, tmp):
    counts = [rnd.randrange(0, 301) for _ in range(rnd.randrange(1, 11))]
    together = rnd.random() < 0.5
    kill = rnd.random() < 0.5
    env = dict(os.environ, RECCE_KEEP="1", RECCE_EVENTS_DIR=tmp,
               RECCE_RING_EVENTS=str(rnd.choice([16, 32, 64, 128, 256])),
               RECCE_THREADS=str(rnd.randrange(1, 7)))
    p = subprocess.Popen([sys.executable, "-c", WRITER, lib, ",".join(map(str, counts)),
                          "1" if together else "0", "1" if kill else "0"], env=env)
    p.wait()
    desc = "threads %s together=%d kill=%d rings=%s x %s" % (
        counts, together, kill, env["RECCE_THREADS"], env["RECCE_RING_EVENTS"])
    path = os.path.join(tmp, "recce-%d.events" % p.pid)
    total = sum(counts)
    if not os.path.exists(path):
        return (None if total == 0 else desc + ": no event file"), total
    r = subprocess.run([recce, "events", "--postmortem", path, "--last", "0", "--format", "json"],
                       env=dict(os.environ, RECCE_EVENTS_DIR=tmp),
                       capture_output=True, text=True)
    os.unlink(path)
    if r.returncode != 0:
        return desc + ": recce exit %d: %s" % (r.returncode, r.stderr.strip()), total
    per = {}
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if e.get("name") == "ev":
            per.setdefault(e["tid"], []).append(e["value"])
    counted = 0
    for m in re.finditer(r"thread \d+ \([^)]*\): (\d+) events lost", r.stderr):
        counted += int(m.group(1))
    for pat in (r"(\d+) events dropped by threads that found no free ring",
                r"(\d+) events of threads that had ended are gone from the file"):
        for m in re.finditer(pat, r.stderr):
            counted += int(m.group(1))
    shown = sum(len(v) for v in per.values())
    problems = []
    for tid, vals in per.items():
        # A thread's events: a run of consecutive values, each once, in
        # order, ending at one of the threads' last values.
        if vals != list(range(vals[0], vals[0] + len(vals))):
            problems.append("thread %s: values out of order or repeated" % tid)
        elif vals[-1] + 1 not in counts:
            problems.append("thread %s: ends at %d, no thread's last" % (tid, vals[-1]))
    if shown + counted != total:
        problems.append("%d written, %d shown + %d counted" % (total, shown, counted))
    return (desc + ": " + "; ".join(problems) if problems else None), total


def main():
    recce, lib, cases, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    failures = events = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(cases):
            bad, n = run_case(recce, lib, rnd, tmp)
            events += n
            if bad:
                failures += 1
                print("case %d (seed %d): %s" % (i, seed, bad))
    print("model: %d cases, %d events, %d failures" % (cases, events, failures))
    sys.exit(1 if failures else 0)


main()
