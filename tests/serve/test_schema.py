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
    # The documents written from the library's field tables (eval, cost, step, memory,
    # inventory): their 200 schemas declare every field, so an answer with a field the schema
    # does not name, or without one it requires, is refused; a set of requests that makes each
    # optional field appear (f, a compute rate, a calibration, ZeRO, explain, a state that does
    # not fit, a fleet given by its parts) fits them, and between them every declared field of a
    # document and of its rows is seen in some answer.
    STRICT = {"/api/v1/eval": [
                  "/api/v1/eval?model=GPT3&fleet=Training_1K&dp_degree=96&gradient_bytes_per_param="
                  "4.127bit&checkpoint_bytes_per_param=14B&weight_bytes_per_param=2B&explain=true",
                  "/api/v1/eval?parameters=7B&nodes=3&accelerators_per_node=8&dp_degree=3"
                  "&gradient_bytes_per_param=bf16&checkpoint_bytes_per_param=14B&attr=accelerators",
                  "/api/v1/eval?parameters=7B&nodes=3&accelerators_per_node=8&node=DGX_H100&dp_degree=3"
                  "&gradient_bytes_per_param=bf16&checkpoint_bytes_per_param=14B"],
              "/api/v1/scenarios/{name}": ["/api/v1/scenarios/ReferenceJobAttackSurface?explain=true"],
              "/api/v1/cost": [
                  "/api/v1/cost?scenario=ReferenceJobAttackSurface&f=3&compute_rate=1e15%20FLOP/s",
                  "/api/v1/cost?parameters=3&nodes=3&accelerators_per_node=1&dp_degree=3"
                  "&gradient_bytes_per_param=4.127bit&checkpoint_bytes_per_param=14B&rule=median",
                  ("post", "/api/v1/cost?scenario=ReferenceJobAttackSurface&network_model=nccl"
                   "&compute_rate=1e15%20FLOP/s&f=1")],
              "/api/v1/step": [
                  "/api/v1/step?model=Llama3_8B&fleet=Lab_64_H100&dp_degree=64&gradient_bytes_per_param="
                  "bf16&checkpoint_bytes_per_param=14B&tokens=4M&zero=3&rule=median,krum",
                  "/api/v1/step?model=Llama3_8B&fleet=Lab_64_H100&dp_degree=64&gradient_bytes_per_param="
                  "bf16&checkpoint_bytes_per_param=14B&tokens=4M&micro_batch=1&recompute=full"],
              "/api/v1/memory": [
                  "/api/v1/memory?scenario=ReferenceJobAttackSurface&require_fit=false",
                  "/api/v1/memory?scenario=ReferenceJobAttackSurface&dp_degree=16&micro_batch=1"],
              "/api/v1/inventory": [
                  "/api/v1/inventory?parameters=3&nodes=3&accelerators_per_node=1&dp_degree=3"
                  "&gradient_bytes_per_param=4.127bit&checkpoint_bytes_per_param=14B"]}

    def declared(schema, prefix=""):
        """The field paths a schema declares (rows' fields as rows[].name), beside _exact."""
        out = set()
        for name, sub in schema.get("properties", {}).items():
            if name.endswith("_exact") or prefix.endswith("attributes.") or \
                    prefix.endswith("undefined.") or prefix.endswith("equations."):
                continue
            out.add(prefix + name)
            if "properties" in sub and name not in ("attributes", "undefined", "equations"):
                out |= declared(sub, prefix + name + ".")
            items = sub.get("items", {})
            if "properties" in items:
                out |= declared(items, prefix + name + "[].")
        return out

    def present(value, prefix=""):
        out = set()
        for name, v in value.items():
            out.add(prefix + name)
            if isinstance(v, dict) and name not in ("attributes", "undefined", "equations"):
                out |= present(v, prefix + name + ".")
            if isinstance(v, list) and v and isinstance(v[0], dict):
                for row in v:
                    out |= present(row, prefix + name + "[].")
        return out

    strict = 0
    for path, targets in STRICT.items():
        op = doc["paths"][path]["get"]
        schema = op["responses"]["200"]["content"]["application/json"]["schema"]
        T.check(schema.get("additionalProperties") is False and len(schema["required"]) > 3,
                "%s: the 200 schema names its fields, and no others (%d required)"
                % (path, len(schema.get("required", []))))
        seen = set()
        examples = [op["responses"]["200"].get("x-dpas-example-request")] + targets
        for t in examples:
            method, target = t if isinstance(t, tuple) else ("get", t)
            body, headers = (part, {"Content-Type": part_type}) if method == "post" else (None, {})
            status, hd, data = srv.request(method.upper(), target, body, headers)
            if not T.check(status == 200, "%s %s: 200 (%s %s)" % (method, target, status, data[:200])):
                continue
            value = json.loads(data)
            v = Draft202012Validator(schema, resolver=resolver)
            errors = [e.message for e in v.iter_errors(value)][:3]
            T.check(not errors, "%s: fits its schema: %r" % (target, errors))
            seen |= present(value)
            strict += 1
            # the schema is not vacuous: an unknown field, or a missing one, is refused
            extra = dict(value, not_a_field=1)
            T.check(not v.is_valid(extra), "%s: an unknown field is refused" % target)
            fewer = dict(value)
            fewer.pop(schema["required"][-1])
            T.check(not v.is_valid(fewer), "%s: a missing field is refused" % target)
        missing = declared(schema) - seen - {"dpas_version", "schema_version"}
        T.check(not missing, "%s: every declared field is seen in some answer: %s"
                % (path, sorted(missing)))
    counts["strict"] = strict

    # the generated set covers every operation, and enough of each kind of answer to mean it
    print("%(requests)d requests: %(json)d JSON answers, %(problems)d problems, %(svg)d SVG; "
          "%(strict)d answers of the field-table documents checked strictly" % counts)
    T.check(counts["json"] >= 100 and counts["problems"] >= 10 and counts["svg"] >= 10,
            "the set has JSON answers, problems and plots: %r" % counts)

code = srv.stop()
T.check(code == 0, "the server stopped cleanly (exit %r)" % code)
T.done()
