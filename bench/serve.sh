#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Requests per second of `dpas serve` on loopback, with keep-alive: the benchmark of issue 14.
# The client is bench/serve_client.c (one thread, epoll, N keep-alive connections, one request
# in flight on each; every response checked: status 200 and the same bytes as the first).
# Figures, each the median of three runs, beside two anchors measured here:
#  - a static resource of the same server (/app.css): the HTTP layer alone, no analysis;
#  - the CLI answering the same question once per process (dpas eval ... -o json), the way a
#    script without the server would ask.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
requests=${REQUESTS:-200000}
conns=${CONNECTIONS:-64}
threads=${THREADS:-$(nproc)}
q='model=GPT3&fleet=Training_1K&dp_degree=128&gradient_bytes_per_param=bf16&checkpoint_bytes_per_param=14B'

log=$(mktemp)
"$build/dpas" serve --port 0 --quiet --threads "$threads" 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 200); do grep -q "listening on" "$log" && break; sleep 0.05; done
port=$(sed -nE 's#.*listening on http://127\.0\.0\.1:([0-9]+)/.*#\1#p' "$log")
[ -n "$port" ] || { echo "dpas serve did not start: $(cat "$log")"; exit 1; }

rate() { # median requests/s of three runs of PATH
  local r=()
  for _ in 1 2 3; do
    r+=("$("$build/serve_client" "$port" "$1" --connections "$conns" --requests "$requests" |
           sed -E 's/.*"requests_per_s": ([0-9]+).*/\1/')")
  done
  printf '%s\n' "${r[@]}" | sort -n | sed -n 2p
}

echo "== dpas serve on 127.0.0.1, $threads threads; serve_client: $conns keep-alive connections, $requests requests a run, median of 3"
"$build/serve_client" "$port" "/api/v1/eval?$q" --connections "$conns" --requests 20000 >/dev/null # warm-up
eval_rps=$(rate "/api/v1/eval?$q")
echo "GET /api/v1/eval (the reference scenario, 849 bytes of JSON)   $eval_rps requests/s"
cost_rps=$(rate "/api/v1/cost?$q&rule=median&schedule=allgather")
echo "GET /api/v1/cost (median on allgather)                         $cost_rps requests/s"
static_rps=$(rate "/app.css")
echo "anchor: GET /app.css (static, the HTTP layer alone)            $static_rps requests/s"
cli=$("$build/bench/bench_cli" "${RUNS:-200}" "$build/dpas" eval --model GPT3 --fleet Training_1K --dp 128 --grad bf16 --ckpt 14B -o json)
cli_ms=$(sed -E 's/.*median_ms ([0-9.]+).*/\1/' <<<"$cli")
echo "anchor: dpas eval ... -o json, one process per answer          $cli"
awk -v e="$eval_rps" -v s="$static_rps" -v c="$cli_ms" 'BEGIN {
  printf "ratio  eval runs at %.0f%% of the static resource'"'"'s rate; the server answers %.0fx as many as one CLI process per answer (%.0f/s)\n", 100 * e / s, e * c / 1000, 1000 / c }'
