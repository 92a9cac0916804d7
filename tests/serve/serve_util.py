# SPDX-License-Identifier: Apache-2.0
"""Start and stop `dpas serve` for a test: always on 127.0.0.1, on a port the server picks
(--port 0), always stopped (SIGTERM, then SIGKILL if it hangs), every wait bounded in time.
Python standard library only."""

import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)/")


class Server:
    def __init__(self, dpas, *args, start_timeout=60.0, env=None, prefix=()):
        self.lines = []
        self.proc = subprocess.Popen(  # prefix: a command that runs dpas (the dynamic loader)
            [*prefix, dpas, "serve", "--bind", "127.0.0.1", "--port", "0", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.port = None
        deadline = time.monotonic() + start_timeout
        buf = b""
        while self.port is None:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                self.kill()
                raise RuntimeError("dpas serve did not start: %r" % buf.decode(errors="replace"))
            ready, _, _ = select.select([self.proc.stderr], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.proc.stderr.fileno(), 4096)
            if not chunk:
                continue
            buf += chunk
            m = LISTENING.search(buf.decode(errors="replace"))
            if m:
                self.port = int(m.group(1))
        self.lines.append(buf.decode(errors="replace"))
        # drain stderr so that the access log never fills the pipe
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for chunk in iter(lambda: os.read(self.proc.stderr.fileno(), 65536), b""):
            self.lines.append(chunk.decode(errors="replace"))

    def log(self):
        return "".join(self.lines)

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self, timeout=60.0):
        """SIGTERM, and the exit status (0 when it stopped cleanly)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                return "hung after SIGTERM (killed)"
        if hasattr(self, "reader"):
            self.reader.join(timeout=10)
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- requests ----

    def request(self, method, path, body=None, headers=None, timeout=60.0):
        """(status, headers as a dict of lower-case names, body bytes) over a new connection."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data
        finally:
            c.close()

    def get_json(self, path, method="GET", body=None, headers=None):
        status, hdrs, data = self.request(method, path, body, headers)
        return status, hdrs, json.loads(data.decode("utf-8"))


def raw_exchange(port, data, timeout=60.0):
    """Send raw bytes on a new connection and read until the server closes it: (status or None,
    headers as a dict of lower-case names, body bytes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError:
        pass
    finally:
        s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith(b"HTTP/1.") else None
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode(errors="replace")
    return status, headers, body


def multipart(parts, boundary=None):
    """(body, Content-Type) of a multipart/form-data body; parts: (name, filename or None, bytes)."""
    b = boundary or "dpas-" + uuid.uuid4().hex
    out = b""
    for name, filename, data in parts:
        disp = 'form-data; name="%s"' % name
        if filename:
            disp += '; filename="%s"' % filename
        out += b"--" + b.encode() + b"\r\nContent-Disposition: " + disp.encode() + b"\r\n"
        out += b"Content-Type: text/plain\r\n\r\n" + data + b"\r\n"
    out += b"--" + b.encode() + b"--\r\n"
    return out, "multipart/form-data; boundary=" + b


def cli_json(dpas, *args):
    """(exit status, the JSON object on stdout) of a CLI command run with -o json."""
    p = subprocess.run([dpas, *args, "-o", "json"], capture_output=True, timeout=120)
    return p.returncode, json.loads(p.stdout.decode("utf-8"))


class Checks:
    """Collects failures; every case runs, and the test fails at the end if any did."""

    def __init__(self):
        self.failures = []
        self.count = 0

    def check(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)
            print("FAIL", what)
        return ok

    def done(self):
        print("%d checks, %d failed" % (self.count, len(self.failures)))
        sys.exit(1 if self.failures else 0)
