"""dpas from Python: mlsysim's DataParallelAttackSurfaceScenario, computed by the dpas C library
through ctypes (standard library only). No equation lives here: every value comes from libdpas.

    >>> from dpas import Scenarios
    >>> scenario = Scenarios.ReferenceJobAttackSurface
    >>> round(float(scenario.accelerators), 4)
    1024.0
"""
import ctypes
import decimal
import fractions
import json
import numbers

from . import _ffi

__all__ = ["Scenarios", "Models", "Systems", "Hardware", "DataParallelAttackSurfaceScenario",
           "Workload", "Fleet", "Quantity", "rules", "version"]

_lib = _ffi.load()
_EINVAL, _EPARSE, _ERANGE, _ENOENT, _EUNDEF, _ENOMEM = -1, -2, -3, -4, -5, -6


def _raise(err):
    msg = err.message.decode("utf-8", "replace")
    if err.code == _ENOMEM:
        raise MemoryError(msg)
    raise ValueError(msg)


def version():
    """The C library's version."""
    return _lib.dpas_version().decode()


def _registry():
    reg = ctypes.c_void_p()
    err = _ffi.Error()
    if _lib.dpas_registry_builtin(ctypes.byref(reg), ctypes.byref(err)):
        _raise(err)
    return reg


_REG = _registry()  # the built-in registry: read-only, for the life of the process


# ---- quantities ----------------------------------------------------------------------------

_BYTE_UNITS = {"B": 1, "byte": 1, "bytes": 1, "bit": fractions.Fraction(1, 8),
               "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15, "EB": 10**18,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50, "EiB": 2**60}


class Quantity:
    """A byte count with its unit: exact (an int, or a Fraction for sub-byte widths).

    >>> q = Quantity(350000000000, "byte")
    >>> q.to("GB")
    Quantity(350, 'GB')
    >>> float(q.to("GiB"))
    325.9629011154175
    >>> print(Quantity(fractions.Fraction(14464610871, 8000)))
    1808076.358875 byte
    """

    __slots__ = ("magnitude", "units")

    def __init__(self, magnitude, units="byte"):
        if units not in _BYTE_UNITS:
            raise ValueError(f"units must be one of {', '.join(_BYTE_UNITS)}, got {units!r}")
        if isinstance(magnitude, fractions.Fraction) and magnitude.denominator == 1:
            magnitude = magnitude.numerator
        self.magnitude = magnitude
        self.units = units

    def to(self, units):
        """The same quantity in another byte unit (exact)."""
        if units not in _BYTE_UNITS:
            raise ValueError(f"units must be one of {', '.join(_BYTE_UNITS)}, got {units!r}")
        b = fractions.Fraction(self.magnitude) * _BYTE_UNITS[self.units]
        return Quantity(b / _BYTE_UNITS[units], units)

    @property
    def bytes(self):
        """The exact number of bytes (int, or Fraction when not whole)."""
        return self.to("byte").magnitude

    def __float__(self):
        return float(self.magnitude)

    def __int__(self):
        return int(self.magnitude)

    def __eq__(self, other):
        if isinstance(other, Quantity):
            return fractions.Fraction(self.to("byte").magnitude) == fractions.Fraction(other.to("byte").magnitude)
        return NotImplemented

    def __hash__(self):
        return hash(fractions.Fraction(self.to("byte").magnitude))

    def __repr__(self):
        return f"Quantity({self.magnitude!r}, {self.units!r})"

    def __str__(self):
        m = self.magnitude
        if isinstance(m, fractions.Fraction):  # an exact decimal when there is one
            d = decimal.Decimal(m.numerator) / decimal.Decimal(m.denominator)
            if fractions.Fraction(d) == m:
                m = d
        return f"{m} {self.units}"


def _bytes(b):
    if b.frac_num:
        return Quantity(b.whole + fractions.Fraction(b.frac_num, b.frac_den), "byte")
    return Quantity(b.whole, "byte")


def _width_text(name, w):
    """A width as text for the C parser: text as given, numbers as bytes, written exactly."""
    if w is None:
        return None
    if isinstance(w, Quantity):
        w = fractions.Fraction(w.bytes)
    if isinstance(w, str):
        return w
    if isinstance(w, bool) or not isinstance(w, numbers.Number):
        raise TypeError(f"{name} must be text ('2 byte', 'bf16') or a number of bytes, "
                        f"got {type(w).__name__}")
    if isinstance(w, numbers.Integral):
        return f"{int(w)} B"
    if isinstance(w, float):
        return f"{w!r} B"  # repr reads back as the same float; the C parser reads it exactly
    if isinstance(w, decimal.Decimal):
        return f"{w} B"
    if isinstance(w, fractions.Fraction):
        d = decimal.Decimal(w.numerator) / decimal.Decimal(w.denominator)
        if fractions.Fraction(d) != w:
            raise ValueError(f"{name} = {w} has no exact decimal form")
        return f"{d} B"
    raise TypeError(f"{name} must be text or a number of bytes, got {type(w).__name__}")


# ---- the registry as namespaces ----------------------------------------------------------------

class _Entry:
    """A registry entry: its path, short name, and fields."""

    def __init__(self, kind, ptr):
        self._kind = kind
        self._ptr = ptr
        self.path = ptr.contents.path.decode()
        self.name = ptr.contents.name.decode()
        self.display = ptr.contents.display.decode()

    @property
    def source(self):
        return self._ptr.contents.source.decode()

    def __repr__(self):
        return f"<{self._kind} {self.path}>"


class Model(_Entry):
    @property
    def parameters(self):
        """The parameter count (an int), or None when the registry gives none (DLRM)."""
        p = self._ptr.contents.parameters
        return p if p else None


class FleetEntry(_Entry):
    @property
    def count(self):
        return self._ptr.contents.count

    @property
    def accelerators_per_node(self):
        return self._ptr.contents.node.contents.accelerators_per_node

    @property
    def total_accelerators(self):
        return self.count * self.accelerators_per_node


class _Namespace:
    def __init__(self, path):
        self._path = path
        self._children = {}

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._children:
            return self._children[name]
        # a short name anywhere below resolves too (Models.GPT3)
        for child in self._children.values():
            if isinstance(child, _Namespace):
                try:
                    return getattr(child, name)
                except AttributeError:
                    pass
        raise AttributeError(f"{self._path} has no entry {name!r}")

    def __dir__(self):
        return sorted(self._children)

    def __iter__(self):
        return iter(self._children.values())

    def __repr__(self):
        return f"<{self._path}: {', '.join(sorted(self._children))}>"


def _namespaces():
    roots = {}
    classes = {"model": Model, "fleet": FleetEntry}
    for kind, (code, struct) in _ffi.KINDS.items():
        for i in range(_lib.dpas_registry_count(_REG, code)):
            ptr = ctypes.cast(_lib.dpas_registry_at(_REG, code, i), ctypes.POINTER(struct))
            path = ptr.contents.path.decode()
            parts = path.split(".")
            ns = roots.setdefault(parts[0], _Namespace(parts[0]))
            for k, part in enumerate(parts[1:-1], 1):
                ns = ns._children.setdefault(part, _Namespace(".".join(parts[:k + 1])))
            if kind == "scenario":
                ns._children[parts[-1]] = _LazyScenario(path)
            else:
                ns._children[parts[-1]] = classes.get(kind, _Entry)(kind, ptr)
    return roots


class _LazyScenario:
    """A named scenario, built on first use (a descriptor-like stand-in in the namespace)."""

    def __init__(self, path):
        self.path = path


# ---- the scenario --------------------------------------------------------------------------------

class Workload:
    """A workload outside the registry: a name and a parameter count (int or exact text)."""

    def __init__(self, parameters, name="custom"):
        self.parameters = parameters
        self.name = name


class Fleet:
    """A fleet outside the registry: nodes x accelerators_per_node, optionally a registry node
    (which gives accelerators_per_node) and fabric (needed for times)."""

    def __init__(self, nodes, accelerators_per_node=None, node=None, fabric=None, name="custom"):
        self.nodes, self.accelerators_per_node = nodes, accelerators_per_node
        self.node, self.fabric, self.name = node, fabric, name


_ATTRS = ["accelerators", "nodes", "accelerators_per_node", "accelerators_per_replica",
          "gradient_bytes", "checkpoint_bytes", "weight_bytes", "allreduce_factor", "gather_factor",
          "gather_traffic_ratio"]


def _int_text(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    return str(int(v))


class DataParallelAttackSurfaceScenario:
    """mlsysim's DataParallelAttackSurfaceScenario: workload trained on fleet with dp_degree
    data-parallel replicas. Every attribute is computed by libdpas; byte counts are exact.

    >>> s = DataParallelAttackSurfaceScenario(workload=Models.Language.Llama3_70B,
    ...     fleet=Fleet(nodes=12, accelerators_per_node=8), dp_degree=96,
    ...     gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14 B")
    >>> s.gradient_bytes
    Quantity(141200000000, 'byte')
    >>> s.gather_traffic_ratio
    48.0
    """

    def __init__(self, workload, fleet, dp_degree, gradient_bytes_per_param,
                 checkpoint_bytes_per_param, weight_bytes_per_param=None, *, _scenario=None):
        self._spec = None
        spec = _lib.dpas_spec_new()
        if not spec:
            raise MemoryError("dpas: out of memory")
        self._spec = spec
        err = _ffi.Error()

        def put(key, value, field):
            v = value.encode() if isinstance(value, str) else value
            if _lib.dpas_spec_set(spec, key.encode(), v, field.encode(), ctypes.byref(err)):
                _raise(err)

        if _scenario is not None:
            put("scenario", _scenario, "scenario")
        else:
            if isinstance(workload, Model):
                put("model", workload.path, "workload")
            elif isinstance(workload, str):
                put("model", workload, "workload")
            elif isinstance(workload, Workload):
                p = workload.parameters
                put("params", p if isinstance(p, str) else _int_text("workload.parameters", p),
                    "workload.parameters")
            else:
                raise TypeError(f"workload must be a registry model (Models.Language.GPT3), its name "
                                f"or a Workload, got {type(workload).__name__}")
            if isinstance(fleet, FleetEntry):
                put("fleet", fleet.path, "fleet")
            elif isinstance(fleet, str):
                put("fleet", fleet, "fleet")
            elif isinstance(fleet, Fleet):
                put("nodes", _int_text("fleet.nodes", fleet.nodes), "nodes")
                if fleet.node is not None:
                    put("node", fleet.node.path if isinstance(fleet.node, _Entry) else fleet.node, "fleet.node")
                if fleet.accelerators_per_node is not None:
                    put("accelerators_per_node", _int_text("fleet.accelerators_per_node",
                                                           fleet.accelerators_per_node),
                        "accelerators_per_node")
                if fleet.fabric is not None:
                    put("fabric", fleet.fabric.path if isinstance(fleet.fabric, _Entry) else fleet.fabric,
                        "fleet.fabric")
            else:
                raise TypeError(f"fleet must be a registry fleet (Systems.Clusters.Training_1K), its "
                                f"name or a Fleet, got {type(fleet).__name__}")
            put("dp", _int_text("dp_degree", dp_degree), "dp_degree")
            put("grad", _width_text("gradient_bytes_per_param", gradient_bytes_per_param),
                "gradient_bytes_per_param")
            put("ckpt", _width_text("checkpoint_bytes_per_param", checkpoint_bytes_per_param),
                "checkpoint_bytes_per_param")
            w = _width_text("weight_bytes_per_param", weight_bytes_per_param)
            if w is not None:
                put("weights", w, "weight_bytes_per_param")
        self._s = _ffi.Scenario()
        self._r = _ffi.Report()
        if _lib.dpas_spec_resolve(spec, _REG, ctypes.byref(self._s), ctypes.byref(err)):
            _raise(err)
        if _lib.dpas_evaluate(ctypes.byref(self._s), ctypes.byref(self._r), ctypes.byref(err)):
            _raise(err)
        label = _lib.dpas_spec_label(spec)
        self.name = label.decode() if label else None

    def __del__(self):
        if getattr(self, "_spec", None):
            _lib.dpas_spec_free(self._spec)
            self._spec = None

    def _get(self, index):
        v = _ffi.Value()
        err = _ffi.Error()
        if _lib.dpas_report_get(ctypes.byref(self._r), index, ctypes.byref(v), ctypes.byref(err)):
            _raise(err)
        if v.kind == 0:
            return v.i
        if v.kind == 1:
            return v.r
        return _bytes(v.bytes)

    # inputs
    @property
    def dp_degree(self):
        return self._s.dp_degree

    @property
    def workload(self):
        return self._s.workload.decode()

    @property
    def fleet(self):
        return self._s.fleet.decode()

    @property
    def parameters(self):
        return self._s.parameters

    def report(self, explain=False):
        """The whole report as the CLI's JSON gives it (a dict)."""
        opts = _ffi.RenderOpts(format=1, units=0, explain=int(explain), attrs=0,
                               label=self.name.encode() if self.name else None)
        err = _ffi.Error()
        ptr = _lib.dpas_render_report(ctypes.byref(self._s), ctypes.byref(self._r), ctypes.byref(opts),
                                      ctypes.byref(err))
        if not ptr:
            _raise(err)
        return json.loads(_ffi.take_string(_lib, ptr))

    def cost(self, rule=None, schedule=None, convention=None, f=-1, steps=1, iterations=0,
             compute_rate=0.0):
        """rule x schedule costs (the rows of 'dpas cost -o json'): bytes per worker, ratio to
        the ring AllReduce, times per step. rule and schedule: a name, a list of names, or None
        for all."""
        rules = [rule] if isinstance(rule, str) else list(rule or [])
        scheds = [schedule] if isinstance(schedule, str) else list(schedule or [])
        err = _ffi.Error()
        rule_ptrs = (ctypes.c_void_p * max(1, len(rules)))()
        for i, r in enumerate(rules):
            p = ctypes.c_void_p()
            conv = convention.encode() if convention else None
            if _lib.dpas_rule_select(r.encode(), conv, ctypes.byref(p), ctypes.byref(err)):
                _raise(err)
            rule_ptrs[i] = p
        names = ["allreduce", "allgather", "ps", "ps_separate", "sharded", "sharded_distance", "innetwork"]
        mask = 0
        for sname in scheds:
            if sname not in names:
                raise ValueError(f"schedule must be one of {', '.join(names)}, got {sname!r}")
            mask |= 1 << names.index(sname)
        opts = _ffi.CostOpts(rules=ctypes.cast(rule_ptrs, ctypes.c_void_p) if rules else None,
                             nrules=len(rules), schedules=mask, iterations=iterations, steps=steps,
                             f=f, compute_rate=compute_rate, all=1, format=1, units=0,
                             label=self.name.encode() if self.name else None)
        ptr = _lib.dpas_render_cost(ctypes.byref(self._s), ctypes.byref(opts), ctypes.byref(err))
        if not ptr:
            _raise(err)
        return json.loads(_ffi.take_string(_lib, ptr))["rows"]

    def inventory(self):
        """What a step exposes on the wire and at rest (rows of 'dpas inventory -o json')."""
        err = _ffi.Error()
        ptr = _lib.dpas_render_inventory(ctypes.byref(self._s), 1, 0, None, ctypes.byref(err))
        if not ptr:
            _raise(err)
        return json.loads(_ffi.take_string(_lib, ptr))["rows"]

    def __repr__(self):
        return (f"<DataParallelAttackSurfaceScenario {self.name or ''} workload={self.workload} "
                f"fleet={self.fleet} dp_degree={self.dp_degree}>").replace("  ", " ")


def _attr_property(index, doc):
    return property(lambda self: self._get(index), doc=doc)


for _i, _name in enumerate(_ATTRS):
    setattr(DataParallelAttackSurfaceScenario, _name,
            _attr_property(_i, f"The seed's {_name}, computed by libdpas."))


def rules(n=None, f=None, convention=None):
    """The rule catalogue (rows of 'dpas rules -o json'): with n, max_f; with f, min_n.

    >>> {r["rule"]: r["max_f"] for r in rules(n=64)}["bulyan"]
    15
    """
    err = _ffi.Error()
    ptr = _lib.dpas_render_rules(-1 if n is None else int(n), -1 if f is None else int(f),
                                 convention.encode() if convention else None, 1, ctypes.byref(err))
    if not ptr:
        _raise(err)
    return json.loads(_ffi.take_string(_lib, ptr))


# ---- the namespaces, with named scenarios built on first use ---------------------------------

class _ScenarioNamespace(_Namespace):
    def __getattr__(self, name):
        v = _Namespace.__getattr__(self, name)
        if isinstance(v, _LazyScenario):
            s = DataParallelAttackSurfaceScenario(None, None, None, None, None, _scenario=v.path)
            self._children[name] = s
            return s
        return v


_roots = _namespaces()
Models = _roots.get("Models", _Namespace("Models"))
Systems = _roots.get("Systems", _Namespace("Systems"))
Hardware = _roots.get("Hardware", _Namespace("Hardware"))
Scenarios = _ScenarioNamespace("Scenarios")
Scenarios._children = _roots["Scenarios"]._children if "Scenarios" in _roots else {}
del _roots

# The aggregation kernels and attacks (numpy only when they are called).
from .kernels import aggregate, attack, select  # noqa: E402
__all__ += ["aggregate", "attack", "select"]
