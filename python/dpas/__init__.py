# SPDX-License-Identifier: Apache-2.0
"""dpas from Python: mlsysim's DataParallelAttackSurfaceScenario, computed by the dpas C library
through ctypes (standard library only). No equation lives here: every value comes from libdpas,
and the analyses (rules, costs, inventory, memory) come back as typed rows built from its C rows.

    >>> from dpas import Scenarios
    >>> scenario = Scenarios.ReferenceJobAttackSurface
    >>> round(float(scenario.accelerators), 4)
    1024.0

Every argument is checked before ctypes sees it; what escapes is a ValueError (dpas.Error and
its subclasses, one per error of the C library) or a TypeError (dpas.ArgumentTypeError), with
the C library's message where the library made the check.
"""
from __future__ import annotations

import ctypes
import fractions
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _check, _ffi, _request, _signatures, errors
from ._quantity import Quantity, exact, quantity
from ._request import Request as _Request
from ._version import __version__
from .errors import (ArgumentTypeError, Error, FileError, InvalidValue, OutOfMemory, ParseError,
                     PhysicsViolation, RangeError, Undefined, UnknownName)
from .rows import CostRow, CostRows, InventoryRow, MemoryCheck, RuleRow

__all__ = ["Scenarios", "Models", "Systems", "Hardware", "DataParallelAttackSurfaceScenario",
           "Workload", "Fleet", "Quantity", "rules", "scenario", "sweep", "keys", "SweepRows",
           "report", "cost", "step", "inventory", "memory",
           "version", "CostRow", "CostRows", "RuleRow",
           "InventoryRow", "MemoryCheck", "Error", "InvalidValue", "ParseError", "RangeError",
           "UnknownName", "Undefined", "OutOfMemory", "FileError", "PhysicsViolation",
           "ArgumentTypeError", "__version__"]

_lib = _ffi.lib


def version() -> str:
    """The C library's version."""
    return _lib.dpas_version().decode()


def _call(fn: Any, *args: Any) -> None:
    """Call a library function that returns 0 or a DPAS_E* code and takes a dpas_error * last."""
    err = _ffi.Error()
    if fn(*args, ctypes.byref(err)):
        errors.raise_c(err)


def _registry() -> ctypes.c_void_p:
    reg = ctypes.c_void_p()
    _call(_lib.dpas_registry_builtin, ctypes.byref(reg))
    return reg


_REG = _registry()  # the built-in registry: read-only, for the life of the process
_request._REG.append(_REG.value)


# ---- the registry as namespaces ----------------------------------------------------------------

class _Entry:
    """A registry entry: its path, short name, and fields."""

    def __init__(self, kind: str, ptr: Any) -> None:
        self._kind = kind
        self._ptr = ptr
        self.path: str = ptr.contents.path.decode()
        self.name: str = ptr.contents.name.decode()
        self.display: str = ptr.contents.display.decode()

    @property
    def source(self) -> str:
        return self._ptr.contents.source.decode()

    def __repr__(self) -> str:
        return f"<{self._kind} {self.path}>"


class Model(_Entry):
    @property
    def parameters(self) -> Optional[int]:
        """The parameter count (an int), or None when the registry gives none (DLRM)."""
        p = self._ptr.contents.parameters
        return p if p else None


class FleetEntry(_Entry):
    @property
    def count(self) -> int:
        return self._ptr.contents.count

    @property
    def accelerators_per_node(self) -> int:
        return self._ptr.contents.node.contents.accelerators_per_node

    @property
    def total_accelerators(self) -> int:
        return self.count * self.accelerators_per_node


class _Namespace:
    def __init__(self, path: str) -> None:
        self._path = path
        self._children: Dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
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

    def __dir__(self) -> List[str]:
        return sorted(self._children)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._children.values())

    def __repr__(self) -> str:
        return f"<{self._path}: {', '.join(sorted(self._children))}>"


class _LazyScenario:
    """A named scenario, built on first use (a stand-in in the namespace)."""

    def __init__(self, path: str) -> None:
        self.path = path


def _namespaces() -> Dict[str, _Namespace]:
    roots: Dict[str, _Namespace] = {}
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


# ---- the scenario --------------------------------------------------------------------------------

class Workload:
    """A workload outside the registry: a parameter count (an int, a whole float up to 2^53, or
    exact text: '175e9', '70.6e9', '7B') and a name (its label in reports; 'custom' when None)."""

    def __init__(self, parameters: Union[int, float, str], name: Optional[str] = None) -> None:
        self.parameters = parameters
        self.name = name

    def __repr__(self) -> str:
        return f"Workload(parameters={self.parameters!r}, name={self.name!r})"


class Fleet:
    """A fleet outside the registry: nodes x accelerators_per_node, optionally a registry node
    (which gives accelerators_per_node and the accelerator) and fabric (needed for times), and a
    name (its label in reports; 'custom' when None)."""

    def __init__(self, nodes: int, accelerators_per_node: Optional[int] = None,
                 node: Union[_Entry, str, None] = None, fabric: Union[_Entry, str, None] = None,
                 name: Optional[str] = None) -> None:
        self.nodes, self.accelerators_per_node = nodes, accelerators_per_node
        self.node, self.fabric, self.name = node, fabric, name

    def __repr__(self) -> str:
        return (f"Fleet(nodes={self.nodes!r}, accelerators_per_node={self.accelerators_per_node!r}, "
                f"node={self.node!r}, fabric={self.fabric!r}, name={self.name!r})")


_ATTRS = ["accelerators", "nodes", "accelerators_per_node", "accelerators_per_replica",
          "gradient_bytes", "checkpoint_bytes", "weight_bytes", "allreduce_factor", "gather_factor",
          "gather_traffic_ratio"]

Width = Union[str, int, float, Quantity, Any]


def _inputs(workload: Any, fleet: Any) -> Dict[str, Any]:
    """The seed's workload and fleet arguments as keys of the library's request."""
    keys: Dict[str, Any] = {}
    if isinstance(workload, Workload):
        keys["parameters"], keys["workload_name"] = workload.parameters, workload.name
        if workload.parameters is None:
            raise ArgumentTypeError("workload.parameters must be a count, got None", "parameters")
    elif isinstance(workload, (Model, str)):
        keys["workload"] = workload
    else:
        raise ArgumentTypeError(f"workload must be a registry model (Models.Language.GPT3), its "
                                f"name or a Workload, got {type(workload).__name__}", "workload")
    if isinstance(fleet, Fleet):
        keys.update(nodes=fleet.nodes, accelerators_per_node=fleet.accelerators_per_node,
                    node=fleet.node, fabric=fleet.fabric, fleet_name=fleet.name)
        if fleet.nodes is None:
            raise ArgumentTypeError("fleet.nodes must be a count, got None", "nodes")
    elif isinstance(fleet, (FleetEntry, str)):
        keys["fleet"] = fleet
    else:
        raise ArgumentTypeError(f"fleet must be a registry fleet (Systems.Clusters.Training_1K), "
                                f"its name or a Fleet, got {type(fleet).__name__}", "fleet")
    return keys


class DataParallelAttackSurfaceScenario:
    """mlsysim's DataParallelAttackSurfaceScenario: workload trained on fleet with dp_degree
    data-parallel replicas. Every attribute is computed by libdpas; byte counts are exact.

    The arguments become keys of the library's request (dpas.keys() lists them), which checks
    them as the CLI and the server do; dpas.scenario(**keys) builds one from the keys
    themselves. Its methods are requests of their own over these inputs: their keyword
    arguments are keys too, and an input given to a method overrides the scenario's.

    >>> s = DataParallelAttackSurfaceScenario(workload=Models.Language.Llama3_70B,
    ...     fleet=Fleet(nodes=12, accelerators_per_node=8), dp_degree=96,
    ...     gradient_bytes_per_param="bf16", checkpoint_bytes_per_param="14 B")
    >>> s.gradient_bytes
    Quantity(141200000000, 'byte')
    >>> s.gather_traffic_ratio
    48.0
    """

    accelerators: int
    nodes: int
    accelerators_per_node: int
    accelerators_per_replica: float
    gradient_bytes: Quantity
    checkpoint_bytes: Quantity
    weight_bytes: Quantity
    allreduce_factor: float
    gather_factor: int
    gather_traffic_ratio: float

    def __init__(self, workload: Union[Model, Workload, str], fleet: Union[FleetEntry, Fleet, str],
                 dp_degree: int, gradient_bytes_per_param: Width,
                 checkpoint_bytes_per_param: Width, weight_bytes_per_param: Optional[Width] = None,
                 *, _keys: Optional[Dict[str, Any]] = None) -> None:
        if _keys is None:
            _keys = _inputs(workload, fleet)
            _keys.update(dp_degree=dp_degree, gradient_bytes_per_param=gradient_bytes_per_param,
                         checkpoint_bytes_per_param=checkpoint_bytes_per_param,
                         weight_bytes_per_param=weight_bytes_per_param)
            for k in ("dp_degree", "gradient_bytes_per_param", "checkpoint_bytes_per_param"):
                if _keys[k] is None:  # a required argument, given as None
                    raise ArgumentTypeError(f"{k} must be given, got None", k)
        self._rq = _Request("eval", _keys)
        self._s = self._rq.scenario
        self._r = self._rq.report
        self.name: Optional[str] = self._rq.label

    def _request(self, analysis: str, keys: Dict[str, Any]) -> _Request:
        """A request of another analysis over this scenario's inputs (the keys override them)."""
        return _Request(analysis, keys, base=self._rq.keys)

    def _get(self, index: int) -> Any:
        v = _ffi.Value()
        _call(_lib.dpas_report_get, ctypes.byref(self._r), index, ctypes.byref(v))
        if v.kind == _ffi.VALUE_INT:
            return v.i
        if v.kind == _ffi.VALUE_REAL:
            return v.r
        return quantity(v.bytes)

    # inputs
    @property
    def dp_degree(self) -> int:
        return self._s.dp_degree

    @property
    def workload(self) -> str:
        """The workload's label: a registry path, or the name of a Workload ('custom')."""
        return self._s.workload.decode("utf-8", "replace")

    @property
    def fleet(self) -> str:
        """The fleet's label: a registry path, or the name of a Fleet ('custom')."""
        return self._s.fleet.decode("utf-8", "replace")

    @property
    def parameters(self) -> int:
        return self._s.parameters

    def _width(self, w: Any) -> Optional[Quantity]:
        if w.den == 0:
            return None
        return Quantity(fractions.Fraction(w.num, w.den), "byte")

    @property
    def gradient_bytes_per_param(self) -> Quantity:
        """The gradient's width, bytes per parameter (exact: 4.127 bit is 4127/8000 byte)."""
        return self._width(self._s.gradient_bytes_per_param)  # type: ignore[return-value]

    @property
    def checkpoint_bytes_per_param(self) -> Quantity:
        """The checkpoint's width, bytes per parameter."""
        return self._width(self._s.checkpoint_bytes_per_param)  # type: ignore[return-value]

    @property
    def weight_bytes_per_param(self) -> Optional[Quantity]:
        """The serving weights' width, bytes per parameter; None when not given (the seed's
        default)."""
        return self._width(self._s.weight_bytes_per_param)

    def report(self, explain: bool = False, attr: Union[str, Sequence[str], None] = None,
               **keys: Any) -> Dict[str, Any]:
        """The whole report as the CLI's JSON document gives it (a dict built from the C
        library's values): scenario, inputs, attributes, undefined, equations (with explain)
        and warnings. attr: only these attributes (an undefined one is an error). Byte counts are
        exact numbers (an int, or a Fraction when not whole), as in every row's dict view."""
        if explain is False and attr is None and not keys:
            return _report_dict(self._s, self._r, self.name, 0, False)
        return _report_of(self._request("eval", dict(keys, explain=explain, attr=attr)))

    def cost(self, rule: Union[str, Sequence[str], None] = None,
             schedule: Union[str, Sequence[str], None] = None, convention: Optional[str] = None,
             f: Optional[int] = None, steps: Optional[int] = None,
             iterations: Optional[int] = None, compute_rate: Union[float, str, None] = None,
             memory_bandwidth: Union[float, str, None] = None,
             calibration: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]],
                                None] = None,
             network_model: Optional[str] = None, **keys: Any) -> CostRows:
        """What each robust rule costs under each schedule, one CostRow per rule x schedule (the
        rows of 'dpas cost -o json'), rule-major, in a CostRows list that also carries the
        document's steps, links and notes.

        rule, schedule: a name or a list of names; None for every rule (each under its default
        convention) and every schedule. convention: 'blanchard' or 'byzfl' where a rule has it
        (Krum, Multi-Krum), for the rules named or, with rule None, for every rule. f: add
        whether each rule tolerates f Byzantine replicas (>= 0). steps (>= 1): bytes and times
        for that many steps. iterations (>= 1, default 10) of the iterative rules. compute_rate
        (FLOP/s per worker, > 0: a number, or text with its unit, '989 TFLOP/s') or
        memory_bandwidth (bytes/s per worker, > 0: a number, or text with its unit, '3.35 TB/s';
        each defaults to the node's accelerator's when the other is given): adds the rule's own compute time,
        max(flops / compute_rate, bytes / memory_bandwidth), and the bound that holds.
        calibration (nccl-tests output files: a path (str or pathlib.Path) is one file, commas
        and all; a list is several files of one cluster) and network_model: times from a
        calibration, as 'dpas cost
        --calibration'."""
        return _cost_of(self._request("cost", dict(
            keys, rule=rule, schedule=schedule, convention=convention, f=f, steps=steps,
            iterations=iterations, compute_rate=compute_rate, memory_bandwidth=memory_bandwidth,
            calibration=calibration,
            network_model=network_model)))

    def step(self, **keys: Any) -> Dict[str, Any]:
        """The training step around each rule x schedule's exchange, as 'dpas step -o json'
        gives it (a dict: compute_s, mfu and its basis, buckets, baseline_s, notes, and rows
        with exchange_s, exposed_s, rule_s, step_s and its band, added_s and share). Keys: tokens
        (or global_batch and sequence), mfu, bucket_bytes, precision, zero, rule, schedule, ...
        as 'dpas step'; the other inputs are this scenario's."""
        from ._step import step_of
        return step_of(self._request("step", keys))

    def inventory(self, **keys: Any) -> List[InventoryRow]:
        """What a step exposes on the wire and what lies at rest, in exact bytes (the rows of
        'dpas inventory -o json')."""
        return _inventory_of(self._request("inventory", keys))

    def memory(self, state: Optional[str] = None, zero: Optional[int] = None,
               **keys: Any) -> MemoryCheck:
        """Does one replica's training state fit the memory of its accelerators? state: a byte
        convention of the inventory (zero16 by default, megatron18, ...); zero: the ZeRO stage
        (0 to 3, stages above 0 with zero16). A state that does not fit is a MemoryCheck with
        fits False (and a message), not an exception: 'dpas memory' exits 2 for it."""
        return _memory_of(self._request("memory", dict(keys, state=state, zero=zero)))

    def sweep(self, **keys: Any) -> "SweepRows":
        """Vary one to three inputs (a list, or for dp_degree and parameters a range such as
        '16..1024*4'): a row per point, as 'dpas sweep -o json' gives them (see dpas.sweep);
        the other inputs are this scenario's."""
        return SweepRows._from(self._request("sweep", keys))

    def __repr__(self) -> str:
        return (f"<DataParallelAttackSurfaceScenario {self.name or ''} workload={self.workload} "
                f"fleet={self.fleet} dp_degree={self.dp_degree}>").replace("  ", " ")


# ---- the analyses of a resolved request, as rows built from the C library's rows ------------

def _report_of(r: _Request) -> Dict[str, Any]:
    return _report_dict(r.scenario, r.report, r.label, r.opts.attrs, bool(r.opts.explain))


def _cost_of(r: _Request) -> CostRows:
    out = ctypes.POINTER(_ffi.Cost)()
    r.call(_lib.dpas_request_cost, ctypes.byref(out))
    try:
        return CostRows._from_c(out.contents, out.contents.f >= 0)
    finally:
        _lib.dpas_cost_free(out)


def _inventory_of(r: _Request) -> List[InventoryRow]:
    rows = ctypes.POINTER(_ffi.InventoryRow)()
    n = ctypes.c_size_t()
    r.call(_lib.dpas_request_inventory, ctypes.byref(rows), ctypes.byref(n))
    try:
        return [InventoryRow._from_c(rows[i]) for i in range(n.value)]
    finally:
        _lib.dpas_free(rows)


def _memory_of(r: _Request) -> MemoryCheck:
    m = _ffi.Memory()
    r.call(_lib.dpas_request_memory, ctypes.byref(m))
    o, s = r.opts, r.scenario
    message = None
    if not m.fits:
        buf = ctypes.create_string_buffer(1024)
        need = _lib.dpas_memory_message(ctypes.byref(s), o.state, o.zero, ctypes.byref(m),
                                        buf, len(buf))
        if need >= len(buf):
            buf = ctypes.create_string_buffer(need + 1)
            _lib.dpas_memory_message(ctypes.byref(s), o.state, o.zero, ctypes.byref(m), buf,
                                     len(buf))
        message = buf.value.decode("utf-8", "replace")
    node = ctypes.cast(s.node_entry, ctypes.POINTER(_ffi.Node))
    accelerator = node.contents.accelerator.contents.path.decode()
    return MemoryCheck._from_c(r.label, o.state.contents, o.zero, m,
                               m.accelerators_per_replica, accelerator, message)


def _report_dict(s: _ffi.Scenario, r: _ffi.Report, label: Optional[str], attrs: int,
                 explain: bool) -> Dict[str, Any]:
    """The CLI's JSON report from the C values: the same keys, exact numbers for bytes."""
    def width(w: _ffi.Rational) -> Any:
        return None if not w.den else (fractions.Fraction(w.num, w.den) if w.num % w.den
                                       else w.num // w.den)

    fleet: Dict[str, Any] = {"name": _ffi.text(s.fleet) or "custom", "nodes": s.nodes,
                             "accelerators_per_node": s.accelerators_per_node}
    if s.node_entry:
        fleet["node"] = ctypes.cast(s.node_entry, ctypes.POINTER(_ffi.Node)).contents.path.decode()
    if s.fabric_entry:
        fleet["fabric"] = ctypes.cast(s.fabric_entry,
                                      ctypes.POINTER(_ffi.Fabric)).contents.path.decode()
    shown = [i for i in range(len(_ATTRS)) if not attrs or attrs & (1 << i)]
    undefined = {_ATTRS[i]: _ffi.text(_lib.dpas_report_undefined_reason(ctypes.byref(r), i))
                 for i in shown if r.undefined & (1 << i)}
    if attrs and undefined:  # an attribute asked for by name must have a value
        _call(_lib.dpas_report_get, ctypes.byref(r), shown[0] if not undefined else
              _ATTRS.index(next(iter(undefined))), ctypes.byref(_ffi.Value()))
    attributes: Dict[str, Any] = {}
    for i in shown:
        v = _ffi.Value()
        err = _ffi.Error()
        if _lib.dpas_report_get(ctypes.byref(r), i, ctypes.byref(v), ctypes.byref(err)):
            attributes[_ATTRS[i]] = None
        elif v.kind == _ffi.VALUE_BYTES:
            attributes[_ATTRS[i]] = exact(v.bytes)
        else:
            attributes[_ATTRS[i]] = v.i if v.kind == _ffi.VALUE_INT else v.r
    doc: Dict[str, Any] = {
        "scenario": label,
        "inputs": {"workload": {"name": _ffi.text(s.workload) or "custom",
                                "parameters": s.parameters},
                   "fleet": fleet, "dp_degree": s.dp_degree,
                   "gradient_bytes_per_param": width(s.gradient_bytes_per_param),
                   "checkpoint_bytes_per_param": width(s.checkpoint_bytes_per_param),
                   "weight_bytes_per_param": width(s.weight_bytes_per_param)},
        "attributes": attributes, "undefined": undefined}
    if explain:
        doc["equations"] = {_ATTRS[i]: _text_of(_lib.dpas_report_explain, ctypes.byref(s),
                                                ctypes.byref(r), i) for i in shown}
    doc["warnings"] = [_text_of(_lib.dpas_warning_message, ctypes.byref(r), 1 << b)
                       for b in range(32) if r.warnings & (1 << b)]
    return doc


def _text_of(fn: Any, *args: Any) -> str:
    """A snprintf-style C function's whole text."""
    n = fn(*args, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    fn(*args, buf, len(buf))
    return buf.value.decode("utf-8", "replace")


def _attr_property(index: int, doc: str) -> property:
    return property(lambda self: self._get(index), doc=doc)


for _i, _name in enumerate(_ATTRS):
    setattr(DataParallelAttackSurfaceScenario, _name,
            _attr_property(_i, f"The seed's {_name}, computed by libdpas."))


class SweepRows(List[Dict[str, Any]]):
    """The rows of a sweep (one dict per point kept, keyed by column: the varied inputs, then the
    metrics, as 'dpas sweep -o json' gives them; bytes as Quantity, None for null), with
    ``skipped`` (points whose inputs break a rule, left out) and ``first_skipped`` (why the
    first was)."""

    skipped: int
    first_skipped: Optional[str]

    @classmethod
    def _from(cls, r: _Request) -> "SweepRows":
        rows, skipped, first = r.sweep_rows()
        out = cls(rows)
        out.skipped, out.first_skipped = skipped, first
        out._request = r
        return out

    def render(self, format: str = "text") -> str:
        """The rows as 'dpas sweep -o FORMAT' prints them: 'text', 'csv', 'markdown' or 'json',
        written by the library's table writer (the CLI's bytes)."""
        return self._request.sweep_render(_format_of(format, _FORMATS))


def scenario(**keys: Any) -> DataParallelAttackSurfaceScenario:
    """A scenario from the keys of the library's request, as the CLI's flags and the server's
    query give them (dpas.keys() lists them): scenario (a named scenario to start from),
    workload or parameters (and workload_name), fleet or nodes and accelerators_per_node (and
    node, fabric, fleet_name), dp_degree and the widths.

    >>> scenario(scenario="ReferenceJobAttackSurface", dp_degree=64).gather_traffic_ratio
    32.0
    """
    return DataParallelAttackSurfaceScenario(None, None, None, None, None,  # type: ignore[arg-type]
                                             _keys=keys)


def sweep(**keys: Any) -> SweepRows:
    """Vary one to three inputs over lists or ranges: a row per point, the rows of 'dpas sweep -o
    json'. Any of dp_degree, parameters, workload, fleet, gradient_bytes_per_param,
    checkpoint_bytes_per_param, rule, schedule and f may be a list (or, for dp_degree,
    parameters and f, a range as text: '2..4096', '8..64+8', '1e9..1e12*10', '0..8+1'); attr
    names the metrics. With f and no dp_degree, each point's N is min_n(f) of its rule.

    >>> rows = sweep(scenario="ReferenceJobAttackSurface", dp_degree=[16, 64],
    ...              schedule="sharded", attr=["bytes_per_worker"])
    >>> [(r["dp_degree"], r["bytes_per_worker"]) for r in rows]
    [(16, Quantity(656250000000, 'byte')), (64, Quantity(689062500000, 'byte'))]
    """
    return SweepRows._from(_Request("sweep", keys))


# the library's name table of the formats (DPAS_FORMAT_MAP)
_FORMATS = {_lib.dpas_format_name(i).decode(): i for i in range(16)
            if _lib.dpas_format_name(i) is not None}
_PLOTS = {"svg": _ffi.PLOT_SVG, "png": _ffi.PLOT_PNG, "pdf": _ffi.PLOT_PDF}


def _format_of(name: Any, table: Dict[str, int]) -> int:
    if not isinstance(name, str) or name not in table:
        raise InvalidValue(f"format must be one of {', '.join(table)}, got {name!r}", "format")
    return table[name]


def _font_size(v: Any) -> float:
    """A font size given: a real > 0 (0 is the library's 'default', which None says)."""
    v = _check.real("font_size", v)
    if not v > 0:
        raise InvalidValue(f"font_size must be a number from 4 to 72, got {v!r}", "font_size")
    return v


def plot(file: Union[str, "os.PathLike[str]", None] = None, *, format: Optional[str] = None,
         width: Optional[int] = None, height: Optional[int] = None, font: Optional[str] = None,
         font_size: Optional[float] = None, xlabel: Optional[str] = None,
         ylabel: Optional[str] = None, ax: Any = None, **keys: Any) -> Any:
    """The plot of a sweep, drawn by the library as 'dpas sweep --plot FILE' draws it: y (the
    key 'y', default the first metric) against the first varied input (a number), a series per
    value of the second, a panel per value of the third (a page each in a PDF). format: 'svg'
    (default), 'png' or 'pdf' (cairo), or taken from file's extension; width, height (one
    panel), font, font_size, xlabel, ylabel as the CLI's options. Returns the bytes, and writes
    them to file when one is given (through the library's dpas_write_output).

    ax: a matplotlib Axes (or one per panel, a sequence or an array of them) to draw the same
    plot on instead, from the same numbers: the same series, legend, log axes and units, each
    panel's title; font, font_size, xlabel and ylabel apply, the size is the Axes'. Returns the
    list of Axes drawn on.

    >>> svg = plot(scenario="ReferenceJobAttackSurface", dp_degree="2..64", attr="max_f",
    ...            rule="median,krum")
    >>> svg.startswith(b"<?xml") and b">krum</text>" in svg
    True
    """
    if ax is not None:  # an Axes has its own figure: a file's options do not apply
        for name, v in (("file", file), ("format", format), ("width", width), ("height", height)):
            if v is not None:
                raise InvalidValue(f"{name} is for a plot written as bytes; with ax the plot is "
                                   f"drawn on the Axes given (got {name}={v!r})", name)
        from . import _axes
        size = None if font_size is None else _font_size(font_size)
        return _axes.draw(_Request("plot", keys).figure_data(), ax, xlabel, ylabel, font, size)
    path = os.fspath(file) if file is not None else None
    if format is None:
        ext = os.path.splitext(path)[1].lstrip(".").lower() if path else "svg"
        format = ext if ext in _PLOTS else "svg" if path is None else ext
    fmt = _format_of(format, _PLOTS)
    if path is not None:  # a file named for one format holds that format
        ext = os.path.splitext(path)[1].lstrip(".").lower()
        if ext in _PLOTS and _format_of(ext, _PLOTS) != fmt:
            raise InvalidValue(f"format {format!r} does not match the file {path!r} (.{ext})",
                               "format")
    # None is the library's default; a value given is a whole number (sizes) or a real (font),
    # and its bounds are the library's (100 to 20000, 4 to 72), as the CLI's
    look = {"width": None if width is None else _check.int64("width", width, minimum=1),
            "height": None if height is None else _check.int64("height", height, minimum=1),
            "font": font,
            "font_size": None if font_size is None else _font_size(font_size),
            "xlabel": xlabel, "ylabel": ylabel}
    data = _Request("plot", keys).figure(fmt, look)
    if path is not None:
        write_output(path, data, field="plot")
    return data


def report(**keys: Any) -> Dict[str, Any]:
    """The report of the scenario the keys give ('dpas eval -o json'), as
    DataParallelAttackSurfaceScenario.report gives it; attr and explain as there."""
    return _report_of(_Request("eval", keys))


def cost(**keys: Any) -> CostRows:
    """'dpas cost -o json' of the scenario and options the keys give, in one request (see
    DataParallelAttackSurfaceScenario.cost for the options)."""
    return _cost_of(_Request("cost", keys))


def step(**keys: Any) -> Dict[str, Any]:
    """'dpas step -o json' of the scenario and options the keys give, as a dict (see
    DataParallelAttackSurfaceScenario.step)."""
    from ._step import step_of
    return step_of(_Request("step", keys))


def inventory(**keys: Any) -> List[InventoryRow]:
    """'dpas inventory -o json' of the scenario the keys give."""
    return _inventory_of(_Request("inventory", keys))


def memory(**keys: Any) -> MemoryCheck:
    """'dpas memory -o json' of the scenario, state and zero stage the keys give."""
    return _memory_of(_Request("memory", keys))


def keys() -> List[str]:
    """The keyword arguments the library's request takes from Python (its key table)."""
    return list(_request.KEYS)


def rules(n: Optional[int] = None, f: Optional[int] = None,
          convention: Optional[str] = None, **keys: Any) -> List[RuleRow]:
    """The rule catalogue, one RuleRow per rule (the rows of 'dpas rules -o json'): with n
    (>= 1), each rule's max_f at n replicas; with f (>= 0), its min_n for f Byzantine ones.
    convention: None for each rule's default, 'all' for every convention, or a convention name.

    >>> {r.rule: r.max_f for r in rules(n=64)}["bulyan"]
    15
    """
    r = _Request("rules", dict(keys, n=n, f=f, convention=convention))
    rows = (_ffi.RuleRow * max(1, _lib.dpas_rule_count()))()
    count = ctypes.c_size_t()
    r.call(_lib.dpas_request_rules, rows, ctypes.byref(count))
    o = r.opts
    return [RuleRow._from_c(rows[i], o.n > 0, o.f >= 0) for i in range(count.value)]


# ---- the namespaces, with named scenarios built on first use ---------------------------------

class _ScenarioNamespace(_Namespace):
    def __getattr__(self, name: str) -> Any:
        v = _Namespace.__getattr__(self, name)
        if isinstance(v, _LazyScenario):
            s = scenario(scenario=v.path)
            self._children[name] = s
            return s
        return v


# Signatures and type hints of the keyword functions, from the library's key table.
_signatures.apply(scenario, "eval")
_signatures.apply(report, "eval")
_signatures.apply(cost, "cost")
_signatures.apply(sweep, "sweep")
_signatures.apply(inventory, "inventory")
_signatures.apply(memory, "memory")
_signatures.apply(step, "step")
_signatures.apply(plot, "plot")
_signatures.apply(rules, "rules")

_roots = _namespaces()
Models = _roots.get("Models", _Namespace("Models"))
Systems = _roots.get("Systems", _Namespace("Systems"))
Hardware = _roots.get("Hardware", _Namespace("Hardware"))
Scenarios = _ScenarioNamespace("Scenarios")
Scenarios._children = _roots["Scenarios"]._children if "Scenarios" in _roots else {}
del _roots

# The aggregation kernels and attacks (numpy only when they are called).
from .kernels import Workspace, aggregate, attack, preaggregate, select  # noqa: E402
__all__ += ["aggregate", "attack", "select", "preaggregate", "Workspace"]

from .output import write_output  # noqa: E402

__all__ += ["write_output"]
