# SPDX-License-Identifier: Apache-2.0
"""dpas serve, the catalogue of bad requests: each gets the right status and exactly one JSON
error object (the CLI's: status, title, reason, field), with the security headers; nothing
crashes or hangs, and the server still answers and stops cleanly afterwards. Run in the normal
and the ASan+UBSan builds. Usage: test_bad.py DPAS

A few requests are refused by libmicrohttpd itself before the server sees them (a malformed
request line, HTTP/1.1 without Host, a request line or headers beyond its 64 KiB buffer): for
those the status is checked, and that the server lives on (docs/serve.md, "Limits")."""

import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, multipart  # noqa: E402

DPAS = sys.argv[1]
T = Checks()
REF = ("model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
       "&checkpoint_bytes_per_param=14B")
TIMEOUT = 2  # the server's --timeout: a request must be complete within it


def exchange(port, data, timeout=30.0):
    """Send raw bytes (from a thread: the server may answer before reading them all) and read
    until the server closes. (status or None, headers, body, error or None)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def send():
        try:
            s.sendall(data)
        except OSError:
            pass  # the server refused early and closed: the answer is what counts

    t = threading.Thread(target=send, daemon=True)
    t.start()
    buf, err = b"", None
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError as e:
        err = e
    t.join(timeout=timeout)
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = None
    if lines and lines[0].startswith(b"HTTP/1."):
        status = int(lines[0].split()[1])
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode(errors="replace")
    return status, headers, body, err


def req(method, target, headers=(), body=b"", close=True):
    h = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n" % (method, target)
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    if body and not any(k.lower() in ("content-length", "transfer-encoding") for k, _ in headers):
        h += "Content-Length: %d\r\n" % len(body)
    if close:
        h += "Connection: close\r\n"
    return h.encode("latin-1") + b"\r\n" + body


def chunked(data, size=4096):
    out = b""
    for i in range(0, len(data), size):
        part = data[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


# (name, raw request, status, a sentence the detail holds): refused with field "header"
FRAMING = [
    # issue 29 round 4: the framing headers, judged as soon as the headers are in, alike on every
    # method: Transfer-Encoding beside Content-Length (a GET was answered 200, a POST 400); a
    # coding other than chunked (the client waited for the timeout: libmicrohttpd read the body
    # until the connection closed); Transfer-Encoding or Connection given twice
    ("GET with Transfer-Encoding and Content-Length",
     req("GET", "/api/v1/rules", [("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
         b"0\r\n\r\n"), 400, "Transfer-Encoding and Content-Length are both given"),
    ("POST with Transfer-Encoding and Content-Length",
     req("POST", "/api/v1/eval", [("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
         b"0\r\n\r\n"), 400, "Transfer-Encoding and Content-Length are both given"),
    ("Transfer-Encoding gzip, chunked",
     req("POST", "/api/v1/eval", [("Transfer-Encoding", "gzip, chunked")], chunked(b"x: 1\n")), 501,
     'the header Transfer-Encoding is "gzip, chunked"; dpas serve takes chunked alone'),
    ("Transfer-Encoding identity on GET",
     req("GET", "/api/v1/rules", [("Transfer-Encoding", "identity")]), 501,
     'the header Transfer-Encoding is "identity"'),
    ("two Transfer-Encoding headers",
     req("POST", "/api/v1/eval", [("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")],
         chunked(b"x: 1\n")), 400, "the header Transfer-Encoding is given 2 times; give it once"),
    ("two Connection headers",
     req("GET", "/api/v1/rules", [("Connection", "keep-alive"), ("Connection", "close")], close=False),
     400, "the header Connection is given 2 times; give it once"),
    # the adversary of round 4: a space before the colon made a second Content-Length (or a
    # Transfer-Encoding beside one) invisible to the checks above; RFC 9112 section 5.1: 400
    ("Content-Length with a space before its colon",
     req("POST", "/api/v1/eval", [("Content-Length ", "5"), ("Content-Length", "2")], b"{}"),
     400, 'the header name "Content-Length " holds whitespace'),
    ("Transfer-Encoding with a space before its colon",
     req("POST", "/api/v1/eval", [("Transfer-Encoding ", "chunked"), ("Content-Length", "2")], b"{}"),
     400, 'the header name "Transfer-Encoding " holds whitespace'),
]


# (name, raw request, status, field the error names or None, ours: the server's JSON object)
CASES = [
    # malformed query strings
    ("empty parameter", req("GET", "/api/v1/eval?&"), 400, "query", True),
    ("two & in a row", req("GET", "/api/v1/eval?dp_degree=1&&model=GPT3"), 400, "query", True),
    ("trailing &", req("GET", "/api/v1/eval?" + REF + "&"), 400, "query", True),
    ("key without value", req("GET", "/api/v1/eval?explain"), 400, "explain", True),
    ("empty value", req("GET", "/api/v1/eval?dp_degree="), 400, "dp_degree", True),
    ("empty key", req("GET", "/api/v1/eval?=5"), 400, "query", True),
    ("repeated key", req("GET", "/api/v1/eval?" + REF + "&dp_degree=64"), 400, "dp_degree", True),
    ("model and workload", req("GET", "/api/v1/eval?" + REF + "&workload=GPT3"), 400, "workload", True),
    ("model and parameters", req("GET", "/api/v1/eval?" + REF + "&parameters=7e9"), 400, "workload", True),
    ("unknown key", req("GET", "/api/v1/eval?" + REF + "&dp=8"), 400, "dp", True),
    ("unknown key, case", req("GET", "/api/v1/rules?N=8"), 400, "N", True),
    ("key of another endpoint", req("GET", "/api/v1/inventory?" + REF + "&rule=krum"), 400, "rule", True),
    ("scenario on scenarios/NAME", req("GET", "/api/v1/scenarios/ReferenceJobAttackSurface?scenario=X"),
     400, "scenario", True),
    # percent-escapes and UTF-8
    ("bad hex escape", req("GET", "/api/v1/eval?model=%G1"), 400, "model", True),
    ("truncated escape", req("GET", "/api/v1/eval?model=GPT%3"), 400, "model", True),
    ("lone percent", req("GET", "/api/v1/eval?model=%"), 400, "model", True),
    ("invalid UTF-8", req("GET", "/api/v1/eval?model=%C3%28"), 400, "model", True),
    ("overlong UTF-8", req("GET", "/api/v1/eval?model=%C0%AF"), 400, "model", True),
    ("UTF-16 surrogate", req("GET", "/api/v1/eval?model=%ED%A0%80"), 400, "model", True),
    ("above U+10FFFF", req("GET", "/api/v1/eval?model=%F4%90%80%80"), 400, "model", True),
    ("NUL byte", req("GET", "/api/v1/eval?model=GPT3%00x"), 400, "model", True),
    ("newline", req("GET", "/api/v1/eval?model=GPT3%0Ax"), 400, "model", True),
    ("invalid UTF-8 key", req("GET", "/api/v1/eval?%FF=1"), 400, "query", True),
    ("raw byte 0xff", b"GET /api/v1/eval?model=\xff HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
     400, "model", True),
    ("invalid UTF-8 in the path", req("GET", "/api/v1/scenarios/%FF"), 400, "path", True),
    ("valid UTF-8, unknown model", req("GET", "/api/v1/eval?" + REF.replace("GPT3", "%E2%88%9E")),
     400, "model", True),
    # sizes
    ("long key", req("GET", "/api/v1/eval?" + "k" * 100 + "=1"), 414, "query", True),
    ("long value", req("GET", "/api/v1/eval?model=" + "M" * 2000), 414, "model", True),
    ("too many parameters", req("GET", "/api/v1/eval?" + "&".join("k%d=1" % i for i in range(60))),
     414, "query", True),
    ("10 KB URL", req("GET", "/api/v1/eval?model=" + "M" * 10000), 414, "url", True),
    ("1 MB body", req("POST", "/api/v1/eval", body=b"x" * 1_000_000), 413, "body", True),
    ("1 MB chunked body", req("POST", "/api/v1/eval", [("Transfer-Encoding", "chunked")],
                              chunked(b"# a comment\n" * 90000)), 413, "body", True),
    # huge, negative and malformed numbers
    ("dp_degree 0", req("GET", "/api/v1/eval?" + REF.replace("=128", "=0")), 400, "dp_degree", True),
    ("dp_degree -1", req("GET", "/api/v1/eval?" + REF.replace("=128", "=-1")), 400, "dp_degree", True),
    ("dp_degree 10^23", req("GET", "/api/v1/eval?" + REF.replace("=128", "=99999999999999999999999")),
     400, "dp_degree", True),
    ("dp_degree 1e3", req("GET", "/api/v1/eval?" + REF.replace("=128", "=1e3")), 400, "dp_degree", True),
    ("dp_degree above the fleet", req("GET", "/api/v1/eval?" + REF.replace("=128", "=1025")),
     400, "dp_degree", True),
    ("parameters 1e400", req("GET", "/api/v1/eval?" + REF.replace("model=GPT3", "parameters=1e400")),
     400, "parameters", True),
    ("parameters -5", req("GET", "/api/v1/eval?" + REF.replace("model=GPT3", "parameters=-5")),
     400, "parameters", True),
    ("parameters 1.5", req("GET", "/api/v1/eval?" + REF.replace("model=GPT3", "parameters=1.5")),
     400, "parameters", True),
    ("bytes overflow 2^64", req("GET", "/api/v1/eval?" + REF.replace("model=GPT3", "parameters=9e18")
                                .replace("=14B", "=16B")), 400, None, True),
    ("width NaN", req("GET", "/api/v1/eval?" + REF.replace("=bf16", "=NaN%20B")), 400,
     "gradient_bytes_per_param", True),
    ("width inf", req("GET", "/api/v1/eval?" + REF.replace("=bf16", "=inf%20B")), 400,
     "gradient_bytes_per_param", True),
    ("width without unit", req("GET", "/api/v1/eval?" + REF.replace("=bf16", "=2")), 400,
     "gradient_bytes_per_param", True),
    ("nodes 0", req("GET", "/api/v1/eval?" + REF + "&nodes=0"), 400, "nodes", True),
    ("cost f -1", req("GET", "/api/v1/cost?" + REF + "&f=-1"), 400, "f", True),
    ("cost steps 0", req("GET", "/api/v1/cost?" + REF + "&steps=0"), 400, "steps", True),
    ("cost compute_rate 0", req("GET", "/api/v1/cost?" + REF + "&compute_rate=0%20FLOP/s"), 400,
     "compute_rate", True),
    ("cost compute_rate without a unit", req("GET", "/api/v1/cost?" + REF + "&compute_rate=1e15"), 400,
     "compute_rate", True),
    ("cost memory_bandwidth a count, not a rate", req("GET", "/api/v1/cost?" + REF + "&memory_bandwidth=3B"),
     400, "memory_bandwidth", True),
    ("cost unknown rule", req("GET", "/api/v1/cost?" + REF + "&rule=krum,nope"), 400, "rule", True),
    ("cost unknown schedule", req("GET", "/api/v1/cost?" + REF + "&schedule=warp"), 400, "schedule", True),
    ("cost empty list item", req("GET", "/api/v1/cost?" + REF + "&rule=krum,,median"), 400, "rule", True),
    ("rules n 0", req("GET", "/api/v1/rules?n=0"), 400, "n", True),
    ("rules n 2^63", req("GET", "/api/v1/rules?n=9223372036854775808"), 400, "n", True),
    ("rules unknown convention", req("GET", "/api/v1/rules?convention=nope"), 400, None, True),
    ("memory zero 4", req("GET", "/api/v1/memory?" + REF + "&zero=4"), 400, "zero", True),
    ("memory unknown state", req("GET", "/api/v1/memory?" + REF + "&state=nope"), 400, None, True),
    ("unknown attribute", req("GET", "/api/v1/eval?" + REF + "&attr=gradient_bytes,bogus"), 400,
     "attr", True),
    ("explain maybe", req("GET", "/api/v1/eval?" + REF + "&explain=maybe"), 400, "explain", True),
    ("undefined attribute asked", req("GET", "/api/v1/eval?" + REF + "&attr=weight_bytes"), 400,
     None, True),
    # sweeps and plots
    ("sweep of 10^8 points", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=1..100000000+1")),
     422, "dp_degree", True),
    ("sweep over the point cap", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=1..1024+1")
                                     + "&schedule=allreduce,allgather,ps,ps_separate,sharded"), 422,
     "dp_degree", True),
    ("sweep with nothing varying", req("GET", "/api/v1/sweep?" + REF), 400, "axes", True),
    ("sweep of four inputs", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=8,16")
                                 .replace("=bf16", "=bf16,fp32").replace("=14B", "=14B,16B")
                                 + "&rule=median,krum"),
     400, "rule", True),
    ("plot of three inputs", req("GET", "/api/v1/plot.svg?" + REF.replace("=128", "=8,16")
                                 .replace("=bf16", "=bf16,fp32").replace("=14B", "=14B,16B")),
     400, "checkpoint_bytes_per_param", True),
    ("sweep range upside down", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=64..8")), 400,
     None, True),
    ("sweep metric without schedule", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=8,16")
                                          + "&attr=bytes_per_worker"), 400, "schedule", True),
    ("sweep every point left out", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=2048,4096")),
     400, "dp_degree", True),
    ("plot of a named axis", req("GET", "/api/v1/plot.svg?" + REF.replace("GPT3", "GPT3,GPT2")), 400,
     "workload", True),
    ("plot y not shown", req("GET", "/api/v1/plot.svg?" + REF.replace("=128", "=8,16") + "&y=max_f"),
     400, "y", True),
    # a physics violation: valid inputs, infeasible (the CLI exits 2)
    ("memory does not fit", req("GET", "/api/v1/memory?" + REF), 422, "memory", True),
    # paths and methods
    ("unknown path", req("GET", "/nope"), 404, "path", True),
    ("trailing slash", req("GET", "/api/v1/eval/"), 404, "path", True),
    ("nested resource", req("GET", "/api/v1/registry/models/GPT3"), 404, "path", True),
    ("unknown registry kind", req("GET", "/api/v1/registry/teapots"), 404, "kind", True),
    ("unknown scenario", req("GET", "/api/v1/scenarios/Nope"), 404, "scenario", True),
    ("dot segments", req("GET", "/api/v1/../../etc/passwd"), 404, "path", True),
    ("DELETE", req("DELETE", "/api/v1/eval"), 405, "method", True),
    ("PUT", req("PUT", "/api/v1/rules", body=b"{}"), 405, "method", True),
    ("POST where only GET", req("POST", "/api/v1/rules"), 405, "method", True),
    ("GET where only POST", req("GET", "/api/v1/calibrate"), 405, "method", True),
    ("unknown method", req("BREW", "/api/v1/eval"), 405, "method", True),
    ("OPTIONS", req("OPTIONS", "/api/v1/eval"), 405, "method", True),
    # bodies
    ("GET with a body", req("GET", "/api/v1/eval?" + REF, body=b"dp_degree: 8\n"), 400, "body", True),
    ("malformed YAML", req("POST", "/api/v1/eval", body=b"workload: [GPT3\n"), 400, "file", True),
    ("JSON array", req("POST", "/api/v1/eval", [("Content-Type", "application/json")], b"[1, 2]"),
     400, "file", True),
    ("truncated JSON", req("POST", "/api/v1/eval", [("Content-Type", "application/json")],
                           b'{"dp_degree": 8'), 400, "file", True),
    ("unknown key in the file", req("POST", "/api/v1/eval", body=b"dpdegree: 8\n"), 400, None, True),
    ("NUL in the body", req("POST", "/api/v1/eval", body=b"dp_degree: 8\x00\n"), 400, "file", True),
    ("invalid UTF-8 body", req("POST", "/api/v1/eval", body=b"workload: \xff\xfe\n"), 400, None, True),
    ("calibrate without a body", req("POST", "/api/v1/calibrate"), 400, "body", True),
    ("calibrate garbage", req("POST", "/api/v1/calibrate", body=b"not nccl-tests output\n"), 400,
     None, True),
    ("calibrate ranks 1", req("POST", "/api/v1/calibrate?ranks=1", body=b"x\n"), 400, "ranks", True),
    ("calibrate unknown collective", req("POST", "/api/v1/calibrate?collective=teleport", body=b"x\n"),
     400, None, True),
    ("calibrate predict 0 bytes", req("POST", "/api/v1/calibrate?predict=1MiB,0", body=b"x\n"), 400,
     "predict", True),
    # one size, scale or test under two spellings: the library's list rule, as the CLI's
    ("calibrate predict twice", req("POST", "/api/v1/calibrate?predict=1MiB,1048576", body=b"x\n"),
     400, "predict", True),
    ("calibrate test twice", req("POST", "/api/v1/calibrate?test=1,01", body=b"x\n"), 400, "test",
     True),
    ("cost schedule twice", req("GET", "/api/v1/cost?" + REF + "&schedule=allgather,AllGather"), 400,
     "schedule", True),
    # issue 21: who may ask (the Host and the Origin a request must have)
    ("Host of a rebound name", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: attacker.example:8080"),
     421, "host", True),
    ("Host of a rebound name, page", req("GET", "/").replace(b"Host: 127.0.0.1", b"Host: attacker.example"),
     421, "host", True),
    ("Host under localhost", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: localhost.attacker.example"),
     421, "host", True),
    ("Host another loopback address", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: 127.0.0.2"),
     421, "host", True),
    ("Host IPv6 on an IPv4 server", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: [::1]:8080"),
     421, "host", True),
    ("Host with userinfo", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: user@127.0.0.1"),
     400, "host", True),
    ("Host port 99999", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: 127.0.0.1:99999"),
     400, "host", True),
    ("Host unbracketed IPv6", req("GET", "/api/v1/rules").replace(b"Host: 127.0.0.1", b"Host: ::1"),
     400, "host", True),
    ("HTTP/1.0 without Host", b"GET /api/v1/rules HTTP/1.0\r\n\r\n", 400, "host", True),
    ("POST from another origin", req("POST", "/api/v1/eval", [("Origin", "http://attacker.example")],
                                     b"dp_degree: 8\n"), 403, "origin", True),
    ("Origin null", req("GET", "/api/v1/rules", [("Origin", "null")]), 403, "origin", True),
    ("a preflight, cross origin off", req("OPTIONS", "/api/v1/eval", [("Origin", "http://app.example"),
                                                                     ("Access-Control-Request-Method", "POST")]),
     403, "origin", True),
    # issue 21: the rows of an answer (refused before the work; '+' written %2B, not a space)
    ("sweep over the row budget", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=1..1024%2B1")
                                      + "&schedule=allreduce,allgather,ps,ps_separate,sharded"), 422,
     "dp_degree", True),
    ("sweep of 10^8 points", req("GET", "/api/v1/sweep?" + REF.replace("=128", "=1..100000000%2B1")),
     422, "dp_degree", True),
    ("plot over the row budget", req("GET", "/api/v1/plot.svg?" + REF.replace("=128", "=1..5000%2B1")),
     422, "dp_degree", True),
    ("calibrate of 1400 tests", req("POST", "/api/v1/calibrate", body=(
        "name,gpus,size,time\n" + "".join("all_reduce,%d,1024,%d\n" % (g, 100 + g) for g in range(2, 1402))
    ).encode()), 400, "tests", True),  # the library's own cap: 256 tests per calibration
    ("calibrate predicting 150 sizes of 30 tests", req("POST", "/api/v1/calibrate?predict=" + ",".join(
        "%dKiB" % (i + 1) for i in range(150)), body=(
        "name,gpus,size,time\n" + "".join("all_reduce,%d,%d,%d\n" % (g, sz, sz // 10 + g)
                                          for g in range(2, 32) for sz in (1024, 4096, 16384))
    ).encode()), 422, "body", True),
    # issue 21: the path and the method of a 404 and a 405 are quoted, and a cut is marked
    ("a 300-byte path", req("GET", "/" + "p" * 300), 404, "path", True),
    ("an 80-byte method", req("B" * 80, "/api/v1/eval"), 405, "method", True),
    ("a long nested path", req("GET", "/api/v1/registry/" + "k" * 250 + "/x"), 404, "path", True),
    # refused by libmicrohttpd before the server sees them: status only
    ("1 MB URL", req("GET", "/api/v1/eval?model=" + "M" * 1_000_000), 414, None, False),
    ("malformed request line", b"GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", 400, None, False),
    ("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", 505, None, False),
    ("malformed Content-Length", req("POST", "/api/v1/eval", [("Content-Length", "abc")]), 400, None,
     False),
    ("HTTP/1.1 without Host", b"GET /api/v1 HTTP/1.1\r\nConnection: close\r\n\r\n", 400, None, False),
    ("100 KB header", req("GET", "/api/v1", [("X-Big", "b" * 100_000)]), 431, None, False),
] + [(name, data, status, "header", True) for name, data, status, _ in FRAMING]


with Server(DPAS, "--timeout", str(TIMEOUT), "--threads", "2") as srv:
    ours = 0
    for name, data, status, field, is_ours in CASES:
        st, hd, body, err = exchange(srv.port, data)
        if not T.check(st == status, "%s: status %s, expected %s (%s)" % (name, st, status, err)):
            continue
        if not is_ours:
            continue
        ours += 1
        try:
            obj = json.loads(body.decode("utf-8"))
        except ValueError:
            obj = None
        T.check(isinstance(obj, dict) and obj.get("status") == st and "title" in obj
                and obj.get("detail") and hd.get("content-type") == "application/problem+json",
                "%s: one RFC 9457 problem, got %r" % (name, body[:300]))
        if isinstance(obj, dict) and field is not None:
            T.check(obj.get("field") == field, "%s: field %r, expected %r (%s)"
                    % (name, obj.get("field"), field, obj.get("detail")))
        T.check(hd.get("x-content-type-options") == "nosniff", "%s: nosniff" % name)
        T.check(hd.get("content-security-policy", "").startswith("default-src 'self'"), "%s: CSP" % name)
        T.check(hd.get("content-length") == str(len(body)), "%s: Content-Length" % name)
        if status == 405:
            T.check(bool(hd.get("allow")), "%s: an Allow header" % name)
        T.check(srv.alive(), "%s: the server is alive" % name)
    T.check(ours >= 40, "at least 40 bad requests answered with the error object (%d)" % ours)
    for name, data, status, needle in FRAMING:  # each with its sentence
        st, _, body, _ = exchange(srv.port, data)
        reason = json.loads(body).get("detail", "") if st == status else ""
        T.check(needle in reason, "%s: %s %r lacks %r" % (name, st, reason, needle))
    # the cut of a long path or method is marked, and the rest of the sentence is kept
    # (issue 29: and says how many bytes it cut)
    import re
    for data, head, tail in [(req("GET", "/" + "p" * 300), '"/ppp', r'\.\.\." \[cut: \d+ bytes\]; the page is at /'),
                             (req("B" * 80, "/api/v1/eval"), 'method "BBB', r'\.\.\." \[cut: \d+ bytes\] is not allowed on /api/v1/eval'),
                             (req("GET", "/api/v1/registry/" + "k" * 250 + "/x"), 'nothing at "/api/v1/registry/kkk', r'\.\.\." \[cut: \d+ bytes\]')]:
        st, _, body, _ = exchange(srv.port, data)
        reason = json.loads(body).get("detail", "") if st else ""
        T.check(head in reason and re.search(tail, reason), "a cut marked with ... and its size: %r" % reason)
    # a 406 quotes the Accept header; cut, it says so and how much. By hand: the quote's buffer is
    # 160 bytes; the mark of a 316-byte header takes 21 ('..." [cut: ' 11, 3 digits, ' bytes]' 7)
    # and the NUL 1, leaving 138 for the opening quote and 137 bytes of the header: 179 are cut.
    accept = "text/html;q=1;a=" + "x" * 300
    st, _, body, _ = exchange(srv.port, req("GET", "/api/v1/rules", [("Accept", accept)]))
    reason = json.loads(body).get("detail", "") if st == 406 else ""
    T.check(('Accept header "%s..." [cut: 179 bytes] takes neither' % accept[:137]) in reason,
            "a 406's Accept header cut with its size: %s %r" % (st, reason))
    # issue 29, class 3: a key no chosen rule uses is refused, the message exactly as the CLI's
    # (tests/cli/bad_inputs.txt) and Python's (tests/python/test_used_or_refused.py)
    S = "scenario=ReferenceJobAttackSurface"
    for target, field, reason in [
            ("/api/v1/cost?" + S + "&rule=median&convention=byzfl", "convention",
             "convention is not used by rule median (convention is used by krum, multi_krum)"),
            ("/api/v1/cost?" + S + "&rule=median&iterations=5", "iterations",
             "iterations is not used by rule median (iterations is used by geometric_median, "
             "centered_clipping)"),
            ("/api/v1/sweep?" + S + "&dp_degree=2,4&convention=byzfl", "convention",
             "convention is not used by a sweep without a rule (convention is used by krum, "
             "multi_krum)"),
            ("/api/v1/plot.svg?" + S + "&dp_degree=2,4&rule=krum&iterations=3", "iterations",
             "iterations is not used by rule krum (iterations is used by geometric_median, "
             "centered_clipping)")]:
        st, _, body, _ = exchange(srv.port, req("GET", target))
        obj = json.loads(body) if st == 400 else {}
        T.check(st == 400 and obj.get("field") == field and obj.get("detail") == reason,
                "%s: 400 %s %r, got %s %r" % (target, field, reason, st, body[:300]))
    # issue 29: the nccl reader's refusals (tests/cli/bad_inputs.txt has the same files for the
    # CLI), rates without their units, an undefined fit with its reason: 400, the message as the
    # CLI's
    HERE = os.path.dirname(os.path.abspath(__file__))
    BAD = os.path.join(HERE, "..", "cli", "bad")
    DATA = os.path.join(HERE, "..", "data")

    def slurp(*p):
        with open(os.path.join(*p), "rb") as f:
            return f.read()
    one_size = slurp(DATA, "nccl-real", "06_gb10_2ranks_all_gather_one_size.txt")
    part, ptype = multipart([("calibration", "one_size.txt", one_size)])
    COST = "/api/v1/cost?" + S + "&rule=median&schedule=allgather"
    for what, data, field, texts in [
            ("a single Rank line of id 5", req("POST", "/api/v1/calibrate", body=slurp(BAD, "nccl_broadcast_rank5_only.txt")),
             "ranks", ['its 1 "#  Rank" line skips ids', "busbw/algbw is 1 at any rank count for it",
                       "give ranks N (the ranks of the run; at least 6, as its lines name rank 5)"]),
            ("a single Rank line of id 0", req("POST", "/api/v1/calibrate", body=slurp(BAD, "nccl_broadcast_rank0_only.txt")),
             "ranks", ['it shows one "#  Rank" line', "ranks 1 if it ran on one GPU"]),
            ("elided Rank lines", req("POST", "/api/v1/calibrate", body=slurp(BAD, "nccl_broadcast_elided.txt")),
             "ranks", ['its "#  Rank" lines are elided (line 6)', "at least 8, as its lines name rank 7"]),
            ("ranks below a Rank line", req("POST", "/api/v1/calibrate?ranks=4",
                                            body=slurp(BAD, "nccl_broadcast_rank5_only.txt")),
             "ranks", ['ranks 4 is given, but this broadcast test\'s "#  Rank" lines name rank 5: the run had at '
                       "least 6 ranks"]),
            ("rows that disagree", req("POST", "/api/v1/calibrate", body=slurp(BAD, "nccl_rows_disagree.txt")),
             "ranks", ["busbw/algbw differs between rows: no rank count fits every row", "give ranks N"]),
            ("an undefined fit", req("POST", COST, [("Content-Type", ptype)], part),
             "calibration", ["all_gather on 2 ranks has 1 distinct size (17179869184 B); a fit needs at least 2"]),
            # a prediction no model can answer is refused, not an empty row (issue 29, round 4)
            ("a prediction nothing answers", req("POST", "/api/v1/calibrate?predict=1GiB", body=one_size),
             "predict", ["cannot predict all_gather on 2 ranks at 1073741824 B: no model can answer",
                         "only 17179869184 B was measured"]),
            ("a scale nothing answers", req("POST", "/api/v1/calibrate?at=4", body=one_size),
             "at", ["cannot predict all_gather on 4 ranks at 17179869184 B: no model can answer"]),
            ("compute_rate without a unit", req("GET", COST + "&compute_rate=1e15"), "compute_rate",
             ['compute_rate: "1e15" has no unit; a rate needs one']),
            ("memory_bandwidth a count", req("GET", COST + "&memory_bandwidth=3B"), "memory_bandwidth",
             ['memory_bandwidth: "3B" does not end in a unit of bandwidth'])]:
        st, _, body, _ = exchange(srv.port, data)
        obj = json.loads(body) if st == 400 else {}
        reason = obj.get("detail", "")
        T.check(st == 400 and obj.get("field") == field and all(t in reason for t in texts),
                "%s: 400 %s %r, got %s %r" % (what, field, texts, st, body[:400]))
    print("%d bad requests, %d answered with the error object" % (len(CASES), ours))

    # a client that sends its headers slowly is dropped within the timeout
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    s.sendall(b"GET /api/v1/rules HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    t0 = time.monotonic()
    dropped = False
    for i in range(100):  # at most 100 x 0.25 s, far beyond the 2 s timeout
        try:
            s.sendall(b"X-Slow-%d: 1\r\n" % i)
            s.settimeout(0.25)
            if s.recv(4096) == b"":
                dropped = True
                break
        except socket.timeout:
            continue
        except OSError:
            dropped = True
            break
    s.close()
    T.check(dropped, "slow headers: the connection was dropped (%.1f s)" % (time.monotonic() - t0))
    # and so is one that sends half a body and waits
    st, hd, body, err = exchange(srv.port, req("POST", "/api/v1/eval", [("Content-Length", "100")])
                                 + b"dp_degree: 8\n", timeout=30)
    T.check(st is None and body == b"", "a half-sent body is dropped, not answered (%s %r)" % (st, body[:80]))
    # connections closed mid-request: in the request line, in the headers, in the body
    for part in [b"GET /api/v1/ru", b"GET /api/v1/rules HTTP/1.1\r\nHost: 1",
                 req("POST", "/api/v1/eval", [("Content-Length", "1000")]) + b"workload: GP"]:
        c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        c.sendall(part)
        c.close()
    # a connection reset (RST) in the middle of a request
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    c.sendall(b"GET /api/v1/eval?" + REF.encode() + b" HTTP/1.1\r\nHost: x\r\n")
    c.close()
    # a client that goes away before reading its answer
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    c.sendall(req("GET", "/api/v1/registry/models"))
    c.close()
    time.sleep(0.5)
    T.check(srv.alive(), "the server survived every connection closed mid-request")
    st, _, body, _ = exchange(srv.port, req("GET", "/api/v1/eval?" + REF))
    T.check(st == 200 and json.loads(body)["attributes"]["gather_traffic_ratio"] == 64,
            "after the catalogue the server still answers (%s)" % st)
    # keep-alive after an error: two requests on one connection, the first refused
    st, _, body, _ = exchange(srv.port, req("GET", "/api/v1/eval?dp_degree=0", close=False)
                              + req("GET", "/api/v1/rules?n=4"))
    T.check(st == 400 and body.count(b"HTTP/1.1 200 OK") == 1,
            "keep-alive: a refused request, then an answered one on the same connection")

code = srv.stop()
T.check(code == 0, "the server stopped cleanly on SIGTERM (exit %r)" % code)
log = srv.log()
T.check("listening on http://127.0.0.1:" in log, "the server said where it listens")
T.check(log.count('"GET /api/v1/eval?') >= 30, "one access-log line per request")
T.done()
