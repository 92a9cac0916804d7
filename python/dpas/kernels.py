"""The aggregation kernels and the attacks from Python: dpas.aggregate, dpas.select, dpas.attack.

The gradients are a 2-D float32 C-contiguous buffer of shape (n, d): a numpy array or any object
with the buffer protocol. It is read where it lies, never copied: anything else (float64, a
transposed or sliced view, a list) is a TypeError (dpas.ArgumentTypeError) that says so, rather
than a silent copy. Every other argument goes through dpas's checks (_check): a count beyond
int64, a bool for a number or a NUL in a name is refused, never wrapped or cut.
numpy is needed for the results (Debian: python3-numpy) and imported only here, on first use;
the rest of the binding needs only the standard library.

    >>> import numpy as np, dpas
    >>> g = np.array([[1, 1], [2, 2], [3, 3], [100, 1e6], [2.5, 2.5]], dtype=np.float32)
    >>> dpas.aggregate("median", g, f=2).tolist()
    [2.5, 2.5]
    >>> dpas.select("krum", g, f=1)   # the row with the closest two neighbours
    [4]
"""
import ctypes

from . import _check, _ffi
from .errors import ArgumentTypeError, InvalidValue, RangeError

_ISAS = {None: 0, "auto": 0, "generic": 1, "avx2": 2, "avx512": 3}
_OPTIONS = ("m", "iterations", "tau", "tolerance", "smoothing", "nnm", "isa")
_SELECTS = 16  # DPAS_RULE_CAP_SELECTS


def _lib():
    from . import _lib as lib  # the package's libdpas, loaded by __init__
    _ffi.declare_kernels(lib)
    return lib


def _numpy(what):
    try:
        import numpy
    except ImportError as e:
        raise ImportError(f"dpas.{what} needs numpy for its result (Debian: apt install "
                          f"python3-numpy)") from e
    return numpy


def _raise(err):
    from .errors import raise_c  # the C error's class (dpas.InvalidValue, ...), a ValueError
    raise_c(err)


def _matrix(np, name, buf, allow_empty_rows=False):
    """buf as a (n, d) float32 array viewing the same memory, and the row pointers."""
    try:
        mv = memoryview(buf)
    except TypeError:
        raise ArgumentTypeError(f"{name} must be a 2-D float32 buffer (a numpy array of shape "
                                f"(n, d)), got {type(buf).__name__}", name) from None
    if mv.ndim != 2:
        raise ArgumentTypeError(f"{name} must be 2-D (n gradients of d coordinates), got "
                                f"{mv.ndim} dimension{'s' if mv.ndim != 1 else ''}", name)
    if mv.format not in ("f", "<f", "=f", "@f") or mv.itemsize != 4:
        raise ArgumentTypeError(f"{name} must be float32, got format {mv.format!r}: convert it "
                                f"yourself (numpy: .astype(numpy.float32)); dpas does not copy "
                                f"silently", name)
    if not mv.c_contiguous:
        raise ArgumentTypeError(f"{name} must be C-contiguous (row-major, no strides): convert "
                                f"it yourself (numpy.ascontiguousarray copies); dpas does not copy "
                                f"silently", name)
    n, d = mv.shape
    if n == 0 and not allow_empty_rows:
        raise InvalidValue(f"{name} must hold at least one gradient, got shape ({n}, {d})", name)
    arr = np.asarray(mv)  # a view of the same memory, read-only if the buffer is
    base = arr.ctypes.data
    rows = (ctypes.c_void_p * max(n, 1))(*[base + i * d * 4 for i in range(n)])
    return arr, rows, n, d


def _rule(lib, rule, convention):
    err = _ffi.Error()
    p = ctypes.POINTER(_ffi.Rule)()
    conv = _check.optional_text("convention", convention)
    if lib.dpas_rule_select(_check.text("rule", rule), conv, ctypes.byref(p), ctypes.byref(err)):
        _raise(err)
    return ctypes.cast(p, ctypes.c_void_p), p.contents


def _c_int(field, v):
    """A whole number for a C int field (ctypes would wrap a larger one)."""
    i = _check.whole(field, v)
    if not _check.INT_MIN <= i <= _check.INT_MAX:
        raise RangeError(f"{field} is out of range: must fit a C int, got {i}", field)
    return i


def _opts(f, threads, options, what):
    o = _ffi.AggOpts()
    o.f = _check.int64("f", f, minimum=0)
    o.threads = _c_int("threads", threads)
    for key, v in options.items():
        if key not in _OPTIONS:
            raise ArgumentTypeError(f"{what}() got an unexpected keyword argument {key!r}; "
                                    f"options: {', '.join(_OPTIONS)}", key)
        if key in ("m", "iterations"):
            setattr(o, key, _check.int64(key, v, minimum=0))
        elif key == "nnm":
            o.nnm = int(_check.flag("nnm", v))
        elif key == "isa":
            if v not in _ISAS:
                raise InvalidValue(f"isa must be one of generic, avx2, avx512 or None, got {v!r}",
                                   "isa")
            o.isa = _ISAS[v]
        else:
            setattr(o, key, _check.real(key, v))
    return o


def _run(what, rule, grads, f, convention, threads, options, want_selection):
    np = _numpy(what)
    lib = _lib()
    rp, r = _rule(lib, rule, convention)
    if want_selection and not r.caps & _SELECTS:
        raise InvalidValue(f"{r.name.decode()} selects no gradients: select() is for krum, "
                           f"multi_krum, bulyan and brute", "rule")
    opts = _opts(f, threads, options, what)
    arr, rows, n, d = _matrix(np, "grads", grads)
    out = np.empty(d, dtype=np.float32)
    sel = (ctypes.c_int64 * n)()
    nsel = ctypes.c_size_t(0)
    err = _ffi.Error()
    if lib.dpas_aggregate(rp, rows, n, d, ctypes.byref(opts), out.ctypes.data, sel,
                          ctypes.byref(nsel), ctypes.byref(err)):
        _raise(err)
    del arr  # the view lived through the call
    return out, [int(sel[i]) for i in range(nsel.value)]


def aggregate(rule, grads, f=0, *, convention=None, threads=1, **options):
    """The robust aggregate of the rows of grads (n x d float32) by rule, with f Byzantine:
    a float32 numpy array of shape (d,). convention picks a rule's convention ("byzfl" for
    ByzFL's Krum); options: m (multi_krum), iterations, tau (centered_clipping), tolerance and
    smoothing (geometric_median), nnm=True (nearest neighbour mixing first), isa ("generic",
    "avx2", "avx512"). A row with a NaN or an Inf is Byzantine: excluded and counted against f."""
    return _run("aggregate", rule, grads, f, convention, threads, options, False)[0]


def select(rule, grads, f=0, *, convention=None, threads=1, **options):
    """The indices of the rows a selecting rule (krum, multi_krum, bulyan, brute) chooses:
    krum its one row, multi_krum the m best first, bulyan in the order of selection, brute in
    ascending order. Same arguments as aggregate()."""
    return _run("select", rule, grads, f, convention, threads, options, True)[1]


def attack(name, honest, f, **parameters):
    """The f rows that f Byzantine replicas send against the honest rows (h x d float32): a
    float32 numpy array of shape (f, d). Attacks and their one parameter: sign_flip (scale),
    ipm (epsilon), alie (z), large_value (value), nan, inf (sign); left out, a parameter takes
    its default (dpas/kernels.h)."""
    np = _numpy("attack")
    lib = _lib()
    err = _ffi.Error()
    p = ctypes.c_void_p()
    if lib.dpas_attack_find(_check.text("name", name), ctypes.byref(p), ctypes.byref(err)):
        _raise(err)
    a = ctypes.cast(p, ctypes.POINTER(_ffi.Attack)).contents
    param = a.parameter.decode() if a.parameter else None
    opts = _ffi.AttackOpts()
    for key, v in parameters.items():
        if key != param:
            accepted = f"its parameter is {param!r}" if param else "it takes none"
            raise ArgumentTypeError(f"attack {name!r} got an unexpected parameter {key!r}; "
                                    f"{accepted}", key)
        opts.parameter, opts.has_parameter = _check.real(key, v), 1
    f = _check.int64("f", f, minimum=0)
    arr, rows, h, d = _matrix(np, "honest", honest, allow_empty_rows=True)
    out = np.empty((f, d), dtype=np.float32)
    base = out.ctypes.data
    orows = (ctypes.c_void_p * max(f, 1))(*[base + i * d * 4 for i in range(f)])
    if lib.dpas_attack_rows(p, rows, h, d, f, ctypes.byref(opts), orows, ctypes.byref(err)):
        _raise(err)
    del arr
    return out
