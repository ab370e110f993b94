#!/usr/bin/env python3
"""code-bytes.py PID [--padding N]: compares every executable file mapping
of process PID (JIT code in a memfd aside) with its file, byte for byte, through /proc/PID/mem. Prints
one line per run of differing bytes (address, file, offset, length) and
exits 1 if any differs; exits 0 when all code equals its files. With
--padding N, one run of at most N bytes is allowed where the file holds
only zeros (the padding after a segment, where recce's call stub stays
when recce was killed during a call). A mapping that goes away while it
is read (a library the process unloads) is left out."""
import sys


def still_mapped(pid, start, path):
    with open(f"/proc/{pid}/maps") as maps:
        return any(l.split("-", 1)[0] == f"{start:x}" and l.rstrip().endswith(path) for l in maps)


pid = int(sys.argv[1])
padding = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--padding" else -1
runs = []
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        parts = line.split(maxsplit=5)
        # Files only: not JIT code in a memfd (BEAM's), nor a deleted file.
        if (len(parts) < 6 or "x" not in parts[1] or not parts[5].startswith("/")
                or parts[5].startswith("/memfd:") or parts[5].rstrip().endswith("(deleted)")):
            continue
        start, end = (int(x, 16) for x in parts[0].split("-"))
        off, path = int(parts[2], 16), parts[5].strip()
        mem.seek(start)
        try:
            live = mem.read(end - start)
        except OSError:
            if still_mapped(pid, start, path):
                raise
            continue
        with open(path, "rb") as f:
            f.seek(off)
            disk = f.read(end - start)
        disk += b"\0" * (len(live) - len(disk))
        i = 0
        while i < len(live):
            # Equal pages compared whole (a byte at a time, Python takes
            # seconds over node's 50 MB of code).
            if i % 4096 == 0 and live[i:i + 4096] == disk[i:i + 4096]:
                i += 4096
                continue
            if live[i] == disk[i]:
                i += 1
                continue
            # A run ends after 16 equal bytes: code holds zeros too.
            j, same = i, 0
            while j < len(live) and same < 16:
                same = same + 1 if live[j] == disk[j] else 0
                j += 1
            j -= same
            runs.append((start + i, path, off + i, j - i, not any(disk[i:j])))
            i = j
allowed = len(runs) == 1 and runs[0][4] and runs[0][3] <= padding
for addr, path, foff, n, zeros in runs:
    print(f"{addr:#x} {path}+{foff:#x}: {n} bytes differ{' (padding)' if zeros else ''}")
sys.exit(0 if not runs or allowed else 1)
