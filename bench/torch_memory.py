# SPDX-License-Identifier: Apache-2.0
"""The hook's host memory per rank (issue 28: allgather's bounded, goal <= 3x the gradient or a
stated bound). N gloo processes train the step-time bench's MLP (width x 2 width x width x 10,
4,207,626 parameters at width 1024: a 16.8 MB float32 gradient) with DDP and the hook, one
configuration per run. Each rank takes its resident set (VmRSS) once the model, DDP (its bucket
buffers) and the model's gradients exist, then resets the kernel's peak (writing 5 to
/proc/self/clear_refs) and reads the peak (VmHWM) after STEPS steps: the difference is what the
hook's steps added, in gradients (4 D bytes), beside dpas.torch.host_bytes's bound.
Usage: python3 bench/torch_memory.py [N] [STEPS] [CONFIG,...] [WARM]   (CONFIG:
schedule:rule[:pre]; schedule stream: allgather with stream=True, DDP's buckets at 1 MB;
allreduce:mean (DDP's own AllReduce, no hook: what DDP and the step hold without the hook),
allreduce:mean:1mb (the same with stream's 1 MB buckets); WARM:
steps run before the peak is reset, 0 by default: DDP's bucket rebuild in the first step is then
left out)"""
import json
import os
import socket
import sys
import tempfile
from datetime import timedelta


def _kb(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(field)


def _worker(rank, world, port, steps, config, out, warm=0):
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
    import dpas.torch as dt
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=600))
    schedule, rule, *pre = config.split(":")
    width = 1024
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, width),
                          nn.ReLU(), nn.Linear(width, 10))
    g = torch.Generator().manual_seed(rank)
    x, y = torch.randn(32, width, generator=g), torch.randint(0, 10, (32,), generator=g)
    loss_fn = nn.CrossEntropyLoss()
    loss_fn(model(x), y).backward()  # (the model's own gradients, before the hook)
    stream = schedule == "stream"  # allgather, each bucket through the rule as it comes
    # (with DDP's buckets at 1 MB: the bound is 2 G + 2 N x the largest bucket)
    small = stream or pre == ["1mb"]  # (allreduce:mean:1mb: DDP alone, with stream's buckets)
    ddp = DDP(model, broadcast_buffers=False, **({"bucket_cap_mb": 1} if small else {}))
    state = None if schedule == "allreduce" else \
        dt.register(ddp, rule, 0, schedule="allgather" if stream else schedule, pre=pre,
                    stream=stream)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    d = sum(p.numel() for p in model.parameters())
    for _ in range(warm):  # (steps before the peak is reset: DDP's rebuild left out)
        opt.zero_grad(set_to_none=False)
        loss_fn(ddp(x), y).backward()
        opt.step()
    dist.barrier()
    base = _kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # the peak (VmHWM) from here
    for _ in range(steps):
        opt.zero_grad(set_to_none=False)
        loss_fn(ddp(x), y).backward()
        opt.step()
    peak = _kb("VmHWM")
    got = [None] * world
    dist.all_gather_object(got, {"base": base, "peak": peak, "d": d,
                                 "bound": None if state is None else
                                 dt.host_bytes(world, d, ddp.bucket_bytes_cap, pre,
                                               stream=stream)})
    if state is not None:
        state.close()
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(got, fh)
    dist.barrier()
    # (no destructors: torch 1.13 can deadlock here, DDP's reducer destroying its gloo group
    # while a gloo thread waits for the GIL to free a tensor; seen with stream's 17 buckets)
    os._exit(0)


def main(argv):
    import torch.multiprocessing as mp
    world = int(argv[0]) if argv else 4
    steps = int(argv[1]) if len(argv) > 1 else 4
    configs = argv[2].split(",") if len(argv) > 2 else \
        ["allgather:median", "allgather:krum", "allgather:median:nnm", "sharded:median"]
    warm = int(argv[3]) if len(argv) > 3 else 0
    print(f"N = {world}, {steps} steps after {warm} not measured; load average "
          f"{os.getloadavg()[0]:.1f}")
    print("| schedule | rule | pre | gradient (MB) | peak added, max over ranks (MB) | "
          "× gradient | bound (host_bytes, × gradient) |")
    print("|---|---|---|---|---|---|---|")
    for config in configs:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            mp.start_processes(_worker, args=(world, port, steps, config, out, warm),
                               nprocs=world, start_method="spawn")
            with open(out) as fh:
                got = json.load(fh)
        grad = 4 * got[0]["d"]
        added = max(r["peak"] - r["base"] for r in got)
        schedule, rule, *pre = config.split(":")
        bound = f"{got[0]['bound'] / grad:.2f}" if schedule in ("allgather", "stream") else "-"
        print(f"| {schedule} | {rule} | {'+'.join(pre) or 'none'} | {grad / 1e6:.1f} | "
              f"{added / 1e6:.1f} | {added / grad:.2f} | {bound} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
