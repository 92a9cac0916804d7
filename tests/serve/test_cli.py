# SPDX-License-Identifier: Apache-2.0
"""dpas serve, the command: its options and their errors, a port already taken, the line that
says where it listens, the access log (one line per request; none with --quiet), and a clean
stop on SIGINT as on SIGTERM. Only loopback addresses. Usage: test_cli.py DPAS"""

import json
import os
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server  # noqa: E402

DPAS = sys.argv[1]
T = Checks()


def run(*args):
    p = subprocess.run([DPAS, "serve", *args], capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


rc, out, err = run("--help")
T.check(rc == 0 and out.startswith("usage: dpas serve") and err == "", "--help: usage on stdout")
for args, text in [
    (["--port", "70000"], "--port must be between 0 and 65535, got 70000"),
    (["--port", "-1"], "--port must be between 0 and 65535, got -1"),
    (["--port", "x"], "--port must be an integer"),
    (["--threads", "0"], "--threads must be between 1 and 64, got 0"),
    (["--threads", "65"], "--threads must be between 1 and 64, got 65"),
    (["--timeout", "0"], "--timeout must be between 1 and 3600, got 0"),
    (["--bind", "localhost.example"], "--bind must be a numeric IPv4 or IPv6 address"),
    (["--port", "1", "--port", "2"], "--port is given twice"),
    (["--bogus"], "unknown option \"--bogus\""),
    (["extra"], "serve takes no arguments, got \"extra\""),
]:
    rc, out, err = run(*args)
    T.check(rc == 1 and out == "" and text in err, "serve %s: exit 1 and %r, got %d %r" % (args, text, rc, err))
rc, out, err = run("--port", "x", "-o", "json")
T.check(rc == 1 and json.loads(out)["field"] == "--port", "-o json: the error object on stdout (%r)" % out)

# the access log: one line per request, with the status; none with --quiet
with Server(DPAS) as srv:
    T.check("dpas: listening on http://127.0.0.1:%d/" % srv.port in srv.log(), "the listening line")
    srv.request("GET", "/api/v1/rules?n=8")
    srv.request("GET", "/api/v1/eval?dp_degree=0")
    # a second server on the same port: refused, with the reason
    rc, out, err = run("--port", str(srv.port))
    T.check(rc == 1 and "cannot listen on 127.0.0.1 port %d" % srv.port in err,
            "a port in use: exit 1 with the reason, got %d %r" % (rc, err))
code = srv.stop()
log = srv.log()
T.check(code == 0, "stopped cleanly (exit %r)" % code)
T.check('"GET /api/v1/rules?n=8 HTTP/1.1" 200 ' in log and '"GET /api/v1/eval?dp_degree=0 HTTP/1.1" 400 ' in log,
        "one access-log line per request, with its status:\n" + log)
T.check("dpas: SIGTERM: stopping" in log, "it says why it stops")

with Server(DPAS, "--quiet") as srv:
    srv.request("GET", "/api/v1/rules?n=8")
    srv.proc.send_signal(signal.SIGINT)
    try:
        code = srv.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        code = "hung"
srv.stop()
T.check(code == 0, "SIGINT stops it cleanly (exit %r)" % code)
T.check("GET /api/v1/rules" not in srv.log(), "--quiet: no access log")

# IPv6 loopback, where the machine has it: the address in brackets
try:
    s = socket.socket(socket.AF_INET6)
    s.bind(("::1", 0))
    s.close()
    have6 = True
except OSError:
    have6 = False
if have6:
    p = subprocess.Popen([DPAS, "serve", "--bind", "::1", "--port", "0", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = p.stderr.readline().decode()
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    T.check(line.startswith("dpas: listening on http://[::1]:") and rc == 0,
            "IPv6 loopback: %r, exit %r" % (line, rc))
T.done()
