# SPDX-License-Identifier: Apache-2.0
"""Training runs on N local processes (gloo on loopback), shared by the demonstration and the
benchmark: every process runs every run of a list, in order, and rank 0 collects the results.

A run: a fresh MLP (the same initial weights on every rank), DDP with broadcast_buffers=False,
the robust hook registered through dpas.torch.register (or none: the plain AllReduce), SGD; each
rank draws its batches from its own part of the training set (dpas.torch.data.dirichlet_split);
the last B ranks are Byzantine: the hook makes them attack (they are processes like the others,
sending over the wire), and under label_flip they also train on flipped labels. A step the
ranks fail together (dpas.torch.StepFailed: a rule refusing its inputs) ends the run on every
rank, with the error recorded.
"""
import json
import os
import socket
import sys
import tempfile
import time
import typing
from datetime import timedelta

import numpy as np

RUN_DEFAULTS = dict(rule=None, schedule="allgather", f=0, attack=None, attack_parameters=None,
                    byzantine=0, pre=(), bucket_size=2, momentum=0.0, seed=1, dataset="digits",
                    alpha=None, steps=100, lr=0.1, batch=32, eval_every=10, hidden=64,
                    bucket_cap_mb=None, audit=64, owner_attack=None, convention=None,
                    options=None, barrier=True)


def wchar() -> int:
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _model(features, hidden, classes):
    from torch import nn
    return nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, classes))


def _train(spec, rank, world, data, framing):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    import dpas.torch as dt
    from . import data as _data
    (xtr, ytr), (xte, yte), classes = data
    xtr_t, ytr_t = torch.from_numpy(xtr), torch.from_numpy(ytr)
    xte_t, yte_t = torch.from_numpy(xte), torch.from_numpy(yte)
    torch.manual_seed(spec["seed"])
    model = _model(xtr.shape[1], spec["hidden"], classes)
    params = sum(p.numel() for p in model.parameters())
    kw = {"bucket_cap_mb": spec["bucket_cap_mb"]} if spec["bucket_cap_mb"] else {}
    ddp = DDP(model, broadcast_buffers=False, **kw)
    attacking = spec["attack"] is not None or spec["owner_attack"] is not None
    byz = tuple(range(world - spec["byzantine"], world)) if attacking else ()
    state = None
    beta = spec["momentum"]
    if spec["rule"] is not None:
        state = dt.register(ddp, spec["rule"], spec["f"], schedule=spec["schedule"],
                            attack=spec["attack"], byzantine_ranks=byz,
                            attack_parameters=spec["attack_parameters"], momentum=beta,
                            pre=spec["pre"], bucket_size=spec["bucket_size"],
                            convention=spec["convention"], seed=spec["seed"],
                            owner_attack=spec["owner_attack"],
                            **({"audit": spec["audit"]} if spec["schedule"] == "sharded" else {}),
                            **(spec["options"] or {}))
        opt = torch.optim.SGD(ddp.parameters(), lr=spec["lr"])
    else:  # the AllReduce: momentum on the mean is worker momentum averaged
        opt = torch.optim.SGD(ddp.parameters(), lr=spec["lr"], momentum=beta, dampening=beta)
    split = _data.dirichlet_split(ytr, world, spec["alpha"], spec["seed"])[rank]
    mine = torch.from_numpy(split)
    g = torch.Generator().manual_seed(spec["seed"] * 1000 + rank)
    loss_fn = nn.CrossEntropyLoss()
    flip = spec["attack"] == "label_flip" and rank in byz
    times, sent, losses, curve = [], [], [], []

    def evaluate():
        with torch.no_grad():
            return float((model(xte_t).argmax(1) == yte_t).float().mean())

    def sim_written():
        if state is None:
            return 0
        b = state.bytes
        return b["payload"]["simulation"] + b["messages"]["simulation"] * framing
    error = None
    for step in range(spec["steps"]):
        if rank == 0 and step % spec["eval_every"] == 0:
            curve.append((step, evaluate()))
        if spec["barrier"]:  # (the step times are measured from a common start)
            dist.barrier()
        idx = mine[torch.randint(0, mine.numel(), (spec["batch"],), generator=g)]
        y = ytr_t[idx]
        if flip:
            y = dt.flip_labels(y, classes)
        s0 = sim_written()
        w0, t0 = wchar(), time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(ddp(xtr_t[idx]), y)
        try:
            loss.backward()
        except RuntimeError as e:  # the step the ranks failed together
            error = f"step {step}: " + str(e).split("\n")[0]
            break
        opt.step()
        t1, w1 = time.perf_counter(), wchar()
        if step >= 2:  # DDP rebuilds its buckets in the first steps (a broadcast)
            times.append(t1 - t0)
            sent.append(w1 - w0 - (sim_written() - s0))
        v = float(loss)
        losses.append(v if np.isfinite(v) else float("inf"))
    acc = evaluate() if rank == 0 else None
    if rank == 0 and error is None:
        curve.append((spec["steps"], acc))
    honest = rank not in byz
    tail = losses[-10:]
    mine_stats = {"bytes": float(np.mean(sent)) if sent else None,
                  "time": float(np.median(times)) if times else None,
                  "loss": float(np.mean(tail)) if honest and tail else None,
                  "banned": dict(state.banned) if state else {},
                  "buckets": list(state.bucket_sizes) if state else None,
                  "factor": state.attack_factor if state else None,
                  "hook_bytes": state.bytes if state else None,
                  "pad": state.padded_coordinates if state else 0}
    if state is not None:
        state.close()
    else:  # DDP's own buckets (bytes), for the AllReduce's prediction
        sizes = str(ddp._get_ddp_logging_data().get("bucket_sizes", ""))
        mine_stats["buckets"] = [int(b) // 4 for b in sizes.split(",") if b.strip()] or None
    everyone = [None] * world
    dist.all_gather_object(everyone, mine_stats)
    if rank != 0:
        return None
    honest_losses = [s["loss"] for s in everyone if s["loss"] is not None]
    measured = [s["bytes"] for s in everyone if s["bytes"] is not None]
    steptimes = [s["time"] for s in everyone if s["time"] is not None]
    return {**{k: spec[k] for k in ("rule", "schedule", "f", "attack", "pre", "momentum",
                                    "seed", "dataset", "alpha", "steps")},
            "attack_parameters": spec["attack_parameters"],
            "byzantine": len(byz), "world_size": world, "parameters": params,
            "accuracy": acc, "accuracy_by_step": curve,
            "final_loss": float(np.mean(honest_losses)) if honest_losses else None,
            "bytes_per_rank_per_step": float(np.mean(measured)) if measured else None,
            "step_time_s": float(np.median(steptimes)) if steptimes else None,
            "error": error, "banned": everyone[0]["banned"],
            "bucket_sizes": everyone[0]["buckets"], "attack_factor": everyone[-1]["factor"],
            "padded_coordinates": everyone[0]["pad"]}


def _worker(rank, world, port, specs, common, out_path):
    import torch
    import torch.distributed as dist
    from . import data as _data
    from .wire import FRAMING
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=common["timeout"]))
    cache: dict = {}
    results = []
    for spec in specs:
        key = (spec["dataset"], spec["seed"] if spec["dataset"] == "gaussian" else 0)
        if key not in cache:
            cache[key] = _data.load(spec["dataset"], seed=key[1])
        results.append(_train(spec, rank, world, cache[key], FRAMING["gloo"].message))
        if rank == 0 and common.get("progress"):
            r = results[-1]
            print(f"  [{len(results)}/{len(specs)}] {r['rule'] or 'allreduce'} "
                  f"pre={'+'.join(r['pre']) or '-'} attack={r['attack']} "
                  f"momentum={r['momentum']} seed={r['seed']}: accuracy "
                  f"{r['accuracy']:.3f}" + (f" ({r['error']})" if r["error"] else ""),
                  file=sys.stderr, flush=True)
    if rank == 0:
        with open(out_path, "w") as fh:
            json.dump(results, fh)
    dist.barrier()
    dist.destroy_process_group()


def run(world: int, specs: typing.Sequence[dict], timeout: float = 120,
        progress: bool = False) -> typing.List[dict]:
    """Every run of specs (dicts over RUN_DEFAULTS) on `world` spawned processes, in order."""
    import torch.multiprocessing as mp
    full = []
    for s in specs:
        unknown = set(s) - set(RUN_DEFAULTS)
        if unknown:
            raise ValueError(f"unknown run keys: {sorted(unknown)}")
        full.append({**RUN_DEFAULTS, **s})
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "runs.json")
        mp.start_processes(_worker, args=(world, free_port(), full,
                                          {"timeout": timeout, "progress": progress}, out),
                           nprocs=world, start_method="spawn")
        with open(out) as fh:
            return json.load(fh)
