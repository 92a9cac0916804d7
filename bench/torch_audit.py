# SPDX-License-Identifier: Apache-2.0
"""How often the verified sharded schedule catches a lying owner, per step (issue 28's goal: a
one-coordinate lie in a 25 MB bucket caught with probability >= 0.5 per step at the default
audit cost). N gloo processes on loopback call the hook on one bucket of D float32 coordinates
per step; rank N - 1 owns a shard and publishes it with a lie: "dense" (every coordinate set to
1e6), "sparse" (one coordinate set to 1e6) or "ulp" (one coordinate moved by one ulp). After
each step every rank forgets the ban (the liar lies again the next step), so each step is one
trial; the rate is the steps whose verdict banned the liar. Every rank reaches the same verdict
(checked). Usage: python3 bench/torch_audit.py [STEPS] [MB] [KIND,...] [N]"""
import json
import os
import socket
import sys
import tempfile
import time
from datetime import timedelta


def _worker(rank, world, port, steps, d, kinds, out):
    import torch
    import torch.distributed as dist
    import dpas.torch as dt
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=600))

    class Bucket:
        def __init__(self, t):
            self.t = t

        def buffer(self):
            return self.t

        def index(self):
            return 0

        def is_last(self):
            return True
    result = {}
    for kind in kinds:
        attack = {"dense": ("lie", 1.0), "sparse": ("lie", 1e-12), "ulp": ("ulp", 1e-12)}[kind]
        state, hook = dt.robust_hook("median", 1, schedule="sharded",
                                     byzantine_ranks=(world - 1,), owner_attack=attack[0],
                                     owner_attack_parameters={"fraction": attack[1]})
        eng = state._engine
        caught = []
        t0 = time.monotonic()
        for step in range(steps):
            x = torch.randn(d, generator=torch.Generator().manual_seed(1000 * step + rank))
            hook(state, Bucket(x)).wait()
            caught.append(world - 1 in state.banned)
            eng.active, eng.f_eff = list(range(world)), state.f  # forget: the next trial
            state.banned.clear()
        result[kind] = {"caught": caught, "seconds": time.monotonic() - t0,
                        "audit": state.audit, "audit_shards": state.audit_shards}
        state.close()
    everyone = [None] * world
    dist.all_gather_object(everyone, result)
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(everyone, fh)
    dist.destroy_process_group()


def main(argv):
    import torch.multiprocessing as mp
    steps = int(argv[0]) if argv else 200
    mb = float(argv[1]) if len(argv) > 1 else 25.0
    kinds = argv[2].split(",") if len(argv) > 2 else ["sparse", "ulp", "dense"]
    world = int(argv[3]) if len(argv) > 3 else 4
    d = int(mb * 1e6) // 4
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        mp.start_processes(_worker, args=(world, port, steps, d, kinds, out), nprocs=world,
                           start_method="spawn")
        with open(out) as fh:
            everyone = json.load(fh)
    print(f"N = {world}, one bucket of {d} float32 coordinates ({4 * d / 1e6:g} MB), median "
          f"f = 1, rank {world - 1} lies as owner; load average {load0:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print("| lie | steps | caught | rate | audit | audit_shards | seconds a step |")
    print("|---|---|---|---|---|---|---|")
    for kind in kinds:
        runs = [e[kind] for e in everyone]
        assert all(r["caught"] == runs[0]["caught"] for r in runs), kind  # one verdict
        c = runs[0]["caught"]
        print(f"| {kind} | {len(c)} | {sum(c)} | {sum(c) / len(c):.3f} | {runs[0]['audit']} | "
              f"{runs[0]['audit_shards']} | {runs[0]['seconds'] / len(c):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
