# SPDX-License-Identifier: Apache-2.0
"""dpas serve under load, on loopback, bounded in time: 24,000 requests of /api/v1/eval over 64
concurrent keep-alive connections (bench/serve_client.c: one epoll thread), then 8,000 of the
page. Zero errors (every response 200 and byte-identical to the first), and the server's
resident memory flat: the mean of its samples over the last quarter of the requests within 10%
of the mean over the first quarter. No assertion on speed. Usage: test_load.py DPAS CLIENT"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Checks, Server  # noqa: E402

DPAS, CLIENT = sys.argv[1], sys.argv[2]
T = Checks()
REQUESTS, CONNECTIONS, EVERY = 24000, 64, 500
PATH = ("/api/v1/eval?model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16"
        "&checkpoint_bytes_per_param=14B")

if "ASAN_OPTIONS" in os.environ:
    # ASan keeps freed memory in a quarantine (256 MB by default) that grows with every request
    # until it is full; a small one makes the server's own memory visible within 24,000 requests
    os.environ["ASAN_OPTIONS"] += ":quarantine_size_mb=4:thread_local_quarantine_size_kb=64"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run(srv, path, requests):
    """Run the client; sample the server's RSS at every EVERY completed requests."""
    p = subprocess.Popen([CLIENT, str(srv.port), path, "--connections", str(CONNECTIONS),
                          "--requests", str(requests), "--progress", str(EVERY),
                          "--max-seconds", "240"],
                         stdout=subprocess.PIPE, text=True)
    samples, summary = [], None
    for line in p.stdout:
        if line.startswith("progress "):
            samples.append((int(line.split()[1]), rss_kib(srv.proc.pid)))
        elif line.startswith("{"):
            summary = line.strip()
    rc = p.wait(timeout=300)
    print(summary)
    return rc, summary, samples


with Server(DPAS, "--quiet", "--threads", "2") as srv:
    t0 = time.monotonic()
    rc, summary, samples = run(srv, PATH, REQUESTS)
    T.check(rc == 0 and summary and '"errors": 0' in summary,
            "eval: %d requests over %d connections with no error (%s)" % (REQUESTS, CONNECTIONS, summary))
    q = len(samples) // 4
    if T.check(q >= 2, "enough memory samples (%d)" % len(samples)):
        first = sum(r for _, r in samples[:q]) / q
        last = sum(r for _, r in samples[-q:]) / q
        print("resident memory: first quarter %.0f KiB, last quarter %.0f KiB (%+.1f%%)"
              % (first, last, 100 * (last - first) / first))
        T.check(abs(last - first) <= 0.10 * first,
                "resident memory flat within 10%%: %.0f KiB then %.0f KiB" % (first, last))
    rc, summary, _ = run(srv, "/?model=GPT3", 8000)
    T.check(rc == 0 and summary and '"errors": 0' in summary, "the page: no error (%s)" % summary)
    print("%.1f s in all" % (time.monotonic() - t0))
    T.check(srv.alive(), "the server is alive after the load")

code = srv.stop()
T.check(code == 0, "the server stopped cleanly on SIGTERM (exit %r)" % code)
T.done()
