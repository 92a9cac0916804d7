#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every libFuzzer target for FUZZ_SECONDS (default 60) on a working copy of its committed
# corpus, then prints each target's executions, coverage and corpus size. A crash, leak or
# timeout stops with the input saved in build-fuzz/artifacts/. http and http_wire share a corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"width count yaml json nccl cli writer yamldoc sweep http http_wire multipart"}
mkdir -p build-fuzz/work build-fuzz/artifacts build-fuzz/logs
status=0
for t in $targets; do
  mkdir -p "build-fuzz/work/$t"
  log="build-fuzz/logs/$t.log"
  export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  if ! "build-fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="build-fuzz/artifacts/$t-" \
        "build-fuzz/work/$t" "tests/fuzz/corpus/${t%_wire}" > "$log" 2>&1; then
    echo "fuzz_$t: FAILED (see $log and build-fuzz/artifacts/)"
    tail -30 "$log"
    status=1
    continue
  fi
  runs=$(awk '/stat::number_of_executed_units/ {s += $2} END {print s + 0}' "$log")
  cov=$(grep -Eo "cov: [0-9]+" "$log" | tail -1 | awk '{print $2}' || true)
  corpus=$(ls "build-fuzz/work/$t" | wc -l)
  printf 'fuzz_%-6s %12s executions  coverage %6s edges  corpus %5s inputs  (%ss)\n' "$t" "$runs" "${cov:-?}" "$corpus" "$secs"
done
exit $status
