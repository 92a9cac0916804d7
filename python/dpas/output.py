# SPDX-License-Identifier: Apache-2.0
"""Writing a front end's output file (the demo's --svg) the way every dpas front end does: through
the C library's dpas_write_output, so that Python and C check an output path alike. The path
must be a new file or a regular one (replaced whole: written to a temporary file beside it and
renamed, so a failure part way leaves the old file as it was); a FIFO, a device (/dev/null
included), a socket or a directory is refused at once, without blocking and without writing,
with a FileError (an OSError) naming the field, the path and why.

    >>> import dpas, os, tempfile
    >>> d = tempfile.mkdtemp(); fifo = os.path.join(d, "plot.svg"); os.mkfifo(fifo)
    >>> try:
    ...     dpas.write_output(fifo, "<svg/>", field="--svg")
    ... except dpas.FileError as e:
    ...     print(e.field, isinstance(e, OSError))
    --svg True
"""
from __future__ import annotations

import ctypes
import os
from typing import Union

from . import _ffi, errors
from .errors import ArgumentTypeError, InvalidValue


def write_output(path: Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"],
                 data: Union[str, bytes], field: str = "path") -> None:
    """Write data (bytes, or str as UTF-8) to the file at path, a new or a regular file only.
    Raises ArgumentTypeError for a path or data of another type, InvalidValue for a path with a
    NUL, FileError (EIO) when the file cannot be written, and why."""
    if not isinstance(field, str):
        raise ArgumentTypeError(f"field must be a str, got {type(field).__name__}", "field")
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ArgumentTypeError(f"{field} must be a path (str, bytes or os.PathLike), got "
                                f"{type(path).__name__}", field)
    raw = os.fsencode(path)  # str as the file system encodes it (surrogateescape round-trips)
    if b"\x00" in raw:
        raise InvalidValue(f"{field} must not contain a NUL character", field)
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise ArgumentTypeError(f"data must be str or bytes, got {type(data).__name__}", "data")
    buf = bytes(data)
    err = _ffi.Error()
    if _ffi.lib.dpas_write_output(raw, field.encode("utf-8", "replace"), buf, len(buf),
                                  ctypes.byref(err)):
        errors.raise_c(err)
