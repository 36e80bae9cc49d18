#!/usr/bin/env python3
"""Phase 2 of bench/serve.sh: exactly COUNT POSTs of one wheel to /v1/check over CONNECTIONS
keep-alive connections (http.client, one thread each), bounded by BOUND seconds in all.
Every answer must be 200 with the expected verdict. Prints one line,
"RESULT requests=N seconds=S rps=R p50_ms=.. p90_ms=.. p99_ms=.. max_ms=.. errors=E".

Usage: serve_count.py PORT WHEEL VERDICT COUNT CONNECTIONS BOUND
SPDX-License-Identifier: GPL-3.0-or-later
"""
import http.client
import os
import sys
import threading
import time
import urllib.parse

port, wheel, verdict = int(sys.argv[1]), sys.argv[2], sys.argv[3]
count, conns, bound = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
with open(wheel, "rb") as f:
    body = f.read()
path = "/v1/check?" + urllib.parse.urlencode({"filename": os.path.basename(wheel)})
want = ('"verdict": "%s"' % verdict).encode()
lock = threading.Lock()
left = [count]
lat, errors = [], []
deadline = time.monotonic() + bound


def worker():
    c = None
    while time.monotonic() < deadline:
        with lock:
            if left[0] == 0:
                break
            left[0] -= 1
        t0 = time.monotonic()
        try:
            if c is None:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("POST", path, body=body,
                      headers={"Content-Type": "application/octet-stream"})
            r = c.getresponse()
            got = r.read()
            ok = r.status == 200 and want in got
        except (OSError, http.client.HTTPException) as e:
            got, ok = str(e).encode(), False
            c.close()
            c = None
        with lock:
            lat.append(time.monotonic() - t0)
            if not ok:
                errors.append(got[:200])
    if c is not None:
        c.close()


t0 = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(conns)]
for t in threads:
    t.start()
for t in threads:
    t.join(max(0.0, deadline - time.monotonic()) + 60)
secs = time.monotonic() - t0
lat.sort()


def pct(p):
    return lat[min(len(lat) - 1, int(len(lat) * p / 100))] * 1e3 if lat else 0.0


print("RESULT requests=%d seconds=%.2f rps=%.2f p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f "
      "errors=%d" % (len(lat), secs, len(lat) / secs, pct(50), pct(90), pct(99),
                     lat[-1] * 1e3 if lat else 0.0, len(errors) + left[0]))
for e in errors[:3]:
    print("error:", e, file=sys.stderr)
if left[0]:
    print("error: %d requests not sent within %g s" % (left[0], bound), file=sys.stderr)
