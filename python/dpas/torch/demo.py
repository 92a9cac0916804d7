# SPDX-License-Identifier: Apache-2.0
"""Robust aggregation in real data-parallel training, measured against dpas's model.

    python3 -m dpas.torch.demo --world-size 6 --byzantine 1 --attack sign_flip \\
        --rules mean,median,krum --steps 60 [--schedule sharded] [-o json] [--svg PATH]

spawns N processes on loopback (gloo, 127.0.0.1, a free port) and trains a small MLP on a data
set shipped or generated here (no download): once with plain DDP (the AllReduce, no attack: the
clean run) and once per rule with dpas.torch under the attack, the last F ranks Byzantine. Per
run: the test accuracy, the honest ranks' final training loss, the bytes each rank wrote per
step (the kernel's count: wchar in /proc/self/io) beside the prediction (dpas's cost row for
the schedule, the hook's protocol and padding, and gloo's framing: dpas.torch.hook_bytes), and
the step time (forward, backward with the hook, optimizer step).
"""
import json
import sys

import numpy as np

import dpas

from . import _train
from ._cli import Parser, UsageError, check_output_path
from .attacks import ATTACKS
from .data import DATASETS
from .wire import hook_bytes, predicted_bytes

SIGN_FLIP_SCALE = 10.0  # the demo's sign flip: -10 x the attacker's gradient (mean fails)


def _names(option: str, text: str, known) -> list:
    items = [x for x in text.split(",") if x]
    if not items:
        raise UsageError(f"{option} needs at least one name, got {text!r}")
    for x in items:
        if x not in known:
            raise UsageError(f"{option}: unknown name {x!r} (known: {', '.join(known)})")
    dup = sorted({x for x in items if items.count(x) > 1})
    if dup:
        raise UsageError(f"{option} lists {', '.join(dup)} twice")
    return items


def plan(world_size, byzantine, attack, rules, f):
    """For each rule, the f it runs with (at most the f asked for, at most what the rule
    tolerates at N), or the reason it cannot run at N."""
    catalogue = {r.rule: r for r in dpas.rules(n=world_size)}
    out = []
    for rule in rules:
        row = catalogue[rule]
        if row.max_f is None:
            out.append((rule, None, f"{rule} cannot run at N = {world_size}: it needs "
                                    f"{row.condition}"))
        else:
            out.append((rule, min(f, row.max_f), None))
    return out


def run(world_size=4, byzantine=1, attack="sign_flip", rules=("mean", "median", "krum"),
        steps=60, schedule="allgather", f=None, seed=1, lr=0.1, batch=32, eval_every=10,
        dataset="gaussian", timeout=120):
    """Runs the demonstration and returns {"runs": [...]}: the clean AllReduce run first; a
    rule that cannot run at this N is a run with "error" and no measurements."""
    if world_size < 2:
        raise UsageError(f"--world-size must be at least 2, got {world_size}")
    if not 0 <= byzantine < world_size:
        raise UsageError(f"--byzantine must be between 0 and {world_size - 1} (the world "
                         f"size - 1), got {byzantine}")
    f = byzantine if f is None else f
    if f < 0:
        raise UsageError(f"--f must be >= 0, got {f}")
    attack = None if attack == "none" else attack
    if attack is not None and byzantine == 0:
        raise UsageError(f"--attack {attack} needs --byzantine >= 1")
    params = {"scale": SIGN_FLIP_SCALE} if attack == "sign_flip" else None
    common = dict(steps=steps, seed=seed, lr=lr, batch=batch, eval_every=eval_every,
                  dataset=dataset, hidden=64)
    specs = [dict(common)]
    planned = plan(world_size, byzantine, attack, rules, f)
    for rule, rf, why in planned:
        if why is None:
            specs.append(dict(common, rule=rule, f=rf, schedule=schedule, attack=attack,
                              byzantine=byzantine if attack else 0, attack_parameters=params))
    results = _train.run(world_size, specs, timeout=timeout)
    runs, it = [results[0]], iter(results[1:])
    for rule, rf, why in planned:
        if why is None:
            runs.append(next(it))
        else:
            runs.append({"rule": rule, "schedule": schedule, "attack": attack, "f": None,
                         "error": why, "accuracy": None, "world_size": world_size})
    for r in runs:
        _predict(r, world_size)
    return {"runs": runs}


def _predict(r, world):
    """The prediction beside the measurement: dpas's row, the hook's protocol, the framing."""
    if r.get("bucket_sizes") is None or r.get("parameters") is None:
        return
    schedule = r["schedule"] if r["rule"] is not None else "allreduce"
    # the hook's f sets the echo's agreement rounds (f + 1): the run's own f, not 0
    p = hook_bytes(schedule, world, [(d, 4) for d in r["bucket_sizes"]], f=r.get("f") or 0)
    row = predicted_bytes(schedule if r["rule"] else "allreduce", r["rule"] or "mean",
                          r["parameters"], world)
    r["dpas_row_bytes"] = float(row)
    r["predicted"] = {k: float(v) for k, v in p.items()}
    r["predicted_bytes_per_rank_per_step"] = float(p["total"])


def table(result) -> str:
    lines = ["| rule | schedule | attack | f | accuracy | final loss | bytes/rank/step "
             "measured | dpas's row | + protocol, padding | + framing | predicted | "
             "measured/predicted | step time (ms) | × AllReduce |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = result["runs"][0]["step_time_s"]
    for r in result["runs"]:
        rule = r["rule"] or "mean"
        sched = r["schedule"] if r["rule"] else "allreduce"
        att = r["attack"] or "none"
        if r.get("accuracy") is None or r.get("bytes_per_rank_per_step") is None:
            lines.append(f"| {rule} | {sched} | {att} | {r.get('f', '')} | "
                         f"{'not run' if r.get('accuracy') is None else 'stopped'}: "
                         f"{r['error']} | | | | | | | | | |")
            continue
        loss = "diverged" if r["final_loss"] is None or not np.isfinite(r["final_loss"]) \
            else f"{r['final_loss']:.3g}"
        p = r["predicted"]
        extra = p["schedule"] - r["dpas_row_bytes"] + p["protocol"]
        lines.append(
            f"| {rule} | {sched} | {att} | {r['f']} | {r['accuracy']:.3f} | {loss} | "
            f"{r['bytes_per_rank_per_step']:.0f} | {r['dpas_row_bytes']:g} | {extra:g} | "
            f"{p['framing']:g} | {p['total']:g} | "
            f"{r['bytes_per_rank_per_step'] / p['total']:.4f} | "
            f"{r['step_time_s'] * 1e3:.2f} | {r['step_time_s'] / base:.2f} |")
    notes = [f"{r['rule']} runs with f = {r['f']} against {r['byzantine']} Byzantine ranks: "
             f"it tolerates at most {r['f']} at N = {r['world_size']}"
             for r in result["runs"] if r.get("rule") and r.get("f") is not None and
             r.get("byzantine") and r["f"] < r["byzantine"] and r["rule"] != "mean"]
    return "\n".join(lines + ([""] + notes if notes else []))


def svg(result, title="test accuracy over steps") -> str:
    """A line per run: accuracy_by_step (a plain SVG, no dependency)."""
    from .bench import svg_curves
    def label(r):
        schedule = r["schedule"] if r["rule"] else "allreduce"
        return f"{r['rule'] or 'mean'} ({schedule}, {r['attack'] or 'none'})"
    return svg_curves([r for r in result["runs"] if r.get("accuracy_by_step")], title, label)


def main(argv=None) -> int:
    p = Parser(prog="python3 -m dpas.torch.demo",
                                description=__doc__.split("\n")[0])
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--byzantine", type=int, default=1)
    p.add_argument("--attack", default="sign_flip",
                   help=f"one of {', '.join(ATTACKS)}, or none (sign_flip: scale "
                        f"{SIGN_FLIP_SCALE:g})")
    p.add_argument("--rules", default="mean,median,krum")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--schedule", choices=("allgather", "sharded"), default="allgather")
    p.add_argument("--f", type=int, default=None, help="the rules' f (default: --byzantine)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--dataset", choices=DATASETS, default="gaussian")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--svg", metavar="PATH", help="also write the accuracy over steps as an SVG")
    try:
        a = p.parse_args(argv)
        rules = _names("--rules", a.rules, [r.rule for r in dpas.rules()])
        if a.attack != "none":
            _names("--attack", a.attack, list(ATTACKS))
        if a.steps < 1:
            raise UsageError(f"--steps must be at least 1, got {a.steps}")
        if a.svg:
            check_output_path("--svg", a.svg)
        result = run(world_size=a.world_size, byzantine=a.byzantine, attack=a.attack,
                     rules=rules, steps=a.steps, schedule=a.schedule, f=a.f, seed=a.seed,
                     lr=a.lr, dataset=a.dataset)
    except UsageError as e:
        print(f"dpas.torch.demo: error: {e}", file=sys.stderr)
        return 1
    if a.svg:
        # through the library's checked writer: a FIFO or a device is refused, not opened
        dpas.write_output(a.svg, svg(result, f"test accuracy, N = {a.world_size}, "
                                             f"{a.byzantine} Byzantine, {a.attack}"), field="--svg")
    if a.output == "json":
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
