#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make bench-cluster: predicted against measured step time on an emulated cluster
# (tests/cluster/emucluster.sh; bench/cluster.py says what is compared and how). Needs root
# (network namespaces), OpenMPI and iproute2, as the cluster tests do; takes about 10 minutes on
# 2 busy cores. Prints a markdown table per cluster, with the load average of each case;
# writes the figures as JSON to $BENCH_CLUSTER_OUT (default build/bench-cluster.json).
# BENCH_CLUSTER_QUICK=1: small sizes and few steps, to try the machinery (not for figures).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
out=${BENCH_CLUSTER_OUT:-$build/bench-cluster.json}
emu=tests/cluster/emucluster.sh
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
echo "bench-cluster: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start" >&2
rc=0
bash "$emu" --hosts 4 --rate 1gbit -- \
  "$py" bench/cluster.py transfer "$build/dpas-measure" "$build/dpas" "$tmp/transfer.json" || rc=$?
[ "$rc" -eq 0 ] && { bash "$emu" --hosts 2 --ranks-per-host 2 --rate 1gbit -- \
  "$py" bench/cluster.py hier "$build/dpas-measure" "$build/dpas" "$tmp/hier.json" || rc=$?; }
if [ "$rc" -ne 0 ]; then
  echo "bench-cluster: the emulated cluster run failed (exit $rc; 77: it cannot be made here)" >&2
  exit "$rc"
fi
"$py" bench/cluster.py report "$out" "$tmp/transfer.json" "$tmp/hier.json"
echo "bench-cluster: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; figures in $out" >&2
