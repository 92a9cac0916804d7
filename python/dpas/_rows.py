# SPDX-License-Identifier: Apache-2.0
"""The gradients as people have them, as row pointers for the C kernels, read where they lie.

Accepted (dpas/kernels.h takes n row pointers, so nothing needs stacking):
  - a 2-D numpy array, float32 or float64, each row contiguous (C order, or rows taken with a
    step: x[::2], x[idx_slice]); its rows are read in place;
  - a torch CPU tensor, float32 or float64, the same shapes (through .numpy(), no copy; a
    tensor that needs grad is detached first, which copies nothing either);
  - a list or tuple of 1-D rows of one kind (numpy arrays, or torch tensors), one dtype and one
    length: each row is read where it is;
  - any other object with the buffer protocol (a memoryview cast to 'f' or 'd'), 2-D.
The result has the input's kind: a tensor for tensors, a numpy array otherwise.

Refused, with what to do (dpas never copies gradients silently): other dtypes (integers,
big-endian floats; float16 and bfloat16 are copied once to float32 by dpas.kernels._half before
they get here), rows whose coordinates are not side by side (a transposed or
column-sliced array), memory not aligned to the element size, a tensor on a GPU, a list mixing
kinds, dtypes or lengths, plain Python lists of numbers."""
from __future__ import annotations

import ctypes
from typing import Any, List, Optional

from .errors import ArgumentTypeError, InvalidValue

FLOAT32, FLOAT64 = 0, 1  # enum dpas_dtype


class Rows:
    """n row pointers of one dtype, the objects that own the memory (kept alive through the
    call), and what to return: kind 'torch' or 'numpy'."""

    def __init__(self, np: Any, dtype: Any, n: int, d: int, pointers: List[int], keep: List[Any],
                 kind: str) -> None:
        self.np, self.dtype, self.n, self.d, self.keep, self.kind = np, dtype, n, d, keep, kind
        self.code = FLOAT64 if dtype == np.float64 else FLOAT32
        self.rows = (ctypes.c_void_p * max(n, 1))(*pointers)

    def result(self, arr: Any) -> Any:
        """arr (a numpy array dpas made) as the input's kind."""
        if self.kind == "torch":
            import torch
            return torch.from_numpy(arr)
        return arr


def _is_tensor(x: Any) -> bool:
    t = type(x)
    return t.__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "numpy")


def _tensor_numpy(name: str, t: Any) -> Any:
    """A CPU tensor's numpy view (no copy), or the error saying what to do."""
    if t.device.type != "cpu":
        raise ArgumentTypeError(f"{name} is a tensor on {t.device}: dpas reads CPU memory; move it "
                                f"with .cpu()", name)
    import torch
    if t.dtype not in (torch.float32, torch.float64):
        raise ArgumentTypeError(f"{name} must be float32 or float64, got {t.dtype}: convert it "
                                f"yourself (.float() or .double()); dpas does not copy silently",
                                name)
    t = t.detach()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    return t.numpy()


def _dtype_error(name: str, got: Any) -> ArgumentTypeError:
    return ArgumentTypeError(f"{name} must be float32 or float64, got {got}: convert it yourself "
                             f"(numpy: .astype(numpy.float32)); dpas does not copy silently", name)


def _check_dtype(np: Any, name: str, arr: Any) -> Any:
    dt = arr.dtype
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)) or not dt.isnative:
        if dt.kind == "f" and dt.itemsize in (4, 8) and not dt.isnative:
            raise ArgumentTypeError(f"{name} has byte order {dt.byteorder!r}, not this machine's: "
                                    f"convert it yourself (.astype(numpy.float32)); dpas does not "
                                    f"copy silently", name)
        raise _dtype_error(name, f"{dt} ({arr.dtype.str})" if dt.kind != "f" else dt)
    return dt.type


def _aligned(name: str, address: int, step: int, itemsize: int) -> None:
    if address % itemsize or step % itemsize:
        raise ArgumentTypeError(f"{name} is not aligned to its {itemsize}-byte elements (address "
                                f"% {itemsize} = {address % itemsize}, row step {step}): copy it "
                                f"(numpy.array(...)) to aligned memory; dpas does not copy "
                                f"silently", name)


def _matrix_rows(np: Any, name: str, arr: Any, kind: str, keep: List[Any],
                 allow_empty: bool) -> Rows:
    if arr.ndim != 2:
        raise ArgumentTypeError(f"{name} must be 2-D (n gradients of d coordinates), got "
                                f"{arr.ndim} dimension{'s' if arr.ndim != 1 else ''}", name)
    dtype = _check_dtype(np, name, arr)
    n, d = arr.shape
    if n == 0 and not allow_empty:
        raise InvalidValue(f"{name} must hold at least one gradient, got shape ({n}, {d})", name)
    size = arr.itemsize
    # (0, d) and (n, 1) arrays have no row layout to check: numpy gives zeros((0, d)) strides
    # of 0 (issue 29: it was refused as "not contiguous" by the message that asked for it)
    if n > 0 and d > 1 and arr.strides[1] != size:
        raise ArgumentTypeError(f"the rows of {name} are not contiguous (the coordinates of a row "
                                f"are {arr.strides[1]} bytes apart, not {size}: a transposed or "
                                f"column-sliced array): convert it yourself "
                                f"(numpy.ascontiguousarray copies); dpas does not copy silently",
                                name)
    base, step = arr.ctypes.data, arr.strides[0] if n > 1 else 0
    _aligned(name, base, step, size)
    keep.append(arr)
    return Rows(np, dtype, n, d, [base + i * step for i in range(n)], keep, kind)


def _row_array(np: Any, name: str, i: int, row: Any) -> Any:
    """Row i of a list as a 1-D numpy view (no copy) and its kind."""
    where = f"{name}[{i}]"
    if _is_tensor(row):
        return _tensor_numpy(where, row), "torch"
    if isinstance(row, np.ndarray):
        return row, "numpy"
    if isinstance(row, (list, tuple, int, float)):
        raise ArgumentTypeError(f"{where} is a {type(row).__name__}: dpas reads rows where they "
                                f"lie, as numpy arrays or torch tensors (numpy.asarray(rows, "
                                f"dtype=numpy.float32) makes them)", name)
    try:
        return np.asarray(memoryview(row)), "numpy"
    except TypeError:
        raise ArgumentTypeError(f"{where} must be a 1-D float32 or float64 array or tensor, got "
                                f"{type(row).__name__}", name) from None


def _address(arr: Any) -> int:
    """The address of a contiguous array's first element: through the buffer protocol (about a
    third of the time of arr.ctypes, which builds an object per call), or arr.ctypes for what
    that refuses (read-only or empty memory)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))
    except (TypeError, ValueError, BufferError):
        return arr.ctypes.data


def mixed_dtypes(name: str, seq: Any) -> Optional[ArgumentTypeError]:
    """The error for rows of more than one dtype, the same whatever their order (the dtypes
    sorted by name, each with its first row), or None when they share one."""
    first: dict = {}
    for i, row in enumerate(seq):
        dt = str(getattr(row, "dtype", type(row).__name__)).replace("torch.", "")
        first.setdefault(dt, i)
    if len(first) < 2:
        return None
    kinds = ", ".join(f"{dt} ({name}[{first[dt]}] first)" for dt in sorted(first))
    return ArgumentTypeError(f"the rows of {name} must share one dtype, got {len(first)}: {kinds}"
                             f"; convert them to one (float32 or float64; float16 and bfloat16 "
                             f"are computed in float32)", name)


def _list_rows(np: Any, name: str, seq: Any, allow_empty: bool) -> Rows:
    n = len(seq)
    if n == 0:
        if allow_empty:
            raise ArgumentTypeError(f"{name} is an empty {type(seq).__name__}: give a (0, d) array "
                                    f"so that d is known", name)
        raise InvalidValue(f"{name} must hold at least one gradient, got an empty "
                           f"{type(seq).__name__}", name)
    # Every row is checked; the checks that build text or objects run only on the first row and
    # on a row that differs from it (a call's overhead is per row: 16 rows must not cost 16
    # times an array's checks).
    pointers, keep, kind, dt0, dtype, d, size = [], [], None, None, None, None, 0
    for i, row in enumerate(seq):
        if type(row) is np.ndarray:
            arr, k = row, "numpy"
        else:
            arr, k = _row_array(np, name, i, row)
        if k != kind and kind is not None:
            raise ArgumentTypeError(f"{name}[{i}] is a {'tensor' if k == 'torch' else 'numpy array'}"
                                    f" and {name}[0] is not: give rows of one kind", name)
        if arr.ndim != 1:
            raise ArgumentTypeError(f"{name}[{i}] must be 1-D (one gradient), got {arr.ndim} "
                                    f"dimensions", name)
        dt = arr.dtype
        if dt0 is None or dt != dt0:
            mixed = mixed_dtypes(name, seq)  # checked before any one row's dtype: one message
            if mixed is not None:            # whatever the rows' order
                raise mixed
            t = _check_dtype(np, f"{name}[{i}]", arr)
            dt0, dtype, size = dt, t, dt.itemsize
        length = arr.shape[0]
        if length != d and d is not None:
            raise InvalidValue(f"{name}[{i}] has {length} coordinates and {name}[0] has {d}: "
                               f"every gradient needs the same length", name)
        if length > 1 and arr.strides[0] != size:
            raise ArgumentTypeError(f"the coordinates of {name}[{i}] are not contiguous (a strided "
                                    f"view): convert it yourself (numpy.ascontiguousarray copies); "
                                    f"dpas does not copy silently", name)
        address = _address(arr)
        if address % size:
            _aligned(f"{name}[{i}]", address, 0, size)
        kind, d = k, length
        pointers.append(address)
        keep.append(arr)
    return Rows(np, dtype, n, d, pointers, keep, kind)


def rows(np: Any, name: str, grads: Any, allow_empty: bool = False) -> Rows:
    """grads (see the module's docstring) as row pointers."""
    if _is_tensor(grads):
        return _matrix_rows(np, name, _tensor_numpy(name, grads), "torch", [grads], allow_empty)
    if isinstance(grads, np.ndarray):
        return _matrix_rows(np, name, grads, "numpy", [], allow_empty)
    if isinstance(grads, (list, tuple)):
        return _list_rows(np, name, grads, allow_empty)
    try:
        mv = memoryview(grads)
    except TypeError:
        raise ArgumentTypeError(f"{name} must be a 2-D float32 or float64 array (numpy, a torch "
                                f"tensor, or a list of 1-D rows), got {type(grads).__name__}",
                                name) from None
    if mv.format not in ("f", "<f", "=f", "@f", "d", "<d", "=d", "@d"):
        raise _dtype_error(name, f"buffer format {mv.format!r}")
    return _matrix_rows(np, name, np.asarray(mv), "numpy", [mv], allow_empty)


def vector(np: Any, name: str, v: Any, dtype: Any, d: int) -> Optional[Any]:
    """A 1-D vector of d values (a start point), as a contiguous array of the rows' dtype: a copy
    of d values when it is of another kind or dtype (documented: it is one vector, not the
    gradients)."""
    if v is None:
        return None
    if _is_tensor(v):
        v = _tensor_numpy(name, v)
    try:
        arr = np.ascontiguousarray(v, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise ArgumentTypeError(f"{name} must be a vector of {d} numbers: {e}", name) from None
    if arr.ndim != 1 or arr.shape[0] != d:
        raise InvalidValue(f"{name} must hold d = {d} values (one per coordinate), got shape "
                           f"{arr.shape}", name)
    if not np.isfinite(arr).all():
        raise InvalidValue(f"{name} must be finite", name)
    return arr
