# SPDX-License-Identifier: Apache-2.0
"""Bytes as the wire sees them: dpas's prediction, the hook's own protocol, the transport's framing.

dpas's cost row (predicted_bytes) counts the gradient bytes a schedule moves. What a rank writes
to its sockets is more: the hook's protocol (its status rounds, and the sharded schedule's
commitments, audits and objections), the sharded schedule's padding (a bucket whose length is
not a multiple of N is padded to the next multiple), and the transport's framing: a fixed number
of bytes per message. hook_bytes() predicts all of it, exactly, from the bucket sizes;
FRAMING holds the framing, measured once per backend (``python3 -m dpas.torch.wire`` measures it
again: the bytes `wchar` counts in /proc/self/io around each collective, minus the payload).

gloo (torch 1.13, Debian 12, TCP on loopback), measured at N = 2, 3, 4 and payloads of 4 B to
64 MB: every point-to-point message (isend/irecv, each peer of an all_to_all) costs 144 bytes
on top of its payload, whatever its size; every step of a ring all_gather or all_reduce costs
288 bytes per rank (a ring all_gather of N ranks has N - 1 steps, a ring all_reduce 2 (N - 1)).
Other backends: unknown (NCCL's framing is not measured here); hook_bytes then refuses to guess.
"""
import dataclasses
import fractions
import typing

import dpas
from dpas import _check
from dpas.errors import InvalidValue


@dataclasses.dataclass(frozen=True)
class Framing:
    message: int     # bytes per point-to-point message
    ring_step: int   # bytes per rank per step of a ring all_gather / all_reduce


FRAMING = {"gloo": Framing(message=144, ring_step=288)}


def predicted_bytes(schedule: str, rule: str, parameters: int, world: int,
                    bytes_per_param: int = 4, convention: typing.Optional[str] = None
                    ) -> typing.Union[int, fractions.Fraction]:
    """dpas's prediction of the gradient bytes one rank sends per step: the library's cost row
    (bytes_per_worker) for a workload of `parameters` gradient coordinates, `bytes_per_param`
    bytes each, on N = world replicas, one per node. Exact: an int, or a Fraction when the
    schedule's share is not a whole number of bytes (sharded: 2 (N - 1)/N x the gradient)."""
    parameters = _check.int64("parameters", parameters, minimum=1)
    world = _check.int64("world", world, minimum=1)
    bytes_per_param = _check.int64("bytes_per_param", bytes_per_param, minimum=1)
    s = dpas.DataParallelAttackSurfaceScenario(
        workload=dpas.Workload(parameters),
        fleet=dpas.Fleet(nodes=world, accelerators_per_node=1), dp_degree=world,
        gradient_bytes_per_param=f"{bytes_per_param} B",
        checkpoint_bytes_per_param=f"{bytes_per_param} B")
    row = s.cost(rule=rule, schedule=schedule, convention=convention)[0]
    if not row["realisable"]:
        raise InvalidValue(f"{schedule} cannot run {rule}: {row['why']}", "schedule")
    v = row["bytes_per_worker"]
    if isinstance(v, fractions.Fraction) and v.denominator == 1:
        return int(v)
    return v


def hook_bytes(schedule: str, world: int, buckets: typing.Sequence[typing.Tuple[int, int]],
               audit: int = 64, chunk_bytes: int = 4 << 20,
               backend: str = "gloo", f: int = 0,
               audit_shards: typing.Optional[int] = None) -> typing.Dict[str, int]:
    """The bytes one rank writes per step with the hook (no attack simulation, no ban), for
    buckets [(coordinates, bytes per coordinate), ...]: {"schedule": the gradient bytes with
    the sharded padding, "protocol": the status and verification rounds' payload, "framing":
    the transport's bytes per message, "total"}. f: the hook's f, which sets the
    agreements' rounds (_comm.echo_rounds: f + 1 all_gathers by EIG, or the phase king's
    3 (f + 1) after one past EIG_BYTES; allgather's with every outcome alike). audit_shards
    (sharded; None: the hook's default, half the shards rounded up, ceil(N/2)): the
    shards audited whole, whose inputs go to their auditors; which ranks send them is drawn
    each step, so the figures are then the mean over the ranks (a Fraction where it is not
    whole). schedule "allreduce" is DDP's own AllReduce (gloo's ring: 2 (N - 1)/N of each
    bucket, exact when N divides its bytes)."""
    from . import _sharded, _status
    from ._comm import ECHO_DIGEST, message_count
    world = _check.int64("world", world, minimum=1)
    if backend not in FRAMING:
        raise InvalidValue(f"the framing of backend {backend!r} is not measured (known: "
                           f"{', '.join(FRAMING)})", "backend")
    fr = FRAMING[backend]
    n1 = world - 1
    f = _check.int64("f", f)
    # the echoes: allgather agrees on the digest of each rank's outcome (16 bytes), sharded
    # on each rank's N digests of what it received (Comm.confirm_outcome, Comm.confirm: the
    # EIG's f + 1 relay rounds, or past EIG_BYTES one all_gather and the phase king's
    # 3 (f + 1) rounds of 2N bytes)
    from ._comm import echo_rounds
    outcome_echo = echo_rounds(world, f, ECHO_DIGEST, bitwise=True)
    echo = echo_rounds(world, f, ECHO_DIGEST * world)
    sched = proto = frame = 0
    if schedule == "allreduce":
        for d, w in buckets:
            sched += fractions.Fraction(2 * n1 * d * w, world) if world > 1 else 0
            frame += 2 * n1 * fr.ring_step
        sched = int(sched) if fractions.Fraction(sched).denominator == 1 else sched
    elif schedule == "allgather":
        for i, (d, w) in enumerate(buckets):
            last = i == len(buckets) - 1  # the status rides with the last bucket
            sched += n1 * d * w
            sizes = [d * w] + ([_status.STATUS_BYTES] if last else [])
            frame += n1 * message_count(sizes, chunk_bytes) * fr.message
        proto += n1 * _status.STATUS_BYTES
        proto += n1 * sum(outcome_echo)
        frame += len(outcome_echo) * n1 * fr.ring_step
    elif schedule == "sharded":
        shards = [-(-d // world) for d, _ in buckets]
        published = [c * w for c, (_, w) in zip(shards, buckets)]
        for nbytes in published:  # the scatter, bucket by bucket
            sched += n1 * nbytes
            frame += n1 * message_count([nbytes], chunk_bytes) * fr.message
        sched += n1 * sum(published)  # the publication, every bucket's shard at the end
        frame += n1 * message_count(published, chunk_bytes) * fr.message
        rounds = [_sharded.a1_bytes(world), 1 + world]  # the agreement, the objections
        A = ((world + 1) // 2 if world > 1 else 0) if audit_shards is None else \
            min(_check.int64("audit_shards", audit_shards), world)
        A = A if world > 1 else 0
        if audit > 0 or A > 0:
            rounds += echo_rounds(world, f, 16, bitwise=True)  # the reveal, agreed
        if audit > 0:
            rounds += [_sharded.r4_bytes(world, shards, audit)]  # the reports
        # the whole-shard audits: each of A shards' inputs to its auditor, from every active
        # rank but the auditor; a rank sends on average A (N - 1)/N shards
        share = fractions.Fraction(A * n1, world)
        proto += share * sum(published)
        frame += share * message_count(published, chunk_bytes) * fr.message
        rounds += echo + echo  # after the agreement, and before the verdict
        proto += n1 * sum(rounds)
        frame += len(rounds) * n1 * fr.ring_step
    else:
        raise InvalidValue(f"schedule must be allreduce, allgather or sharded, got {schedule!r}",
                           "schedule")
    def exact(v):
        v = fractions.Fraction(v)
        return int(v) if v.denominator == 1 else v
    return {"schedule": exact(sched), "protocol": exact(proto), "framing": exact(frame),
            "total": exact(sched + proto + frame)}


# ---- measurement -------------------------------------------------------------------------------

def _wchar() -> int:
    with open("/proc/self/io") as fh:
        for line in fh:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def _measure_worker(rank, world, port, out):
    from datetime import timedelta
    import json
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=timedelta(seconds=60))
    rows = []
    for d in (1, 1000, 1 << 20):
        x = torch.ones(d)
        gathered = torch.empty((world, d))
        peer = (rank + 1) % world
        src = (rank - 1) % world

        def p2p():
            if world > 1:
                a = dist.isend(x, peer)
                b = dist.irecv(gathered[0], src)
                a.wait()
                b.wait()
        ops = {"message": (p2p, 4 * d if world > 1 else 0, 1 if world > 1 else 0),
               "ring_step": (lambda: dist.all_gather(list(gathered.unbind(0)), x),
                             (world - 1) * 4 * d, world - 1)}
        for name, (op, payload, units) in ops.items():
            op()
            dist.barrier()
            w0 = _wchar()
            op()
            w1 = _wchar()
            rows.append({"what": name, "bytes": 4 * d, "written": w1 - w0, "payload": payload,
                         "per_unit": (w1 - w0 - payload) / units if units else None})
    everyone = [None] * world
    dist.all_gather_object(everyone, rows)
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(everyone, fh)
    dist.destroy_process_group()


def measure(worlds=(2, 3, 4)) -> typing.List[dict]:
    """The framing measured here: for each N, payload size and kind, the bytes per message
    (p2p) or per ring step (all_gather) every rank wrote beyond the payload."""
    import json
    import os
    import socket
    import tempfile
    import torch.multiprocessing as mp
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for world in worlds:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            path = os.path.join(tmp, f"{world}.json")
            mp.start_processes(_measure_worker, args=(world, port, path), nprocs=world,
                               start_method="spawn")
            with open(path) as fh:
                for r, rows in enumerate(json.load(fh)):
                    for row in rows:
                        out.append(dict(row, world=world, rank=r))
    return out


def main() -> int:
    rows = measure()
    print("| N | collective | payload per message | bytes written | framing per unit |")
    print("|---|---|---|---|---|")
    seen = set()
    for r in rows:
        key = (r["world"], r["what"], r["bytes"], r["written"])
        if key in seen:
            continue
        seen.add(key)
        print(f"| {r['world']} | {r['what']} | {r['bytes']} | {r['written']} | "
              f"{r['per_unit']:g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
