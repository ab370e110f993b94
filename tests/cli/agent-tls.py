#!/usr/bin/env python3
"""Knocks on a recce agent's TLS port the wrong way and says whether the
agent served it: `agent-tls.py PORT KIND CA`, KIND one of nocert (TLS
without a client certificate), plain (the protocol's Hello in clear
text) or garbage. Prints "served" if the agent's Hello (which names its
capabilities) came back, else "refused"."""
import socket
import ssl
import struct
import sys

port, kind, ca = int(sys.argv[1]), sys.argv[2], sys.argv[3]
raw = socket.create_connection(("127.0.0.1", port), timeout=12)
data = b""
try:
    if kind == "nocert":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(ca)
        ctx.check_hostname = False
        s = ctx.wrap_socket(raw)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    else:
        if kind == "plain":
            body = b"\x12\x07\x08\x01\x12\x03run"  # a Hello, id 0
            raw.sendall(struct.pack(">I", len(body)) + body)
        else:
            raw.sendall(b"\x00\x00\x00\x05hello" + b"\xff" * 64)
        while True:
            chunk = raw.recv(65536)
            if not chunk:
                break
            data += chunk
except (ssl.SSLError, OSError):
    pass
print("served" if b"cancel" in data else "refused")
