# SPDX-License-Identifier: Apache-2.0
"""An experiment runner for Byzantine-robust training, after ByzFL's benchmark: rules x
pre-aggregators x attacks x worker momentum x seeds, on real data, with non-IID splits.

    python3 -m dpas.torch.bench [--dataset digits] [--world-size 6] [--byzantine 2]
        [--alpha 0.1] [--rules median,krum,...] [--pre none,nnm,bucketing]
        [--attacks none,sign_flip,ipm,alie,...] [--momentum 0,0.9] [--seeds 3] [--steps 300]
        [-o table|json] [--svg DIR] [--progress]

Every run trains an MLP (64 hidden units) on N forked processes with DDP and dpas.torch's hook
(allgather schedule); the last B ranks are Byzantine and attack over the wire; each rank's data
is its Dirichlet(alpha) share of the training set (alpha "iid": an even, shuffled deal).
Worker momentum (Karimireddy et al. 2021): each rank sends m = beta m + (1 - beta) g, the server
steps with SGD (no momentum of its own). The clean baseline is DDP's AllReduce without attack.
The table gives the final test accuracy, mean and spread (sample standard deviation) over the
seeds, per rule x pre-aggregation x momentum (rows) and attack (columns); a combination the
rule's resilience condition refuses at this N and f is printed as such, not run.
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

BENCH_PARAMETERS = {"sign_flip": {"scale": 10.0}}  # the others: the papers' defaults
PRE_CHOICES = ("none", "nnm", "bucketing", "bucketing+nnm")


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


def _momentum(x):
    v = float(x)
    if not 0 <= v < 1:
        raise ValueError(x)
    return v


def refusal(rule, f, world, pre, bucket_size=2, convention=None):
    """Why rule with pre cannot run at N = world with f, or None."""
    import numpy
    rows = -(-world // bucket_size) if "bucketing" in pre else world
    try:
        dpas.aggregate(rule, numpy.zeros((rows, 1), numpy.float32), f, convention=convention,
                       nnm="nnm" in pre)
    except ValueError as e:
        return str(e)
    return None


def grid(a):
    """The runs to make: (key, spec) pairs; and the refused combinations."""
    specs, refused = [], []
    common = dict(dataset=a.dataset, steps=a.steps, lr=a.lr, batch=a.batch,
                  eval_every=max(1, a.steps // 10), hidden=64,
                  bucket_cap_mb=a.bucket_cap_mb, barrier=False)
    for alpha in a.alpha:
        for beta in a.momentum:
            for seed in a.seeds:
                specs.append(dict(common, alpha=alpha, momentum=beta, seed=seed))
        for rule in a.rules:
            f = 0 if rule == "mean" else a.byzantine
            for pre in a.pre:
                p = () if pre == "none" else tuple(pre.split("+"))
                if f == 0 and p == ("nnm",):
                    continue  # NNM at f = 0 mixes every row: each is the mean; the rule's too
                why = refusal(rule, f, a.world_size, p, convention=a.convention)
                if why:
                    refused.append({"alpha": alpha, "rule": rule, "pre": p, "why": why})
                    continue
                for beta in a.momentum:
                    for attack in a.attacks:
                        for seed in a.seeds:
                            atk = None if attack == "none" else attack
                            specs.append(dict(
                                common, alpha=alpha, momentum=beta, seed=seed, rule=rule,
                                f=f, pre=p, attack=atk, convention=a.convention,
                                byzantine=a.byzantine if atk else 0,
                                attack_parameters=BENCH_PARAMETERS.get(attack)))
    return specs, refused


def summarise(runs):
    """{(alpha, rule, pre, momentum, attack): (mean, std, n, errors)}"""
    groups = {}
    for r in runs:
        key = (r["alpha"], r["rule"] or "allreduce", tuple(r["pre"] or ()), r["momentum"],
               r["attack"] or "none")
        groups.setdefault(key, []).append(r)
    out = {}
    for key, rs in groups.items():
        acc = [x["accuracy"] for x in rs if x["error"] is None]
        errs = [x["error"] for x in rs if x["error"] is not None]
        mean = float(np.mean(acc)) if acc else None
        std = float(np.std(acc, ddof=1)) if len(acc) > 1 else 0.0 if acc else None
        out[key] = (mean, std, len(rs), errs)
    return out


def table(result) -> str:
    cfg = result["config"]
    s = summarise(result["runs"])
    attacks = cfg["attacks"]
    lines = []
    for alpha in cfg["alpha"]:
        lines.append(f"alpha = {'iid' if alpha is None else alpha}, N = {cfg['world_size']}, "
                     f"f = {cfg['byzantine']} Byzantine, {cfg['dataset']}, {cfg['steps']} "
                     f"steps, {len(cfg['seeds'])} seeds (final test accuracy, mean ± sd)")
        lines.append("")
        lines.append("| rule | pre | momentum | " + " | ".join(attacks) + " |")
        lines.append("|---|---|---|" + "---|" * len(attacks))
        for beta in cfg["momentum"]:
            m, sd, n, errs = s.get((alpha, "allreduce", (), beta, "none"), (None, 0, 0, []))
            if n:
                lines.append(f"| AllReduce (clean) | - | {beta:g} | " +
                             " | ".join(_cell(m, sd, errs) if k == 0 else ""
                                        for k in range(len(attacks))) + " |")
        for rule in cfg["rules"]:
            for pre in cfg["pre"]:
                p = () if pre == "none" else tuple(pre.split("+"))
                for beta in cfg["momentum"]:
                    cells = []
                    for attack in attacks:
                        v = s.get((alpha, rule, p, beta, attack))
                        cells.append("refused" if v is None else _cell(*v[:2], v[3]))
                    if all(c == "refused" for c in cells):
                        continue
                    lines.append(f"| {rule} | {pre} | {beta:g} | " + " | ".join(cells) + " |")
        for r in result["refused"]:
            if r["alpha"] == alpha:
                lines.append(f"\n{r['rule']} with {'+'.join(r['pre']) or 'no pre-aggregation'}:"
                             f" not run: {r['why']}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _cell(mean, sd, errs):
    """mean ± sd; runs that stopped (a step every rank failed: e.g. the mean refusing the
    gradients of a diverged model) are counted, with the steps they stopped at."""
    steps = sorted(int(e.split(":")[0].split()[1]) for e in errs if e.startswith("step "))
    where = (f" at step {steps[0]}" if len(set(steps)) == 1 else
             f" at steps {steps[0]}-{steps[-1]}") if steps else ""
    if mean is None:
        return f"stopped{where}" if errs else ""
    text = f"{mean:.3f} ± {sd:.3f}"
    if errs:
        text += f" ({len(errs)} stopped{where})"
    return text


# ---- plots (plain SVG, no dependency) ----------------------------------------------------------

def _esc(t: str) -> str:
    return str(t).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_curves(runs, title, label) -> str:
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


def svg_heatmap(result, alpha) -> str:
    """Rows: rule x pre x momentum; columns: attacks; the mean accuracy as a colour, mean and
    spread as text."""
    cfg = result["config"]
    s = summarise(result["runs"])
    attacks = cfg["attacks"]
    rows = []
    for rule in cfg["rules"]:
        for pre in cfg["pre"]:
            p = () if pre == "none" else tuple(pre.split("+"))
            for beta in cfg["momentum"]:
                cells = [s.get((alpha, rule, p, beta, a)) for a in attacks]
                if any(c is not None for c in cells):
                    rows.append((f"{rule} {pre} β={beta:g}", cells))
    cw, ch, lw, top = 110, 22, 210, 60
    W, H = lw + cw * len(attacks) + 20, top + ch * len(rows) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="10" y="18" font-size="13">final test accuracy (mean ± sd over '
           f'{len(cfg["seeds"])} seeds): {_esc(cfg["dataset"])}, N = {cfg["world_size"]}, '
           f'{cfg["byzantine"]} Byzantine, alpha = {"iid" if alpha is None else alpha}</text>']
    for k, a in enumerate(attacks):
        out.append(f'<text x="{lw + cw * k + cw / 2}" y="{top - 8}" text-anchor="middle">'
                   f'{_esc(a)}</text>')
    for i, (name, cells) in enumerate(rows):
        yy = top + ch * i
        out.append(f'<text x="{lw - 6}" y="{yy + 15}" text-anchor="end">{_esc(name)}</text>')
        for k, c in enumerate(cells):
            xx = lw + cw * k
            if c is None or c[0] is None:
                fill, text = "#eeeeee", "refused" if c is None else "stopped"
            else:
                v = max(0.0, min(1.0, c[0]))
                fill = f"rgb({int(255 * (1 - v))},{int(200 * v + 40)},{int(90 + 60 * v)})"
                text = f"{c[0]:.2f} ± {c[1]:.2f}"
            out.append(f'<rect x="{xx}" y="{yy}" width="{cw - 2}" height="{ch - 2}" '
                       f'fill="{fill}"/>')
            out.append(f'<text x="{xx + cw / 2}" y="{yy + 15}" text-anchor="middle">'
                       f'{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_plots(result, directory) -> list:
    written = []
    cfg = result["config"]
    for alpha in cfg["alpha"]:
        tag = "iid" if alpha is None else f"alpha{alpha:g}"
        path = os.path.join(directory, f"bench_{cfg['dataset']}_{tag}_heatmap.svg")
        with open(path, "w") as fh:
            fh.write(svg_heatmap(result, alpha))
        written.append(path)
        for attack in cfg["attacks"]:
            runs = [r for r in result["runs"] if r["alpha"] == alpha and
                    (r["attack"] or "none") == attack and r["seed"] == cfg["seeds"][0] and
                    r["accuracy_by_step"]]
            if not runs:
                continue
            path = os.path.join(directory, f"bench_{cfg['dataset']}_{tag}_{attack}.svg")
            with open(path, "w") as fh:
                fh.write(svg_curves(runs, f"{attack}: test accuracy, seed {cfg['seeds'][0]}",
                                    lambda r: f"{r['rule'] or 'AllReduce'} "
                                              f"{'+'.join(r['pre']) or '-'} "
                                              f"β={r['momentum']:g}"))
            written.append(path)
    return written


# ---- step time: the hook's schedules beside DDP's AllReduce --------------------------------------

TIME_CONFIGS = (("allreduce", None, {}), ("allgather", "median", {}),
                ("sharded", "median", {}), ("sharded", "median", {"audit": 0}))


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
        state = dt.register(ddp, rule, 0, schedule=schedule, **kw) if rule else None
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
    for _, _, state in setups:
        if state is not None:
            state.close()
    if rank == 0:
        with open(out, "w") as fh:
            json.dump({"params": params, "times": everyone}, fh)
    dist.barrier()
    dist.destroy_process_group()


def step_time(world=4, width=1024, steps=1, rounds=24) -> dict:
    """The median step time (forward, backward with the hook, SGD step; the slowest rank of
    each step) of DDP's AllReduce, and of the hook's allgather and sharded schedules (median
    rule, f = 0; sharded verified with audit 64 and trusting with audit 0), on a
    width x 2 width x width x 10 MLP, the configurations interleaved step by step so that
    they share the machine's load; with the load average before and after."""
    import tempfile
    import torch.multiprocessing as mp
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.json")
        mp.start_processes(_time_worker, args=(world, _train.free_port(),
                                               {"width": width, "steps": steps,
                                                "rounds": rounds}, out),
                           nprocs=world, start_method="fork")
        with open(out) as fh:
            got = json.load(fh)
    load1 = os.getloadavg()
    rows = []
    for k, (schedule, rule, kw) in enumerate(TIME_CONFIGS):
        per_step = np.max(np.array([got["times"][r][k] for r in range(world)]), axis=0)
        rows.append({"schedule": schedule + (" (audit 0)" if kw.get("audit") == 0 else ""),
                     "rule": rule or "mean", "median_s": float(np.median(per_step)),
                     "steps": int(per_step.size)})
    base = rows[0]["median_s"]
    for r in rows:
        r["ratio_to_allreduce"] = r["median_s"] / base
    return {"world_size": world, "parameters": got["params"], "rows": rows,
            "loadavg_before": load0, "loadavg_after": load1, "cores": os.cpu_count()}


def time_table(t) -> str:
    lines = [f"step time, N = {t['world_size']}, {t['parameters']} parameters, "
             f"{t['cores']} cores, load average {t['loadavg_before'][0]:.1f} before, "
             f"{t['loadavg_after'][0]:.1f} after",
             "", "| schedule | rule | median step (ms) | × AllReduce | steps |",
             "|---|---|---|---|---|"]
    for r in t["rows"]:
        lines.append(f"| {r['schedule']} | {r['rule']} | {r['median_s'] * 1e3:.1f} | "
                     f"{r['ratio_to_allreduce']:.2f} | {r['steps']} |")
    return "\n".join(lines) + "\n"


def parse(argv):
    p = Parser(prog="python3 -m dpas.torch.bench",
                                description=__doc__.split("\n")[0])
    p.add_argument("--dataset", choices=DATASETS, default="digits")
    p.add_argument("--world-size", type=int, default=None, help="N (default 6; --time: 4)")
    p.add_argument("--byzantine", type=int, default=1)
    p.add_argument("--alpha", default="0.1", help="Dirichlet alphas, or iid (a list)")
    p.add_argument("--rules", default="mean,median,trimmed_mean,krum,geometric_median,"
                                      "centered_clipping")
    p.add_argument("--convention", default=None, help="the rules' convention (byzfl: Krum for "
                                                      "2f < n)")
    p.add_argument("--pre", default="none,nnm", help=f"pre-aggregations ({', '.join(PRE_CHOICES)})")
    p.add_argument("--attacks", default="none,sign_flip,ipm,alie,foe,mimic,label_flip")
    p.add_argument("--momentum", default="0,0.9")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--bucket-cap-mb", type=float, default=None,
                   help="DDP's bucket size (a small one splits the model into several buckets)")
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--svg", metavar="DIR", help="write the plots (SVG) into DIR")
    p.add_argument("--progress", action="store_true", help="one line per run on stderr")
    p.add_argument("--time", action="store_true",
                   help="instead of the grid: the step time of the schedules beside DDP's "
                        "AllReduce (--world-size, --width)")
    p.add_argument("--width", type=int, default=1024,
                   help="--time's MLP: width x 2 width x width x 10 (1024: 4.2 M parameters)")
    a = p.parse_args(argv)
    if a.world_size is None:
        a.world_size = 4 if a.time else 6
    if a.width < 8:
        raise UsageError(f"--width must be at least 8, got {a.width}")
    a.alpha = _list("--alpha", a.alpha, convert=_alpha)
    known_rules = [r.rule for r in dpas.rules()]
    a.rules = _list("--rules", a.rules, known_rules)
    a.pre = _list("--pre", a.pre, PRE_CHOICES)
    a.attacks = _list("--attacks", a.attacks, ("none",) + tuple(ATTACKS))
    a.momentum = _list("--momentum", a.momentum, convert=_momentum)
    if a.world_size < 2:
        raise UsageError(f"--world-size must be at least 2, got {a.world_size}")
    if not 0 <= a.byzantine < a.world_size:
        raise UsageError(f"--byzantine must be between 0 and {a.world_size - 1}, got "
                         f"{a.byzantine}")
    if a.byzantine == 0 and any(x != "none" for x in a.attacks):
        raise UsageError("--attacks other than none need --byzantine >= 1")
    for name, v in (("--seeds", a.seeds), ("--steps", a.steps), ("--batch", a.batch)):
        if v < 1:
            raise UsageError(f"{name} must be at least 1, got {v}")
    if not a.lr > 0 or not math.isfinite(a.lr):
        raise UsageError(f"--lr must be a positive number, got {a.lr}")
    if a.bucket_cap_mb is not None and not a.bucket_cap_mb > 0:
        raise UsageError(f"--bucket-cap-mb must be positive, got {a.bucket_cap_mb}")
    if a.svg:
        check_output_path("--svg", a.svg, directory=True)
    a.seeds = list(range(1, a.seeds + 1))
    return a


def main(argv=None) -> int:
    try:
        a = parse(argv)
    except UsageError as e:
        print(f"dpas.torch.bench: error: {e}", file=sys.stderr)
        return 1
    if a.time:
        t = step_time(world=a.world_size, width=a.width)
        if a.output == "json":
            json.dump(t, sys.stdout, indent=1)
            print()
        else:
            sys.stdout.write(time_table(t))
        return 0
    specs, refused = grid(a)
    t0 = time.time()
    runs = _train.run(a.world_size, specs, progress=a.progress)
    cfg = {k: getattr(a, k) for k in ("dataset", "world_size", "byzantine", "alpha", "rules",
                                      "convention", "pre", "attacks", "momentum", "seeds",
                                      "steps", "lr", "batch", "bucket_cap_mb")}
    cfg["attack_parameters"] = BENCH_PARAMETERS
    result = {"config": cfg, "runs": runs, "refused": refused,
              "seconds": round(time.time() - t0, 1)}
    if a.svg:
        for path in write_plots(result, a.svg):
            print(f"wrote {path}", file=sys.stderr)
    if a.output == "json":
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        sys.stdout.write(table(result))
        print(f"\n{len(runs)} runs in {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
