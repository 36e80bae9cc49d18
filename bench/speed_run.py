#!/usr/bin/env python3
"""Runs one command of bench/speed.sh and prints "WALL_S PEAK_RSS_KB EXIT PEAK_ANON_KB" on one
line.

  speed_run.py WARM CMD...

WARM (a file, or '-' for none) is read to /dev/null first so that the page cache is warm;
then CMD runs with stdout and stderr to /dev/null. The wall time is taken around fork and
wait4 with a nanosecond clock (GNU time's %e has two decimals: too coarse for the 20 ms
tiny-member runs); the peak RSS is wait4's ru_maxrss, the number behind GNU time's %M. That
counts the pages of a mapped file too (a reader that maps the wheel holds the compressed
bytes of the members it is inflating: page cache, shared and reclaimable); PEAK_ANON_KB is the
highest RssAnon of /proc/PID/status seen while polling every 5 ms: the process's own memory.
SPDX-License-Identifier: GPL-3.0-or-later"""
import os
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    warm, cmd = sys.argv[1], sys.argv[2:]
    if warm != "-":
        with open(warm, "rb") as f:
            while f.read(1 << 22):
                pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    t0 = time.perf_counter_ns()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    anon = 0
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            break
        anon = max(anon, rss_anon(pid))
        time.sleep(0.005)
    t1 = time.perf_counter_ns()
    code = os.waitstatus_to_exitcode(status)
    print("%.4f %d %d %d" % ((t1 - t0) / 1e9, ru.ru_maxrss, code, anon))


def rss_anon(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    main()
