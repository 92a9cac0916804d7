# SPDX-License-Identifier: Apache-2.0
"""dpas.torch.bench's bookkeeping, as properties (Debian's torch under /usr/bin/python3).

    test_torch_bench.py properties  the honest split is disjoint and covers the training part;
                                    the Byzantine workers get no data; the oracle aggregates the
                                    honest rows only; the attack's rows are the honest rows plus
                                    f rows; f = 0 (or no attack) with the mean is the oracle;
                                    the worst case is the minimum accuracy over the attacks; the
                                    chosen candidate is the one of lowest validation accuracy;
                                    --merge of a grid run in two parts gives the tables of
                                    the grid run at once (consistency), and refuses parts with
                                    other settings or a run met twice; the IDX reader against
                                    hand-written files
    test_torch_bench.py grid        the small grid of issue 28 through the command line:
                                    Fashion-MNIST, the CNN, N in {7, 10, 13}, f in {1, 2, 3},
                                    5 seeds (few steps, a cut training set): every table has its
                                    oracle, and every worst case is recomputed here from the runs

No assertion on accuracy values or wall-clock time: the expected values are the properties'
(sets, counts, a minimum, an argmin) computed here from the runs' own records.
"""
import contextlib
import gzip
import io
import json
import os
import struct
import sys
import tempfile

import numpy as np

import dpas
from dpas.torch import _simulate, bench, data

FAIL = []


def check(cond, what):
    if not cond:
        FAIL.append(what)
        print("FAIL:", what)


def spec(**kw):
    base = dict(dataset="digits", model="mlp", n=7, f=2, rule="trimmed_mean", pre=["nnm"],
                attack="alie", attack_parameters=None, momentum=0.9, seed=3, alpha=0.5,
                steps=4, lr=0.1, batch=8, convention=None, limit_train=None, limit_test=None,
                limit_validation=None, oracle=False)
    base.update(kw)
    return base


def test_properties():
    digits = data.load("digits")
    (x, y), _, classes = digits
    # The validation split and the honest split: disjoint, covering, h parts only.
    for n, f, alpha, seed in ((7, 1, None, 1), (10, 3, 0.1, 2), (13, 2, 1.0, 5), (4, 3, 0.5, 4)):
        train, val = _simulate.validation_split(len(y))
        check(len(np.intersect1d(train, val)) == 0, "validation and training overlap")
        check(len(train) + len(val) == len(y), "validation + training != the training set")
        parts = _simulate.honest_split(y[train], n, f, alpha, seed)
        check(len(parts) == n - f, f"N={n} f={f}: {len(parts)} parts for {n - f} honest workers")
        allidx = np.concatenate(parts)
        check(len(allidx) == len(np.unique(allidx)), f"N={n} f={f}: a sample dealt twice")
        check(set(allidx.tolist()) == set(range(len(train))),
              f"N={n} f={f}: the honest parts do not cover the training part")
        check(all(len(p) > 0 for p in parts), f"N={n} f={f}: an honest worker has no data")
    honest, byz = _simulate.ranks(10, 3)
    check(honest == tuple(range(7)) and byz == (7, 8, 9), f"ranks(10, 3) = {honest}, {byz}")

    # Who is in the aggregated rows: the oracle has the h honest rows only, an attack adds f.
    def shapes(s):
        seen = []
        r = _simulate.simulate(s, digits, observe=lambda step, rows: seen.append(rows.copy()))
        return r, seen
    r_or, rows_or = shapes(spec(oracle=True, n=5, f=0, rule=None, pre=[], attack=None))
    check(all(m.shape[0] == 5 for m in rows_or), "the oracle aggregates other than 5 rows")
    r_at, rows_at = shapes(spec(n=7, f=2))
    check(all(m.shape[0] == 7 for m in rows_at), "ALIE at N=7 f=2 does not aggregate 7 rows")
    # the first step's honest rows are the same as the oracle's (same data, same batches, same
    # initial model); the Byzantine rows are ALIE's on them (dpas.attack, the paper's formula)
    check(np.array_equal(rows_at[0][:5], rows_or[0]),
          "the honest rows of the attacked run differ from the oracle's at step 0")
    want = dpas.attack("alie", rows_or[0], 2)
    check(np.array_equal(rows_at[0][5:], want), "the Byzantine rows are not ALIE's")
    # f = 0 with the mean, and the mean with no attack (the Byzantine workers send nothing):
    # the oracle, run for run
    for s in (spec(n=5, f=0, rule="mean", pre=[], attack=None),
              spec(n=7, f=2, rule="mean", pre=[], attack=None)):
        r, rows = shapes(s)
        check(r["accuracy"] == r_or["accuracy"] and r["validation"] == r_or["validation"],
              f"mean N={s['n']} f={s['f']} without attack: {r['accuracy']} vs the oracle's "
              f"{r_or['accuracy']}")
        check(all(np.array_equal(a, b) for a, b in zip(rows, rows_or)),
              f"mean N={s['n']} f={s['f']} without attack: rows differ from the oracle's")

    # The worst case is the minimum of the mean accuracy over the attacks, none excluded.
    cells = {"none": (0.2, 0.0, "-"), "alie": (0.71, 0.01, "z=2"), "ipm": (0.65, 0.02, "x"),
             "mimic": (0.9, 0.0, "-")}
    w = bench.worst_case(cells)
    check(w[0] == "ipm" and w[1][0] == 0.65, f"worst_case: {w}")
    check(bench.worst_case({"none": (0.5, 0, "-")}) is None, "worst_case with no attack")
    # The chosen candidate is the one of lowest mean validation accuracy (not test).
    runs = {"a": [{"validation": 0.8, "accuracy": 0.1}, {"validation": 0.6, "accuracy": 0.1}],
            "b": [{"validation": 0.69, "accuracy": 0.9}, {"validation": 0.69, "accuracy": 0.9}]}
    check(bench.choose(runs)[0] == "b", "choose did not take the lowest validation mean (0.69)")

    # --merge (a consistency test: two paths of our own code): a grid run in two parts by N and
    # merged gives the tables of the grid run at once, number for number (the runs are seeded);
    # parts with another setting, or a run met twice, are refused with the part named.
    def bench_json(argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = bench.main(argv)
        check(code == 0, f"bench {' '.join(argv)} exited {code}")
        return json.loads(out.getvalue()) if code == 0 else None
    common = ["--dataset", "digits", "--model", "mlp", "--f", "1,2", "--rules", "trimmed_mean",
              "--pre", "nnm", "--attacks", "none,alie,ipm", "--grid", "alie:z=zmax",
              "--grid", "ipm:epsilon=0.1,2", "--seeds", "2", "--steps", "3", "-o", "json"]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, ns in (("a", "5"), ("b", "7"), ("ab", "5,7"), ("c", "7")):
            extra = ["--lr", "0.2"] if name == "c" else []
            got = bench_json(common + ["--n", ns] + extra)
            paths[name] = os.path.join(tmp, name + ".json")
            with open(paths[name], "w") as fh:
                json.dump(got, fh)
        whole = json.load(open(paths["ab"]))
        merged = bench_json(["--merge", paths["a"] + "," + paths["b"], "-o", "json"])
        check(merged is not None and merged["summary"] == whole["summary"],
              "--merge of N=5 and N=7 differs from the grid N=5,7 run at once")
        check(merged is not None and len(merged["runs"]) == len(whole["runs"]),
              f"--merge: {len(merged['runs']) if merged else None} runs, the grid has "
              f"{len(whole['runs'])}")
        for parts, why in (((paths["a"], paths["c"]), "lr is 0.2"),
                           ((paths["b"], paths["ab"]), "is also in")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = bench.main(["--merge", ",".join(parts)])
            check(code == 1 and why in err.getvalue() and parts[1] in err.getvalue(),
                  f"--merge {parts}: exit {code}, {err.getvalue()!r} lacks {why!r}")

    # The IDX reader: a hand-written 2 x 2 x 3 file, gzip and plain; bad files refused.
    with tempfile.TemporaryDirectory() as tmp:
        body = bytes([0, 0, 8, 3]) + struct.pack(">III", 2, 2, 3) + bytes(range(12))
        for name, opener in (("a.gz", gzip.open), ("a", open)):
            with opener(os.path.join(tmp, name), "wb") as fh:
                fh.write(body)
            got = data.read_idx(os.path.join(tmp, name))
            check(got.shape == (2, 2, 3) and got[1, 1, 2] == 11, f"read_idx({name}): {got}")
        for bad, why in ((bytes([1, 0, 8, 1]) + struct.pack(">I", 1) + b"x", "two zero bytes"),
                         (bytes([0, 0, 0xD, 1]) + struct.pack(">I", 1) + b"xxxx", "0x0d"),
                         (bytes([0, 0, 8, 1]) + struct.pack(">I", 5) + b"xx", "promises 5")):
            p = os.path.join(tmp, "bad")
            with open(p, "wb") as fh:
                fh.write(bad)
            try:
                data.read_idx(p)
                check(False, f"read_idx accepted a file that should fail with {why!r}")
            except ValueError as e:
                check(why in str(e) and p in str(e), f"read_idx's message {e} lacks {why!r}")
    # Fashion-MNIST's published shape (Xiao et al. 2017): 60,000 training and 10,000 test images
    # of 28 x 28, 6,000 and 1,000 per class.
    if os.path.isdir(data.FASHION_MNIST_DIR) or os.environ.get("DPAS_FASHION_MNIST"):
        (fx, fy), (tx, ty), k = data.load("fashion-mnist")
        check(fx.shape == (60000, 784) and tx.shape == (10000, 784) and k == 10,
              f"fashion-mnist shapes {fx.shape} {tx.shape}")
        check(set(np.bincount(fy).tolist()) == {6000} and set(np.bincount(ty).tolist()) == {1000},
              "fashion-mnist class counts")
        check(0.0 <= fx.min() and fx.max() <= 1.0, "fashion-mnist pixels not in [0, 1]")
    else:
        print("properties: fashion-mnist not installed (dataset-fashion-mnist): its checks skipped")
    print(f"properties: {'ok' if not FAIL else f'{len(FAIL)} failed'}")


def test_grid():
    """The issue's grid, small: every (N, f) has its oracle over 5 seeds; every worst case is the
    minimum over the attacks of the cells recomputed here from the runs."""
    if not (os.path.isdir(data.FASHION_MNIST_DIR) or os.environ.get("DPAS_FASHION_MNIST")):
        print("grid: skipped: dataset-fashion-mnist is not installed")
        return
    args = ["--dataset", "fashion-mnist", "--model", "cnn", "--n", "7,10,13", "--f", "1,2,3",
            "--seeds", "5", "--steps", "1", "--batch", "2", "--limit-train", "600",
            "--limit-test", "50", "--limit-validation", "50", "--rules", "trimmed_mean",
            "--pre", "nnm", "--attacks", "alie,ipm", "--grid", "alie:z=zmax",
            "--grid", "ipm:epsilon=0.1,2", "--alpha", "1",
            "-o", "json"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = bench.main(args)
    check(code == 0, f"bench exited {code}")
    got = json.loads(out.getvalue())
    runs = got["runs"]
    pairs = [(n, f) for n in (7, 10, 13) for f in (1, 2, 3)]
    for n, f in pairs:
        orc = [r for r in runs if r["oracle"] and r["n"] == n - f]
        check(sorted(r["seed"] for r in orc) == [1, 2, 3, 4, 5],
              f"N={n} f={f}: oracle seeds {[r['seed'] for r in orc]}")
        check(all(r["f"] == 0 and r["attack"] is None and r["rule"] is None for r in orc),
              f"N={n} f={f}: an oracle run has Byzantine workers or a rule")
        cells = {}
        for attack, cands in (("alie", ["zmax"]), ("ipm", ["epsilon=0.1", "epsilon=2"])):
            best = None
            for c in cands:
                rs = [r for r in runs if not r["oracle"] and r["n"] == n and r["f"] == f and
                      r["attack"] == attack and bench.label(r["attack_parameters"]) == c]
                check(len(rs) == 5, f"N={n} f={f} {attack} {c}: {len(rs)} runs, not 5")
                v = np.mean([r["validation"] for r in rs])
                if best is None or v < best[0]:
                    best = (v, np.mean([r["accuracy"] for r in rs]))
            cells[attack] = best[1]
        want = min(cells, key=cells.get)
        w = [x for x in got["summary"]["worst"] if (x["n"], x["f"]) == (n, f)]
        check(len(w) == 1 and w[0]["attack"] == want and
              abs(w[0]["mean"] - cells[want]) < 1e-12,
              f"N={n} f={f}: worst case {w} is not {want} at {cells[want]}")
    print(f"grid: {len(runs)} runs in {got['seconds']} s; "
          f"{'ok' if not FAIL else f'{len(FAIL)} failed'}")


if __name__ == "__main__":
    for w in sys.argv[1:] or ["properties", "grid"]:
        globals()["test_" + w]()
    if FAIL:
        sys.exit(1)
    print("ok")
