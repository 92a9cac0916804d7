# SPDX-License-Identifier: Apache-2.0
"""dpas serve's OpenAPI 3.1 document (/api/v1/openapi.json) against the server itself.

- Every documented example is sent to the server: the example request of each operation must
  answer 200 with the documented body, and each documented error example the documented status
  and error object (a consistency test: the document's examples are the server's answers).
- Every body is validated against the document's schemas (python3-jsonschema, draft 2020-12), as
  is every parameter example against its parameter's schema, and error objects from requests the
  document does not list (404, 405, 406, 413, 414, 422).
- The document's query keys of each operation are the keys the server takes, read from the
  server's own refusal of an unknown key (which lists them), and its CLI flags are those
  `dpas eval --help` prints; its paths are those of the index (GET /api/v1).
- The names an option's enum lists are accepted by the server.
- The page's document (GET /) carries in its data block the part of this document the page
  reads (the eval and cost parameters, without their sentences and examples) and the server's
  own answers to the registry's lists and the rule catalogue (consistency tests: two of the
  server's paths), with no '<' that could end the block; the lists, kept by the server, answer
  the same bytes every time, in JSON and in CSV.

Usage: /usr/bin/python3 test_openapi.py DPAS"""

import json
import os
import re
import subprocess
import sys
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, multipart  # noqa: E402

import jsonschema  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

DPAS = sys.argv[1]
T = Checks()


def validator(doc, schema):
    resolver = jsonschema.RefResolver(base_uri="", referrer=doc)
    return Draft202012Validator(schema, resolver=resolver)


def errors_of(doc, schema, value):
    return [e.message for e in validator(doc, schema).iter_errors(value)][:3]


with Server(DPAS, "--quiet") as srv:
    st, hd, doc = srv.get_json("/api/v1/openapi.json")
    T.check(st == 200 and hd.get("content-type") == "application/json; charset=utf-8",
            "the document: 200, JSON (%s)" % st)
    T.check(doc.get("openapi") == "3.1.0", "OpenAPI 3.1.0 (%r)" % doc.get("openapi"))
    version = subprocess.run([DPAS, "--version"], capture_output=True, text=True).stdout
    T.check(doc["info"].get("title") and doc["info"].get("version") in version,
            "info: a title and the version %r (dpas --version: %r)" % (doc["info"].get("version"), version))
    T.check("x-dpas-incomplete" not in doc and "(undocumented" not in json.dumps(doc),
            "every route, input and option is described (%r)" % doc.get("x-dpas-incomplete"))
    # the Error schema is itself a valid draft 2020-12 schema
    Draft202012Validator.check_schema(doc["components"]["schemas"]["Problem"])

    # ---- the paths are the index's, with the same methods ----
    _, _, index = srv.get_json("/api/v1")
    listed = {e["path"].replace("NAME", "{name}").replace("KIND", "{kind}"): set(e["methods"])
              for e in index["endpoints"]}
    documented = {p: {m.upper() for m in item} for p, item in doc["paths"].items()}
    T.check(listed == documented, "the document's paths and methods are the index's:\n%r\n%r"
            % (sorted(listed.items()), sorted(documented.items())))

    # ---- the CLI flags the document names are dpas's ----
    help_text = subprocess.run([DPAS, "eval", "--help"], capture_output=True, text=True).stdout
    op_ids = set()
    ops = [(p, m, op) for p, item in doc["paths"].items() for m, op in item.items()]
    for path, method, op in ops:
        where = "%s %s" % (method.upper(), path)
        T.check(op["operationId"] not in op_ids, "%s: a unique operationId" % where)
        op_ids.add(op["operationId"])
        for prm in op.get("parameters", []):
            T.check({"name", "in", "schema"} <= set(prm), "%s: parameter %r is complete" % (where, prm))
            Draft202012Validator.check_schema(prm["schema"])
            if "example" in prm:
                e = errors_of(doc, prm["schema"], prm["example"])
                T.check(not e, "%s: the example of %s fits its schema: %r" % (where, prm["name"], e))
            flag = prm.get("x-dpas-cli-flag")
            if flag:
                T.check(re.search(r"(^|\s)%s\b" % re.escape(flag), help_text) is not None,
                        "%s: %s's flag %s is in dpas eval --help" % (where, prm["name"], flag))
            for v in prm["schema"].get("enum", []) if prm["in"] == "path" else []:
                probe = path.replace("{name}", quote(v)).replace("{kind}", quote(v))
                s, _, _ = srv.request("GET", probe)
                T.check(s == 200, "%s: the path's %r answers 200 (%s)" % (where, v, s))

        # ---- the query keys are the ones the server takes (from its own refusal) ----
        probe = path.replace("{name}", "ReferenceJobAttackSurface").replace("{kind}", "fleets")
        s, _, err = srv.get_json(probe + "?zz_not_a_key=1", method.upper(),
                                 b"x" if method == "post" else None)
        m = re.search(r"takes (.*)$", err.get("detail", ""))
        takes = set() if not m or m.group(1) == "none" else set(m.group(1).split(", "))
        if method == "get":  # network_model reads a calibration, which only a POST carries
            takes.discard("network_model")
        query = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
        T.check(s == 400 and takes == query,
                "%s: the documented query keys are the ones the server takes:\n  doc    %s\n"
                "  server %s" % (where, sorted(query), sorted(takes)))

        # ---- the examples, sent to the server ----
        body = None
        if method == "post":
            rb = op.get("requestBody", {}).get("content", {})
            body = rb.get("text/plain", {}).get("example", "").encode() or None
        for code, resp in op["responses"].items():
            target = resp.get("x-dpas-example-request")
            if not target:
                continue
            status, hdrs, got = srv.request(method.upper(), target, body=body if code == "200" else None)
            content = resp["content"]
            media = next(iter(content))
            T.check(status == int(code), "%s: the example %s answers %s (%s)" % (where, target, code, status))
            T.check(hdrs.get("content-type", "").split(";")[0] == media,
                    "%s: %s is %s (%r)" % (where, target, media, hdrs.get("content-type")))
            example = content[media].get("example")
            value = got.decode() if media == "image/svg+xml" else json.loads(got)
            T.check(value == example, "%s: %s answers the documented example:\n  %s\n  %s"
                    % (where, target, json.dumps(value)[:300], json.dumps(example)[:300]))
            e = errors_of(doc, content[media]["schema"], value)
            T.check(not e, "%s: %s's body fits the %s schema: %r" % (where, target, code, e))
        T.check("x-dpas-example-request" in op["responses"]["200"] or path in
                ("/api/v1", "/api/v1/openapi.json") or method == "post",
                "%s: an example of success" % where)

    # ---- error objects the document does not list fit its Error schema ----
    err_schema = {"$ref": "#/components/schemas/Problem"}
    log = ops and next(op for p, m, op in ops if p == "/api/v1/calibrate")["requestBody"][
        "content"]["text/plain"]["example"].encode()
    for what, method, target, body, headers, want in [
            ("an unknown path", "GET", "/api/v2/x", None, {}, 404),
            ("a method not allowed", "DELETE", "/api/v1/eval", None, {}, 405),
            ("a type nothing answers", "GET", "/api/v1/rules", None, {"Accept": "image/png"}, 406),
            ("a body over 256 KiB", "POST", "/api/v1/calibrate", b"x" * (300 * 1024), {}, 413),
            ("a query value over 1 KiB", "GET", "/api/v1/eval?model=" + "x" * 1100, None, {}, 414),
            ("a physics violation", "GET", "/api/v1/memory?scenario=ReferenceJobAttackSurface",
             None, {}, 422),
            ("a calibration of the wrong kind", "POST", "/api/v1/calibrate?collective=nope", log,
             {}, 400)]:
        s, _, got = srv.get_json(target, method, body, headers)
        e = errors_of(doc, err_schema, got)
        T.check(s == want and not e, "%s: %s with an error object that fits the schema (%s, %r)"
                % (what, want, s, e))
        T.check(str(want) in doc["paths"].get(target.split("?")[0], {}).get(method.lower(), {}).get(
            "responses", {str(want): 1}), "%s: the document lists %s for %s" % (what, want, target))

    # ---- the names an enum lists are taken by the server ----
    def enum_of(path, method, name):
        for prm in doc["paths"][path][method]["parameters"]:
            if prm["name"] == name:
                return prm["schema"].get("enum", [])
        return []
    ref = "scenario=ReferenceJobAttackSurface"
    for v in enum_of("/api/v1/memory", "get", "state"):
        s, _, _ = srv.request("GET", "/api/v1/memory?%s&dp_degree=8&state=%s" % (ref, v))
        T.check(s in (200, 422), "memory: state=%s is taken (%s)" % (v, s))
    for v in enum_of("/api/v1/cost", "get", "convention"):
        s, _, _ = srv.request("GET", "/api/v1/cost?%s&convention=%s" % (ref, v))
        T.check(s == 200, "cost: convention=%s is taken (%s)" % (v, s))
    def values_of(path, method, name):
        for prm in doc["paths"][path][method]["parameters"]:
            if prm["name"] == name:
                return prm.get("x-dpas-values", [])
        return []
    # every attr a GET lists works over GET (a calibration's basis and band are POST's only)
    get_attrs = values_of("/api/v1/sweep", "get", "attr")
    T.check(get_attrs and not [v for v in get_attrs if "band" in v or v == "time_basis"],
            "sweep GET lists no metric of a calibration: %r" % get_attrs)
    for v in get_attrs:
        vary = "f=0,1" if v == "dp_degree" else "dp_degree=2,4"  # as plot.svg's y below
        s, _, _ = srv.request("GET", "/api/v1/sweep?%s&%s&schedule=sharded&rule=median&attr=%s"
                              % (ref, vary, v))
        T.check(s == 200, "sweep GET: attr=%s is taken (%s)" % (v, s))
    T.check(not enum_of("/api/v1/plot.svg", "get", "y"), "y lists no values of its own (attr's)")
    for v in [a for a in values_of("/api/v1/plot.svg", "post", "attr")
              if a not in ("time_basis", "time_model")]:  # y: a number
        # dp_degree is a metric where N follows f (a varied dp_degree is a column already)
        vary = "f=0,1" if v == "dp_degree" else "dp_degree=2,4"
        target = ("/api/v1/plot.svg?%s&%s&schedule=sharded&rule=median&attr=%s&y=%s"
                  % (ref, vary, v, v))
        if v.startswith("time_band"):  # a calibration's band: with the example log as one
            body, ct = multipart([("calibration", "nccl.txt", log)])
            s, _, _ = srv.request("POST", target, body, {"Content-Type": ct})
        else:
            s, _, _ = srv.request("GET", target)
        T.check(s == 200, "plot.svg: y=%s is taken (%s)" % (v, s))
    T.check(sorted(enum_of("/api/v1/cost", "post", "network_model")) ==
            ["alpha_beta", "default", "empirical", "nccl", "piecewise"],
            "the five network models (default, nccl, empirical, piecewise, alpha_beta)")

    # ---- the page's document carries what the page needs before its first result ----
    s, hd, page = srv.request("GET", "/")
    page = page.decode("utf-8")
    m = re.search(r'<script type="application/json" id="dpas-data">(.*?)</script>', page, re.S)
    T.check(s == 200 and m, "the page's document has its data block (%s)" % s)
    block = m.group(1) if m else "{}"
    data = json.loads(block)
    T.check("<" not in block, "no '<' in the data block (written \\u003c)")
    for path, method in [("/api/v1/eval", "get"), ("/api/v1/cost", "post")]:
        want = [{k: v for k, v in p.items() if k not in ("description", "example")}
                for p in doc["paths"][path][method]["parameters"]]
        got = data.get("paths", {}).get(path, {}).get(method, {}).get("parameters")
        T.check(got == want, "the page's document carries %s %s's %d parameters as this document "
                "gives them, but their sentences and examples" % (method.upper(), path, len(want)))
    carried = data.get("answers", {})
    lists = ["/api/v1/registry/" + k for k in ("models", "fleets", "nodes", "fabrics", "precisions")]
    T.check(sorted(carried) == sorted(lists + ["/api/v1/rules"]),
            "the page's document carries the registry's lists and the rule catalogue: %r" % sorted(carried))
    for path in lists + ["/api/v1/rules"]:
        st, _, body = srv.request("GET", path)
        T.check(st == 200 and carried.get(path) == json.loads(body),
                "the page's document carries the server's answer to GET %s" % path)
    T.check(data.get("max_body_bytes") == index.get("max_body_bytes"),
            "and the body limit of the index (%r)" % data.get("max_body_bytes"))
    for path in lists + ["/api/v1/registry/hardware", "/api/v1/scenarios", "/api/v1/keys"]:
        for accept in ("application/json",) + (() if path.endswith("keys") else ("text/csv",)):
            answers = [srv.request("GET", path, headers={"Accept": accept}) for _ in range(3)]
            T.check(all(a[0] == 200 for a in answers) and len({a[2] for a in answers}) == 1
                    and answers[0][1].get("content-type", "").startswith(accept),
                    "GET %s as %s: the same %d bytes every time" % (path, accept, len(answers[0][2])))

code = srv.stop()
T.check(code == 0, "the server stopped cleanly (exit %r)" % code)
T.done()
