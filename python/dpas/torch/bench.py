# SPDX-License-Identifier: Apache-2.0
"""A benchmark of Byzantine-robust training after ByzFL's: N and f swept, honest data only on the
honest workers, an honest-only oracle, attack parameters chosen on a validation split, the worst
case over attacks per rule.

    python3 -m dpas.torch.bench [--dataset digits|fashion-mnist] [--model mlp|cnn]
        [--n 7,10,13] [--f 1,2,3] [--alpha 1] [--rules trimmed_mean,...] [--pre none,nnm]
        [--attacks none,alie,ipm,...] [--grid alie:z=zmax,1,2] [--momentum 0.9] [--seeds 5]
        [--steps 100] [--lr 0.1] [--batch 16] [--jobs 2] [-o table|json] [--svg DIR]
    python3 -m dpas.torch.bench --merge A.json,B.json [-o table|json] [--svg DIR]
    python3 -m dpas.torch.bench --time [--world-size 4] [--width 1024] [--time-f 0] [--rounds 24]

A run trains a model by data-parallel SGD with N = h + f workers, simulated in one process with
the DDP hook's aggregation code (dpas.torch._simulate: the same dpas.aggregate call on the
(N, d) rows, the same attacks, dpas.torch.attacks.rows, the same worker momentum); the training
set minus a validation split is dealt to the h = N - f honest workers only (IID or
Dirichlet(alpha) per class); the f Byzantine workers hold no data and send the attack's rows.
For every (N, f): the oracle (the h honest workers alone, plain mean); per rule and attack, each
candidate parameter of the attack (--grid) is run on every seed, the one with the lowest mean
validation accuracy is the attack's, and its test accuracy (mean and sample standard deviation
over the seeds) is reported; the worst case of a rule is the attack (other than none) with the
lowest of those. --merge makes the tables from the runs of several -o json outputs (a grid run
in parts: the same N or f in several parts only if their other settings are the same), without
running anything. --time measures the hook's step time on real processes instead.
"""
import json
import math
import os
import sys
import time

import numpy as np

import dpas

from . import _train
from ._cli import Parser, UsageError, check_output_path
from .attacks import ATTACKS
from .data import DATASETS

PRE_CHOICES = ("none", "nnm")
MODELS = ("mlp", "cnn")
# The attack parameters tried per rule (the one with the lowest validation accuracy is kept):
# ALIE's z: the paper's z_max (Baruch et al. 2019; dpas.attack's default) and two larger ones;
# IPM's epsilon: 0.1 (Xie et al. 2020's attack on median and Krum), 0.5, and 2 (the same vector
# as FOE with tau = 3, ByzFL's form); sign flip: -mu (ByzFL's SignFlipping, omniscient).
DEFAULT_GRID = {"alie": [{}, {"z": 1.0}, {"z": 2.0}],
                "ipm": [{"epsilon": 0.1}, {"epsilon": 0.5}, {"epsilon": 2.0}],
                "sign_flip": [{"scale": 1.0}], "foe": [{"tau": 3.0}], "mimic": [{}],
                "mimic_opt": [{}], "alie_opt": [{}], "ipm_opt": [{}], "foe_opt": [{}],
                "large_value": [{"value": 1e20}]}
SIM_ATTACKS = tuple(DEFAULT_GRID)  # the rest need a rank's own data (label_flip) or are faults


def _list(option, text, known=None, convert=str):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise UsageError(f"{option} needs at least one value, got {text!r}")
    out = []
    for x in items:
        if known is not None and x not in known:
            raise UsageError(f"{option}: unknown value {x!r} (known: {', '.join(known)})")
        try:
            v = convert(x)
        except ValueError:
            raise UsageError(f"{option}: {x!r} is not a valid value") from None
        out.append(v)
    dup = sorted({str(x) for x in out if out.count(x) > 1})
    if dup:
        raise UsageError(f"{option} lists {', '.join(dup)} twice")
    return out


def _alpha(x):
    if x == "iid":
        return None
    v = float(x)
    if not v > 0 or not math.isfinite(v):
        raise ValueError(x)
    return v


def _grid_option(text):
    """--grid attack:parameter=v1,v2,... (zmax: ALIE's default z) -> (attack, [params])."""
    name, sep, rest = text.partition(":")
    param, sep2, values = rest.partition("=")
    if not sep or not sep2:
        raise UsageError(f"--grid: {text!r} is not attack:parameter=v1,v2,...")
    if name not in DEFAULT_GRID:
        raise UsageError(f"--grid: unknown attack {name!r} (known: {', '.join(DEFAULT_GRID)})")
    if param not in ATTACKS[name].parameters:
        raise UsageError(f"--grid: attack {name!r} has no parameter {param!r} (its parameters: "
                         f"{', '.join(ATTACKS[name].parameters) or 'none'})")
    out = []
    for v in _list("--grid", values):
        if v == "zmax" and (name, param) == ("alie", "z"):
            out.append({})
            continue
        try:
            x = float(v)
        except ValueError:
            raise UsageError(f"--grid: {name}:{param} value {v!r} is not a number") from None
        if not math.isfinite(x):
            raise UsageError(f"--grid: {name}:{param} value {v!r} must be finite")
        out.append({param: x})
    return name, out


def label(params) -> str:
    """A candidate's short name: z=1, epsilon=0.5; ALIE's default z: zmax."""
    if not params:
        return "zmax" if params == {} else "-"
    return ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in sorted(params.items()))


def refusal(rule, f, world, pre, convention=None):
    """Why rule with pre cannot run at N = world with f, or None."""
    try:
        dpas.aggregate(rule, np.zeros((world, 1), np.float32), 0 if rule == "mean" else f,
                       convention=convention, nnm="nnm" in pre)
    except ValueError as e:
        return str(e)
    return None


def grid(a):
    """(specs, refused): every run to make (dicts for dpas.torch._simulate), and the rule x
    (N, f) combinations a rule's resilience condition refuses. Oracle runs are keyed by h and the
    seed only (the same h honest workers whatever f), so each is made once."""
    common = dict(dataset=a.dataset, model=a.model, alpha=a.alpha, momentum=a.momentum,
                  steps=a.steps, lr=a.lr, batch=a.batch, convention=a.convention,
                  limit_train=a.limit_train, limit_test=a.limit_test,
                  limit_validation=a.limit_validation)
    specs, refused, oracles = [], [], set()
    for n in a.n:
        for f in a.f:
            if not 0 <= f < n:
                continue
            h = n - f
            for seed in a.seeds:
                if (h, seed) not in oracles:
                    oracles.add((h, seed))
                    specs.append(dict(common, n=h, f=0, rule=None, pre=[], attack=None,
                                      attack_parameters=None, seed=seed, oracle=True))
            for rule in a.rules:
                for pre in a.pre:
                    p = [] if pre == "none" else [pre]
                    if rule == "mean" and p:
                        continue  # NNM at f = 0 mixes every row: the mean again
                    why = refusal(rule, f, n, p, a.convention)
                    if why:
                        refused.append({"n": n, "f": f, "rule": rule, "pre": p, "why": why})
                        continue
                    for attack in a.attacks:
                        if attack == "none":
                            why = refusal(rule, f, h, p, a.convention)
                            if why:  # no attack: the rule on the h honest rows alone
                                refused.append({"n": n, "f": f, "rule": rule, "pre": p,
                                                "why": f"with no attack (h = {h} rows): {why}"})
                                continue
                        cands = [None] if attack == "none" else a.grid[attack]
                        for params in cands:
                            for seed in a.seeds:
                                specs.append(dict(
                                    common, n=n, f=f, rule=rule, pre=p, seed=seed,
                                    attack=None if attack == "none" else attack,
                                    attack_parameters=params, oracle=False))
    return specs, refused


def _stats(values):
    mean = float(np.mean(values)) if values else None
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0 if values else None
    return mean, sd


def choose(runs_by_candidate):
    """{label: [runs over seeds]} -> (label, runs): the candidate whose mean *validation*
    accuracy is lowest (the attacker's best choice, made without the test set); ties: the
    first listed."""
    best = None
    for lab, rs in runs_by_candidate.items():
        v = float(np.mean([r["validation"] for r in rs]))
        if best is None or v < best[0]:
            best = (v, lab, rs)
    return best[1], best[2]


def worst_case(cells: dict):
    """{attack: (mean test accuracy, ...)} -> (attack, that tuple): the attack other than none
    whose mean test accuracy is lowest (the maximum of the error over the attacks), or None."""
    attacks = [k for k in cells if k != "none" and cells[k][0] is not None]
    if not attacks:
        return None
    k = min(attacks, key=lambda x: cells[x][0])
    return k, cells[k]


def summarise(runs, cfg):
    """The tables' numbers: {"oracle": {(n, f): (mean, sd)}, "cells": {(n, f, rule, pre,
    attack): (mean, sd, label, stopped)}, "worst": {(n, f, rule, pre): (attack, mean, sd,
    label)}}."""
    oracle_runs, groups = {}, {}
    for r in runs:
        if r["oracle"]:
            oracle_runs.setdefault(r["n"], []).append(r)
            continue
        key = (r["n"], r["f"], r["rule"], "+".join(r["pre"]) or "none", r["attack"] or "none")
        lab = label(r["attack_parameters"]) if r["attack"] else "-"
        groups.setdefault(key, {}).setdefault(lab, []).append(r)
    out = {"oracle": {}, "cells": {}, "worst": {}}
    for n in cfg["n"]:
        for f in cfg["f"]:
            if 0 <= f < n and (n - f) in oracle_runs:
                out["oracle"][(n, f)] = _stats([r["accuracy"] for r in oracle_runs[n - f]])
    per_rule = {}
    for key, cands in groups.items():
        lab, rs = choose(cands)
        mean, sd = _stats([r["accuracy"] for r in rs])
        stopped = sum(1 for r in rs if r["error"])
        out["cells"][key] = (mean, sd, lab, stopped)
        per_rule.setdefault(key[:4], {})[key[4]] = (mean, sd, lab)
    for key, cells in per_rule.items():
        w = worst_case(cells)
        if w is not None:
            out["worst"][key] = (w[0],) + tuple(w[1])
    return out


def _refused(result, n, f, rule, pre):
    p = [] if pre == "none" else [pre]
    return any((r["n"], r["f"], r["rule"], r["pre"]) == (n, f, rule, p)
               for r in result["refused"])


def _cell(mean, sd):
    return "" if mean is None else f"{mean:.3f} ± {sd:.3f}"


def table(result) -> str:
    cfg = result["config"]
    s = summarise(result["runs"], cfg)
    pairs = [(n, f) for n in cfg["n"] for f in cfg["f"] if 0 <= f < n]
    rows = [(r, p) for r in cfg["rules"] for p in cfg["pre"] if not (r == "mean" and p != "none")]
    alpha = "iid" if cfg["alpha"] is None else f"Dirichlet alpha = {cfg['alpha']:g}"
    head = (f"{cfg['dataset']}, {cfg['model']} ({result.get('parameters', '?')} parameters), "
            f"{alpha}, {cfg['steps']} steps, lr {cfg['lr']:g}, batch {cfg['batch']} per "
            f"worker, worker momentum {cfg['momentum']:g}, {len(cfg['seeds'])} seeds; final "
            f"test accuracy, mean ± sd over the seeds")
    lines = [head, "", "Worst case over the attacks (" + ", ".join(
        a for a in cfg["attacks"] if a != "none") + "; each attack's parameter chosen per rule "
        "on the validation split):", ""]
    lines.append("| rule | pre | " + " | ".join(f"N={n} f={f}" for n, f in pairs) + " |")
    lines.append("|---|---|" + "---|" * len(pairs))
    lines.append("| oracle (h = N − f honest, mean) | - | " + " | ".join(
        _cell(*s["oracle"].get(p, (None, None))) for p in pairs) + " |")
    for rule, pre in rows:
        cells = []
        for n, f in pairs:
            w = s["worst"].get((n, f, rule, pre))
            cells.append(f"{_cell(w[1], w[2])} ({w[0]})" if w is not None else
                         "refused" if _refused(result, n, f, rule, pre) else "")
        lines.append(f"| {rule} | {pre} | " + " | ".join(cells) + " |")
    for n, f in pairs:
        lines += ["", f"N = {n}, f = {f} (h = {n - f} honest); oracle "
                      f"{_cell(*s['oracle'].get((n, f), (None, None)))}", ""]
        lines.append("| rule | pre | " + " | ".join(cfg["attacks"]) + " |")
        lines.append("|---|---|" + "---|" * len(cfg["attacks"]))
        for rule, pre in rows:
            cells = []
            for attack in cfg["attacks"]:
                c = s["cells"].get((n, f, rule, pre, attack))
                if c is None:
                    cells.append("refused" if _refused(result, n, f, rule, pre) else "")
                    continue
                text = _cell(c[0], c[1])
                if c[2] != "-" and len(cfg["grid"].get(attack, [])) > 1:
                    text += f" ({c[2]})"
                if c[3]:
                    text += f" [{c[3]} stopped]"
                cells.append(text)
            lines.append(f"| {rule} | {pre} | " + " | ".join(cells) + " |")
    for r in result["refused"]:
        lines.append(f"\n{r['rule']}{' + ' + '+'.join(r['pre']) if r['pre'] else ''} at N = "
                     f"{r['n']}, f = {r['f']}: "
                     f"not run: {r['why']}")
    return "\n".join(lines).rstrip() + "\n"


# ---- plot (plain SVG, no dependency) ------------------------------------------------------------

def _esc(t: str) -> str:
    return str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_curves(runs, title, label) -> str:
    """The test accuracy over steps, one line per run (the demonstration's --svg)."""
    W, H, L, B, T, R = 760, 340, 50, 40, 30, 330
    steps = max((s for r in runs for s, _ in r["accuracy_by_step"]), default=1) or 1
    colours = ["#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
               "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    def x(s):
        return L + (W - L - R) * s / steps

    def y(a):
        return H - B - (H - B - T) * a
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="18" font-size="13">{_esc(title)}</text>',
           f'<line x1="{L}" y1="{y(0)}" x2="{W - R}" y2="{y(0)}" stroke="black"/>',
           f'<line x1="{L}" y1="{y(0)}" x2="{L}" y2="{y(1)}" stroke="black"/>']
    for a in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<text x="{L - 6}" y="{y(a) + 4}" text-anchor="end">{a:g}</text>')
        out.append(f'<line x1="{L}" y1="{y(a)}" x2="{W - R}" y2="{y(a)}" stroke="#ddd"/>')
    for s in range(0, steps + 1, max(1, steps // 6)):
        out.append(f'<text x="{x(s)}" y="{H - B + 15}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 8}" text-anchor="middle">step</text>')
    out.append(f'<text x="14" y="{(T + H - B) / 2}" transform="rotate(-90 14 '
               f'{(T + H - B) / 2})" text-anchor="middle">test accuracy</text>')
    for i, r in enumerate(runs):
        c = colours[i % len(colours)]
        dash = ' stroke-dasharray="5,3"' if (i // len(colours)) % 2 else ""
        pts = " ".join(f"{x(s):.1f},{y(a):.1f}" for s, a in r["accuracy_by_step"])
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="1.5"'
                   f'{dash}/>')
        out.append(f'<text x="{W - R + 8}" y="{T + 14 * i + 10}" fill="{c}">'
                   f'{_esc(label(r))}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def svg_worst(result) -> str:
    """The worst-case table as a heat map: rows the oracle and the rules, columns (N, f)."""
    cfg = result["config"]
    s = summarise(result["runs"], cfg)
    pairs = [(n, f) for n in cfg["n"] for f in cfg["f"] if 0 <= f < n]
    rows = [("oracle", [s["oracle"].get(p) for p in pairs])]
    for r in cfg["rules"]:
        for p in cfg["pre"]:
            if r == "mean" and p != "none":
                continue
            rows.append((f"{r} {p}", [(lambda w: None if w is None else (w[1], w[2], w[0]))(
                s["worst"].get((n, f, r, p))) for n, f in pairs]))
    cw, ch, lw, top = 120, 22, 210, 60
    W, H = lw + cw * len(pairs) + 20, top + ch * len(rows) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="10" y="18" font-size="13">worst-case test accuracy over attacks (mean ± '
           f'sd, {len(cfg["seeds"])} seeds): {_esc(cfg["dataset"])}, {_esc(cfg["model"])}</text>']
    for k, (n, f) in enumerate(pairs):
        out.append(f'<text x="{lw + cw * k + cw / 2}" y="{top - 8}" text-anchor="middle">'
                   f'N={n} f={f}</text>')
    for i, (name, cells) in enumerate(rows):
        yy = top + ch * i
        out.append(f'<text x="{lw - 6}" y="{yy + 15}" text-anchor="end">{_esc(name)}</text>')
        for k, c in enumerate(cells):
            xx = lw + cw * k
            if c is None or c[0] is None:
                fill, text = "#eeeeee", "-"
            else:
                v = max(0.0, min(1.0, c[0]))
                fill = f"rgb({int(255 * (1 - v))},{int(200 * v + 40)},{int(90 + 60 * v)})"
                text = f"{c[0]:.2f} ± {c[1]:.2f}" + (f" {c[2]}" if len(c) > 2 else "")
            out.append(f'<rect x="{xx}" y="{yy}" width="{cw - 2}" height="{ch - 2}" '
                       f'fill="{fill}"/>')
            out.append(f'<text x="{xx + cw / 2}" y="{yy + 15}" text-anchor="middle">'
                       f'{_esc(text)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# The settings that make two runs' tables comparable: every one but the N and f swept.
MERGE_SAME = ("dataset", "model", "alpha", "rules", "convention", "pre", "attacks", "grid",
              "momentum", "seeds", "steps", "lr", "batch", "limit_train", "limit_test",
              "limit_validation")


def merge(parts):
    """[(name, result as -o json writes it)] -> one result: the N and f lists joined in the
    order met, the runs and the refusals of every part (an oracle run met twice, the same h and
    seed, kept once). Parts whose settings other than N and f differ are refused (ValueError
    naming the part, the setting and both values), and so is a run met twice."""
    if not parts:
        raise ValueError("nothing to merge")
    first_name, first = parts[0]
    cfg = dict(first["config"])
    cfg["n"], cfg["f"] = [], []
    runs, refused, seen, seconds = [], [], {}, 0.0
    for name, part in parts:
        for key in ("config", "runs", "refused"):
            if key not in part:
                raise ValueError(f"{name}: no {key!r}: not the output of -o json")
        for key in MERGE_SAME:
            a, b = first["config"].get(key), part["config"].get(key)
            if a != b:
                raise ValueError(f"{name}: {key} is {b!r}, but {first_name} has {a!r}: the "
                                 f"tables of runs with different settings cannot be merged")
        for key in ("n", "f"):
            cfg[key] += [v for v in part["config"][key] if v not in cfg[key]]
        for r in part["runs"]:
            ident = json.dumps({k: r.get(k) for k in ("n", "f", "rule", "pre", "attack",
                                                      "attack_parameters", "seed", "oracle")},
                               sort_keys=True)
            if ident in seen:
                if r["oracle"]:
                    continue  # the same h honest workers and seed: the same run
                raise ValueError(f"{name}: the run {ident} is also in {seen[ident]}")
            seen[ident] = name
            runs.append(r)
        refused += [x for x in part["refused"] if x not in refused]
        seconds += float(part.get("seconds") or 0)
    return {"config": cfg, "runs": runs, "refused": refused,
            "parameters": first.get("parameters"), "seconds": round(seconds, 1)}


def run_all(specs, jobs=1, progress=False):
    """Every spec through dpas.torch._simulate.run_one, in order; with jobs > 1 in a pool of
    spawned processes (one torch thread each)."""
    from . import _simulate
    full = [{**{"limit_train": None, "limit_test": None, "limit_validation": None,
                "convention": None}, **s}
            for s in specs]
    out = []

    def note(r):
        if progress:
            print(f"  [{len(out)}/{len(full)}] N={r['n']} f={r['f']} "
                  f"{'oracle' if r['oracle'] else r['rule']} {'+'.join(r['pre'])} "
                  f"{r['attack'] or 'none'} {label(r['attack_parameters']) if r['attack'] else ''}"
                  f" seed {r['seed']}: test {r['accuracy']:.3f} validation "
                  f"{r['validation']:.3f}" + (f" ({r['error']})" if r["error"] else ""),
                  file=sys.stderr, flush=True)
    if jobs <= 1:
        for s in full:
            out.append(_simulate.run_one(s))
            note(out[-1])
        return out
    import multiprocessing
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for r in pool.imap(_simulate.run_one, full, chunksize=1):
            out.append(r)
            note(r)
    return out


# ---- step time: the hook's schedules beside DDP's AllReduce --------------------------------------

# The sharded schedule verified (its defaults: 64 coordinates of each shard, and ceil(N/2) shards
# audited whole) and trusting (audit=0 and audit_shards=0: no audit at all; audit=0 alone leaves
# the whole-shard audits on).
TIME_CONFIGS = (("allreduce", None, {}), ("allgather", "median", {}),
                ("sharded", "median", {}), ("sharded", "median", {"audit": 0, "audit_shards": 0}))


def _time_worker(rank, world, port, cfg, out):
    import torch
    import torch.distributed as dist
    from datetime import timedelta
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    import dpas.torch as dt
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=600))
    width = cfg["width"]
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(32, width, generator=g)
    y = torch.randint(0, 10, (32,), generator=g)
    setups = []
    for schedule, rule, kw in TIME_CONFIGS:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(),
                              nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, 10))
        ddp = DDP(model, broadcast_buffers=False)
        state = dt.register(ddp, rule, cfg.get("f", 0), schedule=schedule, **kw) \
            if rule else None
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
        setups.append((ddp, opt, state))
    params = sum(p.numel() for p in setups[0][0].module.parameters())
    times = [[] for _ in setups]
    loss_fn = nn.CrossEntropyLoss()
    for rnd in range(cfg["rounds"] + 1):
        for k, (ddp, opt, state) in enumerate(setups):  # interleaved: the load is shared
            for _ in range(cfg["steps"]):
                dist.barrier()
                t0 = time.perf_counter()
                opt.zero_grad(set_to_none=True)
                loss_fn(ddp(x), y).backward()
                opt.step()
                if rnd > 0:  # round 0 warms up (DDP's bucket rebuild, gloo's connections)
                    times[k].append(time.perf_counter() - t0)
    everyone = [None] * world
    dist.all_gather_object(everyone, times)
    seconds = [None] * world  # each configuration's profile on each rank (state.seconds)
    dist.all_gather_object(seconds, [state.seconds if state is not None else {}
                                     for _, _, state in setups])
    for _, _, state in setups:
        if state is not None:
            state.close()
    if rank == 0:
        with open(out, "w") as fh:
            json.dump({"params": params, "times": everyone, "seconds": seconds}, fh)
    dist.barrier()
    dist.destroy_process_group()


def step_time(world=4, width=1024, steps=1, rounds=24, f=0) -> dict:
    """The median step time (forward, backward with the hook, SGD step; the slowest rank of
    each step) of DDP's AllReduce, and of the hook's allgather and sharded schedules (median
    rule, f = 0; sharded verified with its default audits, and trusting with audit=0 and
    audit_shards=0), on a width x 2 width x width x 10 MLP, the configurations interleaved step by step so that
    they share the machine's load; with the load average before and after."""
    import tempfile
    import torch.multiprocessing as mp
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.json")
        mp.start_processes(_time_worker, args=(world, _train.free_port(),
                                               {"width": width, "steps": steps,
                                                "rounds": rounds, "f": f}, out),
                           nprocs=world, start_method="spawn")
        with open(out) as fh:
            got = json.load(fh)
    load1 = os.getloadavg()
    rows = []
    for k, (schedule, rule, kw) in enumerate(TIME_CONFIGS):
        per_step = np.max(np.array([got["times"][r][k] for r in range(world)]), axis=0)
        cfg_steps = steps * (rounds + 1)
        prof = {}  # seconds a step, mean over the ranks, by phase
        for r in range(world):
            for key, v in got["seconds"][r][k].items():
                prof[key] = prof.get(key, 0.0) + v / (world * cfg_steps)
        rows.append({"schedule": schedule + (" (no audit)" if kw.get("audit") == 0 else ""),
                     "rule": rule or "mean", "median_s": float(np.median(per_step)),
                     "steps": int(per_step.size), "profile_s": prof})
    base = rows[0]["median_s"]
    for r in rows:
        r["ratio_to_allreduce"] = r["median_s"] / base
    return {"world_size": world, "f": f, "parameters": got["params"], "rows": rows,
            "loadavg_before": load0, "loadavg_after": load1, "cores": os.cpu_count()}


def time_table(t) -> str:
    lines = [f"step time, N = {t['world_size']}, f = {t.get('f', 0)}, {t['parameters']} "
             f"parameters, "
             f"{t['cores']} cores, load average {t['loadavg_before'][0]:.1f} before, "
             f"{t['loadavg_after'][0]:.1f} after",
             "", "| schedule | rule | median step (ms) | × AllReduce | steps |",
             "|---|---|---|---|---|"]
    for r in t["rows"]:
        lines.append(f"| {r['schedule']} | {r['rule']} | {r['median_s'] * 1e3:.1f} | "
                     f"{r['ratio_to_allreduce']:.2f} | {r['steps']} |")
    lines += ["", "where the hook's time goes (ms a step, mean over the ranks and steps; 'end of "
              "step' is the part on DDP's thread after the backward, which nothing overlaps, and "
              "holds the phases below it but those on the worker thread):", ""]
    for r in t["rows"]:
        prof = r.get("profile_s") or {}
        if prof:
            lines.append(f"- {r['schedule']}: " + ", ".join(
                f"{k} {v * 1e3:.1f}" for k, v in sorted(prof.items(), key=lambda kv: -kv[1])))
    return "\n".join(lines) + "\n"


def parse(argv):
    p = Parser(prog="python3 -m dpas.torch.bench", description=__doc__.split("\n")[0])
    p.add_argument("--dataset", choices=DATASETS, default="fashion-mnist")
    p.add_argument("--model", choices=MODELS, default="cnn")
    p.add_argument("--n", default="7,10,13", help="numbers of workers N = h + f (a list)")
    p.add_argument("--f", default="1,2,3", help="numbers of Byzantine workers (a list)")
    p.add_argument("--alpha", default="1", help="Dirichlet alpha of the honest split, or iid")
    p.add_argument("--rules", default="mean,trimmed_mean,centered_clipping")
    p.add_argument("--convention", default=None, help="the rules' convention (byzfl: Krum for "
                                                      "2f < n)")
    p.add_argument("--pre", default="none,nnm", help=f"pre-aggregations ({', '.join(PRE_CHOICES)})")
    p.add_argument("--attacks", default="none,alie,ipm,mimic")
    p.add_argument("--grid", action="append", default=[], metavar="ATTACK:PARAM=V1,V2",
                   help="an attack's candidate parameters, chosen per rule on the validation "
                        "split (repeatable; default: " + "; ".join(
                            f"{k}: {', '.join(label(c) for c in v)}" for k, v in
                            DEFAULT_GRID.items() if len(v) > 1) + ")")
    p.add_argument("--momentum", default="0.9", help="worker momentum beta in [0, 1)")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch", type=int, default=16, help="samples per honest worker per step")
    p.add_argument("--limit-train", type=int, default=None,
                   help="use only the first K training samples (after the validation split)")
    p.add_argument("--limit-test", type=int, default=None,
                   help="use only the first K test samples")
    p.add_argument("--limit-validation", type=int, default=None,
                   help="use only the first K validation samples")
    p.add_argument("--jobs", type=int, default=1, help="runs in parallel (spawned processes)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--svg", metavar="DIR", help="write the worst-case heat map (SVG) into DIR")
    p.add_argument("--progress", action="store_true", help="one line per run on stderr")
    p.add_argument("--merge", metavar="A.json,B.json",
                   help="instead of running: the tables of the runs in these -o json outputs "
                        "(parts of one grid split by N or f)")
    p.add_argument("--time", action="store_true",
                   help="instead of the grid: the step time of the hook's schedules beside "
                        "DDP's AllReduce on real processes (--world-size, --width)")
    p.add_argument("--world-size", type=int, default=4, help="--time's N (default 4)")
    p.add_argument("--time-f", type=int, default=0,
                   help="--time's f for the hook (default 0; the echo's agreement has f + 1 "
                        "rounds)")
    p.add_argument("--rounds", type=int, default=24,
                   help="--time's steps per configuration (default 24, after one to warm up)")
    p.add_argument("--width", type=int, default=1024,
                   help="--time's MLP: width x 2 width x width x 10 (1024: 4.2 M parameters)")
    a = p.parse_args(argv)
    if a.width < 8:
        raise UsageError(f"--width must be at least 8, got {a.width}")
    if a.world_size < 2:
        raise UsageError(f"--world-size must be at least 2, got {a.world_size}")
    if not 0 <= a.time_f <= (a.world_size - 1) // 2:
        raise UsageError(f"--time-f must be between 0 and (N - 1)/2 = "
                         f"{(a.world_size - 1) // 2} for the median at N = {a.world_size}, "
                         f"got {a.time_f}")
    if a.rounds < 1:
        raise UsageError(f"--rounds must be at least 1, got {a.rounds}")
    alphas = _list("--alpha", a.alpha, convert=_alpha)
    if len(alphas) != 1:
        raise UsageError(f"--alpha takes one value (one table per alpha), got {a.alpha!r}")
    a.alpha = alphas[0]
    a.n = _list("--n", a.n, convert=int)
    a.f = _list("--f", a.f, convert=int)
    for v in a.n:
        if v < 2:
            raise UsageError(f"--n: every N must be at least 2, got {v}")
    for v in a.f:
        if v < 0:
            raise UsageError(f"--f: every f must be at least 0, got {v}")
    if max(a.f) >= min(a.n):
        raise UsageError(f"--f {max(a.f)} is not below --n {min(a.n)}: every f must be "
                         f"smaller than every N (h = N - f honest workers, at least one)")
    known_rules = [r.rule for r in dpas.rules()]
    a.rules = _list("--rules", a.rules, known_rules)
    a.pre = _list("--pre", a.pre, PRE_CHOICES)
    a.attacks = _list("--attacks", a.attacks, ("none",) + SIM_ATTACKS)
    try:
        beta = float(a.momentum)
    except ValueError:
        raise UsageError(f"--momentum: {a.momentum!r} is not a number") from None
    if not 0 <= beta < 1:
        raise UsageError(f"--momentum must be in [0, 1), got {a.momentum}")
    a.momentum = beta
    grid_ = {k: list(v) for k, v in DEFAULT_GRID.items()}
    seen = set()
    for text in a.grid:
        name, cands = _grid_option(text)
        if name in seen:
            raise UsageError(f"--grid gives {name!r} twice")
        seen.add(name)
        grid_[name] = cands
    a.grid = grid_
    for name, v in (("--seeds", a.seeds), ("--steps", a.steps), ("--batch", a.batch),
                    ("--jobs", a.jobs)):
        if v < 1:
            raise UsageError(f"{name} must be at least 1, got {v}")
    for name, v in (("--limit-train", a.limit_train), ("--limit-test", a.limit_test),
                    ("--limit-validation", a.limit_validation)):
        if v is not None and v < 1:
            raise UsageError(f"{name} must be at least 1, got {v}")
    if not a.lr > 0 or not math.isfinite(a.lr):
        raise UsageError(f"--lr must be a positive number, got {a.lr}")
    if a.model == "cnn" and a.dataset == "gaussian":
        raise UsageError("--model cnn needs images: --dataset digits or fashion-mnist")
    if a.svg:
        check_output_path("--svg", a.svg, directory=True)
    a.seeds = list(range(1, a.seeds + 1))
    if a.merge is not None:
        a.merge = _list("--merge", a.merge)
        given = sorted({t.split("=", 1)[0] for t in (argv if argv is not None else sys.argv[1:])
                        if t.startswith("--")} - {"--merge", "--output", "--svg"})
        if given:
            raise UsageError(f"--merge makes the tables of runs already made: {given[0]} does "
                             f"not apply (only -o and --svg do)")
    return a


def _load_parts(paths):
    parts = []
    for path in paths:
        try:
            with open(path) as fh:
                got = json.load(fh)
        except OSError as e:
            raise UsageError(f"--merge: cannot read {path}: {e.strerror}") from None
        except ValueError as e:
            raise UsageError(f"--merge: {path} is not JSON: {e}") from None
        if not isinstance(got, dict):
            raise UsageError(f"--merge: {path} is not the output of -o json (not an object)")
        parts.append((path, got))
    try:
        return merge(parts)
    except ValueError as e:
        raise UsageError(f"--merge: {e}") from None
    except (KeyError, TypeError) as e:
        raise UsageError(f"--merge: a part is not the output of -o json ({e!r})") from None


def _summary_json(s):
    return {"oracle": [{"n": k[0], "f": k[1], "mean": v[0], "sd": v[1]}
                       for k, v in s["oracle"].items()],
            "cells": [{"n": k[0], "f": k[1], "rule": k[2], "pre": k[3], "attack": k[4],
                       "mean": v[0], "sd": v[1], "chosen": v[2], "stopped": v[3]}
                      for k, v in s["cells"].items()],
            "worst": [{"n": k[0], "f": k[1], "rule": k[2], "pre": k[3], "attack": v[0],
                       "mean": v[1], "sd": v[2], "chosen": v[3]}
                      for k, v in s["worst"].items()]}


def main(argv=None) -> int:
    try:
        a = parse(argv)
    except UsageError as e:
        print(f"dpas.torch.bench: error: {e}", file=sys.stderr)
        return 1
    if a.time:
        t = step_time(world=a.world_size, width=a.width, rounds=a.rounds, f=a.time_f)
        if a.output == "json":
            json.dump(t, sys.stdout, indent=1)
            print()
        else:
            sys.stdout.write(time_table(t))
        return 0
    if a.merge is not None:
        try:
            result = _load_parts(a.merge)
        except UsageError as e:
            print(f"dpas.torch.bench: error: {e}", file=sys.stderr)
            return 1
        runs, cfg = result["runs"], result["config"]
        a.dataset, a.model = cfg["dataset"], cfg["model"]
    else:
        specs, refused = grid(a)
        t0 = time.time()
        runs = run_all(specs, jobs=a.jobs, progress=a.progress)
        cfg = {k: getattr(a, k) for k in ("dataset", "model", "n", "f", "alpha", "rules",
                                          "convention", "pre", "attacks", "grid", "momentum",
                                          "seeds", "steps", "lr", "batch", "limit_train",
                                          "limit_test", "limit_validation")}
        result = {"config": cfg, "runs": runs, "refused": refused,
                  "parameters": runs[0]["parameters"] if runs else None,
                  "seconds": round(time.time() - t0, 1)}
    if a.svg:
        path = os.path.join(a.svg, f"bench_{a.dataset}_{a.model}_worst.svg")
        # through the library's checked writer: replaced whole, a FIFO or a device refused
        dpas.write_output(path, svg_worst(result), field="--svg")
        print(f"wrote {path}", file=sys.stderr)
    if a.output == "json":
        json.dump({**result, "summary": _summary_json(summarise(runs, cfg))}, sys.stdout,
                  indent=1)
        print()
    else:
        sys.stdout.write(table(result))
        print(f"\n{len(runs)} runs in {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
