"""What the `wheelgate serve` tests share: a server on 127.0.0.1 with port 0 (the port it
bound read from its stderr), plain requests, and a raw-socket request. Every wait is bounded."""
import os
import select
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

TIMEOUT = 60  # seconds any one request may take


class Server:
    """A `wheelgate serve` on 127.0.0.1:0; stop() sends SIGTERM and returns the exit code.
    After stop(): .access (stdout: the access log) and .err (stderr)."""

    def __init__(self, wg, *args, env=None):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([wg, "serve", "--listen", "127.0.0.1:0"] + list(args),
                                     stdout=self.log, stderr=subprocess.PIPE, env=env)
        self.err = b""
        deadline = time.monotonic() + 30
        while b"listening on" not in self.err and time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stderr], [], [], 1.0)
            if r:
                chunk = os.read(self.proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                self.err += chunk
        line = [l for l in self.err.decode().splitlines() if "listening on" in l]
        if not line:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError("serve did not start: %r" % self.err)
        self.line = line[0]  # what it says it serves: workers, body cap, upstream, targets
        self.port = int(line[0].split("http://127.0.0.1:")[1].split()[0])
        assert self.port > 0, line

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def wait_err(self, needle, bound=30):
        """Reads stderr until needle (bytes or str) is in it, at most bound seconds; the
        stderr read so far (all of it: self.err). AssertionError past the bound."""
        if isinstance(needle, str):
            needle = needle.encode()
        start = len(self.err)
        deadline = time.monotonic() + bound
        while needle not in self.err[start:] and time.monotonic() < deadline:
            r, _, _ = select.select([self.proc.stderr], [], [], 0.5)
            if r:
                chunk = os.read(self.proc.stderr.fileno(), 4096)
                if not chunk:
                    break
                self.err += chunk
        if needle not in self.err[start:]:
            raise AssertionError("serve's stderr has no %r within %d s: %r (exit %r)" % (
                needle, bound, self.err[start:][-3000:], self.proc.poll()))
        return self.err[start:].decode("utf-8", "replace")

    def rss_kib(self, settle=True):
        """The server's resident memory (VmRSS, KiB). settle: the least of 10 readings
        50 ms apart, so that connections the clients are done with but the server is still
        closing (their bodies still mapped) are not counted as memory it keeps."""
        def now():
            with open("/proc/%d/status" % self.proc.pid) as f:
                for l in f:
                    if l.startswith("VmRSS:"):
                        return int(l.split()[1])
            raise AssertionError("no VmRSS")
        if not settle:
            return now()
        readings = []
        for _ in range(10):
            readings.append(now())
            time.sleep(0.05)
        return min(readings)

    def stop(self, bound=15):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(bound)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError("serve still running %d s after SIGTERM" % bound)
        self.err += self.proc.stderr.read()
        self.proc.stderr.close()
        self.log.seek(0)
        self.access = self.log.read().decode("utf-8", "replace")
        self.log.close()
        return rc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.stop()


def sanitized(wg):
    """True for a build under AddressSanitizer, whose memory (shadow, quarantine) says nothing
    about the service's own: memory bounds are judged in the plain build."""
    with open(wg, "rb") as f:
        return b"__asan_init" in f.read()


def request(url, data=None, headers=None, method=None, timeout=TIMEOUT):
    """(status, headers, body) of one request, HTTP errors included."""
    req = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def raw(port, head, body=b"", bound=TIMEOUT):
    """Sends head and body on one connection; the status line and the text answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=bound) as s:
        s.sendall(head + body)
        got = b""
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"\r\n\r\n" in got:
                h, _, rest = got.partition(b"\r\n\r\n")
                n = [int(l.split(b":")[1]) for l in h.split(b"\r\n")
                     if l.lower().startswith(b"content-length:")]
                if n and len(rest) >= n[0]:
                    break
    return got.split(b"\r\n")[0].decode(), got.partition(b"\r\n\r\n")[2].decode()


def free_port():
    """A port free on 127.0.0.1 now (for a server that cannot take port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PYPISERVER = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                           "..", "shared", "tools", "pypiserver", "run"))


class PyPIServer:
    """../shared/tools/pypiserver serving directory on 127.0.0.1 (a free port), started and
    waited for (30 s at most; its output in the error when it does not start). It is a tool,
    not wheelgate: it runs without the sanitizer runtime an ASan build preloads (ASan's crypt
    interceptor crashes Python's _crypt). --disable-fallback: a project it lacks is a 404, not
    a redirect to pypi.org. The caller checks PYPISERVER exists (harness.need_path)."""

    def __init__(self, directory):
        self.dir = directory
        self.port = free_port()
        self.out = tempfile.TemporaryFile()
        env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
        env["PATH"] = "/usr/bin:" + env.get("PATH", "")
        self.proc = subprocess.Popen(["sh", PYPISERVER, str(self.port), directory,
                                      "--disable-fallback"],
                                     stdout=self.out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if request(self.url("/simple/"), timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.out.seek(0)
        said = self.out.read()[-2000:].decode("utf-8", "replace")
        self.stop()
        raise AssertionError("pypiserver did not start: %s" % said)

    def url(self, path="/simple/"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.out.close()
