# SPDX-License-Identifier: Apache-2.0
"""dpas serve answers only the hosts it serves, and only its own pages read its answers (issue 21).

DNS rebinding: a page from attacker.example, whose name the attacker points at 127.0.0.1, reaches
a loopback server with `Host: attacker.example:PORT`; the server refuses every Host but its
address, localhost (on loopback) and the --allow-host names (421), a malformed or missing one
(400). A request whose Origin is another site is refused (403) unless --allow-origin names it;
then the answer carries Access-Control-Allow-Origin and a CORS preflight is answered (204).
Every refusal is the JSON error object with the security headers.

Usage: test_host.py DPAS"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, raw_exchange  # noqa: E402

DPAS = sys.argv[1]
T = Checks()


def req(method, target, host, headers=()):
    h = "%s %s HTTP/1.1\r\n" % (method, target)
    if host is not None:
        h += "Host: %s\r\n" % host
    for k, v in headers:
        h += "%s: %s\r\n" % (k, v)
    return (h + "Connection: close\r\n\r\n").encode("latin-1")


def expect(srv, name, data, status, field=None):
    st, hd, body = raw_exchange(srv.port, data)
    if not T.check(st == status, "%s: status %s, expected %s (%r)" % (name, st, status, body[:200])):
        return hd, None
    obj = None
    if status >= 400:
        try:
            obj = json.loads(body)
        except ValueError:
            pass
        T.check(isinstance(obj, dict) and obj.get("status") == status and obj.get("detail"),
                "%s: the error object (%r)" % (name, body[:200]))
        if isinstance(obj, dict) and field:
            T.check(obj.get("field") == field, "%s: field %r, expected %r" % (name, obj.get("field"), field))
        T.check(hd.get("content-security-policy", "").startswith("default-src 'self'"),
                "%s: the security headers" % name)
    return hd, obj


with Server(DPAS, "--quiet") as srv:
    P = srv.port
    for host in ["127.0.0.1:%d" % P, "127.0.0.1", "localhost:%d" % P, "LOCALHOST:%d" % P,
                 "localhost.:%d" % P, "127.0.0.1:9999"]:
        expect(srv, "Host %s" % host, req("GET", "/api/v1/rules?n=4", host), 200)
    for host in ["attacker.example:%d" % P, "attacker.example", "localhost.attacker.example:%d" % P,
                 "127.0.0.2:%d" % P, "[::1]:%d" % P, "0.0.0.0:%d" % P, "127.0.0.1.nip.io:%d" % P]:
        hd, obj = expect(srv, "Host %s" % host, req("GET", "/api/v1/rules?n=4", host), 421, "host")
        if obj:
            T.check("--allow-host" in obj["detail"] and host in obj["detail"],
                    "Host %s: the message names the host and the option (%s)" % (host, obj["detail"]))
    for host in ["user@127.0.0.1:%d" % P, "127.0.0.1:99999", "127.0.0.1:", "[::1", "a b",
                 "::1:%d" % P, "127.0.0.1:8x"]:
        expect(srv, "malformed Host %r" % host, req("GET", "/api/v1/rules", host), 400, "host")
    expect(srv, "HTTP/1.0 without Host", b"GET /api/v1/rules HTTP/1.0\r\n\r\n", 400, "host")
    # the page and every route are guarded alike, heavy ones and POSTs included
    expect(srv, "the page from a rebound name", req("GET", "/", "attacker.example:%d" % P), 421, "host")
    expect(srv, "calibrate from a rebound name",
           req("POST", "/api/v1/calibrate", "attacker.example:%d" % P, [("Content-Length", "0")]), 421, "host")
    # Origin: the server's own pages, through any name it serves, may ask; others may not
    for origin in ["http://127.0.0.1:%d" % P, "http://localhost:%d" % P]:
        hd, _ = expect(srv, "Origin %s" % origin,
                       req("GET", "/api/v1/rules", origin.split("//")[1], [("Origin", origin)]), 200)
        T.check("access-control-allow-origin" not in hd, "same origin: no CORS header")
    for origin in ["http://attacker.example", "null", "http://127.0.0.1:%d.attacker.example" % P,
                   "https://localhost:1"]:
        hd, _ = expect(srv, "Origin %s" % origin,
                       req("POST", "/api/v1/eval", "127.0.0.1:%d" % P,
                           [("Origin", origin), ("Content-Length", "0")]), 403, "origin")
        T.check("access-control-allow-origin" not in hd, "Origin %s: no CORS header" % origin)
    # a header the server reads, given twice, is refused naming it (issue 29: two Sec-Fetch-Site
    # headers were judged by the first; two Origins likewise), in either order
    for name, a, b in [("Sec-Fetch-Site", "same-origin", "cross-site"),
                       ("Sec-Fetch-Site", "cross-site", "same-origin"),
                       ("Origin", "http://127.0.0.1:%d" % P, "http://attacker.example"),
                       ("Host", "127.0.0.1:%d" % P, "attacker.example")]:
        hd, obj = expect(srv, "two %s headers (%s, %s)" % (name, a, b),
                         req("GET", "/api/v1/sweep?model=GPT3&fleet=Training_1K&dp_degree=8,16",
                             "127.0.0.1:%d" % P if name != "Host" else None, [(name, a), (name, b)]),
                         400, "header")
        if obj:
            T.check("the header %s is given 2 times; give it once" % name in obj["detail"],
                    "two %s headers: the message names it (%s)" % (name, obj["detail"]))
    # cross-origin reads stay off: a preflight is not answered
    expect(srv, "a preflight without --allow-origin",
           req("OPTIONS", "/api/v1/eval", "127.0.0.1:%d" % P,
               [("Origin", "http://app.example"), ("Access-Control-Request-Method", "POST")]), 403, "origin")

with Server(DPAS, "--quiet", "--allow-host", "dpas.example,Other.Example.",
            "--allow-origin", "http://app.example:8080,https://tool.example") as srv:
    P = srv.port
    for host in ["dpas.example", "DPAS.example:443", "other.example:%d" % P, "127.0.0.1:%d" % P]:
        expect(srv, "allowed Host %s" % host, req("GET", "/api/v1/rules?n=4", host), 200)
    expect(srv, "a name not allowed", req("GET", "/api/v1/rules", "evil.example"), 421, "host")
    hd, _ = expect(srv, "an allowed origin",
                   req("GET", "/api/v1/rules?n=4", "dpas.example", [("Origin", "http://app.example:8080")]), 200)
    T.check(hd.get("access-control-allow-origin") == "http://app.example:8080",
            "an allowed origin reads the answer (%s)" % hd.get("access-control-allow-origin"))
    T.check(hd.get("vary") == "Origin", "Vary: Origin with --allow-origin")
    hd, _ = expect(srv, "an allowed origin, other case",
                   req("GET", "/api/v1/rules?n=4", "dpas.example", [("Origin", "HTTPS://TOOL.example")]), 200)
    T.check(hd.get("access-control-allow-origin") == "https://tool.example", "the origin as configured")
    hd, _ = expect(srv, "a preflight", req("OPTIONS", "/api/v1/calibrate", "dpas.example",
                                           [("Origin", "http://app.example:8080"),
                                            ("Access-Control-Request-Method", "POST")]), 204)
    T.check(hd.get("access-control-allow-methods") == "GET, HEAD, POST" and
            hd.get("access-control-allow-headers") == "Content-Type" and
            hd.get("access-control-allow-origin") == "http://app.example:8080", "the preflight's headers %r" % hd)
    expect(srv, "an origin not allowed", req("GET", "/api/v1/rules", "dpas.example",
                                             [("Origin", "http://app.example:8081")]), 403, "origin")
    hd, _ = expect(srv, "no Origin", req("GET", "/api/v1/rules", "dpas.example"), 200)
    T.check("access-control-allow-origin" not in hd and hd.get("vary") == "Origin", "no Origin: no CORS header")
    expect(srv, "OPTIONS without a preflight", req("OPTIONS", "/api/v1/eval", "dpas.example"), 405, "method")

T.done()
