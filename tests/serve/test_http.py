# SPDX-License-Identifier: Apache-2.0
"""dpas serve at the HTTP level: CSV by Accept (equal to the CLI's -o csv: a consistency test),
406, ETag and If-None-Match (304), gzip (the decompressed bytes equal the identity's), Vary;
the index listing every API route; '+' in a range sent raw or as %2B; multipart/form-data bodies
(a scenario part equal to the same file as the body; a calibration part equal to the CLI's
--calibration FILE: consistency tests) and the multipart bodies the server refuses, each with
the field it names. Usage: test_http.py DPAS SOURCE_DIR"""

import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, cli_json, multipart  # noqa: E402

DPAS, SRC = sys.argv[1], sys.argv[2]
T = Checks()
NCCL = os.path.join(SRC, "examples", "nccl", "all_reduce_perf_8ranks_synthetic.txt")
REF = "scenario=ReferenceJobAttackSurface"


def cli_text(*args):
    p = subprocess.run([DPAS, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout


with open(NCCL, "rb") as f:
    LOG = f.read()

with Server(DPAS, "--quiet") as srv:
    # ---- CSV by Accept: the CLI's -o csv for the same inputs (consistency) ----
    csv_cases = [
        ("/api/v1/eval?" + REF, ["eval", "--scenario", "ReferenceJobAttackSurface"]),
        ("/api/v1/scenarios/ReferenceJobAttackSurface", ["show", "ReferenceJobAttackSurface"]),
        ("/api/v1/scenarios", ["list", "scenarios"]),
        ("/api/v1/cost?" + REF + "&rule=median,krum&f=10",
         ["cost", "ReferenceJobAttackSurface", "--rule", "median,krum", "--f", "10"]),
        ("/api/v1/rules?n=64", ["rules", "--n", "64"]),
        ("/api/v1/inventory?" + REF, ["inventory", "ReferenceJobAttackSurface"]),
        ("/api/v1/memory?" + REF + "&zero=3", ["memory", "ReferenceJobAttackSurface", "--zero", "3"]),
        ("/api/v1/sweep?" + REF + "&dp_degree=8..64%2B8&schedule=allgather&attr=bytes_per_worker",
         ["sweep", "ReferenceJobAttackSurface", "--dp", "8..64+8", "--schedule", "allgather",
          "--attr", "bytes_per_worker"]),
        ("/api/v1/registry/fleets", ["list", "fleets"]),
    ]
    for path, args in csv_cases:
        st, hd, body = srv.request("GET", path, headers={"Accept": "text/csv"})
        rc, want = cli_text(*args, "-o", "csv")
        T.check(st == 200 and hd.get("content-type") == "text/csv; charset=utf-8",
                "%s with Accept: text/csv: %s %r" % (path, st, hd.get("content-type")))
        T.check(rc == 0 and body == want, "%s: CSV differs from dpas %s -o csv:\n%r\n%r"
                % (path, " ".join(args), body[:300], want[:300]))
        T.check("Accept" in hd.get("vary", ""), "%s: Vary names Accept (%r)" % (path, hd.get("vary")))
    # calibrate's CSV, from a POST body
    st, hd, body = srv.request("POST", "/api/v1/calibrate", body=LOG, headers={"Accept": "text/csv"})
    rc, want = cli_text("calibrate", NCCL, "-o", "csv")
    T.check(st == 200 and body == want, "calibrate as CSV equals dpas calibrate -o csv")
    # a preference: JSON when it is preferred or equal, CSV when it is preferred
    for accept, kind in [("*/*", "json"), ("text/csv;q=0.5, application/json", "json"),
                         ("application/json;q=0.2, text/csv", "csv"), ("text/*", "csv"),
                         ("text/html,application/xhtml+xml,*/*;q=0.8", "json")]:
        st, hd, _ = srv.request("GET", "/api/v1/rules", headers={"Accept": accept})
        T.check(st == 200 and kind in hd.get("content-type", ""),
                "Accept %r gives %s, got %s %r" % (accept, kind, st, hd.get("content-type")))
    # 406: a path without CSV asked for CSV only, and a type nothing answers
    for path, accept in [("/api/v1", "text/csv"), ("/api/v1/rules", "image/png"),
                         ("/api/v1/openapi.json", "text/csv;q=1, application/json;q=0")]:
        st, hd, body = srv.request("GET", path, headers={"Accept": accept})
        err = json.loads(body) if body.startswith(b"{") else {}
        T.check(st == 406 and err.get("field") == "Accept",
                "%s with Accept %r: 406 naming Accept, got %s %r" % (path, accept, st, body[:200]))
    # errors stay JSON whatever was asked
    st, hd, body = srv.request("GET", "/api/v1/rules?n=0", headers={"Accept": "text/csv"})
    T.check(st == 400 and hd.get("content-type") == "application/problem+json",
            "an error asked as CSV is the RFC 9457 problem (%s %r)" % (st, hd.get("content-type")))

    # ---- ETag, If-None-Match, 304 ----
    for path in ["/api/v1/eval?" + REF, "/", "/app.js", "/api/v1/openapi.json"]:
        st, hd, body = srv.request("GET", path)
        tag = hd.get("etag")
        T.check(st == 200 and tag and tag.startswith('"') and tag.endswith('"'),
                "%s: a strong ETag (%r)" % (path, tag))
        st2, hd2, body2 = srv.request("GET", path, headers={"If-None-Match": tag})
        T.check(st2 == 304 and body2 == b"" and hd2.get("etag") == tag,
                "%s: If-None-Match with its tag gives 304 without a body (%s, %d bytes)"
                % (path, st2, len(body2)))
        st3, _, _ = srv.request("GET", path, headers={"If-None-Match": 'W/"0", ' + tag})
        T.check(st3 == 304, "%s: a list of tags naming it gives 304 (%s)" % (path, st3))
        st4, _, body4 = srv.request("GET", path, headers={"If-None-Match": '"not-it"'})
        T.check(st4 == 200 and body4 == body, "%s: another tag gives the full answer" % path)
        st5, _, _ = srv.request("HEAD", path, headers={"If-None-Match": tag})
        T.check(st5 == 304, "%s: HEAD with its tag gives 304 (%s)" % (path, st5))
    # a different answer has a different tag
    _, h1, _ = srv.request("GET", "/api/v1/rules?n=8")
    _, h2, _ = srv.request("GET", "/api/v1/rules?n=9")
    T.check(h1.get("etag") != h2.get("etag"), "different answers, different tags")
    _, h3, _ = srv.request("GET", "/api/v1/rules?n=8", headers={"Accept": "text/csv"})
    T.check(h3.get("etag") != h1.get("etag"), "CSV and JSON of one query, different tags")
    # POST and errors carry no tag
    st, hd, _ = srv.request("POST", "/api/v1/calibrate", body=LOG)
    T.check(st == 200 and "etag" not in hd and hd.get("cache-control") == "no-store",
            "a POST answer has no ETag and is not stored (%r)" % hd)
    st, hd, _ = srv.request("GET", "/api/v1/rules?n=0")
    T.check(st == 400 and "etag" not in hd, "an error has no ETag")

    # ---- gzip ----
    for path in ["/api/v1/eval?" + REF + "&explain=true", "/app.js", "/app.css", "/",
                 "/api/v1/openapi.json", "/api/v1/plot.svg?" + REF + "&dp_degree=2..1024&schedule=allgather"]:
        st, hd, plain = srv.request("GET", path)
        st2, hd2, packed = srv.request("GET", path, headers={"Accept-Encoding": "gzip, deflate"})
        T.check(st2 == 200 and hd2.get("content-encoding") == "gzip",
                "%s: gzip when asked (%s %r)" % (path, st2, hd2.get("content-encoding")))
        T.check(gzip.decompress(packed) == plain and len(packed) < len(plain),
                "%s: the gzip body decompresses to the identity's bytes, smaller (%d < %d)"
                % (path, len(packed), len(plain)))
        T.check("Accept-Encoding" in hd2.get("vary", ""), "%s: Vary names Accept-Encoding" % path)
        T.check(hd.get("etag") != hd2.get("etag"), "%s: gzip and identity have different tags" % path)
        st3, _, _ = srv.request("GET", path, headers={"Accept-Encoding": "gzip",
                                                      "If-None-Match": hd2.get("etag", "")})
        T.check(st3 == 304, "%s: 304 for the gzip variant's tag" % path)
        T.check("content-encoding" not in hd, "%s: no gzip unless asked" % path)
    for enc in ["gzip;q=0", "identity", "br"]:
        _, hd, _ = srv.request("GET", "/app.js", headers={"Accept-Encoding": enc})
        T.check("content-encoding" not in hd, "Accept-Encoding %r: identity (%r)"
                % (enc, hd.get("content-encoding")))

    # ---- the index lists every API route, /api/v1/scenarios and the document among them ----
    st, _, index = srv.get_json("/api/v1")
    listed = {e["path"] for e in index["endpoints"]}
    for p in ["/api/v1", "/api/v1/openapi.json", "/api/v1/scenarios", "/api/v1/scenarios/NAME",
              "/api/v1/eval", "/api/v1/cost", "/api/v1/rules", "/api/v1/inventory", "/api/v1/memory",
              "/api/v1/sweep", "/api/v1/plot.svg", "/api/v1/calibrate", "/api/v1/step",
              "/api/v1/registry/KIND"]:
        T.check(p in listed, "the index lists %s" % p)
    probes = {"/api/v1/sweep": "?" + REF + "&dp_degree=2,4",
              "/api/v1/plot.svg": "?" + REF + "&dp_degree=2,4",
              "/api/v1/memory": "?" + REF + "&zero=3",
              "/api/v1/step": "?" + REF + "&tokens=4M"}
    for e in index["endpoints"]:
        probe = e["path"].replace("NAME", "ReferenceJobAttackSurface").replace("KIND", "fleets")
        if probe in probes:
            probe += probes[probe]
        elif probe in ("/api/v1/eval", "/api/v1/cost", "/api/v1/inventory"):
            probe += "?" + REF
        method = e["methods"][0]
        s, _, _ = srv.request(method, probe, body=LOG if method == "POST" else None)
        T.check(s == 200, "the index's %s %s answers 200 (%s)" % (method, probe, s))

    # ---- '+' in a range: raw (a space once decoded) or as %2B, the same rows ----
    base = "/api/v1/sweep?" + REF + "&schedule=allgather&attr=bytes_per_worker&dp_degree="
    _, _, enc = srv.get_json(base + "8..64%2B8")
    _, _, raw = srv.get_json(base + "8..64+8")
    T.check(enc == raw and [r["dp_degree"] for r in raw["rows"]] == [8, 16, 24, 32, 40, 48, 56, 64],
            "dp_degree=8..64+8 raw and as %%2B give 8, 16, ..., 64: %r" % raw)
    _, _, p1 = srv.get_json("/api/v1/sweep?" + REF + "&attr=gradient_bytes&parameters=1e9..4e9+1e9")
    T.check([r["parameters"] for r in p1["rows"]] == [10**9, 2 * 10**9, 3 * 10**9, 4 * 10**9],
            "parameters=1e9..4e9+1e9 raw: %r" % p1)
    st, _, err = srv.get_json(base + "8..64+8+8")
    T.check(st == 400 and err.get("field") == "dp_degree", "a range with two spaces is refused "
            "by the library's parser (%s %r)" % (st, err))

    # ---- multipart/form-data ----
    yaml = b"scenario: ReferenceJobAttackSurface\ndp_degree: 64\n"
    body, ct = multipart([("scenario", "job.yaml", yaml)])
    st, _, got = srv.get_json("/api/v1/eval", "POST", body, {"Content-Type": ct})
    st2, _, want = srv.get_json("/api/v1/eval", "POST", yaml, {"Content-Type": "application/yaml"})
    T.check(st == 200 and got == want, "a scenario part equals the same file as the body (%s)" % st)
    # a calibration part: the CLI's cost and sweep with --calibration (consistency)
    body, ct = multipart([("calibration", os.path.basename(NCCL), LOG)])
    st, _, got = srv.get_json("/api/v1/cost?" + REF + "&rule=median&schedule=allgather,sharded",
                              "POST", body, {"Content-Type": ct})
    rc, want = cli_json(DPAS, "cost", "ReferenceJobAttackSurface", "--rule", "median", "--schedule",
                        "allgather,sharded", "--calibration", NCCL)
    want["links"]["fabric"] = os.path.basename(NCCL)  # the CLI names the file by its path
    T.check(st == 200 and got == want, "cost with a calibration part equals dpas cost "
            "--calibration:\n%s\n%s" % (json.dumps(got)[:500], json.dumps(want)[:500]))
    st, _, got = srv.get_json("/api/v1/sweep?" + REF + "&dp_degree=8,64&schedule=sharded"
                              "&attr=time_flat_s,time_hierarchical_s&network_model=alpha_beta",
                              "POST", body, {"Content-Type": ct})
    rc, want = cli_json(DPAS, "sweep", "ReferenceJobAttackSurface", "--dp", "8,64", "--schedule",
                        "sharded", "--attr", "time_flat_s,time_hierarchical_s", "--calibration",
                        NCCL, "--network-model", "alpha_beta")
    T.check(st == 200 and got == want, "sweep with a calibration part equals dpas sweep "
            "--calibration: %r %r" % (got, want))
    both, ct2 = multipart([("scenario", None, yaml), ("calibration", "nccl.txt", LOG)])
    st, _, got = srv.get_json("/api/v1/cost?rule=median&schedule=sharded", "POST", both,
                              {"Content-Type": ct2})
    T.check(st == 200 and got["dp_degree"] == 64 and got["links"]["fabric"] == "nccl.txt",
            "a scenario part and a calibration part together (%s)" % st)
    st, _, got = srv.get_json("/api/v1/calibrate?predict=1GB", "POST", body, {"Content-Type": ct})
    st2, _, want = srv.get_json("/api/v1/calibrate?predict=1GB", "POST", LOG)
    T.check(st == 200 and got["predictions"] == want["predictions"],
            "calibrate takes its log as a calibration part too")
    # several logs of one cluster as several calibration parts, at a scale none measured, with
    # the tests chosen: the CLI's `dpas calibrate A B --at 540x4 --test 1,2 --predict 16MiB`
    # (consistency: the same predictions, each with its basis and band)
    pol = [os.path.join(SRC, "tests", "data", "nccl-scaling", "polaris_nccl2.18_tuned_%s_all_reduce.dat" % s)
           for s in ("2nodes_8ranks", "8nodes_32ranks")]
    parts, ct3 = multipart([("calibration", os.path.basename(f), open(f, "rb").read()) for f in pol])
    st, _, got = srv.get_json("/api/v1/calibrate?at=540x4&test=1,2&predict=16MiB", "POST", parts,
                              {"Content-Type": ct3})
    code, want = cli_json(DPAS, "calibrate", *pol, "--at", "540x4", "--test", "1,2", "--predict", "16MiB")
    T.check(st == 200 and code == 0 and got["predictions"] == want["predictions"]
            and got["predictions"][0]["time_basis"] == "transferred",
            "calibrate with two calibration parts at 540x4 equals the CLI's (%s)" % st)
    for q, field in (("at=1", "at"), ("at=32,32", "at"), ("test=0", "test"), ("test=1,1", "test"),
                     ("gpus_per_node=0", "gpus_per_node"), ("test=3", "tests")):
        st, _, e = srv.get_json("/api/v1/calibrate?" + q, "POST", parts, {"Content-Type": ct3})
        T.check(st == 400 and e.get("field") == field,
                "calibrate?%s refused naming %s (%s %r)" % (q, field, st, e.get("detail")))
    # the parts in the other order: the same bytes (the answer depends on the set of logs), for
    # calibrate and for cost (a consistency test: the server against itself in another order)
    rparts, ct5 = multipart([("calibration", os.path.basename(f), open(f, "rb").read())
                             for f in reversed(pol)])
    for path in ("/api/v1/calibrate?at=540x4&test=1,2&predict=16MiB",
                 "/api/v1/cost?" + REF + "&rule=median&schedule=allreduce,allgather"):
        st, _, one = srv.get_json(path, "POST", parts, {"Content-Type": ct3})
        st2, _, two = srv.get_json(path, "POST", rparts, {"Content-Type": ct5})
        T.check(st == st2 == 200 and one == two,
                "%s: the calibration parts in either order give the same answer (%s %s)"
                % (path.split("?")[0], st, st2))
    # gpus_per_node given wins over the Rank lines (4 per host), with a note saying so
    st, _, got = srv.get_json("/api/v1/calibrate?gpus_per_node=8", "POST", parts,
                              {"Content-Type": ct3})
    T.check(st == 200 and any("gpus_per_node 8 is used as given" in n for n in got.get("notes", []))
            and all(t["ranks_per_node"] == 8 for t in got["tests"]),
            "calibrate?gpus_per_node=8 used, with a note where the Rank lines say 4 (%s)" % st)
    # the same log twice (two parts of the same bytes) is refused naming it, as the CLI's
    # `dpas calibrate X X` and cost's `--calibration X,X`
    twice, ct4 = multipart([("calibration", "a.txt", LOG), ("calibration", "b.txt", LOG)])
    st, _, e = srv.get_json("/api/v1/calibrate", "POST", twice, {"Content-Type": ct4})
    T.check(st == 400 and e.get("field") == "calibration"
            and 'calibration: "b.txt" holds the same bytes as "a.txt"' in e.get("detail", ""),
            "calibrate with one log twice refused naming both (%s %r)" % (st, e.get("detail")))
    st, _, e = srv.get_json("/api/v1/cost?" + REF, "POST", twice, {"Content-Type": ct4})
    T.check(st == 400 and e.get("field") == "calibration"
            and 'holds the same bytes as "a.txt"' in e.get("detail", ""),
            "cost with one log twice refused naming both (%s %r)" % (st, e.get("detail")))

    bad = [
        ("a part the path does not take", "/api/v1/cost?" + REF,
         multipart([("notes", None, b"x")]), "body", "\"notes\" is not one this path takes"),
        ("a calibration where none is used", "/api/v1/eval?" + REF,
         multipart([("calibration", None, LOG)]), "body", "it takes \"scenario\""),
        ("a scenario part to calibrate", "/api/v1/calibrate",
         multipart([("scenario", None, yaml)]), "body", "it takes \"calibration\""),
        ("two scenario parts", "/api/v1/eval",
         multipart([("scenario", None, yaml), ("scenario", None, yaml)]), "body", "given twice"),
        ("a log that is not nccl-tests output", "/api/v1/cost?" + REF,
         multipart([("calibration", "x.txt", b"hello\n")]), None, None),
        ("network_model without a calibration", "/api/v1/cost?" + REF + "&network_model=empirical",
         multipart([("scenario", None, yaml)]), "network_model", "needs a calibration"),
        ("an unknown network model", "/api/v1/cost?" + REF + "&network_model=magic",
         multipart([("calibration", None, LOG)]), "network_model", None),
        ("no boundary", "/api/v1/eval", (b"--x\r\n", "multipart/form-data"), "body", "boundary"),
        ("no delimiter", "/api/v1/eval", (b"scenario: x\n", "multipart/form-data; boundary=zz"),
         "body", "no delimiter"),
        ("no closing delimiter", "/api/v1/eval",
         (b"--zz\r\nContent-Disposition: form-data; name=\"scenario\"\r\n\r\nscenario: x\n",
          "multipart/form-data; boundary=zz"), "body", "no closing delimiter"),
        ("a part without a name", "/api/v1/eval",
         (b"--zz\r\nContent-Disposition: form-data\r\n\r\nx\r\n--zz--\r\n",
          "multipart/form-data; boundary=zz"), "body", "has no name"),
        ("a part name over 63 bytes", "/api/v1/eval",
         multipart([("s" * 64, None, yaml)]), "body", "name is longer than 63 bytes"),
        ("a file name over 127 bytes", "/api/v1/eval",
         multipart([("scenario", "f" * 128 + ".yaml", yaml)]), "body", "file name is longer than 127"),
        ("a boundary over 70 characters", "/api/v1/eval",
         multipart([("scenario", None, yaml)], boundary="b" * 71), "body", "boundary of 1 to 70"),
        ("text after the end", "/api/v1/eval",
         (b"--zz\r\nContent-Disposition: form-data; name=\"scenario\"\r\n\r\nscenario: "
          b"ReferenceJobAttackSurface\r\n--zz--\r\nmore", "multipart/form-data; boundary=zz"),
         "body", "after the closing delimiter"),
    ]
    for what, path, (body, ct), field, text in bad:
        st, hd, got = srv.get_json(path, "POST", body, {"Content-Type": ct})
        ok = st == 400 and got.get("status") == 400 and (field is None or got.get("field") == field)
        ok = ok and (text is None or text in got.get("detail", ""))
        T.check(ok, "%s: 400 naming %s (%r), got %s %r" % (what, field, text, st, got))
    T.check(srv.alive(), "the server lives on")

code = srv.stop()
T.check(code == 0, "the server stopped cleanly (exit %r)" % code)
T.done()
