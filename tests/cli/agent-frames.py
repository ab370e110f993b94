#!/usr/bin/env python3
"""Sends one kind of bad input to a recce agent's socket and reports whether
the agent closed the connection: `agent-frames.py SOCKET KIND`, KIND one of
garbage, oversized, truncated, nohello. Prints "closed" or "open"."""
import socket
import struct
import sys

path, kind = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(12)
s.connect(path)
hello = s.recv(65536)  # the agent's Hello frame
if kind == "garbage":
    s.sendall(b"\xff" * 4 + b"GET / HTTP/1.0\r\n\r\n" * 4)
elif kind == "oversized":
    s.sendall(struct.pack(">I", 0x7FFFFFFF) + b"\x08\x01")
elif kind == "truncated":
    s.sendall(struct.pack(">I", 100) + b"\x08\x01\x12")
    s.shutdown(socket.SHUT_WR)
elif kind == "nohello":
    # A well-formed frame that is not a Hello: an Exit (field 6).
    body = b"\x08\x01" + b"\x32\x02\x08\x05"
    s.sendall(struct.pack(">I", len(body)) + body)
try:
    data = s.recv(65536)
    print("closed" if data == b"" else "open")
except socket.timeout:
    print("open")
