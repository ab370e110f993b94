"""A property test of librecce's rings against a model: random programs
write events through ctypes, and what `recce events` shows must be
exactly what the model says: every event shown once, in its thread's
order, or counted in the figures recce prints (overwritten, no free ring,
ring taken over by a new thread). Read post mortem (`--postmortem`, the
last events of each thread: one run of them), or live (`-p PID --follow`
attached at a random moment while the program writes: runs with gaps,
each gap counted), until the program exits.

    events-model.py RECCE LIBRECCE CASES SEED

Runs CASES random cases from SEED; prints one line per failing case and
"model: N cases, M events, F failures"; exits 1 if any failed.

A case: 1-10 threads, started one after another or all at once, each
writing 0-300 events whose values count 0, 1, ... : plain events; or
events and counters, every fifth inside a span; or each under a name of
its own, more than the file has room for; rings of 16-256 events
(RECCE_RING_EVENTS), 1-6 of them (RECCE_THREADS); a child forked at the
end writing 0-300 events of its own, into its own file, in a third of
the cases; the program ends by a clean exit (RECCE_KEEP=1 keeps its
file) or a SIGKILL. Live, each
thread also pauses a millisecond now and then, so that the reader comes
in while it writes, and the program waits, before it ends, for the
harness to see the reader open its file.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

WRITER = r'''
import ctypes, os, signal, sys, threading
lib = ctypes.CDLL(sys.argv[1])
counts = [int(c) for c in sys.argv[2].split(",")]
together = sys.argv[3] == "1"
kill = sys.argv[4] == "1"
live = sys.argv[5] == "1"
style = sys.argv[6]
child = int(sys.argv[7])
lib.recce_event_value.argtypes = [ctypes.c_char_p, ctypes.c_int64]
lib.recce_counter.argtypes = [ctypes.c_char_p, ctypes.c_int64]
if live:
    import time
    lib.recce_event(b"start")  # the file, for the reader to find
    print("ready", flush=True)
def one(t, i):
    if style == "names":
        lib.recce_event_value(b"n-%d-%d-%s" % (t, i, b"x" * 40), i)
    elif style == "mixed" and i % 5 == 4:
        lib.recce_span_begin(b"sp")
        lib.recce_counter(b"ct", i)
        lib.recce_span_end(b"sp")
    elif style == "mixed" and i % 2:
        lib.recce_counter(b"ct", i)
    else:
        lib.recce_event_value(b"ev", i)
def work(t):
    for i in range(counts[t]):
        one(t, i)
        if live and i % 16 == 15:
            time.sleep(0.004)
ths = [threading.Thread(target=work, args=(t,)) for t in range(len(counts))]
if together:
    for th in ths: th.start()
    for th in ths: th.join()
else:
    for th in ths:
        th.start()
        th.join()
if child >= 0:
    pid = os.fork()
    if pid == 0:
        for i in range(child):
            lib.recce_event_value(b"ev", i)
        os._exit(0)
    os.waitpid(pid, 0)
    print("child %d" % pid)
sys.stdout.flush()
if live:
    sys.stdin.readline()  # the reader has the file open
if kill:
    os.kill(os.getpid(), signal.SIGKILL)
'''


def opened(reader, path):
    """Whether process reader has path open."""
    try:
        fds = os.listdir("/proc/%d/fd" % reader)
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink("/proc/%d/fd/%s" % (reader, fd)) == path:
                return True
        except OSError:
            pass
    return False


def read_live(recce, p, path, delay, tmp):
    """recce events -p --follow, started delay seconds after the program
    is ready; the program is let end once the reader has its file."""
    p.stdout.readline()
    time.sleep(delay)
    r = subprocess.Popen([recce, "events", "-p", str(p.pid), "--follow", "--format", "json"],
                         env=dict(os.environ, RECCE_EVENTS_DIR=tmp), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    while r.poll() is None and not opened(r.pid, path):
        time.sleep(0.001)
    p.stdin.write("go\n")
    p.stdin.flush()
    out, err = r.communicate()
    p.wait()
    return subprocess.CompletedProcess(r.args, r.returncode, out, err)


def records(style, n):
    """Records a thread writing n events in style writes."""
    return n + (2 * len([i for i in range(n) if i % 5 == 4]) if style == "mixed" else 0)


def check(desc, r, counts, style, live):
    """What recce read (r), against the model; a problem, or None."""
    if r.returncode != 0:
        return desc + ": recce exit %d: %s" % (r.returncode, r.stderr.strip())
    total = sum(records(style, n) for n in counts)
    per = {}
    shown = 0
    for line in r.stdout.splitlines():
        e = json.loads(line)
        if e.get("name") == "start":
            continue
        shown += 1
        if e["kind"] in ("event", "counter"):
            per.setdefault(e["tid"], []).append(e["value"])
    counted = 0
    for m in re.finditer(r"thread \d+ \([^)]*\): (\d+) events lost", r.stderr):
        counted += int(m.group(1))
    for pat in (r"(\d+) events dropped by threads that found no free ring",
                r"(\d+) events of threads that had ended are gone from the file",
                r"(\d+) events dropped: the file had no room for more names"):
        for m in re.finditer(pat, r.stderr):
            counted += int(m.group(1))
    problems = []
    for tid, vals in per.items():
        # A thread's events: a run of consecutive values, each once,
        # ending at one of the threads' last values (unless names ran
        # out); live, values in order, each once, with gaps (before,
        # between and after: a thread whose ring a new one took over
        # loses its last ones).
        if live and any(b <= a for a, b in zip(vals, vals[1:])):
            problems.append("thread %s: values out of order or repeated" % tid)
        elif not live and vals != list(range(vals[0], vals[0] + len(vals))):
            problems.append("thread %s: values out of order or repeated" % tid)
        elif not live and style != "names" and vals[-1] + 1 not in counts:
            problems.append("thread %s: ends at %d, no thread's last" % (tid, vals[-1]))
    if shown + counted != total:
        problems.append("%d written, %d shown + %d counted" % (total, shown, counted))
    return desc + ": " + "; ".join(problems) if problems else None


def postmortem(recce, path, tmp):
    r = subprocess.run([recce, "events", "--postmortem", path, "--last", "0", "--format", "json"],
                       env=dict(os.environ, RECCE_EVENTS_DIR=tmp), capture_output=True, text=True)
    os.unlink(path)
    return r


def run_case(recce, lib, rnd, tmp):
    counts = [rnd.randrange(0, 301) for _ in range(rnd.randrange(1, 11))]
    together = rnd.random() < 0.5
    kill = rnd.random() < 0.5
    live = rnd.random() < 0.5
    delay = rnd.random() * 0.05
    style = rnd.choice(["plain", "mixed", "names"])
    child = rnd.randrange(0, 301) if rnd.random() < 0.33 else -1
    env = dict(os.environ, RECCE_KEEP="1", RECCE_EVENTS_DIR=tmp,
               RECCE_RING_EVENTS=str(rnd.choice([16, 32, 64, 128, 256])),
               RECCE_THREADS=str(rnd.randrange(1, 7)))
    p = subprocess.Popen([sys.executable, "-c", WRITER, lib, ",".join(map(str, counts)),
                          "1" if together else "0", "1" if kill else "0", "1" if live else "0",
                          style, str(child)],
                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    desc = "threads %s %s together=%d kill=%d rings=%s x %s child=%d" % (
        counts, style, together, kill, env["RECCE_THREADS"], env["RECCE_RING_EVENTS"], child)
    if live:
        desc += " live after %.3f s" % delay
    path = os.path.join(tmp, "recce-%d.events" % p.pid)
    total = sum(records(style, n) for n in counts) + max(child, 0)
    if live:
        r = read_live(recce, p, path, delay, tmp)
    else:
        p.wait()
    rest = p.stdout.read()
    bad = []
    if live:
        bad.append(check(desc, r, counts, style, live))
    elif os.path.exists(path):
        bad.append(check(desc, postmortem(recce, path, tmp), counts, style, live))
    elif sum(counts):
        bad.append(desc + ": no event file")
    if os.path.exists(path):
        os.unlink(path)
    # The child's events, in its own file.
    m = re.search(r"child (\d+)", rest)
    cpath = os.path.join(tmp, "recce-%s.events" % (m.group(1) if m else "none"))
    if child > 0 and os.path.exists(cpath):
        bad.append(check(desc + " (its child)", postmortem(recce, cpath, tmp), [child],
                         "plain", False))
    elif child > 0:
        bad.append(desc + ": no event file of the child")
    bad = [b for b in bad if b]
    return ("; ".join(bad) if bad else None), total


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
