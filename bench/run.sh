#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Benchmarks of issue 2, side by side with their anchors:
#  1. scenario evaluations per second (C, one core) against the same equations with pint in Python;
#  2. the CLI's start-to-exit time against Python + pint's start-up;
#  3. a million-point sweep with schedule costs against the previous build (bench/sweep.sh).
# The anchor needs Debian's python3-pint; it is installed here if missing (not by make test).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
if ! /usr/bin/python3 -c 'import pint' 2>/dev/null; then
  echo "installing python3-pint for the anchor"
  apt-get install -y -qq python3-pint >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3-pint >/dev/null; }
fi
echo "== scenario evaluations (one core)"
c_line=$(taskset -c 0 "$build/bench/bench_eval" "${EVALS:-20000000}")
echo "dpas   $c_line"
py_line=$(taskset -c 0 /usr/bin/python3 bench/anchor_pint.py "${PY_EVALS:-20000}")
echo "anchor $py_line"
c_ns=$(sed -E 's/.*ns_per_eval ([0-9.]+).*/\1/' <<<"$c_line")
py_us=$(sed -E 's/.*us_per_eval ([0-9.]+).*/\1/' <<<"$py_line")
awk -v c="$c_ns" -v p="$py_us" 'BEGIN { printf "ratio  dpas is %.0fx faster per evaluation (%.1f ns vs %.1f us)\n", p * 1000 / c, c, p }'

echo "== CLI start to exit"
cli_line=$("$build/bench/bench_cli" "${RUNS:-200}" "$build/dpas" show ReferenceJobAttackSurface -o json)
echo "dpas show ReferenceJobAttackSurface -o json   $cli_line"
py_start=$("$build/bench/bench_cli" "${PY_RUNS:-20}" /usr/bin/python3 -c 'import pint; pint.UnitRegistry()')
echo "python3 -c 'import pint; pint.UnitRegistry()'   $py_start"
c_ms=$(sed -E 's/.*median_ms ([0-9.]+).*/\1/' <<<"$cli_line")
p_ms=$(sed -E 's/.*median_ms ([0-9.]+).*/\1/' <<<"$py_start")
awk -v c="$c_ms" -v p="$p_ms" 'BEGIN { printf "ratio  dpas starts and answers %.0fx sooner (%.2f ms vs %.0f ms)\n", p / c, c, p }'

echo "== a million-point sweep to CSV (1000 dp_degree x 1000 parameter counts), seed attributes"
t0=$(date +%s.%N)
"$build/dpas" sweep --fleet Mega_100K --grad bf16 --ckpt 14B --dp 1..1000+1 --params 1e6..1e9+1e6 -o csv > /tmp/dpas-sweep.csv
t1=$(date +%s.%N)
rows=$(($(wc -l < /tmp/dpas-sweep.csv) - 1))
awk -v a="$t0" -v b="$t1" -v r="$rows" 'BEGIN { printf "%d rows in %.3f s (%.0f ns per row)\n", r, b - a, (b - a) / r * 1e9 }'
rm -f /tmp/dpas-sweep.csv
bash bench/sweep.sh
