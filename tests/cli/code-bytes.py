#!/usr/bin/env python3
"""code-bytes.py PID: compares every executable file mapping of process PID
with its file, byte for byte, through /proc/PID/mem. Prints one line per
mapping that differs (address, file, first differing offset) and exits 1
if any does; exits 0 when all code equals its files."""
import sys

pid = int(sys.argv[1])
bad = 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/"):
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        off, path = int(parts[2], 16), parts[5].strip()
        mem.seek(start)
        live = mem.read(end - start)
        with open(path, "rb") as f:
            f.seek(off)
            disk = f.read(end - start)
        disk += b"\0" * (len(live) - len(disk))
        if live != disk:
            first = next(i for i in range(len(live)) if live[i] != disk[i])
            print(f"{start + first:#x} {path}+{off + first:#x} differs")
            bad = 1
sys.exit(bad)
