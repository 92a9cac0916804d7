#!/usr/bin/env bash
# Kernel throughput side by side: dpas's kernels and NumPy (Debian's python3-numpy), one core,
# the same n, d and rules; ratios dpas / NumPy, and each kernel against dpas's plain mean.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
lg=${LOG2_D:-22}
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  apt-get install -y -qq python3-numpy >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3-numpy >/dev/null; }
fi
c=$(mktemp); p=$(mktemp); trap 'rm -f "$c" "$p"' EXIT
taskset -c 0 "$build/bench/bench_kernels" "$lg" 5 > "$c"
# One thread for NumPy as for dpas; OPENBLAS_CORETYPE/L2_SIZE unset as env/README advises.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
  taskset -c 0 /usr/bin/python3 bench/anchor_numpy.py "$lg" 3 > "$p"
head -1 "$c"
printf '%-13s %3s %12s %12s %10s %14s\n' rule n "dpas GB/s" "numpy GB/s" "x numpy" "% dpas mean"
awk 'NR==FNR { if ($1=="rule") np[$2" "$4]=$8; next }
     $1=="rule" { key=$2" "$4; if ($2=="mean") mean[$4]=$8;
                  printf "%-13s %3s %12.3f %12.3f %10.1f %13.0f%%\n", $2, $4, $8, np[key], $8/np[key], 100*$8/mean[$4] }' "$p" "$c"
