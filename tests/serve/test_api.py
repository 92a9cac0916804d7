# SPDX-License-Identifier: Apache-2.0
"""dpas serve, the JSON API: known answers and consistency with the CLI.

Known answers come from the seed (the reference scenario: 1024 accelerators, gather_traffic_ratio
64) or from a hand calculation written here; every API object is also checked equal to the CLI's
`-o json` object for the same inputs (consistency tests: the server must not compute anything
itself). Usage: test_api.py DPAS SOURCE_DIR"""

import json
import os
import subprocess
import sys
import tempfile
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, cli_json  # noqa: E402

DPAS, SRC = sys.argv[1], sys.argv[2]
T = Checks()

REF_QUERY = ("model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
             "&checkpoint_bytes_per_param=14B")
REF_FLAGS = ["--model", "GPT3", "--fleet", "Training_1K", "--dp", "128", "--grad", "bf16",
             "--ckpt", "14B"]


def same_as_cli(srv, path, cli_args, method="GET", body=None, headers=None, status=200,
                cli_status=0, origin=None):
    """The API's object equals the CLI's for the same inputs (a consistency test). origin: the
    file the CLI read, which the API calls "request body" (its only difference)."""
    st, hdrs, got = srv.get_json(path, method, body, headers)
    rc, want = cli_json(DPAS, *cli_args)
    if origin:
        want = json.loads(json.dumps(want).replace(json.dumps(origin)[1:-1], "request body"))
    T.check(st == status, "%s: status %s, expected %s" % (path, st, status))
    if st >= 400:  # a problem: the API's names the resource asked for (instance), the CLI's none
        T.check(got.pop("instance", None) == path.split("?")[0], "%s: the problem's instance" % path)
    T.check(rc == cli_status, "dpas %s: exit %s, expected %s" % (" ".join(cli_args), rc, cli_status))
    T.check(got == want, "%s differs from dpas %s -o json:\n  api %s\n  cli %s"
            % (path, " ".join(cli_args), json.dumps(got)[:600], json.dumps(want)[:600]))
    T.check(hdrs.get("content-type") == ("application/json; charset=utf-8" if st < 400 else
                                         "application/problem+json"),
            "%s: Content-Type %r" % (path, hdrs.get("content-type")))
    return got


with Server(DPAS, "--quiet") as srv:
    # ---- the reference scenario (the seed's example): 1024 accelerators, ratio 64 ----
    ref = same_as_cli(srv, "/api/v1/scenarios/ReferenceJobAttackSurface",
                      ["show", "ReferenceJobAttackSurface"])
    a = ref["attributes"]
    T.check(a["accelerators"] == 1024, "reference: accelerators %r" % a["accelerators"])
    T.check(a["gather_traffic_ratio"] == 64, "reference: ratio %r" % a["gather_traffic_ratio"])
    T.check(a["gradient_bytes"] == 175_000_000_000 * 2, "reference: gradient_bytes")
    T.check(a["allreduce_factor"] == 2 * 127 / 128, "reference: allreduce_factor")
    same_as_cli(srv, "/api/v1/scenarios/ReferenceJobAttackSurface?explain=true",
                ["show", "ReferenceJobAttackSurface", "--explain"])
    same_as_cli(srv, "/api/v1/scenarios/ReferenceJobAttackSurface?dp_degree=64&attr=gather_traffic_ratio",
                ["show", "ReferenceJobAttackSurface", "--dp", "64", "--attr", "gather_traffic_ratio"])
    ev = same_as_cli(srv, "/api/v1/eval?" + REF_QUERY, ["eval", *REF_FLAGS])
    T.check(ev["attributes"]["gather_traffic_ratio"] == 64, "eval: ratio 64")
    same_as_cli(srv, "/api/v1/eval?scenario=ReferenceJobAttackSurface&weight_bytes_per_param=none",
                ["eval", "--scenario", "ReferenceJobAttackSurface", "--weights", "none"])

    # ---- a custom scenario: 70.6e9 x 2 B = 141.2 GB, x 14 B = 988.4 GB, 2 x 95/96 ----
    custom = ("parameters=70.6e9&nodes=12&accelerators_per_node=8&dp_degree=96"
              "&gradient_bytes_per_param=bf16&checkpoint_bytes_per_param=14%20B")
    cu = same_as_cli(srv, "/api/v1/eval?" + custom,
                     ["eval", "--params", "70.6e9", "--nodes", "12", "--accelerators-per-node", "8",
                      "--dp", "96", "--grad", "bf16", "--ckpt", "14 B"])
    ca = cu["attributes"]
    T.check(ca["gradient_bytes"] == 141_200_000_000, "custom: gradient_bytes %r" % ca["gradient_bytes"])
    T.check(ca["checkpoint_bytes"] == 988_400_000_000, "custom: checkpoint_bytes")
    T.check(ca["accelerators"] == 96 and ca["gather_factor"] == 95, "custom: 96 accelerators, 95")
    T.check(abs(ca["allreduce_factor"] - 2 * 95 / 96) < 1e-15, "custom: allreduce_factor")
    T.check(ca["gather_traffic_ratio"] == 48, "custom: ratio 48")
    # exact sub-byte widths: 3504873 x 4.127 bit = 1808076.358875 B (README's example)
    same_as_cli(srv, "/api/v1/eval?parameters=3504873&nodes=2&accelerators_per_node=4&dp_degree=8"
                     "&gradient_bytes_per_param=4.127+bit&checkpoint_bytes_per_param=14%20bytes"
                     "&weight_bytes_per_param=int4",
                ["eval", "--params", "3504873", "--nodes", "2", "--accelerators-per-node", "4",
                 "--dp", "8", "--grad", "4.127 bit", "--ckpt", "14 bytes", "--weights", "int4"])
    # a scenario file as the body, YAML and JSON, with the query overriding it
    yaml_text = ("name: llama-70b-96\nworkload: Llama3_70B\nfleet:\n  name: twelve-dgx\n"
                 "  node: DGX_H100\n  nodes: 12\n  fabric: InfiniBand_NDR\ndp_degree: 96\n"
                 "gradient_bytes_per_param: bf16\ncheckpoint_bytes_per_param: 14 B\n")
    with tempfile.TemporaryDirectory() as d:
        yf = os.path.join(d, "job.yaml")
        with open(yf, "w") as f:
            f.write(yaml_text)
        same_as_cli(srv, "/api/v1/eval?dp_degree=48", ["eval", yf, "--dp", "48"], method="POST",
                    body=yaml_text, headers={"Content-Type": "application/yaml"})
        same_as_cli(srv, "/api/v1/cost?rule=krum", ["cost", yf, "--rule", "krum"], method="POST",
                    body=yaml_text)
        js = json.dumps({"workload": {"name": "mine", "parameters": "7e9"},
                         "fleet": {"nodes": 4, "accelerators_per_node": 8}, "dp_degree": 32,
                         "gradient_bytes_per_param": "fp32", "checkpoint_bytes_per_param": "16 B"})
        jf = os.path.join(d, "job.json")
        with open(jf, "w") as f:
            f.write(js)
        same_as_cli(srv, "/api/v1/eval", ["eval", jf], method="POST", body=js,
                    headers={"Content-Type": "application/json"})
        same_as_cli(srv, "/api/v1/inventory", ["inventory", jf], method="POST", body=js)

    # ---- the cost of median on allgather: (N - 1) x s = 127 x 350 GB, 64 x the AllReduce ----
    co = same_as_cli(srv, "/api/v1/cost?scenario=ReferenceJobAttackSurface&rule=median&schedule=allgather",
                     ["cost", "ReferenceJobAttackSurface", "--rule", "median", "--schedule", "allgather"])
    row = co["rows"][0]
    T.check(row["rule"] == "median" and row["schedule"] == "allgather" and row["realisable"],
            "cost: the median on allgather row")
    T.check(row["bytes_per_worker"] == 127 * 350_000_000_000, "cost: bytes %r" % row["bytes_per_worker"])
    T.check(row["ratio_to_allreduce"] == 64, "cost: ratio %r" % row["ratio_to_allreduce"])
    T.check(row["max_f"] == 63, "cost: max_f %r (n > 2f at n = 128)" % row["max_f"])
    same_as_cli(srv, "/api/v1/cost?" + REF_QUERY + "&rule=mean,median,krum,bulyan,geometric_median&f=10&steps=3"
                "&iterations=5&compute_rate=1e15%20FLOP/s&convention=byzfl",
                ["cost", *REF_FLAGS, "--rule", "mean,median,krum,bulyan,geometric_median", "--f", "10", "--steps", "3",
                 "--iterations", "5", "--compute-rate", "1e15 FLOP/s", "--convention", "byzfl"])
    same_as_cli(srv, "/api/v1/cost?scenario=ReferenceJobAttackSurface&schedule=sharded,sharded_distance",
                ["cost", "ReferenceJobAttackSurface", "--schedule", "sharded,sharded_distance"])

    # ---- rules, inventory, memory, registry, calibrate ----
    ru = same_as_cli(srv, "/api/v1/rules?n=64&f=10", ["rules", "--n", "64", "--f", "10"])
    krum = [x for x in ru["rows"] if x["rule"] == "krum"][0]
    T.check(krum["max_f"] == 30 and krum["min_n"] == 23, "rules: krum n >= 2f + 3 at 64 and 10")
    same_as_cli(srv, "/api/v1/rules?convention=all", ["rules", "--convention", "all"])
    same_as_cli(srv, "/api/v1/inventory?" + REF_QUERY, ["inventory", *REF_FLAGS])
    same_as_cli(srv, "/api/v1/memory?scenario=ReferenceJobAttackSurface&zero=2",
                ["memory", "ReferenceJobAttackSurface", "--zero", "2"])
    # GPT-3's 2.8 TB of Adam state does not fit 8 H100s: the CLI exits 2, the API says 422
    same_as_cli(srv, "/api/v1/memory?scenario=ReferenceJobAttackSurface",
                ["memory", "ReferenceJobAttackSurface"], status=422, cli_status=2)
    same_as_cli(srv, "/api/v1/memory?" + REF_QUERY + "&state=megatron18&zero=0",
                ["memory", *REF_FLAGS, "--state", "megatron18", "--zero", "0"], status=422,
                cli_status=2)
    for kind in ["models", "hardware", "nodes", "fabrics", "fleets", "scenarios", "precisions"]:
        same_as_cli(srv, "/api/v1/registry/" + kind, ["list", kind])
    same_as_cli(srv, "/api/v1/scenarios", ["list", "scenarios"])
    st, _, models = srv.get_json("/api/v1/registry/models")
    byname = {m["name"]: m["parameters"] for m in models["rows"]}
    T.check(byname.get("MobileNetV2_Alpha0_5") == 1968680, "registry: MobileNetV2_Alpha0_5 (mlsysim)")
    T.check(byname.get("MobileNetV2_Alpha0_5FeatureExtractor") == 687680,
            "registry: MobileNetV2_Alpha0_5FeatureExtractor (mlsysim)")
    nccl = os.path.join(SRC, "examples", "nccl", "all_reduce_perf_8ranks_synthetic.txt")
    with open(nccl, "rb") as f:
        log = f.read()
    same_as_cli(srv, "/api/v1/calibrate", ["calibrate", nccl], method="POST", body=log, origin=nccl)
    same_as_cli(srv, "/api/v1/calibrate?predict=1MiB,1GB", ["calibrate", nccl, "--predict", "1MiB,1GB"],
                method="POST", body=log, origin=nccl)
    nccl_csv = os.path.join(SRC, "examples", "nccl", "all_reduce_16ranks_synthetic.csv")
    with open(nccl_csv, "rb") as f:
        same_as_cli(srv, "/api/v1/calibrate?collective=all_reduce&ranks=16",
                    ["calibrate", nccl_csv, "--collective", "all_reduce", "--ranks", "16"],
                    method="POST", body=f.read(), origin=nccl_csv)

    # ---- sweep and plot.svg: dpas sweep -o json, and the file dpas sweep --plot writes ----
    sw = same_as_cli(srv, "/api/v1/sweep?scenario=ReferenceJobAttackSurface&dp_degree=2..1024"
                     "&schedule=allreduce,allgather",
                     ["sweep", "ReferenceJobAttackSurface", "--dp", "2..1024", "--schedule",
                      "allreduce,allgather"])
    ag = {p["dp_degree"]: p for p in sw["rows"] if p["schedule"] == "allgather"}
    T.check(ag[128]["bytes_per_worker"] == 127 * 350_000_000_000 and ag[128]["ratio_to_allreduce"] == 64,
            "sweep: the all-gather at dp_degree 128 moves 127 x 350 GB, 64 x the AllReduce")
    T.check(sorted(ag) == [2 ** k for k in range(1, 11)], "sweep: 2..1024 doubles")
    same_as_cli(srv, "/api/v1/sweep?" + REF_QUERY.replace("dp_degree=128", "dp_degree=8,16,32")
                + "&rule=median,krum&attr=max_f,gather_traffic_ratio",
                ["sweep", *[a if a != "128" else "8,16,32" for a in REF_FLAGS], "--rule", "median,krum",
                 "--attr", "max_f,gather_traffic_ratio"])
    same_as_cli(srv, "/api/v1/sweep?scenario=ReferenceJobAttackSurface&model=GPT3,Llama3_70B"
                "&gradient_bytes_per_param=bf16,fp32",
                ["sweep", "ReferenceJobAttackSurface", "--model", "GPT3,Llama3_70B", "--grad", "bf16,fp32"])
    st, hd, _ = srv.request("GET", "/api/v1/sweep?scenario=ReferenceJobAttackSurface&dp_degree=512..4096")
    T.check(st == 200 and hd.get("x-dpas-warning", "").startswith("2 of 4 points left out"),
            "sweep: points beyond the fleet left out and counted (%s %r)" % (st, hd.get("x-dpas-warning")))
    with tempfile.TemporaryDirectory() as d:
        for q, args in [
            ("scenario=ReferenceJobAttackSurface&dp_degree=2..1024&schedule=allreduce,allgather,sharded"
             "&attr=bytes_per_worker",
             ["ReferenceJobAttackSurface", "--dp", "2..1024", "--schedule", "allreduce,allgather,sharded",
              "--attr", "bytes_per_worker"]),
            ("scenario=ReferenceJobAttackSurface&dp_degree=2..1024&schedule=allreduce,allgather"
             "&attr=bytes_per_worker,time_hierarchical_s&y=time_hierarchical_s&title=time%20%3C%26%3E",
             ["ReferenceJobAttackSurface", "--dp", "2..1024", "--schedule", "allreduce,allgather",
              "--attr", "bytes_per_worker,time_hierarchical_s", "--y", "time_hierarchical_s",
              "--title", "time <&>"]),
            ("parameters=1e9..1e12*10&nodes=4&accelerators_per_node=8&dp_degree=32"
             "&gradient_bytes_per_param=bf16&checkpoint_bytes_per_param=14B",
             ["--params", "1e9..1e12*10", "--nodes", "4", "--accelerators-per-node", "8", "--dp", "32",
              "--grad", "bf16", "--ckpt", "14B"]),
        ]:
            f = os.path.join(d, "plot.svg")
            p = subprocess.run([DPAS, "sweep", *args, "--plot", f, "--no-chart"], capture_output=True,
                               timeout=120)
            st, hd, svg = srv.request("GET", "/api/v1/plot.svg?" + q)
            with open(f, "rb") as fh:
                want = fh.read()
            T.check(p.returncode == 0 and st == 200 and hd.get("content-type") == "image/svg+xml",
                    "plot.svg?%s: status %s, CLI exit %s" % (q, st, p.returncode))
            T.check(svg == want, "plot.svg?%s: the same bytes as dpas sweep --plot (consistency)" % q)

    # ---- errors: the CLI's error object; 400 bad input, 404, 405, 422 ----
    for dp, model in [("0", "GPT3"), ("2000", "GPT3"), ("128", "GTP3")]:
        same_as_cli(srv, "/api/v1/eval?" + REF_QUERY.replace("dp_degree=128", "dp_degree=" + dp)
                    .replace("model=GPT3", "model=" + model),
                    ["eval", "--model", model, "--fleet", "Training_1K", "--dp", dp, "--grad", "bf16",
                     "--ckpt", "14B"], status=400, cli_status=1)
    st, hd, e = srv.get_json("/api/v1/scenarios/NoSuchScenario")
    T.check(st == 404 and e["status"] == 404 and e["title"] == "unknown name",
            "scenarios/NoSuchScenario: 404 with the error object, got %s %r" % (st, e))
    st, hd, e = srv.get_json("/api/v1/registry/teapots")
    T.check(st == 404 and e["field"] == "kind", "registry/teapots: 404, got %s %r" % (st, e))
    st, hd, e = srv.get_json("/api/v1/eval", method="PUT")
    T.check(st == 405 and hd.get("allow") == "GET, HEAD, POST", "PUT: 405 with Allow, got %s %r" % (st, hd))

    # ---- HEAD: the headers of GET, no body ----
    s1, h1, b1 = srv.request("GET", "/api/v1/eval?" + REF_QUERY)
    s2, h2, b2 = srv.request("HEAD", "/api/v1/eval?" + REF_QUERY)
    T.check(s1 == s2 == 200 and b2 == b"" and h2.get("content-length") == str(len(b1)),
            "HEAD: status %s, %d body bytes, Content-Length %r (GET: %d)"
            % (s2, len(b2), h2.get("content-length"), len(b1)))

    # ---- the security headers on every response, the page included ----
    for method, path in [("GET", "/"), ("GET", "/app.js"), ("GET", "/app.css"),
                         ("GET", "/favicon.svg"), ("GET", "/api/v1"), ("GET", "/nowhere"),
                         ("POST", "/api/v1/rules"), ("GET", "/api/v1/eval?dp_degree=0"),
                         ("HEAD", "/api/v1/registry/fleets")]:
        st, hd, body = srv.request(method, path)
        T.check(hd.get("x-content-type-options") == "nosniff", "%s %s: nosniff" % (method, path))
        T.check((hd.get("content-security-policy") or "").startswith("default-src 'self'"),
                "%s %s: CSP %r" % (method, path, hd.get("content-security-policy")))
    st, hd, page = srv.request("GET", "/?" + REF_QUERY)
    T.check(st == 200 and hd["content-type"].startswith("text/html") and b"<html" in page,
            "the page at / with the inputs in its query")
    T.check(b"http://" not in page and b"https://" not in page,
            "the page refers to nothing outside the server")
    index = srv.get_json("/api/v1")[2]
    T.check(any(e["path"] == "/api/v1/eval" for e in index["endpoints"]), "GET /api/v1 lists the API")

code = srv.stop()
T.check(code == 0, "the server stopped cleanly on SIGTERM (exit %r)" % code)
T.done()
