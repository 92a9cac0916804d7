# SPDX-License-Identifier: Apache-2.0
"""What the ranks of a robust step tell each other beside the gradients: a status block per rank
(its failure's message, or none), the secrets of the sharded schedule's commitments, and the
first non-finite coordinate of each row. Shared by the hook's engine (_hook.py) and the sharded
schedule (_sharded.py), below both."""

import os
import struct
import typing

MESSAGE_BYTES = 200  # the longest error message a status block carries (longer ones: cut, marked)
STATUS_BYTES = 2 + MESSAGE_BYTES  # a status block: the message's length (2 bytes), the message


def _message(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".split("\n")[0]
    return text


def _cut(text: str, limit: int) -> str:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text
    mark = f" [cut: {len(raw)} bytes]"
    return raw[:limit - len(mark)].decode("utf-8", "ignore") + mark


def status_block(failure: typing.Optional[str]) -> bytes:
    """A rank's status: the length of its failure's message (0: none), then the message (UTF-8,
    at most MESSAGE_BYTES: a longer one is cut and says so), zero-padded to STATUS_BYTES."""
    raw = _cut(failure, MESSAGE_BYTES).encode("utf-8") if failure else b""
    while len(raw) > MESSAGE_BYTES:  # (a character cut in the middle: drop it)
        raw = raw[:-1]
    return struct.pack("<H", len(raw)) + raw.ljust(MESSAGE_BYTES, b"\0")


def status_message(block: bytes) -> typing.Optional[str]:
    (n,) = struct.unpack_from("<H", block, 0)
    if n == 0:
        return None
    if n > MESSAGE_BYTES:
        return "sent an unreadable status block"
    return block[2:2 + n].decode("utf-8", "replace")


def new_secret() -> bytes:
    return os.urandom(16)


def isfinite_rows(m) -> typing.List[int]:
    """For each row of m ((n, c) float32 numpy), the first non-finite coordinate, or -1."""
    import numpy as np
    # a row is finite exactly when its float64 sum is (float32 values cannot overflow it: 2^128
    # x 2^63 < 2^1024; a NaN or an Inf, or Inf - Inf, stays non-finite): one pass, no (n, c)
    # mask, and the first bad coordinate searched only in the rows that have one
    with np.errstate(invalid="ignore", over="ignore"):  # (Inf - Inf: NaN, said by the result)
        sums = m.sum(axis=1, dtype=np.float64)
    return [-1 if np.isfinite(sums[i]) else int(np.argmax(~np.isfinite(m[i])))
            for i in range(m.shape[0])]
