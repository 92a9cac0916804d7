#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Kernel throughput side by side, in one run: dpas's kernels (one thread; two for the scaling
# column), NumPy (Debian's python3-numpy), PyTorch (python3-torch: torch's own calls and
# ByzFL's aggregators as ByzFL computes them in torch) and dpas.aggregate called from Python on
# the same numpy arrays. GB/s of gradient data read (n x d x 4 bytes per call, best of REPEATS);
# each kernel also as a percentage of dpas's own mean, the bandwidth limit, with the goals of
# issue 11; then issue 24's goals (bench_kernels' "goal" lines against bench/anchor_byzfl.py).
# The machine is shared: compare ratios from one run, not figures across runs.
# Environment: BUILD (build), LOG2_D (22), REPEATS (5), ISA (best here; or generic, avx2, avx512).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
lg=${LOG2_D:-22}
reps=${REPEATS:-5}
isa=${ISA:-}
py=/usr/bin/python3
if ! $py -c 'import numpy, torch' 2>/dev/null; then
  bash scripts/install-deps.sh --bench
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# one and two threads in the same rounds (so they see the same load), on the two cores
taskset -c 0,1 "$build/bench/bench_kernels" "$lg" "$reps" 1,2 $isa > "$dir/c"
grep -v ' threads 2 ' "$dir/c" > "$dir/c1"
{ head -1 "$dir/c"; grep ' threads 2 ' "$dir/c"; } > "$dir/c2"
one=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
     MKL_NUM_THREADS=1 taskset -c 0 $py)
"${one[@]}" bench/anchor_numpy.py "$lg" 3 > "$dir/numpy"
"${one[@]}" bench/anchor_torch.py "$lg" 3 > "$dir/torch" || echo "torch anchor failed" >&2
PYTHONPATH=python DPAS_LIBRARY="$build/libdpas.so" "${one[@]}" bench/anchor_numpy.py "$lg" "$reps" --dpas > "$dir/dpaspy"
# issue 24: ByzFL's algorithms of the new rules in NumPy (slow: one round), and the input kinds
"${one[@]}" bench/anchor_byzfl.py "$lg" 1 > "$dir/byzfl"
PYTHONPATH=python DPAS_LIBRARY="$build/libdpas.so" "${one[@]}" bench/anchor_byzfl.py "$lg" "$reps" --inputs > "$dir/inputs"
$py - "$dir" <<'EOF'
import sys

d = sys.argv[1]


def read(name):
    rows = {}
    for line in open(f"{d}/{name}"):
        w = line.split()
        if w and w[0] == "rule":
            key = (w[1], int(w[3]))
            if "threads" in w:
                key += (int(w[w.index("threads") + 1]),)
            rows[key] = float(w[w.index("GBps") + 1]) if "GBps" in w else None
    return rows


c1, c2, npy, tor, dpy = (read(x) for x in ("c1", "c2", "numpy", "torch", "dpaspy"))
print(open(f"{d}/c1").readline().strip() + "  (one thread; 'x2 thr': two threads over one)")
fmt = "{:<13} {:>3} {:>10} {:>7} {:>8} {:>9} {:>9} {:>9} {:>8} {:>7}"
print(fmt.format("rule", "n", "dpas GB/s", "% mean", "x2 thr", "numpy", "torch", "byzfl/t", "dpas.py", "x numpy"))


def g(v):
    return "-" if v is None else f"{v:.3f}"


rules = ["mean", "median", "trimmed_mean", "meamed", "krum", "multi_krum"]
torch_name = {"mean": "torch_mean", "median": "torch_median"}
byzfl_name = {"median": "byzfl_median", "trimmed_mean": "byzfl_trimmed_mean", "meamed": "byzfl_meamed",
              "krum": "byzfl_krum"}
ratio = {}
for n in (8, 16, 32):
    mean = c1.get(("mean", n, 1))
    for r in rules:
        v = c1.get((r, n, 1))
        if v is None:
            continue
        v2 = c2.get((r, n, 2))
        pct = 100 * v / mean
        ratio[(r, n)] = pct
        if v2:
            ratio[(r, n, "thr")] = v2 / v
        nv = npy.get((r, n))
        print(fmt.format(r, n, g(v), f"{pct:.0f}%", f"{v2 / v:.2f}x" if v2 else "-", g(nv),
                         g(tor.get((torch_name.get(r, ""), n))), g(tor.get((byzfl_name.get(r, ""), n))),
                         g(dpy.get((r, n))), f"{v / nv:.1f}" if nv else "-"))
print()
print("goals of issue 11 (this run):")
for label, key, goal in (("median n=16, % of the mean", ("median", 16), 80),
                         ("trimmed_mean n=16, % of the mean", ("trimmed_mean", 16), 80),
                         ("median n=32, % of the mean", ("median", 32), 60),
                         ("trimmed_mean n=32, % of the mean", ("trimmed_mean", 32), 60),
                         ("krum n=32, % of the mean", ("krum", 32), 40)):
    v = ratio.get(key)
    print(f"  {label:<34} {v:6.1f}%   goal >= {goal}%   {'met' if v >= goal else 'NOT met'}")
t = ratio.get(("median", 16, "thr"))
print(f"  {'median n=16, 2 threads / 1 thread':<34} {t:6.2f}x   goal >= 1.6x   {'met' if t >= 1.6 else 'NOT met'}")
for line in open(f"{d}/torch"):
    if " error " in line:
        print("  torch: " + line.strip())


def seconds(name, key="rule"):
    out = {}
    for line in open(f"{d}/{name}"):
        w = line.split()
        if w and w[0] == key:
            out[w[1]] = float(w[w.index("seconds") + 1])
    return out


goal, byz, kinds = seconds("c1", "goal"), seconds("byzfl"), seconds("inputs")
print()
print("goals of issue 24 (this run; n = 16, one thread, a workspace kept across calls):")
passes = goal["geometric_median_3"] / goal["mean"]
print(f"  {'geometric median, 3 iterations':<34} {passes:6.2f} passes of the mean   goal <= 10   "
      f"{'met' if passes <= 10 else 'NOT met'}")
for r in ("monna", "caf", "smea", "arc", "clipping", "bucketing"):
    x = byz[r] / goal[r]
    print(f"  {r + ': NumPy (ByzFL) / dpas':<34} {x:6.1f}x ({byz[r]:.3f} s / {goal[r]:.5f} s)   "
          f"goal >= 20x   {'met' if x >= 20 else 'NOT met'}")
for rule in ("mean", "median", "krum"):
    base = kinds[f"{rule}:array"]
    for kind in ("list_of_views", "list_of_arrays", "tensor", "list_of_tensors"):
        x = kinds[f"{rule}:{kind}"] / base
        print(f"  {rule + ': ' + kind + ' / array':<34} {x:6.2f}x   goal: the same (<= 1.10)   "
              f"{'met' if x <= 1.10 else 'NOT met'}")
EOF
# issue 33: ARC, Clipping, Bucketing, NNM, MoNNA and Average against NumPy's best vectorised
# formulation and ByzFL itself (BYZFL: a folder holding ByzFL's package to import, e.g. a
# checkout of LPD-EPFL/byzfl; without it the ByzFL columns are '-'), with passes of the data
echo
PYTHONPATH="python${BYZFL:+:$BYZFL}" DPAS_LIBRARY="$build/libdpas.so" "${one[@]}" \
  bench/bench_kernels_byzfl.py "$lg" 3
