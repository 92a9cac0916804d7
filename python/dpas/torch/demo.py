"""Robust aggregation in real data-parallel training, measured against dpas's model.

    python3 -m dpas.torch.demo --world-size 6 --byzantine 1 --attack sign_flip \\
        --rules mean,median,krum --steps 60 [-o json]

spawns N processes on loopback (gloo, 127.0.0.1, a free port), and in them trains a small MLP on
a generated, seeded classification data set (no download): once with plain DDP (the AllReduce,
no attack: the clean run) and once per rule with dpas.torch.robust_hook under the attack, the
last F ranks Byzantine. Per run: final loss (the honest ranks' mean training loss over the last
steps), test accuracy, the bytes each rank sent per step (the kernel's count: wchar in
/proc/self/io, which counts the bytes gloo hands to write/writev on its sockets, as dpas-measure
does), dpas's prediction for the same schedule (the library's cost row bytes_per_worker for a
workload of as many gradient coordinates as the model has parameters, 4 bytes each, N replicas,
one per node), and the step time (forward, backward with the hook, optimizer step).
"""
import argparse
import json
import os
import socket
import sys
import tempfile
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import dpas
from dpas.torch import robust_hook, predicted_bytes

FEATURES, HIDDEN, CLASSES = 24, 64, 4  # 1860 parameters: a multiple of 2, 3, 4, 5, 6 (no padding)


def wchar() -> int:
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def make_data(seed: int, n_train: int, n_test: int):
    """A seeded classification set: CLASSES Gaussian clusters in FEATURES dimensions, labels
    with 5% flipped (so no model reaches 100%)."""
    g = np.random.default_rng(seed)
    centers = g.normal(0.0, 1.0, (CLASSES, FEATURES)) * 0.8
    def draw(n):
        y = g.integers(0, CLASSES, n)
        x = centers[y] + g.normal(0.0, 1.0, (n, FEATURES))
        flip = g.random(n) < 0.05
        y = np.where(flip, g.integers(0, CLASSES, n), y)
        return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64))
    return draw(n_train), draw(n_test)


def make_model() -> nn.Module:
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def train_one(cfg, rank, world, rule, attack, data):
    (xtr, ytr), (xte, yte) = data
    torch.manual_seed(cfg["seed"])
    model = make_model()
    params = sum(p.numel() for p in model.parameters())
    ddp = DDP(model)
    byz = tuple(range(world - cfg["byzantine"], world)) if attack != "none" else ()
    state = None
    if rule is None:
        schedule = "allreduce"
    else:
        schedule = cfg["schedule"]
        # a rule runs with the f it tolerates for N replicas, at most the f asked for (mean: 0)
        f = min(cfg["f"], next(r["max_f"] for r in dpas.rules(n=world) if r["rule"] == rule))
        state, hook = robust_hook(rule, f, schedule=schedule,
                                  attack=None if attack == "none" else attack,
                                  byzantine_ranks=byz)
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=cfg["lr"])
    mine = torch.arange(rank, xtr.shape[0], world)
    bs = cfg["batch"]
    g = torch.Generator().manual_seed(cfg["seed"] * 1000 + rank)
    loss_fn = nn.CrossEntropyLoss()
    times, sent, losses, curve = [], [], [], []

    def evaluate():
        with torch.no_grad():
            pred = model(xte).argmax(1)
            return float((pred == yte).float().mean())

    error = None
    for step in range(cfg["steps"]):
        if rank == 0 and (step % cfg["eval_every"] == 0):
            curve.append((step, evaluate()))
        dist.barrier()
        idx = mine[torch.randint(0, mine.numel(), (bs,), generator=g)]
        sim0 = state.simulation_bytes if state else 0
        w0, t0 = wchar(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(xtr[idx]), ytr[idx])
        try:
            loss.backward()
        except RuntimeError as e:  # the rule refused the gradients (e.g. mean and a NaN row):
            # every rank aggregates the same rows, so every rank stops here alike
            error = f"step {step}: " + str(e).split("\n")[0]
            break
        opt.step()
        t1, w1 = time.perf_counter(), wchar()
        if step >= 2:  # DDP rebuilds its buckets in the first two steps (a broadcast)
            times.append(t1 - t0)
            # the omniscient simulation's gather (alie) is not the schedule's: left out
            sent.append(w1 - w0 - ((state.simulation_bytes if state else 0) - sim0))
        losses.append(float(loss) if np.isfinite(float(loss)) else float("inf"))
    acc = evaluate() if rank == 0 else None
    if rank == 0:
        curve.append((cfg["steps"], acc))
    honest = rank not in byz
    tail = losses[-10:]
    mine_stats = {"bytes": float(np.mean(sent)) if sent else None,
                  "time": float(np.median(times)) if times else None,
                  "loss": float(np.mean(tail)) if honest and tail else None,
                  "fallback": state.fallback if state else None,
                  "pad": state.padded_coordinates if state else 0}
    everyone = [None] * world
    dist.all_gather_object(everyone, mine_stats)
    if rank != 0:
        return None
    honest_losses = [s["loss"] for s in everyone if s["loss"] is not None]
    pred_rule = rule or "mean"
    predicted = predicted_bytes(schedule, pred_rule, params, world)
    measured = [s["bytes"] for s in everyone if s["bytes"] is not None]
    steptimes = [s["time"] for s in everyone if s["time"] is not None]
    return {"rule": pred_rule, "schedule": schedule, "attack": attack,
            "final_loss": float(np.mean(honest_losses)) if honest_losses else None,
            "accuracy": acc,
            "bytes_per_rank_per_step": float(np.mean(measured)) if measured else None,
            "predicted_bytes_per_rank_per_step": predicted,
            "step_time_s": float(np.median(steptimes)) if steptimes else None,
            "error": error,
            "world_size": world, "byzantine": len(byz), "f": state.f if state else 0,
            "parameters": params,
            "fallback": everyone[0]["fallback"], "padded_coordinates": everyone[0]["pad"],
            "accuracy_by_step": curve}


def worker(rank, world, port, cfg, out_path):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=cfg["timeout"]))
    data = make_data(cfg["seed"], cfg["train"], cfg["test"])
    runs = [train_one(cfg, rank, world, None, "none", data)]
    for rule in cfg["rules"]:
        runs.append(train_one(cfg, rank, world, rule, cfg["attack"], data))
    if rank == 0:
        with open(out_path, "w") as fh:
            json.dump({"runs": runs}, fh)
    dist.barrier()
    dist.destroy_process_group()


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(world_size=4, byzantine=1, attack="sign_flip", rules=("mean", "median", "krum"),
        steps=60, schedule="allgather", f=None, seed=1, lr=0.1, batch=32, eval_every=10,
        train=4800, test=1000, timeout=120):
    """Runs the demonstration and returns {"runs": [...]}: the clean AllReduce run first."""
    if world_size < 2:
        raise ValueError("world_size must be at least 2")
    if not 0 <= byzantine < world_size:
        raise ValueError("byzantine must be between 0 and world_size - 1")
    cfg = dict(byzantine=byzantine, attack=attack, rules=list(rules), steps=steps,
               schedule=schedule, f=byzantine if f is None else f, seed=seed, lr=lr,
               batch=batch, eval_every=eval_every, train=train, test=test, timeout=timeout)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "runs.json")
        mp.start_processes(worker, args=(world_size, free_port(), cfg, out), nprocs=world_size,
                           start_method="fork")
        with open(out) as fh:
            return json.load(fh)


def table(result) -> str:
    lines = ["| rule | schedule | attack | accuracy | final loss | bytes/rank/step measured | "
             "predicted | measured/predicted | step time (ms) | × AllReduce |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base = result["runs"][0]["step_time_s"]
    for r in result["runs"]:
        if r.get("error") and r["bytes_per_rank_per_step"] is None:
            lines.append(f"| {r['rule']} | {r['schedule']} | {r['attack']} | stopped at "
                         f"{r['error']} | | | {r['predicted_bytes_per_rank_per_step']} | | | |")
            continue
        loss = "diverged" if r["final_loss"] is None or not np.isfinite(r["final_loss"]) \
            else f"{r['final_loss']:.3g}"
        lines.append(f"| {r['rule']} | {r['schedule']} | {r['attack']} | {r['accuracy']:.3f} | "
                     f"{loss} | {r['bytes_per_rank_per_step']:.0f} | "
                     f"{r['predicted_bytes_per_rank_per_step']} | "
                     f"{r['bytes_per_rank_per_step'] / r['predicted_bytes_per_rank_per_step']:.4f} | "
                     f"{r['step_time_s'] * 1e3:.2f} | {r['step_time_s'] / base:.2f} |")
    return "\n".join(lines)


def svg(result, title="test accuracy over steps") -> str:
    """A line per run: accuracy_by_step (a plain SVG, no dependency)."""
    W, H, L, B, T, R = 680, 320, 50, 40, 30, 250
    runs = [r for r in result["runs"] if r.get("accuracy_by_step")]
    steps = max(s for r in runs for s, _ in r["accuracy_by_step"]) or 1
    colours = ["#000000", "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    def x(s):
        return L + (W - L - R) * s / steps
    def y(a):
        return H - B - (H - B - T) * a
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="18" font-size="13">{title}</text>',
           f'<line x1="{L}" y1="{y(0)}" x2="{W - R}" y2="{y(0)}" stroke="black"/>',
           f'<line x1="{L}" y1="{y(0)}" x2="{L}" y2="{y(1)}" stroke="black"/>']
    for a in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<text x="{L - 6}" y="{y(a) + 4}" text-anchor="end">{a:g}</text>')
        out.append(f'<line x1="{L}" y1="{y(a)}" x2="{W - R}" y2="{y(a)}" stroke="#ddd"/>')
    for s in range(0, steps + 1, max(1, steps // 6)):
        out.append(f'<text x="{x(s)}" y="{H - B + 15}" text-anchor="middle">{s}</text>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 8}" text-anchor="middle">step</text>')
    for i, r in enumerate(runs):
        c = colours[i % len(colours)]
        pts = " ".join(f"{x(s):.1f},{y(a):.1f}" for s, a in r["accuracy_by_step"])
        dash = ' stroke-dasharray="5,3"' if r["schedule"] == "allreduce" else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="1.5"{dash}/>')
        label = f"{r['rule']} ({r['schedule']}, {r['attack']})"
        out.append(f'<text x="{W - R + 8}" y="{T + 14 * i + 10}" fill="{c}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m dpas.torch.demo", description=__doc__.split("\n")[0])
    p.add_argument("--world-size", type=int, default=4)
    p.add_argument("--byzantine", type=int, default=1)
    p.add_argument("--attack", default="sign_flip",
                   help="sign_flip (scale 10), ipm, alie, nan, large_value, inf, or none")
    p.add_argument("--rules", default="mean,median,krum")
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--schedule", choices=("allgather", "sharded"), default="allgather")
    p.add_argument("--f", type=int, default=None, help="the rules' f (default: --byzantine)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    p.add_argument("--svg", metavar="PATH", help="also write the accuracy over steps as an SVG")
    a = p.parse_args(argv)
    result = run(world_size=a.world_size, byzantine=a.byzantine, attack=a.attack,
                 rules=[r for r in a.rules.split(",") if r], steps=a.steps, schedule=a.schedule,
                 f=a.f, seed=a.seed, lr=a.lr)
    if a.svg:  # through the library's checked writer: a FIFO or a device is refused, not opened
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
