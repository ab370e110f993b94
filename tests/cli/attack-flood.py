#!/usr/bin/env python3
"""Floods a recce agent's TLS port and reports what the agent did with
each connection: `attack-flood.py PORT TLSDIR KIND N READY`, KIND one of
  slow   N TCP connections that never finish a TLS handshake, sending one
         byte every 2 s (a slowloris);
  hello  N TLS connections with a good client certificate that send Hello
         and nothing more;
  big    N of those that then start a 16 MiB frame and send 1 MiB of it.
Touches READY once every connection is open, then waits (at most 45 s)
until the agent has closed them, and prints "closed K of N"."""
import os
import select
import socket
import ssl
import struct
import sys
import time

port, tls, kind, n, ready = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
HELLO = b"\x12\x07\x08\x01\x12\x03run"  # a Hello, id 0

conns = []
for i in range(n):
    raw = socket.create_connection(("127.0.0.1", port), timeout=20)
    if kind == "slow":
        raw.sendall(b"\x16")
        conns.append(raw)
        continue
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(os.path.join(tls, "ca.pem"))
    ctx.load_cert_chain(os.path.join(tls, "client.pem"), os.path.join(tls, "client.key"))
    ctx.check_hostname = False
    s = ctx.wrap_socket(raw)
    try:
        s.sendall(struct.pack(">I", len(HELLO)) + HELLO)
        if kind == "big":
            s.sendall(struct.pack(">I", 16 << 20) + b"\0" * (1 << 20))
    except (ConnectionError, ssl.SSLError, OSError):
        pass  # closed already: the loop below finds it so
    conns.append(s)
open(ready, "w").close()

open_ = set(range(n))
end = time.monotonic() + 45
last_byte = time.monotonic()
while open_ and time.monotonic() < end:
    socks = [conns[i] for i in open_]
    r, _, _ = select.select(socks, [], [], 0.5)
    for s in r:
        i = conns.index(s)
        try:
            data = s.recv(65536)
        except (ConnectionError, ssl.SSLError, OSError):
            data = b""
        if not data:
            open_.discard(i)
    if kind == "slow" and time.monotonic() - last_byte >= 2:
        last_byte = time.monotonic()
        for i in list(open_):
            try:
                conns[i].sendall(b"\x03")
            except OSError:
                open_.discard(i)
print("closed %d of %d" % (n - len(open_), n))
