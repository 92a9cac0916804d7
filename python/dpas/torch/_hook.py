# SPDX-License-Identifier: Apache-2.0
"""The communication hook: its state, its argument checks, and the engine that runs a step.

A step (one backward) hands the hook DDP's buckets one at a time, as their gradients are ready.
The hook queues each bucket to a worker thread of its own and returns an uncompleted Future at
once, so the backward goes on while the worker exchanges the bucket (on a process group of its
own, gloo, point-to-point messages); DDP waits for the Futures only when the backward is done.
When the last bucket has been exchanged, the worker agrees with the other ranks on the step's
status, aggregates the whole gradient (every bucket's rows side by side: the rule sees whole
vectors, whatever the number of buckets), and completes every Future of the step, with the
aggregate or with the same error on every rank.
"""
import dataclasses
import hashlib
import itertools
import queue
import threading
import typing
import warnings

import torch
import torch.distributed as dist

import dpas
from dpas import _check
from dpas.errors import ArgumentTypeError, InvalidValue

from . import attacks as _attacks
from ._comm import ECHO_DIGEST, Comm
from ._status import STATUS_BYTES, _message, status_block, status_message

SCHEDULES = ("allgather", "sharded")
PREAGGREGATORS = ("bucketing", "nnm")
OWNER_ATTACKS = ("lie", "cover", "accuse", "ulp")
_DTYPES = (torch.float32, torch.bfloat16, torch.float16)


class StepFailed(RuntimeError):
    """A step the ranks agreed to fail: the same message on every rank, in the same step.
    (Raised inside DDP's backward, it reaches the caller as a RuntimeError with this message.)"""


class BufferBroadcastWarning(UserWarning):
    """DDP broadcasts rank 0's buffers (BatchNorm statistics) at every forward: the robust
    hook does not see them, so a Byzantine rank 0 sets every replica's buffers."""


@dataclasses.dataclass
class HookState:
    """What the hook needs and what it records (read it after training). Made by robust_hook;
    the fields below the line are written by the hook."""
    rule: str
    f: int
    schedule: str = "allgather"
    convention: typing.Optional[str] = None
    threads: int = 1
    options: typing.Dict[str, typing.Any] = dataclasses.field(default_factory=dict)
    attack: typing.Optional[str] = None
    attack_parameters: typing.Dict[str, typing.Any] = dataclasses.field(default_factory=dict)
    byzantine_ranks: typing.Tuple[int, ...] = ()
    omniscient: bool = False
    momentum: float = 0.0
    pre: typing.Tuple[str, ...] = ()
    bucket_size: int = 2
    audit: int = 64
    audit_shards: typing.Optional[int] = None
    owner_attack: typing.Optional[str] = None
    owner_attack_parameters: typing.Dict[str, float] = dataclasses.field(default_factory=dict)
    seed: int = 0
    chunk_bytes: int = 4 << 20
    keep_gathered: bool = False
    process_group: typing.Any = None
    stream: bool = False
    # ---- recorded ----
    calls: int = 0
    steps: int = 0
    padded_coordinates: int = 0
    banned: typing.Dict[int, str] = dataclasses.field(default_factory=dict)
    detections: typing.List[dict] = dataclasses.field(default_factory=list)
    fallbacks: int = 0
    bucket_sizes: typing.List[int] = dataclasses.field(default_factory=list)
    attack_factor: typing.Optional[float] = None
    last_gathered: typing.Any = None
    last_aggregate: typing.Any = None
    _engine: typing.Any = dataclasses.field(default=None, repr=False)

    @property
    def world(self) -> int:
        return self._engine.world

    @property
    def rank(self) -> int:
        return self._engine.rank

    @property
    def is_byzantine(self) -> bool:
        return self.rank in self.byzantine_ranks

    @property
    def f_effective(self) -> int:
        """f less one for each Byzantine rank banned: an equivocator the echo proved (both
        schedules), or the sharded schedule's proven liar, or one of a pair it could not tell
        apart."""
        return self._engine.f_eff

    @property
    def bytes(self) -> dict:
        """The payload bytes this rank handed to the transport, by purpose (schedule: the
        schedule's data; protocol: statuses, commitments, audits; simulation: the omniscient
        attackers' view of the honest vectors; fallback: the sharded schedule's re-gathers
        after a detected lie), and the messages and all_gather rounds that carried them."""
        return self._engine.comm.count.snapshot()

    @property
    def seconds(self) -> dict:
        """Where this rank's hook spent its time since it started, in seconds by phase (wall
        time on the thread that ran it; "wait ..." is a point-to-point exchange's wait, "rule"
        the kernel, "digest" the echo's hashing, "agreement" the echo's agreement rounds, "end of
        step" the whole of each step's last bucket on DDP's thread, the part no backward
        overlaps): the bench's profile (--time)."""
        return dict(self._engine.comm.seconds)

    @property
    def simulation_bytes(self) -> int:
        return self._engine.comm.count.payload["simulation"]

    def close(self) -> None:
        """Stops the worker thread and destroys the hook's process group (collective: every
        rank calls it)."""
        if self._engine is not None:
            self._engine.close()


# ---- argument checks ---------------------------------------------------------------------------

def _count(field: str, v: typing.Any, minimum: int = 0) -> int:
    return _check.int64(field, v, minimum=minimum)


def _ranks(v: typing.Any, world: int) -> typing.Tuple[int, ...]:
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise ArgumentTypeError(f"byzantine_ranks must be a list of ranks, got "
                                f"{type(v).__name__} {v!r}", "byzantine_ranks")
    out = []
    for r in v:
        r = _count("byzantine_ranks", r)
        if r >= world:
            raise InvalidValue(f"byzantine_ranks: rank {r} is outside the world (ranks 0 to "
                               f"{world - 1})", "byzantine_ranks")
        if r in out:
            raise InvalidValue(f"byzantine_ranks lists rank {r} twice", "byzantine_ranks")
        out.append(r)
    return tuple(sorted(out))


def _is_coordinatewise(rule: str, convention) -> bool:
    row = next(r for r in dpas.rules(convention=convention) if r.rule == rule)
    return bool(row.coordinatewise)


def robust_hook(rule: str, f: int, *, schedule: str = "allgather",
                convention: typing.Optional[str] = None, threads: int = 1,
                attack: typing.Optional[str] = None,
                byzantine_ranks: typing.Iterable[int] = (),
                attack_parameters: typing.Optional[typing.Dict[str, typing.Any]] = None,
                omniscient: typing.Optional[bool] = None, momentum: float = 0.0,
                pre: typing.Iterable[str] = (), bucket_size: int = 2, audit: int = 64,
                audit_shards: typing.Optional[int] = None,
                owner_attack: typing.Optional[str] = None,
                owner_attack_parameters: typing.Optional[typing.Dict[str, float]] = None,
                seed: int = 0, chunk_bytes: int = 4 << 20, process_group=None, timeout=None,
                stream: bool = False, **options) -> typing.Tuple[HookState, typing.Callable]:
    """(state, hook) for DistributedDataParallel.register_comm_hook(state, hook) (or use
    dpas.torch.register, which also checks DDP's buffer broadcast). Collective: every rank calls
    it, after torch.distributed.init_process_group, with the same arguments; every argument is
    checked here, alike on every rank, so a bad one fails before training, never inside DDP's
    backward. See docs/torch.md for each argument."""
    world = dist.get_world_size(process_group)
    _check.text("rule", rule)
    f = _count("f", f)
    _check.text("schedule", schedule)
    if schedule not in SCHEDULES:
        raise InvalidValue(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}",
                           "schedule")
    threads = _count("threads", threads, minimum=0)
    byz = _ranks(byzantine_ranks, world)
    if attack is None:
        if byz and owner_attack is None:
            raise InvalidValue("byzantine_ranks given without an attack (or an owner_attack)",
                               "byzantine_ranks")
        if attack_parameters:
            raise InvalidValue("attack_parameters given without an attack", "attack_parameters")
        params: dict = {}
    if attack is not None or owner_attack is not None:
        what = f"attack {attack!r}" if attack is not None else f"owner_attack {owner_attack!r}"
        if not byz:
            raise InvalidValue(f"{what} needs byzantine_ranks (at least one rank "
                               f"between 0 and {world - 1})", "byzantine_ranks")
        if len(byz) >= world:
            raise InvalidValue(f"byzantine_ranks: all {world} ranks are Byzantine; an attack "
                               f"needs at least one honest rank", "byzantine_ranks")
    if attack is not None:
        params = _attacks.check(attack, attack_parameters, byz, world)
    a = _attacks.ATTACKS.get(attack) if attack else None
    if omniscient is not None:
        _check.flag("omniscient", omniscient)
    if a is not None and a.knows == "honest" and omniscient is False:
        raise InvalidValue(f"attack {attack!r} is made from the honest vectors: it needs "
                           f"omniscient=True (or None)", "omniscient")
    omniscient = bool(omniscient) if omniscient is not None else \
        bool(a is not None and a.knows == "honest")
    momentum = _check.real("momentum", momentum)
    if not 0.0 <= momentum < 1.0:
        raise InvalidValue(f"momentum must be in [0, 1), got {momentum}", "momentum")
    if isinstance(pre, str) or not hasattr(pre, "__iter__"):
        raise ArgumentTypeError(f"pre must be a list of pre-aggregators, got "
                                f"{type(pre).__name__} {pre!r}", "pre")
    pre = tuple(pre)
    for p in pre:
        _check.text("pre", p)
        if p not in PREAGGREGATORS:
            raise InvalidValue(f"pre: unknown pre-aggregator {p!r} (known: "
                               f"{', '.join(PREAGGREGATORS)})", "pre")
    if len(set(pre)) != len(pre):
        raise InvalidValue(f"pre lists a pre-aggregator twice: {list(pre)}", "pre")
    pre = tuple(p for p in PREAGGREGATORS if p in pre)  # bucketing, then nnm
    if "nnm" in options:
        raise InvalidValue("nnm: give pre=['nnm'] (the hook applies NNM to whole vectors)",
                           "nnm")
    bucket_size = _count("bucket_size", bucket_size, minimum=1)
    audit = _count("audit", audit)
    chunk_bytes = _count("chunk_bytes", chunk_bytes, minimum=1024)
    seed = _count("seed", seed)
    # the rule, f, threads and options as the kernel checks them, for the rows it will get
    rows = world
    if "bucketing" in pre:
        if bucket_size < 2:
            raise InvalidValue(f"bucket_size must be >= 2 with bucketing, got {bucket_size}",
                               "bucket_size")
        rows = -(-world // bucket_size)
    if schedule == "sharded":
        _check_sharded(rule, convention, world, pre)
    import numpy
    dpas.aggregate(rule, numpy.zeros((rows, 1), numpy.float32), f, convention=convention,
                   threads=threads, nnm="nnm" in pre, **options)
    if schedule == "sharded":
        if owner_attack is not None:
            _check.text("owner_attack", owner_attack)
            if owner_attack not in OWNER_ATTACKS:
                raise InvalidValue(f"owner_attack must be one of {', '.join(OWNER_ATTACKS)}, "
                                   f"got {owner_attack!r}", "owner_attack")
    elif owner_attack is not None:
        raise InvalidValue("owner_attack applies to the sharded schedule only", "owner_attack")
    if owner_attack_parameters is not None and owner_attack is None:
        raise InvalidValue("owner_attack_parameters given without an owner_attack",
                           "owner_attack_parameters")
    if owner_attack_parameters is not None and not isinstance(owner_attack_parameters, dict):
        raise ArgumentTypeError(f"owner_attack_parameters must be a dict, got "
                                f"{type(owner_attack_parameters).__name__}",
                                "owner_attack_parameters")
    oparams = {}
    for k, v in (owner_attack_parameters or {}).items():
        if k not in ("fraction", "value"):
            raise InvalidValue(f"owner_attack_parameters: unknown {k!r} (fraction, value)",
                               "owner_attack_parameters")
        oparams[k] = _check.real(f"owner_attack_parameters[{k!r}]", v)
    if not 0 < oparams.setdefault("fraction", 0.25) <= 1:
        raise InvalidValue(f"owner_attack_parameters['fraction'] must be in (0, 1], got "
                           f"{oparams['fraction']}", "owner_attack_parameters")
    oparams.setdefault("value", 1e6)
    if schedule != "sharded" and audit != 64:
        raise InvalidValue("audit applies to the sharded schedule only", "audit")
    if audit_shards is not None:
        if schedule != "sharded":
            raise InvalidValue("audit_shards applies to the sharded schedule only",
                               "audit_shards")
        audit_shards = _count("audit_shards", audit_shards)
        if audit_shards > world:
            raise InvalidValue(f"audit_shards must be at most the {world} shards, got "
                               f"{audit_shards}", "audit_shards")
    elif schedule == "sharded":
        audit_shards = default_audit_shards(world)  # ceil(N/2): p >= 1/2
    _check.flag("stream", stream)
    if stream:
        if schedule != "allgather":
            raise InvalidValue("stream applies to the allgather schedule only (the sharded "
                               "schedule holds about one gradient's shards)", "stream")
        if pre or not _is_coordinatewise(rule, convention):
            raise InvalidValue(f"stream needs a coordinate-wise rule without pre-aggregation "
                               f"(each bucket aggregated alone); {rule}"
                               f"{' with ' + ', '.join(pre) if pre else ''} needs whole vectors",
                               "stream")
        if attack is not None and _attacks.ATTACKS[attack].whole:
            raise InvalidValue(f"stream: attack {attack!r} is made from whole vectors at the "
                               f"step's end (no bucket can be aggregated before)", "stream")
    state = HookState(rule=rule, f=f, schedule=schedule, convention=convention,
                      threads=threads, options=dict(options), attack=attack,
                      attack_parameters=params, byzantine_ranks=byz, omniscient=omniscient,
                      momentum=momentum, pre=pre, bucket_size=bucket_size, audit=audit,
                      audit_shards=audit_shards,
                      owner_attack=owner_attack, owner_attack_parameters=oparams, seed=seed,
                      chunk_bytes=chunk_bytes, process_group=process_group, stream=stream)
    state._engine = _Engine(state, timeout)
    return state, _hook


def default_audit_shards(world: int) -> int:
    """The shards audited whole per step by default: ceil(N/2) of the N (none at N = 1), the
    fewest for which a lie on any one coordinate is caught in a step with probability at least
    1/2: p = 1 - (1 - A/N)(1 - m/c) (A shards drawn whole, m of a shard's c coordinates
    reported) is 1/2 + m/(2c) at A = N/2 and falls below 1/2 at A = N/2 - 1 unless m/c
    >= 2/(N + 2) (a third of every shard reported at N = 4). Each audited shard moves its N - 1
    inputs to an auditor: A/N of the gradient's coordinates checked costs (A/N)(N - 1)/N of it
    per rank, 1 + A/(2N) times the AllReduce's bytes (1.25 at even N)."""
    return (world + 1) // 2 if world > 1 else 0


def _check_sharded(rule: str, convention, world: int, pre) -> None:
    """The sharded schedule only for the rules dpas's cost model says it realises, on raw rows."""
    if pre:
        raise InvalidValue(f"the sharded schedule runs the rule on each shard of the raw rows: "
                           f"pre-aggregators ({', '.join(pre)}) need whole vectors or mix rows "
                           f"(use schedule='allgather')", "pre")
    s = dpas.DataParallelAttackSurfaceScenario(
        workload=dpas.Workload(world), fleet=dpas.Fleet(nodes=world, accelerators_per_node=1),
        dp_degree=world, gradient_bytes_per_param="4 B", checkpoint_bytes_per_param="4 B")
    row = s.cost(rule=rule, schedule="sharded", convention=convention)[0]
    if not row["realisable"]:
        raise InvalidValue(f"the sharded schedule cannot run {rule}: {row['why']} "
                           f"(use schedule='allgather')", "rule")


def host_bytes(world: int, coordinates: int, bucket_bytes: int = 25 << 20,
               pre: typing.Iterable[str] = (), stream: bool = False) -> int:
    """The allgather schedule's host memory on one rank, at most, beside DDP's own gradient and
    the model (docs/torch.md, "Host memory"): the (N, D) float32 matrix of every rank's vector
    (kept from step to step), the aggregate and each bucket's part of it (2 x 4D), and in the
    first step (or after DDP changes its buckets) one bucket's N rows more while the matrix is
    filled (N x bucket_bytes, at most the whole gradient); NNM mixes the rows into another
    (N, D) matrix. The kernels of the coordinate-wise rules work a coordinate at a time.
    stream (robust_hook(stream=True)): no matrix; the aggregate and its parts (2 x 4D) and one
    bucket's N rows, with their float32 copy for the kernel (2 N x bucket_bytes)."""
    world = _count("world", world, minimum=1)
    coordinates = _count("coordinates", coordinates)
    bucket_bytes = _count("bucket_bytes", bucket_bytes)
    g = 4 * coordinates
    if stream:
        return 2 * g + 2 * world * min(bucket_bytes, g)
    total = (world + 2) * g + world * min(bucket_bytes, g)
    if "nnm" in tuple(pre):
        total += world * g
    if "bucketing" in tuple(pre):
        total += world * g  # (the bucket means: at most N rows)
    return total


def register(ddp, rule: str, f: int, max_host_bytes: typing.Optional[int] = None,
             **kwargs) -> HookState:
    """robust_hook(rule, f, **kwargs) registered on the DistributedDataParallel model ddp; warns
    (BufferBroadcastWarning) when ddp broadcasts buffers, which the hook cannot make robust:
    construct DDP with broadcast_buffers=False (each replica keeps its own buffers).
    max_host_bytes (allgather only): refuse, before training, a model whose allgather would
    hold more than this many bytes of host memory on a rank (host_bytes)."""
    if max_host_bytes is not None:
        limit = _count("max_host_bytes", max_host_bytes, minimum=1)
        if kwargs.get("schedule", "allgather") != "allgather":
            raise InvalidValue("max_host_bytes applies to the allgather schedule only (the "
                               "sharded schedule holds about one gradient's shards)",
                               "max_host_bytes")
        d = sum(p.numel() for p in ddp.module.parameters() if p.requires_grad)
        world = dist.get_world_size(kwargs.get("process_group"))
        cap = int(getattr(ddp, "bucket_bytes_cap", 25 << 20))
        pre = tuple(kwargs.get("pre", ()))
        stream = bool(kwargs.get("stream", False))
        need = host_bytes(world, d, cap, pre, stream=stream)
        if need > limit:
            how = "2 x 4D + 2N x the largest bucket, streamed" if stream else \
                "(N + 2) x 4D + N x the largest bucket"
            raise InvalidValue(
                f"max_host_bytes: the allgather schedule holds up to {need} bytes on each rank "
                f"for this model ({d} coordinates, N = {world}: {how}"
                f"{', + N x 4D for ' + ' and '.join(pre) if pre else ''}), more than "
                f"max_host_bytes = {limit}; use stream=True (a coordinate-wise rule), "
                f"schedule='sharded', fewer ranks or a higher limit", "max_host_bytes")
    if getattr(ddp, "broadcast_buffers", False) and any(True for _ in ddp.module.buffers()):
        warnings.warn("dpas.torch: this DistributedDataParallel model broadcasts rank 0's "
                      "buffers at every forward, around the robust hook: a Byzantine rank 0 "
                      "sets every replica's buffers (BatchNorm statistics). Construct it with "
                      "broadcast_buffers=False.", BufferBroadcastWarning, stacklevel=2)
    state, hook = robust_hook(rule, f, **kwargs)
    ddp.register_comm_hook(state, hook)
    return state


class _Failure:
    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


def _unwrap(fut):
    v = fut.value()
    if isinstance(v, _Failure):
        raise StepFailed(v.message)
    return v


def _hook(state: HookState, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    return state._engine.submit(bucket)


# ---- the engine --------------------------------------------------------------------------------

def _timeout_of(pg):
    """The timeout a process group was made with (torch 1.13 keeps it in its options), or None."""
    try:
        return pg.options._timeout
    except AttributeError:
        return None


def _hook_group(pg, timeout):
    """The hook's own gloo group, over the ranks of pg (None: the whole world), with pg's timeout
    (the default group's when pg is None) unless timeout is given. torch.distributed.new_group
    is collective over the whole world, for every group: when pg is a subgroup (one data-parallel
    group of a DP x TP/PP layout), every rank all-gathers its group's ranks and every rank
    creates every distinct group, in one order, keeping its own: so every rank of the world
    must call robust_hook together, as DDP's own construction requires of its group."""
    default = dist.distributed_c10d._get_default_group()
    if timeout is None:
        timeout = _timeout_of(pg if pg is not None else default)
    kw = {"timeout": timeout} if timeout is not None else {}
    world = dist.get_world_size()
    if pg is None or dist.get_world_size(pg) == world:
        ranks = list(range(world)) if pg is None else dist.get_process_group_ranks(pg)
        return dist.new_group(ranks, backend="gloo", **kw)
    mine = sorted(dist.get_process_group_ranks(pg))
    every: list = [None] * world
    dist.all_gather_object(every, mine)
    groups = sorted({tuple(g) for g in every})
    own = None
    for g in groups:
        made = dist.new_group(list(g), backend="gloo", **kw)
        if list(g) == mine:
            own = made
    return own


class _Job:
    __slots__ = ("index", "last", "buf", "params", "fut", "x", "sent", "known", "rows",
                 "result", "dtype", "device", "d", "shard", "padded", "error")

    def __init__(self, index, last, buf, params, fut):
        self.index, self.last, self.buf, self.params, self.fut = index, last, buf, params, fut
        self.dtype, self.device, self.d = buf.dtype, buf.device, buf.numel()
        self.x = self.sent = self.known = self.rows = self.result = self.shard = None
        self.padded = self.error = None


class _Engine:
    def __init__(self, state: HookState, timeout):
        self.state = state
        self.group = _hook_group(state.process_group, timeout)
        self.comm = Comm(self.group, state.chunk_bytes)
        self.rank, self.world = self.comm.rank, self.comm.world
        self.f_eff = state.f
        self.active = list(range(self.world))  # the unbanned ranks
        self.whole_rule = not _is_coordinatewise(state.rule, state.convention) or \
            "nnm" in state.pre
        a = _attacks.ATTACKS.get(state.attack) if state.attack else None
        self.attack = a
        self.defer = a is not None and a.whole
        self.honest = [r for r in range(self.world) if r not in state.byzantine_ranks]
        self.ctx = _attacks.Context(self._aggregate_plain, state.byzantine_ranks, self.world)
        self.momenta: dict = {}
        self.matrix: typing.Optional[torch.Tensor] = None  # the allgather's (N, D), kept
        self.layout: typing.List[int] = []                   # its buckets' sizes
        self.jobs: typing.List[_Job] = []
        self.reserved: typing.Optional[torch.Tensor] = None  # _reserve_matrix's
        self.failure: typing.Optional[str] = None
        self.step = 0
        self.q: "queue.Queue" = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="dpas-torch-hook", daemon=True)
        self.thread.start()

    # -- the hook's side (DDP's thread) --
    def submit(self, bucket) -> torch.futures.Future:
        buf = bucket.buffer()
        if buf.dtype not in _DTYPES:
            raise TypeError(f"dpas.torch: gradient buckets must be float32, bfloat16 or "
                            f"float16, got {buf.dtype}")
        params = list(bucket.parameters()) if hasattr(bucket, "parameters") else None
        index = bucket.index() if hasattr(bucket, "index") else 0
        last = bucket.is_last() if hasattr(bucket, "is_last") else True
        fut: torch.futures.Future = torch.futures.Future()
        self.state.calls += 1
        job = _Job(index, last, buf.detach(), params, fut)
        # the worker completes fut with a tensor or a _Failure; a failure raises in the
        # callback, so that the Future DDP waits on carries a real error (not a value)
        out = fut.then(_unwrap)
        if last:  # nothing of the backward is left to overlap: once the worker has done the
            # step's other buckets (in order: the messages of one group must keep their order),
            # the last one is done here, without a hand-off to the worker's thread
            with self.comm.timed("end of step"):
                with self.comm.timed("wait for the worker"):
                    self.q.join()
                self._process(job)
        else:
            self.q.put(job)
        return out

    def close(self) -> None:
        if self.thread.is_alive():
            self.q.put(None)
            self.thread.join()
        self.q = None
        dist.destroy_process_group(self.group)

    # -- the worker thread --
    def _run(self) -> None:
        while True:
            job = self.q.get()
            try:
                if job is None:
                    return
                self._process(job)
            finally:
                self.q.task_done()

    def _process(self, job: _Job) -> None:
        try:
            self.jobs.append(job)
            if len(self.jobs) == 1 and (self.state.schedule == "sharded" or self.state.stream):
                self.comm.echo_start()  # (allgather digests its outcome, and its rows only
                # when the outcomes differ: _finish_allgather; streamed, its rows as they come,
                # since they are not kept)
            self._bucket(job)
            if job.last:
                self._finish()
        except BaseException as e:  # a collective failed (a peer died, the timeout): the
            # step cannot be agreed on; fail this rank's Futures rather than hang them
            err = StepFailed(f"dpas.torch: step {self.step}: the hook's transport failed on "
                             f"rank {self.rank}: {_message(e)}")
            for j in self.jobs:
                if not j.fut.done():
                    j.fut.set_result(_Failure(str(err)))
            self.jobs, self.failure = [], None
            self.comm.echo = None
            self.step += 1

    def _local(self, what: str, fn, default=None):
        """A computation of this rank alone: its exception becomes the step's failure (reported
        to every rank at the agreement) instead of leaving the protocol."""
        try:
            return fn()
        except Exception as e:
            if self.failure is None:
                self.failure = f"{what}: {_message(e)}"
            return default() if callable(default) else default

    def _bucket(self, job: _Job) -> None:
        st = self.state
        zeros = lambda: torch.zeros(job.d, dtype=job.dtype)  # noqa: E731
        job.x = self._local("preparing its bucket", lambda: self._prepare(job), zeros)
        byz = st.is_byzantine
        if st.attack is not None and st.omniscient:
            # the simulation's omniscience: the honest ranks send their vector to the Byzantine
            # ranks (its bytes are the simulation's, not the schedule's)
            full = torch.empty((self.world, job.d), dtype=job.dtype)
            self.comm.allgather_rows(job.x, full, "simulation",
                                     to=st.byzantine_ranks if not byz else (),
                                     frm=self.honest if byz else ())
            if byz:
                job.known = full[self.honest]
        if self.defer:
            return  # the attack needs the whole honest vectors: every exchange at the end
        job.sent = self._local("attack", lambda: self._attack_bucket(job), lambda: job.x) \
            if byz and st.attack is not None else job.x
        self._exchange(job)

    def _prepare(self, job: _Job) -> torch.Tensor:
        x = job.buf.to("cpu").contiguous()
        beta = self.state.momentum
        if beta == 0.0:
            return x
        keys = job.params if job.params else [("bucket", job.index)]
        sizes = [p.numel() for p in job.params] if job.params else [job.d]
        if sum(sizes) != job.d:
            raise ValueError(f"bucket {job.index}: its parameters hold {sum(sizes)} coordinates, "
                             f"its buffer {job.d} (sparse gradients are not supported)")
        out = torch.empty_like(x)
        off = 0
        for key, n in zip(keys, sizes):
            g = x[off:off + n].float()
            m = self.momenta.get(key)  # m = beta m + (1 - beta) g in float32, m starts at 0
            m = g * (1 - beta) if m is None else m * beta + g * (1 - beta)
            self.momenta[key] = m
            out[off:off + n] = m.to(x.dtype)
            off += n
        return out

    def _attack_rows(self, known_rows, whole: bool):
        import numpy as np
        st = self.state
        nbyz = len(st.byzantine_ranks)
        self.ctx.step = self.step
        out = _attacks.rows(st.attack, st.attack_parameters,
                            np.ascontiguousarray(known_rows), nbyz, self.ctx)
        if whole and self.ctx.last_factor is not None:
            st.attack_factor = self.ctx.last_factor
        return out[st.byzantine_ranks.index(self.rank)]

    def _attack_bucket(self, job: _Job) -> torch.Tensor:
        known = job.known if job.known is not None else job.x.reshape(1, -1)
        row = self._attack_rows(known.float().numpy(), False)
        return torch.from_numpy(row).to(job.dtype)

    def _exchange(self, job: _Job) -> None:
        if self.state.schedule == "allgather":
            # where the rows land; a rank that cannot hold them (the allocation fails: torch's
            # RuntimeError, numpy's MemoryError) says so in its status, which goes with the last
            # bucket, and takes part in the exchange keeping nothing: every rank then fails the
            # step alike, with this rank's reason (issue 28: host memory)
            job.rows = self._local("holding the rows it receives", lambda: torch.empty(
                (self.world, job.d), dtype=job.dtype) if self.state.stream else
                self._rows_target(job))
            if job.last and not self.state.stream and self.failure is None:
                self._local("holding the step's matrix", self._reserve_matrix)
            # the unbanned ranks send to each other; a banned rank sends and takes nothing
            to, frm = (self.active, self.active) if self.rank in self.active else \
                ((), (self.rank,))
            if job.last:  # the step's status travels with its last bucket: every local step
                # (momentum, attack) is behind, only the kernel, the same on every rank, ahead
                block = torch.frombuffer(bytearray(status_block(self.failure)), dtype=torch.uint8)
                self.statuses = torch.zeros((self.world, STATUS_BYTES), dtype=torch.uint8)
                self.comm.allgather_rows(job.sent, job.rows, "schedule", to=to, frm=frm,
                                         block=block, blocks=self.statuses)
            else:
                self.comm.allgather_rows(job.sent, job.rows, "schedule", to=to, frm=frm)
            if self.state.stream and job.rows is not None:  # the rule on this bucket now,
                # its rows released
                self._stream_bucket(job)
        else:
            from . import _sharded
            _sharded.scatter(self, job)

    def _finish(self) -> None:
        st = self.state
        jobs = self.jobs
        st.bucket_sizes = [j.d for j in jobs]
        if self.defer:
            self._deferred_attack(jobs)
            for j in jobs:
                self._exchange(j)
        if st.schedule == "allgather":
            results, error = self._finish_stream(jobs) if st.stream else \
                self._finish_allgather(jobs)
        else:
            from . import _sharded
            results, error = _sharded.finish(self, jobs)
        for j, r in zip(jobs, results if error is None else [None] * len(jobs)):
            if error is not None:
                j.fut.set_result(_Failure(error))
            else:
                j.fut.set_result(r.to(j.device).view_as(j.buf))
        st.steps += 1
        self.step += 1
        self.jobs, self.failure = [], None

    def _deferred_attack(self, jobs) -> None:
        byz = self.state.is_byzantine
        for j in jobs:
            j.sent = j.x
        if not byz:
            return

        def run():
            known = torch.cat([j.known.float() for j in jobs], dim=1).numpy()
            row = self._attack_rows(known, True)
            off = 0
            for j in jobs:
                j.sent = torch.from_numpy(row[off:off + j.d].copy()).to(j.dtype)
                off += j.d
        self._local("attack", run)

    # -- allgather: status, then the whole aggregate --
    def _error_from(self, messages: typing.List[typing.Optional[str]]) -> typing.Optional[str]:
        failed = [r for r, m in enumerate(messages) if m]
        if not failed:
            return None
        r0 = failed[0]
        which = "rank" if len(failed) == 1 else "ranks"
        return (f"dpas.torch: step {self.step} failed on {which} "
                f"{', '.join(map(str, failed))}: rank {r0}: {messages[r0]}")

    def confirm(self, digests: typing.Optional[bytes] = None) -> typing.Optional[str]:
        """The echo round and the agreement on its outcome (Comm.confirm): None when every
        honest rank holds the same bytes from every unbanned rank; otherwise the error every
        honest rank raises, in this step. A rank the agreement found proven to have sent two
        honest ranks different bytes is banned here, by every honest rank alike (its messages
        are ignored from now on, f_effective is one less); bans past f fail the step. The
        senders this rank saw split are also recorded as its own evidence (state.detections,
        "echo"), which bans no one: only what every rank agrees on decides."""
        ok, bans, split = self.comm.confirm(self.state.f, self.active, self.f_eff, digests)
        for s in split:
            self.state.detections.append({"step": self.step, "rank": s, "why": (
                "echo: the ranks' digests of its messages differ (it sent different bytes to "
                "different ranks, or a rank misreported what it received)")})
        for s in bans:
            self.ban(s, "equivocated: the echo proved it sent different bytes to different "
                        "honest ranks (more than f ranks contradict each digest reported)")
        if self.f_eff < 0:
            return (f"dpas.torch: step {self.step}: more ranks banned than f = {self.state.f} "
                    f"({', '.join(map(str, sorted(self.state.banned)))}): the rule's bound no "
                    f"longer holds")
        if ok:
            return None
        ab = self.comm.abstained
        if ab:  # (every sender consistent without the reports of ranks that reported zeros)
            return (f"dpas.torch: step {self.step}: rank{'s' if len(ab) > 1 else ''} "
                    f"{', '.join(map(str, ab))} could not hold what it received (a local "
                    f"failure after the statuses); no rank uses this step's data")
        return (f"dpas.torch: step {self.step}: the ranks did not all receive the same bytes "
                f"from every rank (a rank equivocated, or misreported what it received); no "
                f"rank uses this step's data")

    def ban(self, r: int, why: str) -> None:
        """Every honest rank calls it alike, in the same step: r's messages are no longer
        taken, and f is one less (r is Byzantine)."""
        self.active = [a for a in self.active if a != r]
        self.f_eff -= 1
        self.state.banned[r] = why
        self.state.detections.append({"step": self.step, "rank": r, "why": why})

    def _stream_bucket(self, job: _Job) -> None:
        """stream: the rule on one bucket's rows (the unbanned ranks'), kept as job.result (or
        the kernel's error, as job.error: the same on every rank that holds the same rows), and
        the rows released. A row non-finite in this bucket counts against f in this bucket
        (per bucket, not over the whole gradient)."""
        with self.comm.timed("rule"):
            if self.rank not in self.active:
                job.result = job.rows[self.rank].float().clone()
            else:
                m = job.rows.float() if len(self.active) == self.world else \
                    job.rows[self.active].float()
                try:
                    job.result = torch.from_numpy(self._aggregate_plain(m.numpy()))
                except (ValueError, TypeError, MemoryError) as e:
                    job.error = f"dpas.torch: step {self.step}: {_message(e)}"
        job.rows = None

    def _finish_stream(self, jobs):
        """stream: the outcome's agreement as below, on the buckets' results; the rows were
        digested as they came (the echo's record) and are gone, so a step whose outcomes
        differ bans whom the digests prove and fails alike (the next goes on without it)."""
        statuses = self.statuses
        error = None
        if self.rank in self.active:
            error = self._error_from([status_message(bytes(statuses[r].numpy().tobytes()))
                                      if r in self.active else None
                                      for r in range(self.world)])
        if error is None:
            error = next((j.error for j in jobs if j.error is not None), None)
        if error is None and any(j.result is None for j in jobs):
            error = f"dpas.torch: step {self.step} failed on rank {self.rank}: {self.failure}"
        with self.comm.timed("digest"):
            h = hashlib.sha256(b"E" + error.encode() if error is not None else b"A")
            if error is None:
                for j in jobs:
                    h.update(j.result.numpy().data)
        active = list(self.active)
        if not self.comm.confirm_outcome(h.digest()[:ECHO_DIGEST], self.state.f, active):
            echo = self.confirm()  # (the rows' digests, recorded as they came)
            if echo is not None:
                return None, echo
            if self.active != active:
                return None, (f"dpas.torch: step {self.step}: rank "
                              f"{', '.join(str(r) for r in active if r not in self.active)} "
                              f"banned (it sent different bytes to different ranks); the "
                              f"step's rows were streamed through the rule and are gone, so no "
                              f"rank uses this step's data")
            # (every sender's rows the same on every honest rank: so is every honest outcome)
        else:
            self.comm.echo = None
        if error is not None:
            return None, error
        # each bucket's aggregate into DDP's own bucket (the sends are done, and the rows are
        # gone): DDP keeps a hook's result until the next step's end, so a fresh tensor would
        # hold a second gradient's worth through the next step; the bucket is what DDP's
        # AllReduce hook returns too
        return [j.buf.copy_(j.result.view(-1).to(j.device, j.dtype)) for j in jobs], None

    def _finish_allgather(self, jobs):
        """The outcome first, then the echo on the outcome: every rank aggregates what it
        received (or finds the step's error from the statuses and the rule), and the ranks
        agree whether every unbanned rank's outcome (the aggregate's bytes, or the error's
        text) has one digest. The rule is deterministic, so honest ranks that hold the same
        rows and statuses end with the same outcome, and the same outcome is all a replica
        takes from the step: one digest of D coordinates, not N. Only when the outcomes differ
        are the rows and statuses echoed (from the matrix they are still in) to find, and ban
        where the digests prove it, the rank that sent different bytes to different ranks."""
        rows = [j.rows for j in jobs]
        statuses = self.statuses
        for j in jobs:  # (rows holds the only reference: _matrix releases each bucket's)
            j.rows = None
        m = None if any(r is None for r in rows) else \
            self._local("gathering the rows", lambda: self._matrix(rows))
        self.reserved = None
        active = list(self.active)
        error, parts, h = self._outcome_parts(m, statuses, jobs)
        if self.comm.confirm_outcome(h, self.state.f, active):
            return (None, error) if error is not None else (parts, None)
        # the outcomes differ: which rank's bytes? (the rows' and statuses' digests, per sender)
        with self.comm.timed("digest"):
            mine = b"".join(self._row_digest(m, statuses, r) for r in range(self.world))
        outliers = self.comm.outliers
        echo = self.confirm(mine)
        if echo is not None:
            return None, echo
        if self.active != active:  # every sender left holds the same bytes on every honest
            # rank: the outcome on them, without the banned rank
            error, parts, _ = self._outcome_parts(m, statuses, jobs)
            return (None, error) if error is not None else (parts, None)
        # every rank received the same bytes from every rank, yet the outcomes differ: a rank's
        # own computation failed after its status had gone (an allocation, the kernel's
        # memory); every rank fails the step alike rather than that rank alone
        return None, (f"dpas.torch: step {self.step}: rank{'s' if len(outliers) > 1 else ''} "
                      f"{', '.join(map(str, outliers))} could not compute the outcome the "
                      f"others did from the same rows (a local failure after the statuses: "
                      f"memory, or a fault); no rank uses this step's data")

    def _outcome_parts(self, m, statuses, jobs):
        """(error or None, each bucket's part of the aggregate, the outcome's 16-byte digest):
        the parts are made before the agreement, so that nothing left to allocate after it
        can fail one rank alone."""
        error, agg = self._outcome(m, statuses)
        parts = None
        if error is None:
            try:
                parts = self._split(agg, jobs)
            except (MemoryError, RuntimeError) as e:
                error = (f"dpas.torch: step {self.step} failed on rank {self.rank}: holding "
                         f"the aggregate: {_message(e)}")
        with self.comm.timed("digest"):
            h = hashlib.sha256(b"E" + error.encode() if error is not None else b"A")
            if error is None:
                h.update(agg.numpy().data)
        return error, parts, h.digest()[:ECHO_DIGEST]

    def _reserve_matrix(self) -> None:
        """Before the last bucket's status goes: the (N, D) matrix the step's rows will be
        copied into when they did not land in the kept one (the first step, a new layout), so
        that a rank that cannot hold it says so in its status (every rank then fails the step
        with its reason) instead of failing alone after it. The same peak as allocating it
        after the last bucket: its rows' buffer is already allocated."""
        self.reserved = None
        rows = [j.rows for j in self.jobs]
        if any(r is None for r in rows) or self._kept(rows) or \
                (len(rows) == 1 and rows[0].dtype == torch.float32):
            return
        self.reserved = torch.empty((rows[0].shape[0], sum(r.shape[1] for r in rows)))

    def _row_digest(self, m, statuses, r: int) -> bytes:
        """This rank's digest of what sender r sent it in the step: its row of the matrix (the
        buckets side by side in float32, which every dtype converts to exactly) and its status
        block; zeros for a rank not taken (banned), as every rank reports it alike."""
        if r not in self.active or m is None:
            return bytes(ECHO_DIGEST)
        h = hashlib.sha256(m[r].numpy().data)
        h.update(statuses[r].numpy().data)
        return h.digest()[:ECHO_DIGEST]

    def _outcome(self, m, statuses):
        """(the step's error or None, the aggregate) from the matrix and the statuses."""
        if m is not None and self.rank not in self.active:  # banned: it takes no rank's rows
            # (its own result, its own vector: a Byzantine rank's gradient is nobody's concern)
            return None, m[self.rank].clone()
        if self.rank in self.active:  # (first: a rank that could not hold the rows said so)
            error = self._error_from([status_message(bytes(statuses[r].numpy().tobytes()))
                                      if r in self.active else None
                                      for r in range(self.world)])
            if error is not None:
                return error, None
        if m is None:  # (this rank could not even hold the rows: its own error, which the
            # outcome's echo finds different from the others')
            return (f"dpas.torch: step {self.step} failed on rank {self.rank}: "
                    f"{self.failure}"), None
        try:
            return None, self._aggregate_whole(m, self.active)
        except (ValueError, TypeError) as e:  # the same rows on every rank: the same error
            # on every rank
            return f"dpas.torch: step {self.step}: {_message(e)}", None
        except (MemoryError, RuntimeError) as e:  # (an allocation: this rank's alone; the
            # outcomes' agreement sees it differ and fails every rank alike)
            return (f"dpas.torch: step {self.step} failed on rank {self.rank}: "
                    f"aggregating: {_message(e)}"), None

    def _rows_target(self, job: _Job) -> torch.Tensor:
        """Where bucket job's N rows are received: float32 buckets straight into their columns
        of a (N, D) matrix kept from step to step while DDP's layout stays (no concatenation,
        no fresh pages each step); otherwise a matrix of their own."""
        i = len(self.jobs) - 1
        off = sum(j.d for j in self.jobs[:-1])
        whole = self.matrix
        if (whole is not None and job.dtype == torch.float32 and i < len(self.layout) and
                self.layout[i] == job.d and all(j.dtype == torch.float32 for j in self.jobs)):
            return whole[:, off:off + job.d]
        return torch.empty((self.world, job.d), dtype=job.dtype)

    def _kept(self, rows: typing.List[torch.Tensor]) -> bool:
        """Whether every bucket's rows landed in the matrix kept from the last steps."""
        whole = self.matrix
        return (whole is not None and len(rows) == len(self.layout) and
                [r.shape[1] for r in rows] == self.layout and
                all(r.dtype == torch.float32 and r.data_ptr() == whole[:, off:].data_ptr()
                    for r, off in zip(rows, itertools.accumulate([0] + self.layout[:-1]))))

    def _keep(self, rows: typing.List[torch.Tensor]) -> bool:
        """Whether this layout's rows are worth a matrix kept for the next steps."""
        sizes = [r.shape[1] for r in rows]
        return (self.state.schedule == "allgather" and len(rows[0]) == self.world and
                all(r.dtype == torch.float32 for r in rows) and sum(sizes) >= 1 << 14)

    def _matrix(self, rows: typing.List[torch.Tensor]) -> torch.Tensor:
        """The (N, D) float32 matrix of the step: the kept one when every bucket landed in it.
        Otherwise (the first step, or a new layout) one matrix, filled bucket by bucket, each
        bucket's rows released (rows[i] = None: the caller holds no other reference) once
        copied: the peak is the matrix and one bucket's rows more, not two matrices."""
        if self._kept(rows):
            return self.matrix
        sizes = [r.shape[1] for r in rows]
        keep = self._keep(rows)
        if len(rows) == 1 and rows[0].dtype == torch.float32:
            if keep:  # (its pages are touched only when the next step's rows land in it; one
                # that cannot be had is not kept: the next step receives into a buffer of its
                # own, as this one did)
                try:
                    self.layout, self.matrix = sizes, torch.empty((self.world, sizes[0]))
                except (MemoryError, RuntimeError):
                    self.layout, self.matrix = [], None
            return rows[0].contiguous()
        m = self.reserved
        self.reserved = None
        if m is None or tuple(m.shape) != (rows[0].shape[0], sum(sizes)):
            m = torch.empty((rows[0].shape[0], sum(sizes)))
        if keep:
            self.layout, self.matrix = sizes, m  # (the next steps receive straight into it)
        off = 0
        for i, d in enumerate(sizes):
            m[:, off:off + d].copy_(rows[i])
            rows[i] = None
            off += d
        return m

    def _aggregate_whole(self, m, select=None) -> torch.Tensor:
        """The rule on the step's (N, D) float32 matrix m (or a list of buckets' rows: made
        into one by _matrix); select: the rows taken (the unbanned ranks), when some rank is
        banned."""
        st = self.state
        if isinstance(m, list):
            m = self._matrix(m)
        if select is not None and len(select) < m.shape[0]:
            m = m[list(select)].contiguous()
        with self.comm.timed("rule"):
            out = torch.from_numpy(self._aggregate_plain(m.numpy()))
        if st.keep_gathered:
            st.last_gathered = m.clone()
            st.last_aggregate = out.clone()
        return out

    def _aggregate_plain(self, m, f: typing.Optional[int] = None):
        """The rule with its pre-aggregation on the rows m ((n, d) float32 numpy): bucketing
        (Karimireddy et al. 2022: the rows in a random order, shared by every rank through the
        seed and the step, averaged in groups of bucket_size), then NNM and the rule."""
        import numpy as np
        st = self.state
        f = self.f_eff if f is None else f
        if "bucketing" in st.pre:
            g = np.random.default_rng([st.seed, self.step])
            perm = g.permutation(m.shape[0])
            s = st.bucket_size
            m = np.stack([m[perm[i:i + s]].mean(axis=0, dtype=np.float64).astype(np.float32)
                          for i in range(0, m.shape[0], s)])
        return dpas.aggregate(st.rule, np.ascontiguousarray(m), f, convention=st.convention,
                              threads=st.threads, nnm="nnm" in st.pre, **st.options)

    def _split(self, agg: torch.Tensor, jobs) -> typing.List[torch.Tensor]:
        """Each bucket's part, in a tensor of its own: DDP (torch 1.13) reads a hook's result
        as if it began its storage (a slice at an offset lands on the wrong coordinates)."""
        out, off = [], 0
        for j in jobs:
            part = agg[off:off + j.d]
            out.append(part.to(j.dtype) if off == 0 else part.to(j.dtype, copy=True))
            off += j.d
        return out
