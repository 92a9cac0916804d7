"""dpas's robust aggregation inside PyTorch's DistributedDataParallel: a communication hook.

    >>> state, hook = dpas.torch.robust_hook("median", f=1)          # doctest: +SKIP
    >>> ddp_model.register_comm_hook(state, hook)                   # doctest: +SKIP

Every replica's gradient bucket (DDP's flattened gradients) is exchanged and aggregated by
dpas.aggregate; the aggregate becomes the bucket's value on every rank, in place of the average
an AllReduce gives. Two schedules, the ones dpas's cost model names:

* ``allgather``: each rank all-gathers every replica's bucket ((N - 1) x bucket bytes sent per
  rank) and aggregates the whole (N, d) matrix itself. Works for every rule.
* ``sharded``: each rank receives coordinate shard r of every replica's bucket (an all_to_all:
  (N - 1)/N x bucket bytes), aggregates its shard, then the aggregated shards are all-gathered
  (another (N - 1)/N x bucket bytes): 2 (N - 1)/N x bucket bytes. Only for the rules that work
  coordinate by coordinate (dpas's cost model says which: median, trimmed_mean, meamed,
  sign_majority, mean); a bucket whose length is not a multiple of N is padded with zeros to the
  next multiple (the padding is sent, and counted in ``state.padded_coordinates``). Where the
  backend has no all_to_all, the hook falls back to all-gathering the whole buckets and slicing
  locally (the bytes are then those of allgather plus the shard gather) and says so in
  ``state.fallback``.

Gradient dtypes: float32 buckets are aggregated as they are. bfloat16 and float16 buckets are
sent in their own dtype (so the bytes on the wire are 2 per coordinate), converted to float32
after receipt for the kernel, and the float32 aggregate is rounded back to the bucket's dtype
(round to nearest even). In the sharded schedule the aggregated shard is rounded before it is
gathered, so every rank ends with the same bits. Other dtypes are a TypeError.

A simulated Byzantine rank (``byzantine_ranks``) replaces its bucket, before sending, by
``dpas.attack(attack, own[None, :], 1, **attack_parameters)``: the attack made from the only
honest gradient it knows, its own. So sign_flip sends -s times its honest gradient (s = 10 here
unless ``attack_parameters`` says otherwise), ipm -epsilon times it, nan all NaN, large_value all
FLT_MAX. ALIE needs the honest mean and spread: with ``omniscient`` (the default for alie) every
rank first all-gathers the honest buckets, a simulation cost outside the schedule, whose bytes
the hook counts apart in ``state.simulation_bytes``, and the Byzantine ranks attack from the
honest rows (mu + z sigma).

torch is imported only in this subpackage; the rest of dpas does not need it.
"""
import dataclasses
import typing

import torch
import torch.distributed as dist

import dpas

__all__ = ["HookState", "robust_hook", "SCHEDULES", "predicted_bytes"]

SCHEDULES = ("allgather", "sharded")
_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


@dataclasses.dataclass
class HookState:
    """What the hook needs and what it records (read it after training)."""
    rule: str
    f: int
    schedule: str = "allgather"
    convention: typing.Optional[str] = None
    threads: int = 1
    attack: typing.Optional[str] = None
    attack_parameters: typing.Dict[str, float] = dataclasses.field(default_factory=dict)
    byzantine_ranks: typing.Tuple[int, ...] = ()
    process_group: typing.Any = None
    options: typing.Dict[str, typing.Any] = dataclasses.field(default_factory=dict)
    omniscient: bool = False  # the Byzantine ranks see the honest buckets (ALIE needs it)
    keep_gathered: bool = False  # keep the last (N, d) float32 matrix (tests: consistency)
    # recorded
    calls: int = 0
    fallback: typing.Optional[str] = None
    padded_coordinates: int = 0
    simulation_bytes: int = 0  # written by the omniscient simulation's extra all_gather (wchar)
    last_gathered: typing.Any = None
    last_aggregate: typing.Any = None

    @property
    def is_byzantine(self) -> bool:
        return dist.get_rank(self.process_group) in self.byzantine_ranks


def _check_sharded(rule: str, convention: typing.Optional[str], world: int) -> None:
    """The sharded schedule only for the rules dpas's cost model says it realises."""
    s = dpas.DataParallelAttackSurfaceScenario(
        workload=dpas.Workload(world), fleet=dpas.Fleet(nodes=world, accelerators_per_node=1),
        dp_degree=world, gradient_bytes_per_param="4 B", checkpoint_bytes_per_param="4 B")
    row = s.cost(rule=rule, schedule="sharded", convention=convention)[0]
    if not row["realisable"]:
        raise ValueError(f"the sharded schedule cannot run {rule}: {row['why']} "
                         f"(use schedule='allgather')")


def _wchar() -> int:
    try:
        with open("/proc/self/io") as fh:
            for line in fh:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _honest_rows(state: HookState, x: torch.Tensor, world: int) -> torch.Tensor:
    """The simulation's omniscience: every rank all-gathers the honest buckets (every rank must
    take part in the collective); the bytes it writes are counted apart (simulation_bytes)."""
    w0 = _wchar()
    gathered = torch.empty((world, x.numel()), dtype=x.dtype)
    dist.all_gather(list(gathered.unbind(0)), x, group=state.process_group)
    state.simulation_bytes += _wchar() - w0
    honest = [r for r in range(world) if r not in state.byzantine_ranks]
    return gathered[honest]


def _byzantine(state: HookState, x: torch.Tensor, honest=None) -> torch.Tensor:
    """The Byzantine rank's bucket: dpas.attack from the honest gradients it knows (its own,
    or all the honest ones when omniscient)."""
    rows = x.reshape(1, -1) if honest is None else honest
    own = rows.detach().to(torch.float32).contiguous().numpy()
    params = dict(state.attack_parameters)
    if state.attack == "sign_flip" and "scale" not in params:
        params["scale"] = 10.0
    bad = dpas.attack(state.attack, own, 1, **params)[0]
    return torch.from_numpy(bad).to(x.dtype)


def _aggregate(state: HookState, rows: torch.Tensor) -> torch.Tensor:
    m = rows.to(torch.float32).contiguous()
    out = dpas.aggregate(state.rule, m.numpy(), state.f, convention=state.convention,
                         threads=state.threads, **state.options)
    if state.keep_gathered:
        state.last_gathered = m.clone()
        state.last_aggregate = torch.from_numpy(out.copy())
    return torch.from_numpy(out)


def _allgather(state: HookState, x: torch.Tensor, world: int) -> torch.Tensor:
    gathered = torch.empty((world, x.numel()), dtype=x.dtype)
    dist.all_gather(list(gathered.unbind(0)), x, group=state.process_group)
    return _aggregate(state, gathered).to(x.dtype)


def _sharded(state: HookState, x: torch.Tensor, world: int) -> torch.Tensor:
    d = x.numel()
    shard = -(-d // world)
    pad = shard * world - d
    if pad:
        x = torch.cat([x, torch.zeros(pad, dtype=x.dtype)])
        state.padded_coordinates += pad
    rank = dist.get_rank(state.process_group)
    mine = torch.empty(world * shard, dtype=x.dtype)  # row i: shard `rank` of replica i
    if state.fallback is None:
        try:
            dist.all_to_all_single(mine, x, group=state.process_group)
        except RuntimeError as e:
            state.fallback = (f"all_gather + local slice: the backend "
                              f"{dist.get_backend(state.process_group)} has no all_to_all ({e})")
    if state.fallback is not None:
        full = torch.empty((world, world * shard), dtype=x.dtype)
        dist.all_gather(list(full.unbind(0)), x, group=state.process_group)
        mine = full[:, rank * shard:(rank + 1) * shard].contiguous()
    agg = _aggregate(state, mine.view(world, shard)).to(x.dtype)
    out = torch.empty((world, shard), dtype=x.dtype)
    dist.all_gather(list(out.unbind(0)), agg, group=state.process_group)
    return out.view(-1)[:d]


def _hook(state: HookState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    buf = bucket.buffer()
    if buf.dtype not in _DTYPES:
        raise TypeError(f"dpas.torch: gradient buckets must be float32, bfloat16 or float16, "
                        f"got {buf.dtype}")
    world = dist.get_world_size(state.process_group)
    x = buf.detach().contiguous()
    honest = _honest_rows(state, x, world) if state.attack is not None and state.omniscient \
        else None
    if state.attack is not None and state.is_byzantine:
        x = _byzantine(state, x, honest)
    if state.schedule == "allgather":
        result = _allgather(state, x, world)
    else:
        result = _sharded(state, x, world)
    state.calls += 1
    fut: torch.futures.Future = torch.futures.Future()
    fut.set_result(result.view_as(buf))
    return fut


def robust_hook(rule: str, f: int, *, schedule: str = "allgather",
                convention: typing.Optional[str] = None, threads: int = 1,
                attack: typing.Optional[str] = None,
                byzantine_ranks: typing.Iterable[int] = (),
                attack_parameters: typing.Optional[typing.Dict[str, float]] = None,
                process_group=None, omniscient: typing.Optional[bool] = None, **options) -> typing.Tuple[HookState, typing.Callable]:
    """(state, hook) for DistributedDataParallel.register_comm_hook(state, hook): every bucket
    aggregated by dpas.aggregate(rule, ..., f) with the given schedule. attack and
    byzantine_ranks simulate Byzantine replicas (the ranks listed send dpas.attack's rows);
    options go to dpas.aggregate (m, iterations, tau, nnm, ...). omniscient: the Byzantine
    ranks attack from all the honest buckets (an extra all_gather per bucket, its bytes kept in
    state.simulation_bytes); None: only for the attacks that need it (alie). Must be called
    after torch.distributed.init_process_group."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    byz = tuple(int(r) for r in byzantine_ranks)
    if byz and attack is None:
        raise ValueError("byzantine_ranks given without an attack")
    world = dist.get_world_size(process_group)
    if omniscient is None:
        omniscient = attack == "alie"
    if attack is not None:  # fail early on a bad name or parameter
        import numpy
        known = world - len(byz) if omniscient else 1
        dpas.attack(attack, numpy.zeros((known, 1), numpy.float32), 1,
                    **(attack_parameters or {}))
    import numpy  # fail early (on every rank alike) when the rule refuses f for N replicas
    dpas.aggregate(rule, numpy.zeros((world, 1), numpy.float32), int(f), convention=convention,
                   **options)
    if schedule == "sharded":
        _check_sharded(rule, convention, world)
    state = HookState(rule=rule, f=int(f), schedule=schedule, convention=convention,
                      threads=threads, attack=attack,
                      attack_parameters=dict(attack_parameters or {}), byzantine_ranks=byz,
                      process_group=process_group, options=dict(options),
                      omniscient=bool(omniscient))
    return state, _hook


def predicted_bytes(schedule: str, rule: str, parameters: int, world: int,
                    bytes_per_param: int = 4, convention: typing.Optional[str] = None) -> int:
    """dpas's prediction of the bytes one rank sends per step: the library's cost row
    (bytes_per_worker) for a workload of `parameters` gradients coordinates (the buckets'
    total), `bytes_per_param` bytes each, on N = world replicas, one per node."""
    s = dpas.DataParallelAttackSurfaceScenario(
        workload=dpas.Workload(int(parameters)),
        fleet=dpas.Fleet(nodes=world, accelerators_per_node=1), dp_degree=world,
        gradient_bytes_per_param=f"{bytes_per_param} B",
        checkpoint_bytes_per_param=f"{bytes_per_param} B")
    row = s.cost(rule=rule, schedule=schedule, convention=convention)[0]
    if not row["realisable"]:
        raise ValueError(f"{schedule} cannot run {rule}: {row['why']}")
    return int(row["bytes_per_worker"])
