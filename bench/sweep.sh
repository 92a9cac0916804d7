#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A million-point sweep with schedule costs (1000 dp_degree x 1000 parameter counts, sharded, to
# CSV), side by side with the previous build: the last commit before the request layer and the
# one rule for printing a real (ANCHOR, a git revision), built here from `git archive` into a
# scratch folder. Prints the median of RUNS runs of each and their ratio; asserts nothing (speed
# is measured, not tested: docs/testing.md#benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
anchor_rev=${ANCHOR:-abae487}
runs=${RUNS_SWEEP:-3}
scratch=${ANCHOR_DIR:-/tmp/dpas-bench-anchor-$anchor_rev}
if ! git cat-file -e "$anchor_rev^{commit}" 2>/dev/null; then
  echo "== sweep: the anchor $anchor_rev is not in this checkout's history; skipped"
  exit 0
fi
if [ ! -x "$scratch/build/dpas" ]; then
  echo "building the anchor ($anchor_rev) in $scratch"
  rm -rf "$scratch" && mkdir -p "$scratch"
  git archive "$anchor_rev" | tar -x -C "$scratch"
  cmake -S "$scratch" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DDPAS_TESTS=OFF -DDPAS_BENCH=OFF -DDPAS_MEASURE=OFF >/dev/null
  cmake --build "$scratch/build" --target dpas_cli >/dev/null
fi
args=(sweep --fleet Mega_100K --grad bf16 --ckpt 14B --dp 1..1000+1 --params 1e6..1e9+1e6
      --schedule sharded -o csv)
echo "== a million-point sweep with schedule costs to CSV (median of $runs runs each)"
old=$("$build/bench/bench_cli" "$runs" "$scratch/build/dpas" "${args[@]}")
new=$("$build/bench/bench_cli" "$runs" "$build/dpas" "${args[@]}")
echo "anchor ($anchor_rev)  $old"
echo "dpas                  $new"
o=$(sed -E 's/.*median_ms ([0-9.]+).*/\1/' <<<"$old")
n=$(sed -E 's/.*median_ms ([0-9.]+).*/\1/' <<<"$new")
awk -v o="$o" -v n="$n" 'BEGIN { printf "ratio  %.2fx faster than the anchor (%.0f ns per point vs %.0f)\n", o / n, n, o }'
