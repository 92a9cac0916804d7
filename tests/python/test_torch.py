"""dpas.torch's tests (Debian's torch under /usr/bin/python3; processes forked on loopback, gloo).

    test_torch.py consistency   the hook's result is dpas.aggregate on the replicas' buckets
    test_torch.py bytes         the bytes a rank sends per step, against the schedules' formulas
    test_torch.py training      6 ranks, one Byzantine (sign flip): mean fails, median/krum learn

Expected values come from dpas.aggregate and dpas.attack run here on gradients each rank
recomputes itself (consistency), and from the schedules' equations written here (bytes); never
from the hook's own output.
"""
import os
import socket
import sys
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

import dpas
import dpas.torch as dt
from dpas.torch import demo

TIMEOUT = timedelta(seconds=60)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def spawn(fn, world, *args):
    mp.start_processes(fn, args=(world, free_port()) + args, nprocs=world, start_method="fork")


def init(rank, world, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=TIMEOUT)


# ---- consistency -------------------------------------------------------------------------------

def batch(r):
    g = torch.Generator().manual_seed(100 + r)
    return torch.randn(16, 12, generator=g), torch.randint(0, 3, (16,), generator=g)


def model():
    torch.manual_seed(7)
    return nn.Sequential(nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 3))  # 131 parameters


def local_gradient(r):
    """Replica r's flattened gradient, recomputed here without DDP (DDP's bucket order is the
    reverse of the parameters' for this model: it is checked, not assumed)."""
    m = model()
    x, y = batch(r)
    nn.functional.cross_entropy(m(x), y).backward()
    return [p.grad.detach().clone() for p in m.parameters()]


def consistency_worker(rank, world, port, rule, f, schedule, attack, byz):
    init(rank, world, port)
    m = model()
    ddp = DDP(m)
    state, hook = dt.robust_hook(rule, f, schedule=schedule, attack=attack,
                                 byzantine_ranks=byz)
    ddp.register_comm_hook(state, hook)
    x, y = batch(rank)
    nn.functional.cross_entropy(ddp(x), y).backward()
    assert state.calls == 1, state.calls  # one bucket
    # the expected: every replica's gradient recomputed here, flattened in DDP's bucket order
    # (the parameters in reverse), the Byzantine ones through dpas.attack, then dpas.aggregate
    rows = [torch.cat([g.reshape(-1) for g in reversed(local_gradient(r))]).numpy()
            for r in range(world)]
    honest = np.stack([rows[r] for r in range(world) if r not in byz])
    for r in byz:
        params = {"scale": 10.0} if attack == "sign_flip" else {}
        known = honest if attack == "alie" else rows[r].reshape(1, -1)  # alie: omniscient
        rows[r] = dpas.attack(attack, np.ascontiguousarray(known), 1, **params)[0]
    expected = dpas.aggregate(rule, np.ascontiguousarray(np.stack(rows)), f)
    got = torch.cat([p.grad.reshape(-1) for p in reversed(list(m.parameters()))]).numpy()
    assert got.dtype == np.float32 and got.shape == expected.shape
    if got.tobytes() != expected.tobytes():
        bad = np.flatnonzero(got != expected)
        raise AssertionError(f"rank {rank} {rule}/{schedule}: {bad.size} coordinates differ, "
                             f"first {bad[:5]}: {got[bad[:5]]} vs {expected[bad[:5]]}")
    dist.barrier()
    dist.destroy_process_group()


def test_consistency():
    cases = [(4, "median", 1, "allgather", "sign_flip", (3,)),
             (5, "krum", 1, "allgather", "sign_flip", (4,)),  # krum: n >= 2f + 3
             (4, "median", 1, "sharded", "sign_flip", (3,)),  # 131 coordinates: padded to 132
             (3, "trimmed_mean", 1, "sharded", "alie", (0,)),  # 131 = 3 x 43 + 2: padded
             (4, "geometric_median", 1, "allgather", "nan", (2,)),
             (2, "mean", 0, "sharded", None, ())]
    for world, rule, f, schedule, attack, byz in cases:
        spawn(consistency_worker, world, rule, f, schedule, attack, byz)
        print(f"consistency: {rule} f={f} {schedule} attack={attack} ranks={byz}: bit-identical "
              f"to dpas.aggregate on the {world} buckets", flush=True)
    for schedule in ("allgather", "sharded"):
        spawn(half_worker, 4, "median", 1, schedule, (3,))
        print(f"consistency: median f=1 {schedule} sign_flip float16 bucket: bit-identical to "
              f"dpas.aggregate rounded to float16", flush=True)


def half_worker(rank, world, port, rule, f, schedule, byz):
    """A float16 bucket straight to the hook (torch 1.13 has no float16 matmul on CPU, and gloo
    no bfloat16, so no DDP model here): sent as float16, aggregated in float32, rounded back."""
    init(rank, world, port)
    state, hook = dt.robust_hook(rule, f, schedule=schedule, attack="sign_flip",
                                 byzantine_ranks=byz)
    def buf(r):
        return torch.randn(131, generator=torch.Generator().manual_seed(r)).half()
    got = hook(state, Bucket(buf(rank))).wait()
    assert got.dtype == torch.float16
    rows = [buf(r).float().numpy() for r in range(world)]
    for r in byz:  # the attack in float32 on its own row, rounded to float16 before sending
        rows[r] = torch.from_numpy(dpas.attack("sign_flip", rows[r].reshape(1, -1), 1,
                                               scale=10.0)[0]).half().float().numpy()
    expected = torch.from_numpy(dpas.aggregate(rule, np.stack(rows), f)).half()
    assert got.numpy().tobytes() == expected.numpy().tobytes(), (rank, rule, schedule)
    dist.barrier()
    dist.destroy_process_group()


# ---- bytes -------------------------------------------------------------------------------------

class Bucket:
    """What the hook reads of DDP's GradBucket: its flattened buffer."""
    def __init__(self, t):
        self.t = t

    def buffer(self):
        return self.t


def bytes_worker(rank, world, port, schedule, d, steps, out):
    init(rank, world, port)
    state, hook = dt.robust_hook("median", 0, schedule=schedule)
    g = torch.Generator().manual_seed(rank)
    buf = torch.randn(d, generator=g)
    hook(state, Bucket(buf)).wait()  # warm-up: gloo's connections
    sent = []
    for _ in range(steps):
        dist.barrier()
        w0 = demo.wchar()
        hook(state, Bucket(buf)).wait()
        sent.append(demo.wchar() - w0)
    assert state.fallback is None, state.fallback
    with open(f"{out}.{rank}", "w") as fh:
        fh.write(str(float(np.mean(sent))))
    dist.barrier()
    dist.destroy_process_group()


def test_bytes():
    import tempfile
    d = 1_000_000  # 4 MB buckets: gloo's framing (a few hundred bytes a message) is < 0.01 %
    bucket = 4 * d
    with tempfile.TemporaryDirectory() as tmp:
        for world in (2, 4):
            for schedule in ("allgather", "sharded"):
                # the seed's equations: allgather (N-1) x bucket, sharded 2 (N-1)/N x bucket
                formula = (world - 1) * bucket if schedule == "allgather" else \
                    2 * (world - 1) * bucket // world
                predicted = dt.predicted_bytes(schedule, "median", d, world)
                assert predicted == formula, (schedule, world, predicted, formula)
                out = os.path.join(tmp, f"{schedule}{world}")
                spawn(bytes_worker, world, schedule, d, 3, out)
                for r in range(world):
                    measured = float(open(f"{out}.{r}").read())
                    err = measured / formula - 1
                    print(f"bytes: N={world} {schedule} rank {r}: measured {measured:.0f}, "
                          f"formula = dpas's prediction {formula} ({err:+.5%})", flush=True)
                    assert abs(err) < 0.01, (world, schedule, r, measured, formula)


# ---- training ----------------------------------------------------------------------------------

def test_training():
    t0 = time.time()
    result = demo.run(world_size=6, byzantine=1, attack="sign_flip",
                      rules=("mean", "median", "krum"), steps=60)
    print(demo.table(result), flush=True)
    print(f"training: {time.time() - t0:.1f} s", flush=True)
    runs = {r["rule"] + "/" + r["schedule"]: r for r in result["runs"]}
    clean = runs["mean/allreduce"]["accuracy"]
    assert clean >= 0.8, clean  # the task is learnable in 60 steps
    assert runs["mean/allgather"]["accuracy"] < 0.5 * clean, runs["mean/allgather"]
    for rule in ("median", "krum"):
        assert runs[rule + "/allgather"]["accuracy"] >= 0.9 * clean, runs[rule + "/allgather"]


if __name__ == "__main__":
    which = sys.argv[1:] or ["consistency", "bytes", "training"]
    for w in which:
        globals()["test_" + w]()
    print("ok")
