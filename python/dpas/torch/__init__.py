# SPDX-License-Identifier: Apache-2.0
"""dpas's robust aggregation inside PyTorch's DistributedDataParallel: a communication hook.

    >>> state = dpas.torch.register(ddp_model, "median", f=1)         # doctest: +SKIP

or, without the buffer check register makes,

    >>> state, hook = dpas.torch.robust_hook("median", f=1)           # doctest: +SKIP
    >>> ddp_model.register_comm_hook(state, hook)                     # doctest: +SKIP

Every replica's gradient is exchanged and aggregated by dpas's kernels; the aggregate becomes
the gradient on every rank, in place of the average an AllReduce gives. The buckets are
exchanged as DDP hands them over (a worker thread and real Futures: the exchange overlaps the
rest of the backward), and the rule runs once per step on the whole gradient (every bucket side
by side), so Krum, the geometric median, centered clipping and NNM see whole vectors. Two
schedules, the ones dpas's cost model names: ``allgather`` (every rank gathers every vector and
aggregates) and ``sharded`` (rank r aggregates coordinate shard r of every vector; verified: see
dpas.torch._sharded). Simulated Byzantine ranks run the attacks of dpas.torch.attacks.
docs/torch.md is the manual.

torch is imported only in this subpackage; the rest of dpas does not need it.
"""
from ._hook import (BufferBroadcastWarning, HookState, OWNER_ATTACKS, PREAGGREGATORS,
                    SCHEDULES, StepFailed, host_bytes, register, robust_hook)
from .attacks import ATTACKS, flip_labels
from .wire import FRAMING, hook_bytes, predicted_bytes

__all__ = ["HookState", "robust_hook", "register", "SCHEDULES", "PREAGGREGATORS",
           "OWNER_ATTACKS", "ATTACKS", "StepFailed", "BufferBroadcastWarning", "flip_labels",
           "predicted_bytes", "hook_bytes", "host_bytes", "FRAMING"]
