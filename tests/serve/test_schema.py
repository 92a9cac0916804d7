# SPDX-License-Identifier: Apache-2.0
"""Every JSON answer of a request set generated from dpas serve's OpenAPI document validates against
the response schema the document gives for its status (python3-jsonschema, draft 2020-12), and
every error is an RFC 9457 problem (application/problem+json, its "status" the HTTP one).

The request set: for every operation (each path's GET and POST), its example request; then that
request with each documented parameter set to its example, to each value of its enum and, for a
list (x-dpas-values), to each value; a POST carries the calibration example (the calibrate body,
or the same log as a "calibration" part). Every status the server answers must be documented for
the operation, and every answer must fit that status's schema: the contract is the document.

Usage: /usr/bin/python3 test_schema.py DPAS"""

import json
import os
import sys
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, multipart  # noqa: E402

import jsonschema  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

DPAS = sys.argv[1]
T = Checks()


def with_param(target, name, value):
    """The target with name=value in its query, in place of the value it had."""
    path, _, query = target.partition("?")
    pairs = [p for p in query.split("&") if p and p.split("=", 1)[0] != name]
    pairs.append("%s=%s" % (name, quote(str(value), safe=",.")))
    return path + "?" + "&".join(pairs)


def requests_of(path, op):
    """The generated targets of one operation: its example, then one parameter at a time."""
    ok = op["responses"].get("200", {})
    base = ok.get("x-dpas-example-request")
    if not base:  # the index, the document, a POST whose example is its GET's
        base = path.replace("{name}", "ReferenceJobAttackSurface").replace("{kind}", "fleets")
    out = [base]
    for prm in op.get("parameters", []):
        if prm["in"] == "path":
            for v in prm["schema"].get("enum", []):
                out.append(path.replace("{" + prm["name"] + "}", quote(v)))
            continue
        values = []
        if "example" in prm:
            values.append(prm["example"])
        values += prm["schema"].get("enum", [])
        values += prm.get("x-dpas-values", [])
        for v in values:
            out.append(with_param(base, prm["name"], v))
    return list(dict.fromkeys(out))


with Server(DPAS, "--quiet") as srv:
    st, _, doc = srv.get_json("/api/v1/openapi.json")
    T.check(st == 200, "the document (%s)" % st)
    resolver = jsonschema.RefResolver(base_uri="", referrer=doc)
    log = doc["paths"]["/api/v1/calibrate"]["post"]["requestBody"]["content"]["text/plain"][
        "example"].encode()
    part, part_type = multipart([("calibration", "nccl.txt", log)])
    counts = {"requests": 0, "json": 0, "problems": 0, "svg": 0}
    for path, item in doc["paths"].items():
        for method, op in item.items():
            for target in requests_of(path, op):
                body, headers = None, {}
                if method == "post" and path == "/api/v1/calibrate":
                    body = log
                elif method == "post":
                    body, headers = part, {"Content-Type": part_type}
                status, hd, data = srv.request(method.upper(), target, body, headers)
                counts["requests"] += 1
                where = "%s %s" % (method.upper(), target)
                resp = op["responses"].get(str(status))
                if not T.check(resp is not None, "%s: status %s is documented for the operation"
                               % (where, status)):
                    continue
                ctype = hd.get("content-type", "").split(";")[0]
                if status >= 400:
                    T.check(ctype == "application/problem+json",
                            "%s: the error is application/problem+json (%r)" % (where, ctype))
                if ctype == "image/svg+xml":
                    counts["svg"] += 1
                    T.check(data.startswith(b"<svg") or data.startswith(b"<?xml"), "%s: an SVG" % where)
                    continue
                if ctype not in ("application/json", "application/problem+json"):
                    T.check(False, "%s: a JSON answer (%r)" % (where, ctype))
                    continue
                media = resp.get("content", {}).get(ctype)
                if not T.check(media is not None, "%s: %s documented for %s" % (where, ctype, status)):
                    continue
                value = json.loads(data)
                errors = [e.message for e in Draft202012Validator(media["schema"], resolver=resolver)
                          .iter_errors(value)][:3]
                T.check(not errors, "%s: the %s answer fits its schema: %r\n  %s"
                        % (where, status, errors, data[:300]))
                if status >= 400:
                    counts["problems"] += 1
                    T.check(value.get("status") == status and value.get("type", "").startswith(
                        "urn:dpas:error:"), "%s: the problem's status is %s" % (where, status))
                else:
                    counts["json"] += 1
    # the generated set covers every operation, and enough of each kind of answer to mean it
    print("%(requests)d requests: %(json)d JSON answers, %(problems)d problems, %(svg)d SVG"
          % counts)
    T.check(counts["json"] >= 100 and counts["problems"] >= 10 and counts["svg"] >= 10,
            "the set has JSON answers, problems and plots: %r" % counts)

code = srv.stop()
T.check(code == 0, "the server stopped cleanly (exit %r)" % code)
T.done()
