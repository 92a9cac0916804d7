# SPDX-License-Identifier: Apache-2.0
"""The hook's transport: point-to-point messages on a process group of its own, counted.

The hook's bulk data moves as isend/irecv pairs (gloo's all_gather on large buffers is slow on
loopback: a 16 MB all_gather took 2.1 s where the all_reduce of the same tensor took 49 ms;
point-to-point messages of at most ``chunk`` bytes each took 80 ms), each message at most
``chunk_bytes``; the small, fixed-size rounds (statuses, commitments, audit samples) are
all_gathers of byte blocks. Every message is counted (payload bytes, messages, all_gather
rounds) so that the bytes the transport writes can be predicted (dpas.torch.wire).

Only the worker thread of one HookState uses a Comm, on a process group created for it, so its
collectives never interleave with DDP's own (its buffer broadcasts, its bucket rebuild).
"""
import collections
import hashlib
import itertools
import time
import typing

import torch
import torch.distributed as dist


ECHO_DIGEST = 16  # bytes of a digest in the echo round: SHA-256, its first 16 bytes (as
# collision-resistant as blake2b's 16-byte digest, 2**64; about 3.6 times blake2b's speed on this
# machine's CPU, which has the SHA extensions: 1.0 GB/s against 0.28 GB/s, loaded)


def _bytes(t: torch.Tensor) -> torch.Tensor:
    """t's bytes (a uint8 view of the same memory): every dtype travels alike, bfloat16 too,
    which gloo's collectives refuse in torch 1.13."""
    if not t.is_contiguous():
        raise ValueError("dpas.torch: internal: a message must be contiguous")
    return t.view(torch.uint8) if t.dtype != torch.uint8 else t


class Counter:
    """Payload bytes this rank wrote, by purpose, and the messages that carried them."""

    def __init__(self):
        self.payload = {"schedule": 0, "protocol": 0, "simulation": 0, "fallback": 0}
        self.messages = {"schedule": 0, "protocol": 0, "simulation": 0, "fallback": 0}
        self.rounds = {"schedule": 0, "protocol": 0, "simulation": 0, "fallback": 0}
        self.round_bytes = {"schedule": 0, "protocol": 0, "simulation": 0, "fallback": 0}

    def snapshot(self) -> dict:
        return {"payload": dict(self.payload), "messages": dict(self.messages),
                "rounds": dict(self.rounds), "round_bytes": dict(self.round_bytes)}


EIG_BYTES = 1 << 18  # the largest relay round agree_blocks makes (bytes a rank sends); past
# it, the echo all-gathers the reports once and runs the phase king on 2N bits instead


def eig_rounds(world: int, f: int, size: int) -> typing.List[int]:
    """The bytes a rank sends in each all_gather of agree_blocks on blocks of `size` bytes:
    min(f, N - 1) + 1 rounds, round k one block per sequence of k - 1 distinct ranks."""
    out, paths = [], 1
    for k in range(min(f, world - 1) + 1):
        out.append(paths * size)
        paths *= world - k
    return out


def eig_fits(world: int, f: int, size: int, limit: int = EIG_BYTES) -> bool:
    return max(eig_rounds(world, f, size)) <= limit


def echo_rounds(world: int, f: int, size: int, limit: int = EIG_BYTES,
                bitwise: bool = False) -> typing.List[int]:
    """The all_gathers (bytes a rank sends in each) of one agreement on `size`-byte blocks
    (Comm.confirm; bitwise: Comm.agree_blocks, whose phase king runs on every bit of the N
    blocks)."""
    if world <= 1:
        return []
    if eig_fits(world, f, size, limit):
        return eig_rounds(world, f, size)
    return [size] + [8 * size * world if bitwise else 2 * world] * (3 * (min(f, world - 1) + 1))


def message_count(sizes: typing.Sequence[int], chunk_bytes: int) -> int:
    """The messages Comm.exchange makes of tensors of these byte sizes, in order: each cut into
    pieces of at most chunk_bytes, consecutive pieces grouped while they fit in chunk_bytes."""
    count, size = 0, 0
    for nbytes in sizes:
        for off in range(0, nbytes, chunk_bytes):
            n = min(chunk_bytes, nbytes - off)
            if count and size + n <= chunk_bytes:
                size += n
            else:
                count, size = count + 1, n
    return count


class _Timed:
    __slots__ = ("into", "key", "t0")

    def __init__(self, into, key):
        self.into, self.key = into, key

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.into[self.key] += time.perf_counter() - self.t0


class Comm:
    def __init__(self, group, chunk_bytes: int):
        self.group = group
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        self.granks = dist.get_process_group_ranks(group)  # group rank -> global rank
        self.chunk_bytes = chunk_bytes
        self.count = Counter()
        self.seconds: typing.Dict[str, float] = collections.defaultdict(float)  # by phase
        self.echo: typing.Optional[list] = None  # the step's digests, one per sender
        self.eig_bytes = EIG_BYTES  # (a test lowers it to run the phase king)
        self.abstained: typing.List[int] = []  # the last confirm's: the ranks that reported
        # only zeros (they could not hold what they received), when every sender is consistent
        # without their reports (the step's failure is theirs, not an equivocation)

    def timed(self, key: str):
        """Adds the time of a with-block to seconds[key] (state.seconds: where a step's time
        goes, for the bench's profile)."""
        return _Timed(self.seconds, key)

    # -- the echo: what every rank received from each sender, confirmed by digests --
    def echo_start(self) -> None:
        """Starts the step's record: from now on every message meant to reach every rank
        alike (allgather_rows but the simulation's, allgather_bytes, note) is hashed, by
        sender, in the order it arrives (the same order on every rank)."""
        self.echo = [hashlib.sha256() for _ in range(self.world)]

    def note(self, sender: int, t: torch.Tensor) -> None:
        """Adds t (as received from sender, or as this rank sent it) to the step's record."""
        if self.echo is not None:
            t0 = time.perf_counter()
            self.echo[sender].update(_bytes(t.contiguous()).numpy().data)
            self.seconds["digest"] += time.perf_counter() - t0

    def confirm(self, f: int, active: typing.Optional[typing.Sequence[int]] = None,
                f_left: typing.Optional[int] = None, digests: typing.Optional[bytes] = None
                ) -> typing.Tuple[bool, typing.List[int], typing.List[int]]:
        """The echo and the agreement (docs/torch.md, "Every verdict on the same bytes"). Every
        rank's report is its digests of what it received from each sender since echo_start
        (N x 16 bytes; or digests: a block of the caller's, N digests of 16 bytes), and the
        ranks agree on every rank's report (agree_blocks: every honest rank ends with the same
        table, in which each honest rank's row is what it reported). Only the active ranks count
        (a banned rank's messages and reports are ignored). For each active sender s:

        - consistent when every active rank's report holds one digest for s;
        - proven to have equivocated when, among the active ranks other than s, every digest
          is contradicted by at least f_left + 1 of them (f_left: the Byzantine ranks that can
          still be active). If s were honest, every honest rank would report its one digest,
          and at most f_left ranks another: so the proof never names an honest rank.

        Every honest rank decides from the same table, so alike. A consistent sender's column
        holds every honest rank's own digest: every honest rank holds the same bytes from it.
        Returns (every unbanned active sender consistent, the senders proven, the senders whose
        column this rank saw split)."""
        world = self.world
        active = list(range(world)) if active is None else list(active)
        f_left = f if f_left is None else f_left
        mine = digests if digests is not None else \
            b"".join(h.digest()[:ECHO_DIGEST] for h in self.echo)
        self.echo = None
        if not eig_fits(world, f, len(mine), self.eig_bytes):
            return self._confirm_king(mine, f, active, f_left)
        with self.timed("agreement"):
            table = self.agree_blocks(mine, f)

        def report(r: int, s: int) -> bytes:
            return table[r][ECHO_DIGEST * s:ECHO_DIGEST * (s + 1)]
        split, proven = self._judge(report, active, f_left)
        ok = all(s not in split for s in active if s not in proven)
        self.abstained = []
        if not ok and not proven:  # (the table is agreed: every honest rank finds the same)
            zero = bytes(ECHO_DIGEST)
            ab = [r for r in active if all(report(r, s) == zero for s in active)]
            rest = [r for r in active if r not in ab]
            if ab and rest and all(len({report(r, s) for r in rest}) == 1 for s in active):
                self.abstained = ab
        return ok, proven, split

    @staticmethod
    def _judge(report, active, f_left):
        """(the senders whose column holds more than one digest, the senders proven). A rank
        whose every digest is zeros abstains (it could not compute them: _hook's _row_digest
        without its matrix): its column entries still split a column, never prove."""
        zero = bytes(ECHO_DIGEST)
        abstain = {r for r in active if all(report(r, s) == zero for s in active)}
        split, proven = [], []
        for s in active:
            if len({report(r, s) for r in active}) > 1:
                split.append(s)
            others = [report(r, s) for r in active if r != s and r not in abstain]
            if others:
                top = max(others.count(x) for x in set(others))
                if len(others) - top >= f_left + 1:
                    proven.append(s)
        return split, proven

    def confirm_outcome(self, digest: bytes, f: int,
                        active: typing.Optional[typing.Sequence[int]] = None) -> bool:
        """Whether every active rank ends the step with the same outcome (digest: 16 bytes of
        this rank's), from every rank's digest agreed (agree_blocks): the same answer on every
        honest rank; True only if every honest rank's outcome is the same bytes. When False,
        self.outliers: the active ranks whose outcome is not the most common one (the lowest
        such digest on a tie), the same list on every honest rank."""
        active = list(range(self.world)) if active is None else list(active)
        with self.timed("agreement"):
            table = self.agree_blocks(digest, f)
        votes = collections.Counter(table[r] for r in active)
        top = max(votes.values())
        common = min(d for d, c in votes.items() if c == top)
        self.outliers = [r for r in active if table[r] != common]
        return len(votes) == 1

    def agree_blocks(self, block: bytes, f: int) -> typing.List[bytes]:
        """Interactive consistency on every rank's block (all of one size): every honest rank
        returns the same list, whose entry for an honest rank is that rank's block (n > 3f;
        with n <= 3f it still ends, without the guarantee). By exponential information
        gathering (Pease, Shostak and Lamport 1980; the EIG tree as in Lynch, Distributed
        Algorithms, 6.2.3): f + 1 all_gathers, round k carrying one block per sequence of
        k - 1 distinct ranks. Round 1 all-gathers the blocks; each later round relays what the
        previous one gave (rank b's entry for sequence p: "b heard the value of p"); every rank
        then resolves the tree from its leaves up, each node the strict majority of its
        children (b"" where there is none). Past eig_bytes, one all_gather and the phase king
        on every bit of every rank's block as this rank received it (an honest sender's bits
        are every honest rank's input alike, so they are agreed as sent). The rounds are not
        in the echo's record (what they agree on is the same everywhere already)."""
        n, size = self.world, len(block)
        echo, self.echo = self.echo, None
        try:
            if not eig_fits(n, f, size, self.eig_bytes):
                got = self.allgather_bytes(block)
                bits = [(g[i // 8] >> (i % 8)) & 1 for g in got for i in range(8 * size)]
                agreed = self.agree(bits, f)
                out = []
                for r in range(n):
                    raw = bytearray(size)
                    for i in range(8 * size):
                        if agreed[8 * size * r + i]:
                            raw[i // 8] |= 1 << (i % 8)
                    out.append(bytes(raw))
                return out
            depth = min(f, n - 1) + 1
            got = self.allgather_bytes(block)
            val: dict = {(a,): got[a] for a in range(n)}
            for k in range(1, depth):
                paths = list(itertools.permutations(range(n), k))
                got = self.allgather_bytes(b"".join(val[p] for p in paths))
                for b in range(n):
                    for i, p in enumerate(paths):
                        if b not in p:
                            val[p + (b,)] = got[b][size * i:size * (i + 1)]

            def resolve(p):
                if len(p) == depth:
                    return val[p]
                kids = [resolve(p + (b,)) for b in range(n) if b not in p]
                best, count = collections.Counter(kids).most_common(1)[0]
                return best if 2 * count > len(kids) else b""
            return [resolve((a,)) for a in range(n)]
        finally:
            self.echo = echo

    def _confirm_king(self, mine: bytes, f: int, active, f_left):
        """confirm by one all_gather of the reports and the phase king on 2N bits (consistent,
        proven per sender: agree), where agree_blocks's relays would be too large."""
        world = self.world
        with self.timed("echo digests"):
            table = self.allgather_bytes(mine)

        def report(r: int, s: int) -> bytes:
            return table[r][ECHO_DIGEST * s:ECHO_DIGEST * (s + 1)]
        split, proven = self._judge(report, active, f_left)
        bits = [s not in split for s in range(world)] + [s in proven for s in range(world)]
        with self.timed("agreement"):
            agreed = self.agree(bits, f)
        bans = [s for s in active if agreed[world + s]]
        ok = all(agreed[s] for s in active if s not in bans)
        return ok, bans, split

    def agree(self, bits: typing.Sequence[bool], f: int) -> typing.List[bool]:
        """The phase king protocol on each of the bits (n > 3f; with n <= 3f it still ends, in
        f + 1 phases, but agreement is not guaranteed), all in the same rounds, one byte a bit.
        Phase k, king rank k, for each bit: (1) all-gather v; propose x if at least n - f sent
        x, else nothing; (2) all-gather the proposals; adopt x if more than f proposed it;
        (3) the king's v is adopted by a rank whose x had fewer than n - f proposals."""
        n, k = self.world, len(bits)
        v = [1 if b else 0 for b in bits]
        for king in range(min(f, n - 1) + 1):
            got = self.allgather_bytes(bytes(v))
            prop = []
            for i in range(k):
                c1 = sum(1 for g in got if g[i] == 1)
                prop.append(1 if c1 >= n - f else 0 if n - c1 >= n - f else 2)  # 2: none
            got = self.allgather_bytes(bytes(prop))
            mult = [0] * k
            for i in range(k):
                for x in (0, 1):
                    c = sum(1 for g in got if g[i] == x)
                    if c > f:
                        v[i], mult[i] = x, c
            kv = self.allgather_bytes(bytes(v))[king]
            for i in range(k):
                if mult[i] < n - f:
                    v[i] = 1 if kv[i] == 1 else 0
        return [x == 1 for x in v]

    def exchange(self, sends: typing.Dict[int, typing.Any],
                 recvs: typing.Dict[int, typing.Any], purpose: str) -> None:
        """Sends sends[peer] to each peer and receives recvs[peer] from each: a 1-D contiguous
        tensor, or a list of (purpose, tensor), whose sizes both sides know. Every tensor
        travels as its bytes, cut into pieces of at most chunk_bytes; consecutive pieces that
        fit together in chunk_bytes go as one message (packed into a buffer: a small status
        rides with the data), a lone piece as itself (no copy). Both sides cut and group alike.
        Empty tensors are not sent (gloo divides by the size). Returns when every message has
        gone and come."""
        work, unpack = [], []
        for peer, ts in sends.items():
            for tag, group in enumerate(self._messages(ts, purpose)):
                if len(group) == 1:
                    msg = group[0][1]
                else:
                    msg = torch.cat([piece for _, piece in group])
                work.append(dist.isend(msg, self.granks[peer], group=self.group, tag=tag))
                for what, piece in group:
                    self.count.payload[what] += piece.numel()
                self.count.messages[group[0][0]] += 1
        for peer, ts in recvs.items():
            for tag, group in enumerate(self._messages(ts, purpose)):
                if len(group) == 1:
                    msg = group[0][1]
                else:
                    msg = torch.empty(sum(piece.numel() for _, piece in group),
                                      dtype=torch.uint8)
                    unpack.append((msg, group))
                work.append(dist.irecv(msg, self.granks[peer], group=self.group, tag=tag))
        with self.timed("wait " + purpose):
            for w in work:
                w.wait()
        for msg, group in unpack:
            off = 0
            for _, piece in group:
                piece.copy_(msg[off:off + piece.numel()])
                off += piece.numel()

    def _messages(self, ts, purpose):
        """The messages of one peer's tensors: lists of (purpose, piece)."""
        items = [(purpose, ts)] if isinstance(ts, torch.Tensor) else ts
        groups: list = []
        size = 0
        for what, t in items:
            for _, piece in self._pieces(_bytes(t)):
                n = piece.numel()
                if groups and size + n <= self.chunk_bytes:
                    groups[-1].append((what, piece))
                    size += n
                else:
                    groups.append([(what, piece)])
                    size = n
        return groups

    def _pieces(self, t: torch.Tensor):
        n = t.numel()
        step = self.chunk_bytes
        return [(i, t[off:min(n, off + step)]) for i, off in enumerate(range(0, n, step))]

    def allgather_rows(self, x: torch.Tensor, out: torch.Tensor, purpose: str,
                       to: typing.Optional[typing.Sequence[int]] = None,
                       frm: typing.Optional[typing.Sequence[int]] = None,
                       block: typing.Optional[torch.Tensor] = None,
                       blocks: typing.Optional[torch.Tensor] = None) -> None:
        """out[r] = rank r's x (out: (world, d)); to/frm restrict the peers (default all).
        With block (uint8), also blocks[r] = rank r's block, after the data in the same
        messages (counted as protocol)."""
        to = range(self.world) if to is None else to
        frm = range(self.world) if frm is None else frm
        if out is None:  # (this rank could not hold the rows: it takes part in the exchange,
            # receiving each peer's bytes into one scratch piece, and keeps none of them)
            self._discard(x, purpose, to, frm, block, blocks)
            return
        if block is None:
            sends = {p: x for p in to if p != self.rank}
            recvs = {p: out[p] for p in frm if p != self.rank}
        else:
            sends = {p: [(purpose, x), ("protocol", block)] for p in to if p != self.rank}
            recvs = {p: [(purpose, out[p]), ("protocol", blocks[p])] for p in frm
                     if p != self.rank}
            blocks[self.rank].copy_(block)
        self.exchange(sends, recvs, purpose)
        if self.rank in frm:
            out[self.rank].copy_(x)
        if purpose != "simulation":
            for p in sorted(frm):
                self.note(p, out[p])
                if block is not None:
                    self.note(p, blocks[p])

    def _discard(self, x, purpose, to, frm, block, blocks) -> None:
        """allgather_rows without a place for the rows: x goes to every peer as usual; each
        peer's row arrives, in the same pieces, into one scratch buffer of at most chunk_bytes
        (its contents are not used), its block (if any) into blocks."""
        nbytes = x.numel() * x.element_size()
        scratch = torch.empty(min(self.chunk_bytes, max(nbytes, 1)), dtype=torch.uint8)
        pieces = [(purpose, scratch[:min(self.chunk_bytes, nbytes - off)])
                  for off in range(0, nbytes, self.chunk_bytes)]
        if block is None:
            sends = {p: x for p in to if p != self.rank}
            recvs = {p: pieces for p in frm if p != self.rank}
        else:
            sends = {p: [(purpose, x), ("protocol", block)] for p in to if p != self.rank}
            recvs = {p: pieces + [("protocol", blocks[p])] for p in frm if p != self.rank}
            blocks[self.rank].copy_(block)
        self.exchange(sends, recvs, purpose)
        if purpose != "simulation" and block is not None:
            for p in sorted(frm):
                self.note(p, blocks[p])

    def allgather_bytes(self, block: bytes, purpose: str = "protocol") -> typing.List[bytes]:
        """Every rank's block (all of one size): one all_gather of uint8."""
        t = torch.frombuffer(bytearray(block), dtype=torch.uint8) if block else \
            torch.zeros(1, dtype=torch.uint8)
        out = torch.empty((self.world, t.numel()), dtype=torch.uint8)
        self._gather(out, t)
        self.count.rounds[purpose] += 1
        self.count.round_bytes[purpose] += t.numel() * (self.world - 1)
        if self.echo is not None:
            for r in range(self.world):
                self.note(r, out[r])
        return [bytes(out[r].numpy().tobytes()) for r in range(self.world)] if block else \
            [b"" for _ in range(self.world)]

    def _gather(self, out: torch.Tensor, t: torch.Tensor) -> None:
        """out[r] = rank r's t: gloo's all_gather (a test replaces it by point-to-point
        messages, to let a Byzantine rank send each peer a different block)."""
        dist.all_gather(list(out.unbind(0)), t, group=self.group)
