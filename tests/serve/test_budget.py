# SPDX-License-Identifier: Apache-2.0
"""dpas serve, the budget of a request (issue 21): a slow request never holds up a cheap one, a
full heavy lane answers 503 at once, a request over its CPU time is stopped (503), and answers
over the row budget are refused before any work (422).

Nothing here asserts on time. The guarantee "a slow request never delays a cheap one" is checked
as an order of events: with one worker and heavy requests queued behind a running one, cheap
requests are answered while the heavy ones are still running (their process is alive and their
answers have not arrived), and a heavy request beyond the queue is refused while they run. The
cheap requests' latency with the lane busy, and without, is printed as a figure.

Usage: test_budget.py DPAS"""

import json
import os
import random
import select
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server, multipart  # noqa: E402

DPAS = sys.argv[1]
T = Checks()
EVAL = ("/api/v1/eval?model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
        "&checkpoint_bytes_per_param=14B")


def heavy_body():
    """nccl-tests output as CSV: one test of 4096 sizes with times in no order, so that the
    piecewise fit (quadratic in the sizes) has work to do: 110 KB, about 0.2 s of CPU here."""
    rng = random.Random(7)
    rows = ["name,gpus,size,time"]
    rows += ["all_reduce,8,%d,%.2f" % (64 + 4 * i, rng.uniform(1, 1e5)) for i in range(4096)]
    return ("\n".join(rows) + "\n").encode()


def scales_body():
    """nccl-tests output as CSV: AllReduce at 198 rank counts of 40 sizes each, times in no
    order: the nccl model is fitted over every scale, and again with each scale left out
    (about 10 s of CPU here, 240 KB): a job that is still running when its client leaves."""
    rng = random.Random(7)
    rows = ["name,gpus,size,time"]
    rows += ["all_reduce,%d,%d,%.2f" % (g, 64 * 2 ** (i % 30) + i, rng.uniform(1, 1e5))
             for g in range(2, 200) for i in range(40)]
    return ("\n".join(rows) + "\n").encode()


def sizes_body(tests, sizes):
    """nccl-tests output as CSV: AllReduce at 8, 16, ... ranks, each test of the sizes 64, 128, ..."""
    rng = random.Random(3)
    rows = ["name,gpus,size,time"]
    rows += ["all_reduce,%d,%d,%.2f" % (8 << t, 64 * (i + 1), rng.uniform(1, 1e5))
             for t in range(tests) for i in range(sizes)]
    return ("\n".join(rows) + "\n").encode()


def send(port, method, target, body=b"", headers=()):
    """A request on a new connection, not read yet: the socket."""
    s = socket.create_connection(("127.0.0.1", port), timeout=120)
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n" % (method, target, port)
    for k, v in headers:
        head += "%s: %s\r\n" % (k, v)
    if body:
        head += "Content-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + body)
    return s


def answered(s):
    """Has an answer (or the end of the stream) arrived on s? Without waiting."""
    r, _, _ = select.select([s], [], [], 0)
    return bool(r)


def read(s, timeout=300):
    """(status, headers, body) of the answer on s."""
    s.settimeout(timeout)
    buf = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith(b"HTTP/1.") else None
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(b":")
        headers[k.strip().lower().decode()] = v.strip().decode(errors="replace")
    return status, headers, body


def children(pid):
    """The server's child processes (a heavy request each)."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def wait_for(cond, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


def cheap(srv):
    t0 = time.perf_counter()
    st, _, body = srv.request("GET", EVAL)
    return st, time.perf_counter() - t0, body


BODY = heavy_body()
# the same log as a calibration part of cost: it is read and fitted as calibrate fits it, and
# cost answers a few rows (calibrate's answer of its 4 x 4096 residuals is over the row budget)
COST = ("/api/v1/cost?model=GPT3&fleet=Training_1K&dp_degree=8&gradient_bytes_per_param=bf16"
        "&checkpoint_bytes_per_param=14B")
PART, PART_TYPE = multipart([("calibration", "sweep.csv", BODY)])
PART_HDR = {"Content-Type": PART_TYPE}


def cost_ok(st, body):
    return st == 200 and json.loads(body)["rows"]

# ---- a slow request never holds up a cheap one ---------------------------------------------------
with Server(DPAS, "--quiet", "--workers", "1", "--queue", "2", "--cpu-limit", "600") as srv:
    idle = [cheap(srv)[1] for _ in range(20)]
    st, _, body = srv.request("POST", COST, PART, PART_HDR)
    T.check(cost_ok(st, body), "the heavy request alone: 200 (%s %s)" % (st, body[:300]))
    # three heavy requests (cost with a calibration part): one runs (one process), two wait
    ct = (("Content-Type", PART_TYPE),)
    slow = [send(srv.port, "POST", COST, PART, ct)]
    T.check(wait_for(lambda: len(children(srv.proc.pid)) == 1), "the first heavy request runs in a process")
    slow += [send(srv.port, "POST", COST, PART, ct) for _ in range(2)]
    time.sleep(0.05)  # let the server read them into its queue
    busy = []
    for _ in range(20):
        st, dt, body = cheap(srv)
        busy.append(dt)
        T.check(st == 200 and json.loads(body)["attributes"], "a cheap request beside the heavy ones: 200")
    # the queue is full: a fourth heavy request is refused at once, not queued
    st, hd, body = read(send(srv.port, "POST", COST, PART, ct))
    obj = json.loads(body)
    T.check(st == 503 and hd.get("retry-after") == "1" and obj.get("field") == "request"
            and "busy" in obj.get("detail", ""), "a full lane: 503 with Retry-After (%s %s)" % (st, body[:200]))
    # all of that happened while the heavy requests ran: the last one has not been answered
    still = not answered(slow[-1]) and len(children(srv.proc.pid)) == 1
    T.check(still, "the cheap requests and the refusal were answered while the heavy ones still ran")
    for s in slow:
        st, _, body = read(s)
        T.check(cost_ok(st, body), "each heavy request answered in the end (%s)" % st)
    T.check(wait_for(lambda: not children(srv.proc.pid)), "no process is left behind")
    print("cheap requests (GET /api/v1/eval): median %.2f ms, max %.2f ms with the heavy lane busy "
          "(one heavy request running, two queued); median %.2f ms, max %.2f ms idle"
          % (1e3 * statistics.median(busy), 1e3 * max(busy), 1e3 * statistics.median(idle), 1e3 * max(idle)))

# ---- a request over its CPU time is stopped ------------------------------------------------------
with Server(DPAS, "--quiet", "--workers", "1", "--cpu-limit", "0.01") as srv:
    st, hd, body = srv.request("POST", "/api/v1/calibrate", BODY)
    obj = json.loads(body)
    T.check(st == 503 and obj.get("status") == 503 and obj.get("field") == "request"
            and "0.01 s of CPU time" in obj.get("detail", "") and "--cpu-limit" in obj["detail"],
            "over the CPU budget: 503 naming the limit (%s %s)" % (st, body[:300]))
    T.check(hd.get("content-security-policy", "").startswith("default-src"), "the 503 has the security headers")
    T.check(wait_for(lambda: not children(srv.proc.pid)), "the stopped process is gone")
    st, _, _ = srv.request("GET", EVAL)
    T.check(st == 200, "the server answers after a request was stopped (%s)" % st)
    code = srv.stop()
    T.check(code == 0, "the server stops cleanly (exit %r)" % code)

# ---- the server stops cleanly with heavy requests running and waiting ----------------------------
with Server(DPAS, "--quiet", "--workers", "1", "--queue", "4", "--cpu-limit", "600") as srv:
    slow = [send(srv.port, "POST", "/api/v1/calibrate", BODY) for _ in range(3)]
    T.check(wait_for(lambda: len(children(srv.proc.pid)) == 1), "a heavy request runs")
    time.sleep(0.05)
    code = srv.stop()
    T.check(code == 0, "SIGTERM with heavy requests running and queued: exit 0 (%r)" % code)
    for s in slow:
        st, _, body = read(s, timeout=60)
        T.check(st in (503, None), "a heavy request cut by the stop: 503 or closed (%s)" % st)

# ---- many heavy requests at once: every one answered ---------------------------------------------
# Each heavy request runs in a process started afresh (lane.c). When it was a bare fork of the
# threaded server, one in a few hundred hung under load in the ASan build (an allocator lock held
# by another thread at the fork); the lane's wall-clock budget then answered it 503 after 110 s.
SWEEP = ("/api/v1/sweep?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
         "&checkpoint_bytes_per_param=14B&dp_degree=2,4,8,16,32,64,128&schedule=allreduce,allgather"
         "&rule=median&attr=bytes_per_worker")
with Server(DPAS, "--quiet", "--workers", "4", "--queue", "64", "--cpu-limit", "600") as srv:
    statuses = []
    for _ in range(10):
        socks = [send(srv.port, "GET", SWEEP) for _ in range(8)] + [send(srv.port, "GET", EVAL) for _ in range(4)]
        for s in socks:
            st, _, body = read(s, timeout=300)
            statuses.append(st)
    T.check(statuses == [200] * len(statuses), "120 requests, 80 of them heavy, 8 at a time: all 200 (%r)"
            % sorted(set(statuses), key=str))
    T.check(wait_for(lambda: not children(srv.proc.pid)), "no process is left behind")

# ---- the budget follows the computation: a calibration part runs in the lane, under its limit ----
# cost, sweep and plot.svg read and fit a calibration part as calibrate does: with a CPU limit of
# 0.01 s the 4096-size fit (0.2 s of CPU) is stopped, whichever route carries it; on the I/O
# thread (as before) it had no limit and answered 200.
with Server(DPAS, "--quiet", "--workers", "1", "--cpu-limit", "0.01") as srv:
    SWEEP_C = ("/api/v1/sweep?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
               "&checkpoint_bytes_per_param=14B&dp_degree=8,16&rule=median&schedule=allgather&attr=time_s")
    PLOT_C = ("/api/v1/plot.svg?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
              "&checkpoint_bytes_per_param=14B&dp_degree=8,16&rule=median&schedule=allgather&attr=time_s")
    for target in (COST, SWEEP_C, PLOT_C):
        st, _, body = srv.request("POST", target, PART, PART_HDR)
        obj = json.loads(body)
        T.check(st == 503 and obj.get("field") == "request" and "0.01 s of CPU time" in obj.get("detail", "")
                and "--cpu-limit" in obj["detail"],
                "a calibration part on %s is fitted in the lane, under --cpu-limit: 503 (%s %s)"
                % (target.split("?")[0], st, body[:300]))
    # the same request without the part is cheap: answered on the I/O thread, 200
    st, _, body = srv.request("GET", COST)
    T.check(cost_ok(st, body), "cost without a calibration is cheap: 200 under the same limit (%s)" % st)
    # memory takes no calibration: the lane's process refuses the part, it never fits it
    st, _, body = srv.request("POST", "/api/v1/memory?model=GPT3&fleet=Training_1K&dp_degree=8", PART,
                              PART_HDR)
    T.check(st == 400 and b'calibration' in body and b"not one this path takes" in body,
            "memory with a calibration part: 400 naming the part (%s %s)" % (st, body[:300]))

# ---- the row budget counts every row an answer carries -----------------------------------------
# calibrate answers, per test, one row for the test, one per fit (4 models) and under each fit one
# residual per size (4 per size in all), the piecewise regimes, and per collective its nccl model.
# One test of 1100 sizes: 1 + 4 + 4 x 1100 = 4405 rows before its regimes, over 4096; its body is
# 25 KB. Two tests of 100 sizes: 2 + 8 + 800 + at most 2 x 2 x 33 regimes + 1 = 943 rows: under.
with Server(DPAS, "--quiet", "--workers", "1", "--cpu-limit", "600") as srv:
    big = sizes_body(1, 1100)
    st, _, body = srv.request("POST", "/api/v1/calibrate", big)
    obj = json.loads(body)
    T.check(st == 422 and obj.get("field") == "body" and "4400 residuals" in obj.get("detail", "")
            and "4096 rows" in obj["detail"],
            "calibrate of 1 test x 1100 sizes (%d bytes): 422 counting its 4400 residual rows (%s %s)"
            % (len(big), st, body[:400]))
    st, _, body = srv.request("POST", "/api/v1/calibrate", sizes_body(2, 100))
    T.check(st == 200 and len(json.loads(body)["fits"]) == 8, "calibrate of 2 tests x 100 sizes: 200 (%s)" % st)
    # predictions count per test: 2 tests x 100 sizes with 1700 sizes to predict each is over
    sizes = ",".join(str(64 * (i + 1)) for i in range(1700))
    st, _, body = srv.request("POST", "/api/v1/calibrate?predict=" + sizes, sizes_body(2, 100))
    T.check(st in (414, 422), "2 x 100 sizes with 1700 predictions each: refused (%s %s)" % (st, body[:200]))

# ---- another site's page cannot make the server compute ------------------------------------------
# An <img src> or a link on another site's page sends a GET without an Origin header; the browser
# says Sec-Fetch-Site: cross-site (or same-site, another port of the same host). A heavy request
# so sent is refused (403) before it reaches the lane; one the server's own page sends
# (same-origin), one typed in the address bar (none), and one without the header (curl) are not.
with Server(DPAS, "--quiet", "--workers", "1", "--cpu-limit", "600",
            "--allow-origin", "http://app.example:8080") as srv:
    SWEEP_X = ("/api/v1/sweep?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
               "&checkpoint_bytes_per_param=14B&dp_degree=8,16&rule=median&schedule=allgather&attr=bytes_per_worker")
    for site in ("cross-site", "same-site", "CROSS-SITE", "nonsense"):
        for method, target, body, hdr in (("GET", SWEEP_X, None, {}), ("GET", "/api/v1/plot.svg", None, {}),
                                          ("POST", COST, PART, PART_HDR)):
            h = dict(hdr, **{"Sec-Fetch-Site": site})
            st, _, b = srv.request(method, target, body, h)
            obj = json.loads(b)
            T.check(st == 403 and obj.get("field") == "origin" and "without CORS" in obj.get("detail", "")
                    and site in obj["detail"],
                    "Sec-Fetch-Site %s, no Origin, %s %s: 403 (%s %s)" % (site, method, target[:20], st, b[:200]))
        T.check(not children(srv.proc.pid), "the refused requests started no process")
    for site in ("same-origin", "none", None):
        h = {"Sec-Fetch-Site": site} if site else {}
        st, _, b = srv.request("GET", SWEEP_X, None, h)
        T.check(st == 200, "Sec-Fetch-Site %s: the sweep is answered (%s %s)" % (site, st, b[:200]))
    # a cheap request cross-site is not heavy work: answered as before
    st, _, b = srv.request("GET", EVAL, None, {"Sec-Fetch-Site": "cross-site"})
    T.check(st == 200, "a cheap request sent cross-site: 200 (%s)" % st)
    # CORS from an --allow-origin: the operator allowed it, Origin says who asks
    st, hd, b = srv.request("GET", SWEEP_X, None, {"Sec-Fetch-Site": "cross-site", "Origin": "http://app.example:8080"})
    T.check(st == 200 and hd.get("access-control-allow-origin") == "http://app.example:8080",
            "cross-site with an allowed Origin: 200 (%s %s)" % (st, b[:200]))

# ---- a heavy job whose client has gone is stopped ------------------------------------------------
# One worker and a queue of one: a cost request with a calibration part of 198 scales (about 10 s
# of CPU) runs, a second waits. Both clients close their connections: the running job's process
# is killed, the waiting one never starts, and the access log says so for each.
with Server(DPAS, "--workers", "1", "--queue", "1", "--cpu-limit", "600") as srv:
    part, ptype = multipart([("calibration", "scales.csv", scales_body())])
    ct = (("Content-Type", ptype),)
    first = send(srv.port, "POST", COST, part, ct)
    T.check(wait_for(lambda: len(children(srv.proc.pid)) == 1), "the first job runs in a process")
    pid = children(srv.proc.pid)[0]
    second = send(srv.port, "POST", COST, part, ct)
    time.sleep(0.1)  # let the server read it into its queue
    T.check(not answered(first) and not answered(second), "both are still waiting for their answers")
    second.close()
    first.close()
    T.check(wait_for(lambda: not children(srv.proc.pid)), "the job's process is gone")
    T.check(wait_for(lambda: srv.log().count("(closed by the client: its heavy job was stopped)") == 2, 60),
            "the log says both jobs were stopped as their clients left: %r"
            % [ln for ln in srv.log().splitlines() if "cost" in ln])
    T.check(not os.path.exists("/proc/%d" % pid) or "zombie" in open("/proc/%d/status" % pid).read().lower(),
            "the running job's process was killed")
    st, _, body = srv.request("POST", COST, PART, PART_HDR)
    T.check(cost_ok(st, body), "the lane takes the next job (%s %s)" % (st, body[:200]))

# ---- dpas started through the dynamic loader: /proc/self/exe is ld.so, not dpas ------------------
# The server learns it at start (dpas serve --lane-probe), says so, and forks for heavy requests.
LDSO = "/lib64/ld-linux-x86-64.so.2"
if os.path.exists(LDSO):
    with Server(DPAS, "--quiet", "--workers", "1", prefix=(LDSO,)) as srv:
        st, _, body = srv.request("GET", SWEEP)
        T.check(st == 200 and json.loads(body), "through the dynamic loader, a heavy request: 200 (%s %s)"
                % (st, body[:200]))
        T.check("/proc/self/exe does not start dpas" in "".join(srv.lines),
                "through the dynamic loader, the server says it forks instead: %r" % srv.lines[:1])
with Server(DPAS, "--quiet", "--workers", "1") as srv:
    T.check("/proc/self/exe" not in "".join(srv.lines), "started directly: no warning (%r)" % srv.lines[:1])
    p = subprocess.run([DPAS, "serve", "--lane-probe"], capture_output=True, timeout=60)
    T.check(p.returncode == 0 and p.stdout == b"dpas serve lane ok\n", "the probe answers (%r)" % p.stdout)

# ---- the lane's process started by hand: it says what it is, and does nothing --------------------
for given in (b"", b"GET /api/v1/sweep HTTP/1.1\r\n\r\n", os.urandom(4096)):
    p = subprocess.run([DPAS, "serve", "--lane-job"], input=given, capture_output=True, timeout=60)
    T.check(p.returncode == 1 and p.stdout == b"" and b"dpas: error: serve --lane-job" in p.stderr
            and b"not a request from the server" in p.stderr,
            "dpas serve --lane-job given %d bytes that are not the server's: exit 1, a message, no "
            "output (%r %r)" % (len(given), p.returncode, p.stderr[:200]))

T.done()
