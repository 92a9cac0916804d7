# SPDX-License-Identifier: Apache-2.0
"""dpas.torch in a job launched the usual way (docs/torch.md, "Launching"): every rank runs this
script with MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK in its environment (set by hand, by a
scheduler, or by torchrun), joins the default group with the job's timeout, wraps a model in
DDP with the robust hook and trains a few steps on data of its own. Rank 0 prints one line per
step: the loss, and the hook group's timeout (inherited from the default group).

    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=0 python3 examples/torch_ddp.py &
    MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 WORLD_SIZE=2 RANK=1 python3 examples/torch_ddp.py
"""
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import dpas.torch


def main(steps: int = 3) -> int:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))  # env:// by default
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # the same initial model everywhere
    model = DDP(torch.nn.Linear(8, 2), broadcast_buffers=False)
    state = dpas.torch.register(model, "median", f=0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(100 + rank)  # each rank's own data
    for step in range(steps):
        x, y = torch.randn(16, 8, generator=g), torch.randint(0, 2, (16,), generator=g)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if rank == 0:
            print(f"step {step}: loss {loss.item():.4f}, world {world}, hook group timeout "
                  f"{state._engine.group.options._timeout}", flush=True)
    state.close()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
