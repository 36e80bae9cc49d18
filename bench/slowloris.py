#!/usr/bin/env python3
"""Slowloris against `wheelgate serve` on loopback (issue 25, point 4): CONNS connections held
open for SECONDS, each trickling a byte at a time (its request headers, or an upload's body
with no credentials, or nothing at all), reopened as soon as the server closes one, while a
prober asks GET /healthz (and GET /metrics) on a fresh connection every PERIOD seconds. Prints
the probes' latencies and what happened to the attackers; exit 1 when a probe failed or took
longer than --max-latency.

    python3 bench/slowloris.py [--wheelgate build/wheelgate] [--mode headers|body|idle|mixed]
        [--conns 200] [--seconds 60] [--period 0.5] [--max-latency 1.0] [--spread]
        [--port PORT] [--json FILE] [-- SERVE-ARGS...]

Without --port it starts `wheelgate serve --listen 127.0.0.1:0 SERVE-ARGS` itself and stops it
at the end. --spread: the attackers come from 127.0.0.10.. (one address each; Linux routes all
of 127/8 to loopback), the prober from 127.0.0.1; without it everyone is 127.0.0.1 (the harder
case: the per-client limit cannot tell the prober from the attackers). Everything is bounded:
SECONDS of attack, each probe at most 5 s, each connect at most 1 s, at most 100 reopens a
second. Loopback only.
SPDX-License-Identifier: GPL-3.0-or-later
"""
import argparse
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

HOST = "127.0.0.1"
PROBE_BOUND = 5.0


def start_server(wg, args):
    proc = subprocess.Popen([wg, "serve", "--listen", HOST + ":0"] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = b""
    deadline = time.monotonic() + 30
    while b"listening on" not in err and time.monotonic() < deadline:
        r, _, _ = select.select([proc.stderr], [], [], 1.0)
        if r:
            chunk = os.read(proc.stderr.fileno(), 4096)
            if not chunk:
                break
            err += chunk
    line = [l for l in err.decode().splitlines() if "listening on" in l]
    if not line:
        proc.kill()
        proc.wait(10)
        sys.exit("slowloris: serve did not start: %r" % err)
    port = int(line[0].split("http://127.0.0.1:")[1].split()[0])
    # Its stderr is read to the end, so that it never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in iter(lambda: proc.stderr.read(65536), b"")],
                     daemon=True).start()
    return proc, port


def probe(port, path, source=HOST):
    """Seconds until the whole answer to GET path came, and its status (None: failed)."""
    t0 = time.monotonic()
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(PROBE_BOUND)
        s.bind((source, 0))
        s.connect((HOST, port))
        s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = b""
        while time.monotonic() - t0 < PROBE_BOUND:
            s.settimeout(max(0.01, PROBE_BOUND - (time.monotonic() - t0)))
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        s.close()
        status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/1.1 ") else None
        return time.monotonic() - t0, status
    except OSError:
        return time.monotonic() - t0, None


class Attack:
    """CONNS trickling connections, reopened when closed; one thread, select()-driven."""

    def __init__(self, port, mode, conns, spread):
        self.port, self.mode, self.n, self.spread = port, mode, conns, spread
        self.socks = {}        # slot -> (socket, bytes to send, offset)
        self.opened = 0
        self.closed_by_server = 0
        self.answers = {}      # status -> count (answers the server sent an attacker)
        self.lifetimes = []    # seconds a connection lived before the server closed it
        self.born = {}

    def payload(self, slot):
        mode = self.mode if self.mode != "mixed" else ("headers", "body", "idle")[slot % 3]
        if mode == "idle":
            return b""
        if mode == "headers":
            return b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 4000 + b"\r\n\r\n"
        body_len = 10 << 20
        head = (b"POST /legacy/ HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: multipart/form-data; boundary=slowB\r\n"
                b"Content-Length: %d\r\n\r\n" % body_len)
        return head + b"--slowB\r\n"  # then b"z" a byte at a time, never all of it

    def open(self, slot):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1.0)
        try:
            if self.spread:
                s.bind(("127.0.0.%d" % (10 + slot % 240), 0))
            s.connect((HOST, self.port))
        except OSError:
            s.close()
            return False
        s.setblocking(False)
        data = self.payload(slot)
        # The request line and headers of an upload go at once (a real client's would); the
        # body, like the headers of the other modes, a byte at a time.
        off = data.index(b"\r\n\r\n") + 4 if data.startswith(b"POST") else 0
        if off:
            try:
                s.send(data[:off])
            except OSError:
                pass
        self.socks[slot] = (s, data, off)
        self.born[slot] = time.monotonic()
        self.opened += 1
        return True

    def drop(self, slot, by_server):
        s, _, _ = self.socks.pop(slot)
        s.close()
        if by_server:
            self.closed_by_server += 1
            self.lifetimes.append(time.monotonic() - self.born[slot])

    def run(self, seconds, stop):
        end = time.monotonic() + seconds
        reopen_budget = 0.0
        last = time.monotonic()
        while time.monotonic() < end and not stop.is_set():
            now = time.monotonic()
            reopen_budget = min(100.0, reopen_budget + (now - last) * 100)
            last = now
            for slot in range(self.n):
                if slot not in self.socks and reopen_budget >= 1:
                    reopen_budget -= 1
                    self.open(slot)
            # What the server said or did: an answer, or the end of the connection.
            readable, _, _ = select.select([v[0] for v in self.socks.values()], [], [], 0)
            for slot, (s, _, _) in list(self.socks.items()):
                if s not in readable:
                    continue
                try:
                    got = s.recv(4096)
                except OSError:
                    got = b""
                if got.startswith(b"HTTP/1.1 "):
                    st = got.split(b" ", 2)[1].decode()
                    self.answers[st] = self.answers.get(st, 0) + 1
                self.drop(slot, True)
            # A byte on each (one a second per connection).
            for slot, (s, data, off) in list(self.socks.items()):
                if off >= len(data) and not data.startswith(b"POST"):
                    continue
                try:
                    s.send(data[off:off + 1] or b"z")
                    self.socks[slot] = (s, data, off + 1)
                except BlockingIOError:
                    pass
                except OSError:
                    self.drop(slot, True)
            stop.wait(1.0)
        for slot in list(self.socks):
            self.drop(slot, False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelgate", default=os.path.join(os.path.dirname(__file__), "..",
                                                         "build", "wheelgate"))
    ap.add_argument("--mode", default="mixed", choices=["headers", "body", "idle", "mixed"])
    ap.add_argument("--conns", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--period", type=float, default=0.5)
    ap.add_argument("--max-latency", type=float, default=1.0)
    ap.add_argument("--spread", action="store_true")
    ap.add_argument("--port", type=int)
    ap.add_argument("--json")
    ap.add_argument("serve_args", nargs="*")
    a = ap.parse_args()
    a.conns = max(1, min(a.conns, 2000))
    a.seconds = max(1.0, min(a.seconds, 600.0))
    proc = None
    port = a.port
    if not port:
        proc, port = start_server(a.wheelgate, a.serve_args)
    stop = threading.Event()
    att = Attack(port, a.mode, a.conns, a.spread)
    th = threading.Thread(target=att.run, args=(a.seconds, stop))
    th.start()
    time.sleep(min(2.0, a.seconds / 4))  # the attack holds its connections first
    probes = []
    t_end = time.monotonic() + a.seconds - min(2.0, a.seconds / 4)
    i = 0
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        path = b"/metrics" if i % 5 == 4 else b"/healthz"
        lat, st = probe(port, path)
        probes.append({"t": round(t0 - (t_end - a.seconds), 2), "path": path.decode(),
                       "status": st, "seconds": round(lat, 4)})
        i += 1
        time.sleep(max(0.0, a.period - (time.monotonic() - t0)))
    stop.set()
    th.join(30)
    rss = None
    if proc:
        try:
            with open("/proc/%d/status" % proc.pid) as f:
                rss = [int(l.split()[1]) for l in f if l.startswith("VmHWM:")][0]
        except OSError:
            pass
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    lats = [p["seconds"] for p in probes if p["status"] == 200]
    failed = [p for p in probes if p["status"] != 200]
    slow = [p for p in probes if p["status"] == 200 and p["seconds"] > a.max_latency]
    life = sorted(att.lifetimes)
    report = {
        "mode": a.mode, "conns": a.conns, "seconds": a.seconds, "spread": a.spread,
        "probes": len(probes), "failed": len(failed), "over_max_latency": len(slow),
        "latency_p50": statistics.median(lats) if lats else None,
        "latency_p99": sorted(lats)[int(0.99 * (len(lats) - 1))] if lats else None,
        "latency_max": max(lats) if lats else None,
        "attack_connections_opened": att.opened,
        "attack_closed_by_server": att.closed_by_server,
        "attack_answers": att.answers,
        "attack_lifetime_median": statistics.median(life) if life else None,
        "attack_lifetime_max": life[-1] if life else None,
        "server_peak_rss_kib": rss,
        "probe_log": probes,
    }
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    print("slowloris %s: %d connections for %.0f s%s; %d probes: %d failed, %d over %.1f s; "
          "latency p50 %s p99 %s max %s s; attackers opened %d, closed by the server %d "
          "(median life %s s), answers %s; peak RSS %s KiB" % (
              a.mode, a.conns, a.seconds, " (spread)" if a.spread else "", len(probes),
              len(failed), len(slow), a.max_latency, report["latency_p50"],
              report["latency_p99"], report["latency_max"], att.opened, att.closed_by_server,
              report["attack_lifetime_median"] and round(report["attack_lifetime_median"], 2),
              att.answers, rss))
    for p in failed[:10] + slow[:10]:
        print("  probe at %.1f s %s: status %s after %.3f s" % (p["t"], p["path"], p["status"],
                                                                p["seconds"]))
    return 1 if failed or slow else 0


if __name__ == "__main__":
    sys.exit(main())
