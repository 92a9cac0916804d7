# SPDX-License-Identifier: Apache-2.0
"""The aggregation kernels and the attacks from Python: dpas.aggregate, dpas.select, dpas.attack.

The gradients are n rows of d coordinates, float32 or float64, as people have them: a 2-D
numpy array (C order, or rows taken with a step), a torch CPU tensor, a list or tuple of 1-D
rows (numpy arrays or tensors: read as row pointers, never stacked), or any 2-D buffer
(dpas._rows says exactly what is accepted). They are read where they lie; the result has the
input's kind (a tensor for tensors) and dtype. float64 rows run the float64 kernels: the same
rules, the same non-finite policy, the same guarantees; float16 and bfloat16 are copied once to
float32 and the result given back in their dtype. What would need a copy (integers, a
transposed array, unaligned memory, a GPU tensor) is a TypeError
(dpas.ArgumentTypeError) saying what to convert: dpas never copies gradients silently.

Every other argument is checked where it enters: counts are ints (not floats, strings or
bools), an option the rule does not take is an error (m for krum, tau for median), a
pre-aggregation named twice is an error; the C library checks the values. numpy (Debian:
python3-numpy) is imported only here, on first use; the rest of the binding needs only the
standard library.

    >>> import numpy as np, dpas
    >>> g = np.array([[1, 1], [2, 2], [3, 3], [100, 1e6], [2.5, 2.5]], dtype=np.float32)
    >>> dpas.aggregate("median", g, f=2).tolist()
    [2.5, 2.5]
    >>> dpas.select("krum", g, f=1)   # the row with the closest two neighbours
    [4]
    >>> dpas.aggregate("median", [g[0], g[1], g[2]]).tolist()   # a list of rows
    [2.0, 2.0]
"""
import ctypes
import numbers
import threading

from . import _check, _ffi, _rows
from .errors import ArgumentTypeError, InvalidValue, RangeError

_ISAS = {None: 0, "auto": 0, "generic": 1, "avx2": 2, "avx512": 3}
_INTS = ("m", "iterations", "idx")
_REALS = ("tau", "tolerance", "smoothing")
_OPTIONS = ("m", "iterations", "tau", "tolerance", "smoothing", "nnm", "isa", "start", "idx",
            "pre", "weights")
_EVERY_RULE = ("isa",)
_SELECTS = 16  # DPAS_RULE_CAP_SELECTS
_PRE_PARAMS = {"nnm": ("f",), "arc": ("f",), "clipping": ("c", "f"), "bucketing": ("s", "seed", "f")}


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


def _int(field, v, minimum=None, maximum=None):
    """An int as it was given: not a float (not even 3.0), a string or a bool (issue 21)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{field} must be an int, got {type(v).__name__} "
                                f"{_check._show(v)}", field)
    i = int(v)
    # a field the C side holds as uint64_t (a seed) says so by its maximum (issue 29: seeds of
    # 2^63 and above were refused as not fitting a signed integer)
    unsigned = maximum is not None and maximum > _check.INT64_MAX
    lo, hi = (0, 2**64 - 1) if unsigned else (_check.INT64_MIN, _check.INT64_MAX)
    if not lo <= i <= hi and not (unsigned and minimum is not None and i < minimum):
        raise RangeError(f"{field} is out of range: must fit "
                         f"{'an unsigned' if unsigned else 'a signed'} 64-bit integer, got {i}",
                         field)
    if minimum is not None and i < minimum:
        raise InvalidValue(f"{field} must be >= {minimum}, got {i}", field)
    if maximum is not None and i > maximum:
        raise RangeError(f"{field} is out of range: must be <= {maximum}, got {i}", field)
    return i


# ---- the workspace ------------------------------------------------------------------------------

class Workspace:
    """Scratch memory the kernels keep between calls (dpas_workspace): a second call of the same
    size touches no fresh page. Each thread has one of its own by default; give one explicitly
    with workspace=, or workspace=False for none. One call at a time: using a Workspace from two
    threads at once is an error, not a race."""

    def __init__(self):
        lib = _lib()
        self._lib = lib
        self._ptr = lib.dpas_workspace_new()
        if not self._ptr:
            raise MemoryError("dpas: out of memory for a workspace")
        self._lock = threading.Lock()

    @property
    def size(self):
        """The bytes it holds."""
        return int(self._lib.dpas_workspace_size(self._ptr))

    def free(self):
        """Give the memory back now (the object stays usable)."""
        with self._lock:
            self._lib.dpas_workspace_free(self._ptr)
            self._ptr = self._lib.dpas_workspace_new()

    def __del__(self):
        ptr = getattr(self, "_ptr", None)
        if ptr:
            self._lib.dpas_workspace_free(ptr)
            self._ptr = None


_local = threading.local()


def _workspace(given):
    if given is None:
        ws = getattr(_local, "ws", None)
        if ws is None:
            ws = _local.ws = Workspace()
        return ws
    if given is False:
        return None
    if not isinstance(given, Workspace):
        raise ArgumentTypeError(f"workspace must be a dpas.Workspace, None (this thread's) or "
                                f"False (none), got {type(given).__name__}", "workspace")
    return given


class _Held:
    """The workspace's lock through a call."""

    def __init__(self, ws):
        self.ws = ws

    def __enter__(self):
        if self.ws is not None and not self.ws._lock.acquire(blocking=False):
            raise InvalidValue("workspace is in use by another call (one call at a time per "
                               "dpas.Workspace)", "workspace")
        return self.ws._ptr if self.ws is not None else None

    def __exit__(self, *exc):
        if self.ws is not None:
            self.ws._lock.release()


# ---- arguments --------------------------------------------------------------------------------

def _rule(lib, rule, convention):
    err = _ffi.Error()
    p = ctypes.POINTER(_ffi.Rule)()
    conv = _check.optional_text("convention", convention)
    if lib.dpas_rule_select(_check.text("rule", rule), conv, ctypes.byref(p), ctypes.byref(err)):
        _raise(err)
    return ctypes.cast(p, ctypes.c_void_p), p.contents


def _pre(lib, items):
    """opts.pre from a list of names or (name, {parameter: value}) pairs."""
    if isinstance(items, (str, tuple)) or not isinstance(items, list):
        raise ArgumentTypeError(f"pre must be a list of pre-aggregations (names, or (name, "
                                f"{{parameter: value}}) pairs), got {type(items).__name__}", "pre")
    arr = (_ffi.PreAgg * max(len(items), 1))()
    seen = set()
    for i, item in enumerate(items):
        name, params = (item, {}) if isinstance(item, str) else (None, None)
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], dict):
            name, params = item
        if not isinstance(name, str):
            raise ArgumentTypeError(f"pre[{i}] must be a name or a (name, {{parameter: value}}) "
                                    f"pair, got {_check._show(item)}", "pre")
        rp, r = _rule(lib, name, None)
        key = r.name.decode()
        if key in seen:
            raise InvalidValue(f"pre names {key} twice: each pre-aggregation once", "pre")
        seen.add(key)
        arr[i].rule = rp
        allowed = _PRE_PARAMS.get(key, ())
        for p, v in params.items():
            if p not in allowed:
                takes = f"it takes {', '.join(allowed)}" if allowed else "it takes none"
                raise ArgumentTypeError(f"pre[{i}] ({key}) got an unexpected parameter {p!r}; "
                                        f"{takes}", p)
            if p == "c":
                c = _check.real("c", v)
                if not 0 < c < float("inf"):
                    raise InvalidValue(f"pre[{i}] (clipping): c must be finite and > 0, got "
                                       f"{_check._show(v)}", "c")
                arr[i].c = c
            elif p == "s":
                arr[i].s = _int("s", v, minimum=1)
            elif p == "f":  # the step's own f (ByzFL's NNM(f=...)); else the aggregation's
                arr[i].f = _int("f", v, minimum=0)
                arr[i].own_f = 1
            else:
                arr[i].seed = _int("seed", v, minimum=0, maximum=2**64 - 1) & (2**64 - 1)
    return arr, len(items)


def _opts(lib, rp, r, f, threads, options, what, np, rows, keep):
    o = _ffi.AggOpts()
    o.f = _int("f", f, minimum=0)
    o.threads = _int("threads", threads, minimum=0, maximum=256)
    name = r.name.decode()
    for key, v in options.items():
        if key not in _OPTIONS:
            raise ArgumentTypeError(f"{what}() got an unexpected keyword argument {key!r}; "
                                    f"options: {', '.join(_OPTIONS)}", key)
        if key not in _EVERY_RULE and not lib.dpas_agg_option_applies(rp, key.encode()):
            raise ArgumentTypeError(f"{name} does not take the option {key}", key)
        if key in _INTS:
            setattr(o, key, _int(key, v, minimum=0))
        elif key == "nnm":
            o.nnm = int(_check.flag("nnm", v))
        elif key == "isa":
            if not isinstance(v, (str, type(None))) or v not in _ISAS:
                raise InvalidValue(f"isa must be one of generic, avx2, avx512 or None, got "
                                   f"{_check._show(v)}", "isa")
            o.isa = _ISAS[v]
        elif key == "start":
            start = _rows.vector(np, "start", v, rows.dtype, rows.d)
            keep.append(start)
            o.start = start.ctypes.data
        elif key == "pre":
            arr, count = _pre(lib, v)
            keep.append(arr)
            o.pre, o.npre = ctypes.cast(arr, ctypes.c_void_p), count
        elif key == "weights":
            w = _weights(np, v, rows.n, r.name.decode())
            keep.append(w)
            o.weights = w.ctypes.data
        else:
            setattr(o, key, _check.real(key, v))
    return o


def _weights(np, v, n, rule="the rule"):
    """n weights as float64 (a sequence, numpy array or tensor of reals, float16 and bfloat16
    included; the C library checks that they are finite, >= 0 and not all 0). A weight beyond
    the float64 range (an int of 2^1024 or more) is refused naming it and the rule."""
    if _rows._is_tensor(v):
        v = v.detach().cpu()
        if v.is_floating_point():
            v = v.double()  # float16 / bfloat16 / float32: exact in float64 (numpy has no bf16)
        v = v.numpy()
    if isinstance(v, (str, bytes)) or not hasattr(v, "__len__"):
        raise ArgumentTypeError(f"weights must be a sequence of {n} reals, one per row, got "
                                f"{type(v).__name__}", "weights")
    items = list(v)
    for i, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, (numbers.Real, np.integer, np.floating)):
            raise ArgumentTypeError(f"weights[{i}] must be a real, got {type(x).__name__} "
                                    f"{_check._show(x)}", "weights")
    if len(items) != n:
        raise InvalidValue(f"weights must hold one weight per row: {n} rows, got {len(items)} "
                           f"weights", "weights")
    return np.ascontiguousarray(np.asarray([_weight(i, x, rule) for i, x in enumerate(items)],
                                           dtype=np.float64))


def _weight(i, x, rule):
    """One weight as a float, or the error naming it (an int past the float64 range)."""
    try:
        return float(x)
    except OverflowError:
        bits = int(x).bit_length()
        raise InvalidValue(f"weights[{i}] = {_check._show(x)} (an integer of {bits} bits) is "
                           f"beyond the float64 range (about 1.8e308) that {rule}'s weights are "
                           f"computed in: weights must be finite; scale them down (only their "
                           f"ratios matter)", "weights") from None


def _run(what, rule, grads, f, convention, threads, workspace, options, want_selection):
    np = _numpy(what)
    lib = _lib()
    rp, r = _rule(lib, rule, convention)
    if want_selection and not r.caps & _SELECTS:
        raise InvalidValue(f"{r.name.decode()} selects no gradients: select() is for krum, "
                           f"multi_krum, bulyan and brute", "rule")
    ws = _workspace(workspace)
    rows = _rows.rows(np, "grads", grads)
    keep = []
    opts = _opts(lib, rp, r, f, threads, options, what, np, rows, keep)
    out = np.empty(rows.d, dtype=rows.dtype)
    sel = (ctypes.c_int64 * rows.n)()
    nsel = ctypes.c_size_t(0)
    err = _ffi.Error()
    with _Held(ws) as wsp:
        opts.workspace = wsp
        if lib.dpas_aggregate_typed(rp, rows.rows, rows.code, rows.n, rows.d, ctypes.byref(opts),
                                    out.ctypes.data, sel, ctypes.byref(nsel), ctypes.byref(err)):
            _raise(err)
    del keep  # the start and the pre-aggregations lived through the call
    if want_selection and not nsel.value:
        raise InvalidValue(f"{r.name.decode()} selected buckets, not gradients: select() cannot "
                           f"name rows after bucketing", "pre")
    return rows.result(out), [int(sel[i]) for i in range(nsel.value)]


def _half(vectors, name="grads"):
    """float16 / bfloat16 gradients (a numpy array, a torch tensor, or a list of them; 2-D or a
    B x n x d batch) as one float32 array, copied once, and the function that turns a float32
    result back into the input's kind and dtype (each value rounded once); (vectors, None) for
    anything else (which the kernels then take as it is or refuse, saying why)."""
    first = vectors[0] if isinstance(vectors, (list, tuple)) and vectors else vectors
    dt = getattr(first, "dtype", None)
    if getattr(dt, "char", None) in ("f", "d"):  # numpy float32/float64: the common case, fast
        return vectors, None                     # (str(dtype) cost a third of a small call)
    what = str(dt)
    if what not in ("float16", "torch.float16", "torch.bfloat16"):
        return vectors, None
    if isinstance(vectors, (list, tuple)):  # one dtype for the result: every row's
        mixed = _rows.mixed_dtypes(name, vectors)
        if mixed is not None:
            raise mixed
    import numpy
    if what == "float16":
        m = numpy.asarray(numpy.stack(vectors) if isinstance(vectors, (list, tuple))
                          else vectors, dtype=numpy.float32)
        return numpy.ascontiguousarray(m), lambda r: r.astype(numpy.float16)
    import torch
    for v in vectors if isinstance(vectors, (list, tuple)) else (vectors,):
        if v.device.type != "cpu":
            raise ArgumentTypeError(f"{name} is a tensor on {v.device}: dpas reads CPU memory; "
                                    f"move it with .cpu()", name)
    t = torch.stack(list(vectors)) if isinstance(vectors, (list, tuple)) else vectors
    t = t.detach().to(torch.float32).contiguous()
    return t.numpy(), lambda r: torch.from_numpy(numpy.ascontiguousarray(r)).to(dt)


def aggregate(rule, grads, f=0, *, convention=None, threads=1, workspace=None, **options):
    """The robust aggregate of the rows of grads (n x d, float32 or float64: an array, a tensor
    or a list of rows) by rule, with f Byzantine: a vector of d values of the input's kind and
    dtype. convention picks a rule's convention ("byzfl" for ByzFL's Krum); options, each only
    for the rules that take it: m (multi_krum), iterations, start (geometric_median,
    centered_clipping), tau (centered_clipping), tolerance and smoothing (geometric_median),
    idx (monna), nnm=True and pre=[...] (pre-aggregations first; ("nnm", {"f": 2}) gives a step
    its own f, as ByzFL's NNM(f=2) before Average), isa ("generic", "avx2", "avx512"). A row with a NaN or an Inf is Byzantine: excluded and counted against f.
    workspace: None (this thread's, kept between calls), a dpas.Workspace, or False.
    A batch: grads of B x n x d (one C-contiguous numpy array or CPU tensor) gives the B
    aggregates, B x d, in one C call (the fixed cost of a call, about 8 us, paid once)."""
    grads, back = _half(grads)
    if _is_batch(grads):
        out = _Prepared("aggregate", rule, f, convention, threads, workspace, options)(grads)
    else:
        out = _run("aggregate", rule, grads, f, convention, threads, workspace, options, False)[0]
    return back(out) if back else out


def _is_batch(grads):
    return getattr(grads, "ndim", None) == 3 and not isinstance(grads, (list, tuple))


class _Prepared:
    """One rule (or a chain of pre-aggregations) with its options, checked once, for calls that
    repeat (dpas.byzfl's classes): a C-contiguous, aligned 2-D numpy float32/float64 array goes
    straight to the C call with the options already built (the C library checks what it always
    checks: the rule's condition, non-finite rows); anything else, and options that depend on
    the rows (start), go through aggregate() / preaggregate() with their every check."""

    def __init__(self, what, rule, f, convention, threads, workspace, options):
        self.what, self.rule, self.f, self.convention = what, rule, f, convention
        self.threads, self.workspace, self.options = threads, workspace, dict(options)
        self.fast = "start" not in options and "weights" not in options  # they depend on n
        self.lock = threading.Lock()  # one call at a time uses the prepared structs
        if not self.fast:
            return
        np = self.np = _numpy(what)
        lib = _lib()
        keep = self.keep = []
        if what == "aggregate":
            self.rp, r = _rule(lib, rule, convention)
            self.opts = _opts(lib, self.rp, r, f, threads, options, what, np, None, keep)
            fn = lib["dpas_aggregate_batch"]  # a handle of its own: plain addresses
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                           ctypes.c_size_t, ctypes.c_size_t, ctypes.c_ssize_t, ctypes.c_ssize_t,
                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_void_p]
        else:
            o = self.opts = _ffi.AggOpts()
            o.f = _int("f", f, minimum=0)
            o.threads = _int("threads", threads, minimum=0, maximum=256)
            arr, count = _pre(lib, rule)
            keep.append(arr)
            self.pre = arr
            o.pre, o.npre = ctypes.cast(arr, ctypes.c_void_p), count
            fn = lib["dpas_preaggregate_batch"]
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t,
                           ctypes.c_size_t, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_ssize_t, ctypes.c_void_p,
                           ctypes.c_void_p]
        fn.restype = ctypes.c_int
        self.fn = fn
        self.err = _ffi.Error()
        self.count = ctypes.c_size_t(0)
        self.opts_at, self.err_at = ctypes.addressof(self.opts), ctypes.addressof(self.err)
        self.count_at = ctypes.addressof(self.count)
        self.f32, self.f64 = np.dtype(np.float32), np.dtype(np.float64)
        if workspace is not None and workspace is not False:
            _workspace(workspace)  # checked now

    def _ok(self, x):
        return (type(x) is self.np.ndarray and 2 <= x.ndim <= 3 and (x.dtype == self.f32 or
                x.dtype == self.f64) and x.flags.c_contiguous and x.shape[-2] > 0 and
                x.size > 0)

    def __call__(self, x, inplace=False):
        """The aggregate of x (n x d), or of each set of a batch x (B x n x d: B aggregates in
        one C call, which pays the fixed cost of a call once). inplace (pre-aggregations): the
        result written over x, x[..., :n', :] returned."""
        if not self.fast or not self._ok(x) or not self.lock.acquire(blocking=False):
            if getattr(x, "ndim", 2) == 3 or _rows._is_tensor(x) and x.dim() == 3:
                return self._batch_other(x, inplace)
            return self._slow(x, inplace)
        try:
            base = x.ctypes.data
            if base % x.itemsize:  # unaligned: the full path says so
                return self._slow(x, inplace)
            if inplace and not x.flags.writeable:
                raise InvalidValue("inplace=True: grads is a read-only array; give "
                                   "inplace=False or a writable copy", "inplace")
            return self._call(x, base, inplace)
        finally:
            self.lock.release()

    def _batch_other(self, x, inplace=False):
        """A batch that is not a C-contiguous aligned numpy array: a CPU tensor goes through its
        numpy view (no copy) and back; anything else is refused saying what to do."""
        if _rows._is_tensor(x):
            if inplace:
                _writable(self.np, x)
            arr = _rows._tensor_numpy("grads", x)
            if self._ok(arr) and self.fast and arr.ctypes.data % arr.itemsize == 0:
                import torch
                with self.lock:
                    r = self._call(arr, arr.ctypes.data, inplace)
                    return x[:, :r.shape[1]] if inplace else torch.from_numpy(r)
        if not self.fast:
            raise ArgumentTypeError("a batch (B x n x d) cannot take start= or weights= (one "
                                    "set's): give the sets one at a time", "grads")
        raise ArgumentTypeError("a batch of gradients (B x n x d) must be one C-contiguous, "
                                "aligned float32 or float64 numpy array or CPU tensor with "
                                "n, d >= 1, got " + _describe(x) + ": convert it yourself "
                                "(numpy.ascontiguousarray copies); dpas does not copy "
                                "silently", "grads")

    def _slow(self, x, inplace=False):
        if self.what == "aggregate":
            return aggregate(self.rule, x, self.f, convention=self.convention,
                             threads=self.threads, workspace=self.workspace, **self.options)
        return preaggregate(self.rule, x, self.f, threads=self.threads, workspace=self.workspace,
                            inplace=inplace)

    def _call(self, x, base, inplace=False):
        batch = x.shape[0] if x.ndim == 3 else 1
        n, d = x.shape[-2:]
        code = 1 if x.dtype == self.f64 else 0
        st = x.strides
        set_step = st[0] if x.ndim == 3 else 0
        ws = self.workspace
        if ws is None:
            ws = getattr(_local, "ws", None) or _workspace(None)
        elif ws is False:
            ws = None
        if ws is not None and not ws._lock.acquire(blocking=False):
            raise InvalidValue("workspace is in use by another call (one call at a time per "
                               "dpas.Workspace)", "workspace")
        try:
            self.opts.workspace = ws._ptr if ws is not None else None
            err = self.err
            if self.what == "aggregate":
                out = self.np.empty(x.shape[:-2] + (d,), dtype=x.dtype)
                rc = self.fn(self.rp, base, code, batch, n, d, set_step, st[-2], self.opts_at,
                             out.ctypes.data, d * x.itemsize, self.err_at)
            else:
                out = x if inplace else self.np.empty(x.shape, dtype=x.dtype)
                ost = out.strides
                rc = self.fn(base, code, batch, n, d, set_step, st[-2], self.opts_at,
                             out.ctypes.data, ost[0] if x.ndim == 3 else 0, ost[-2],
                             self.count_at, self.err_at)
        finally:
            if ws is not None:
                ws._lock.release()
        if rc:
            _raise(err)
        if self.what == "aggregate":
            return out
        return out[..., :self.count.value, :]


def _describe(x):
    dt = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    return (f"{type(x).__module__}.{type(x).__name__}"
            + (f" of dtype {dt}" if dt is not None else "")
            + (f" and shape {tuple(shape)}" if shape is not None else ""))


def select(rule, grads, f=0, *, convention=None, threads=1, workspace=None, **options):
    """The indices of the rows a selecting rule (krum, multi_krum, bulyan, brute) chooses:
    krum its one row, multi_krum the m best first, bulyan in the order of selection, brute in
    ascending order. Same arguments as aggregate()."""
    grads = _half(grads)[0]
    return _run("select", rule, grads, f, convention, threads, workspace, options, True)[1]


_INT_PARAMETERS = {"evals", "seed"}
_INT_PARAMETERS_OF = {("mimic", "epsilon")}


def _attack_opts(lib, np, a, parameters, seed, rule, convention, rule_options, dtype, d, keep):
    names = [n.decode() for n in a.parameters if n is not None]
    opts = _ffi.AttackOpts()
    given = 0
    name = a.name.decode()
    for key, v in parameters.items():
        if key not in names:
            accepted = (f"its parameters are {', '.join(repr(n) for n in names)}" if len(names) > 1
                        else f"its parameter is {names[0]!r}" if names else "it takes none")
            raise ArgumentTypeError(f"attack {name!r} got an unexpected parameter {key!r}; "
                                    f"{accepted}", key)
        k = names.index(key)
        if key in _INT_PARAMETERS or (name, key) in _INT_PARAMETERS_OF:
            opts.value[k] = float(_int(key, v, minimum=0 if key != "evals" else 1,
                                       maximum=2**53))
        else:
            opts.value[k] = _check.real(key, v)
        given |= 1 << k
    opts.given = given
    if seed is not None:
        if name != "gaussian":
            raise ArgumentTypeError(f"attack {name!r} takes no seed (gaussian's)", "seed")
        opts.seed = _int("seed", seed, minimum=0, maximum=2**64 - 1)
    optimal = name.startswith("optimal_")
    if not optimal and (rule is not None or rule_options is not None or convention is not None):
        raise ArgumentTypeError(f"attack {name!r} takes no rule (the optimal_* attacks do)", "rule")
    if optimal:
        rp, r = _rule(lib, rule if rule is not None else "mean", convention)
        ro = dict(rule_options or {})
        if not isinstance(rule_options, (dict, type(None))):
            raise ArgumentTypeError("rule_options must be a dict of the rule's options", "rule_options")
        rf = ro.pop("f", 0)
        rt = ro.pop("threads", 1)
        holder = type("R", (), {"dtype": dtype, "d": d})()
        agg = _opts(lib, rp, r, rf, rt, ro, "attack", np, holder, keep)
        keep.append(agg)
        opts.rule = rp
        opts.agg = ctypes.cast(ctypes.pointer(agg), ctypes.c_void_p)
    return opts


def attack(name, honest, f, *, seed=None, rule=None, convention=None, rule_options=None,
           **parameters):
    """The f rows that f Byzantine replicas send against the honest rows (h x d, float32 or
    float64, as for aggregate): an (f, d) array of the input's kind and dtype, every row the same
    vector. Attacks and their parameters: sign_flip (scale), ipm (epsilon), alie (z),
    large_value (value), nan, inf (sign), mimic (epsilon: the honest row copied), gaussian (mu,
    sigma; seed=), optimal_ipm and optimal_alie (evals, start, delta, ratio; against rule=,
    convention=, rule_options={"f": ..., "pre": [...], ...}: the rule ByzFL's line search hurts
    most; the mean by default). Left out, a parameter takes its default (dpas/kernels.h)."""
    np = _numpy("attack")
    lib = _lib()
    err = _ffi.Error()
    p = ctypes.c_void_p()
    if lib.dpas_attack_find(_check.text("name", name), ctypes.byref(p), ctypes.byref(err)):
        _raise(err)
    a = ctypes.cast(p, ctypes.POINTER(_ffi.Attack)).contents
    f = _int("f", f, minimum=0)
    rows = _rows.rows(np, "honest", honest, allow_empty=True)
    keep = []
    opts = _attack_opts(lib, np, a, parameters, seed, rule, convention, rule_options, rows.dtype,
                        rows.d, keep)
    out = np.empty((f, rows.d), dtype=rows.dtype)
    base, step = out.ctypes.data, rows.d * out.itemsize
    orows = (ctypes.c_void_p * max(f, 1))(*[base + i * step for i in range(f)])
    used = ctypes.c_double(0)
    if lib.dpas_attack_rows_typed(p, rows.rows, rows.code, rows.n, rows.d, f, ctypes.byref(opts),
                                  orows, ctypes.byref(used), ctypes.byref(err)):
        _raise(err)
    del keep
    return rows.result(out)


def preaggregate(pre, grads, f=0, *, threads=1, workspace=None, inplace=False, **parameters):
    """The rows a pre-aggregation makes of grads (n x d, as for aggregate): nnm, clipping (c),
    arc, bucketing (s, seed), or a list of them applied in order (names or (name, {parameter:
    value}) pairs, as aggregate's pre=; each may take its own f, else f). The result has the input's kind and dtype: n rows, those
    of non-finite gradients (at most f, counted against it) NaN; with bucketing, its buckets.
    A batch B x n x d (one C-contiguous numpy array or CPU tensor) gives B x n' x d in one
    call. inplace=True writes the result over grads (float32/float64, writable) and returns
    grads[:n'] (a view): Clipping and ARC then read each row once for its norm and rewrite only
    the clipped rows, Bucketing writes its buckets over the first rows; NNM works in dpas's
    workspace and copies back."""
    np = _numpy("preaggregate")
    lib = _lib()
    if isinstance(pre, str):
        pre = [(pre, parameters)] if parameters else [pre]
    elif parameters:
        raise ArgumentTypeError("parameters go with one pre-aggregation named by a str; for a "
                                "list give (name, {parameter: value}) pairs", "pre")
    if inplace is not True and inplace is not False:
        raise ArgumentTypeError(f"inplace must be True or False, got {_check._show(inplace)}",
                                "inplace")
    grads, back = _half(grads)
    if back:
        if inplace:
            raise ArgumentTypeError("inplace=True needs float32 or float64 gradients: float16 "
                                    "and bfloat16 ones are computed in a float32 copy; give "
                                    "inplace=False (the result comes back in their dtype)",
                                    "inplace")
        return back(preaggregate(pre, grads, f, threads=threads, workspace=workspace))
    if inplace:
        _writable(np, grads)
    if _is_batch(grads):  # B x n x d: B x n' x d in one C call
        return _Prepared("preaggregate", pre, f, None, threads, workspace, {})(grads,
                                                                                 inplace=inplace)
    ws = _workspace(workspace)
    rows = _rows.rows(np, "grads", grads)
    o = _ffi.AggOpts()
    o.f = _int("f", f, minimum=0)
    o.threads = _int("threads", threads, minimum=0, maximum=256)
    arr, count = _pre(lib, pre)
    o.pre, o.npre = ctypes.cast(arr, ctypes.c_void_p), count
    if inplace:
        for k in rows.keep:
            if isinstance(k, np.ndarray) and not k.flags.writeable:
                raise InvalidValue("inplace=True: grads is read-only (a read-only array or "
                                   "buffer); give inplace=False or a writable copy", "inplace")
        out, orows = None, rows.rows
    else:
        out = np.empty((rows.n, rows.d), dtype=rows.dtype)
        base, step = out.ctypes.data, rows.d * out.itemsize
        orows = (ctypes.c_void_p * max(rows.n, 1))(*[base + i * step for i in range(rows.n)])
    nout = ctypes.c_size_t(0)
    err = _ffi.Error()
    with _Held(ws) as wsp:
        o.workspace = wsp
        if lib.dpas_preaggregate_typed(rows.rows, rows.code, rows.n, rows.d, ctypes.byref(o),
                                       orows, ctypes.byref(nout), ctypes.byref(err)):
            _raise(err)
    if inplace:
        return grads[:nout.value]
    return rows.result(out[:nout.value])


def _writable(np, grads):
    """inplace=True: a tensor that autograd tracks is refused (dpas would write behind its
    back); read-only numpy memory is refused by the callers."""
    items = grads if isinstance(grads, (list, tuple)) else (grads,)
    for g in items:
        if _rows._is_tensor(g) and g.requires_grad:
            raise InvalidValue("inplace=True on a tensor that requires grad: dpas would change "
                               "it behind autograd's back; pass .detach() or inplace=False",
                               "inplace")
        if isinstance(g, np.ndarray) and not g.flags.writeable:
            raise InvalidValue("inplace=True: grads is a read-only array; give inplace=False or "
                               "a writable copy", "inplace")
