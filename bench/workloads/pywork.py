"""The python workload: CPU-bound Python code (calls, a dict, string
formatting), a fixed amount of work, for the target slowdown of recording
a CPython. Writes the stats line of bench/workloads/common.h (wall and CPU
time, the instant the work ended) to $BENCH_STATS when it ends.

    pywork.py UNITS | pywork.py --calibrate SECONDS
"""
import os
import resource
import sys
import time


def leaf(i, d):
    d[i % 97] = d.get(i % 97, 0) + i
    return len("%d:%d" % (i, d[i % 97]))


def middle(n, d):
    s = 0
    for i in range(n):
        s += leaf(i, d)
    return s


def unit():
    return middle(2000, {})


def calibrate(seconds):
    n = 1
    while True:
        t0 = time.thread_time_ns()
        for _ in range(n):
            unit()
        t = time.thread_time_ns() - t0
        if t >= 300000000:
            return int(seconds * 1e9 / (t / n)) + 1
        n *= 2


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--calibrate":
        print(calibrate(float(sys.argv[2])))
        return
    start = time.monotonic_ns()
    for _ in range(int(sys.argv[1])):
        unit()
    end = time.monotonic_ns()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    line = "wall_s=%.6f\tcpu_s=%.6f\tuser_s=%.6f\tsys_s=%.6f\tend_ns=%d\n" % (
        (end - start) / 1e9, ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime, end)
    path = os.environ.get("BENCH_STATS")
    if path:
        with open(path, "a") as f:
            f.write(line)
    else:
        sys.stderr.write(line)


main()
