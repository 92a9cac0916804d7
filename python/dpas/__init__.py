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
import json
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from . import _check, _ffi, errors
from ._quantity import Quantity, quantity, width_text
from .errors import (ArgumentTypeError, Error, FileError, InvalidValue, OutOfMemory, ParseError,
                     PhysicsViolation, RangeError, Undefined, UnknownName)
from .rows import CostRow, CostRows, InventoryRow, MemoryCheck, RuleRow

__all__ = ["Scenarios", "Models", "Systems", "Hardware", "DataParallelAttackSurfaceScenario",
           "Workload", "Fleet", "Quantity", "rules", "version", "CostRow", "CostRows", "RuleRow",
           "InventoryRow", "MemoryCheck", "Error", "InvalidValue", "ParseError", "RangeError",
           "UnknownName", "Undefined", "OutOfMemory", "FileError", "PhysicsViolation",
           "ArgumentTypeError"]

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


def _entry_text(field: str, v: Any) -> bytes:
    """A registry entry given as an entry object or as its name."""
    return _check.text(field, v.path if isinstance(v, _Entry) else v)


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
                 *, _scenario: Optional[str] = None) -> None:
        self._spec = None
        # every argument is checked and converted before the library sees any
        puts = []
        if _scenario is not None:
            puts.append((b"scenario", _scenario.encode(), "scenario"))
        else:
            puts += self._workload(workload) + self._fleet(fleet)
            puts.append((b"dp_degree", _check.count_text("dp_degree", dp_degree).encode(),
                         "dp_degree"))
            for key, w, required in (("gradient_bytes_per_param", gradient_bytes_per_param, True),
                                     ("checkpoint_bytes_per_param", checkpoint_bytes_per_param, True),
                                     ("weight_bytes_per_param", weight_bytes_per_param, False)):
                t = width_text(key, w)
                if t is None and required:
                    raise ArgumentTypeError(f"{key} must be text ('2 byte', 'bf16') or a number "
                                            f"of bytes, got None", key)
                if t is not None:
                    puts.append((key.encode(), t, key))
        spec = _lib.dpas_spec_new()
        if not spec:
            raise OutOfMemory("dpas: out of memory")
        self._spec = spec
        for key, value, field in puts:
            _call(_lib.dpas_spec_set, spec, key, value, field.encode())
        self._s = _ffi.Scenario()
        self._r = _ffi.Report()
        _call(_lib.dpas_spec_resolve, spec, _REG, ctypes.byref(self._s))
        _call(_lib.dpas_evaluate, ctypes.byref(self._s), ctypes.byref(self._r))
        if isinstance(workload, Workload) and workload.name is not None:
            self._kept("workload.name", workload.name, self._s.workload)
        if isinstance(fleet, Fleet) and fleet.name is not None:
            self._kept("fleet.name", fleet.name, self._s.fleet)
        label = _lib.dpas_spec_label(spec)
        self.name: Optional[str] = _ffi.text(label)

    @staticmethod
    def _workload(workload: Any) -> list:
        if isinstance(workload, Model):
            return [(b"workload", workload.path.encode(), "workload")]
        if isinstance(workload, str):
            return [(b"workload", _check.text("workload", workload), "workload")]
        if isinstance(workload, Workload):
            p = workload.parameters
            f = "workload.parameters"
            out = [(f.encode(), _check.text(f, p) if isinstance(p, str) else
                    _check.count_text(f, p).encode(), f)]
            if workload.name is not None:
                out.append((b"workload.name", _check.text("workload.name", workload.name),
                            "workload.name"))
            return out
        raise ArgumentTypeError(f"workload must be a registry model (Models.Language.GPT3), its "
                                f"name or a Workload, got {type(workload).__name__}", "workload")

    @staticmethod
    def _fleet(fleet: Any) -> list:
        if isinstance(fleet, FleetEntry):
            return [(b"fleet", fleet.path.encode(), "fleet")]
        if isinstance(fleet, str):
            return [(b"fleet", _check.text("fleet", fleet), "fleet")]
        if not isinstance(fleet, Fleet):
            raise ArgumentTypeError(f"fleet must be a registry fleet (Systems.Clusters.Training_1K), "
                                    f"its name or a Fleet, got {type(fleet).__name__}", "fleet")
        out = [(b"fleet.nodes", _check.count_text("fleet.nodes", fleet.nodes).encode(),
                "fleet.nodes")]
        if fleet.node is not None:
            out.append((b"fleet.node", _entry_text("fleet.node", fleet.node), "fleet.node"))
        if fleet.accelerators_per_node is not None:
            f = "fleet.accelerators_per_node"
            out.append((f.encode(), _check.count_text(f, fleet.accelerators_per_node).encode(), f))
        if fleet.fabric is not None:
            out.append((b"fleet.fabric", _entry_text("fleet.fabric", fleet.fabric), "fleet.fabric"))
        if fleet.name is not None:
            out.append((b"fleet.name", _check.text("fleet.name", fleet.name), "fleet.name"))
        return out

    @staticmethod
    def _kept(field: str, name: str, label: Optional[bytes]) -> None:
        """A name the library shortened would label another workload or fleet: refuse it."""
        if label is None or label.decode("utf-8", "replace") != name:
            kept = len(label or b"")
            raise InvalidValue(f"{field} is too long: the library keeps {kept} bytes of a name, got "
                               f"{len(name.encode())}", field)

    def __del__(self) -> None:
        if getattr(self, "_spec", None):
            _lib.dpas_spec_free(self._spec)
            self._spec = None

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

    def report(self, explain: bool = False) -> Dict[str, Any]:
        """The whole report as the CLI's JSON gives it (a dict)."""
        opts = _ffi.RenderOpts(format=_ffi.FORMAT_JSON, units=_ffi.UNITS_SI,
                               explain=int(_check.flag("explain", explain)), attrs=0,
                               label=self.name.encode() if self.name else None)
        err = _ffi.Error()
        ptr = _lib.dpas_render_report(ctypes.byref(self._s), ctypes.byref(self._r),
                                      ctypes.byref(opts), ctypes.byref(err))
        if not ptr:
            errors.raise_c(err)
        return json.loads(_ffi.take_string(_lib, ptr) or "null")

    def cost(self, rule: Union[str, Sequence[str], None] = None,
             schedule: Union[str, Sequence[str], None] = None, convention: Optional[str] = None,
             f: Optional[int] = None, steps: int = 1, iterations: Optional[int] = None,
             compute_rate: Optional[float] = None) -> CostRows:
        """What each robust rule costs under each schedule, one CostRow per rule x schedule (the
        rows of 'dpas cost -o json'), rule-major, in a CostRows list that also carries the
        document's steps, links and notes.

        rule, schedule: a name or a list of names; None for every rule (each under its default
        convention) and every schedule. convention: 'blanchard' or 'byzfl' where a rule has it
        (Krum, Multi-Krum), for the rules named or, with rule None, for every rule. f: add
        whether each rule tolerates f Byzantine replicas (>= 0). steps (>= 1): bytes and times
        for that many steps. iterations (>= 1, default 10) of the iterative rules. compute_rate
        (FLOP/s per worker, > 0): adds the rule's own compute time."""
        names = _check.names("rule", rule)
        conv = _check.optional_text("convention", convention)
        scheds = _check.names("schedule", schedule)
        f_c = -1 if f is None else _check.int64("f", f, 0)
        steps_c = _check.int64("steps", steps, 1)
        iter_c = 0 if iterations is None else _check.int64("iterations", iterations, 1)
        rate = 0.0
        if compute_rate is not None:
            rate = _check.real("compute_rate", compute_rate)
            if not (0 < rate < float("inf")):
                raise InvalidValue(f"compute_rate must be a finite number > 0 FLOP/s, got "
                                   f"{compute_rate!r}", "compute_rate")
        if not names and conv is not None:
            # a convention is used for every rule, not dropped: as the CLI's --convention alone
            names = [_lib.dpas_rule_at(i).contents.name for i in range(_lib.dpas_rule_count())
                     if _lib.dpas_rule_at(i).contents.is_default]
        ptrs = (ctypes.POINTER(_ffi.Rule) * max(1, len(names)))()
        for i, n in enumerate(names):
            p = ctypes.POINTER(_ffi.Rule)()
            _call(_lib.dpas_rule_select, n, conv, ctypes.byref(p))
            ptrs[i] = p
        mask = 0
        for s in scheds:
            k = _lib.dpas_schedule_from_name(s)
            if k < 0:
                known = _schedule_names()
                raise UnknownName(f"unknown schedule \"{s.decode()}\"; expected "
                                  f"{', '.join(known[:-1])} or {known[-1]}", "schedule")
            mask |= 1 << k
        opts = _ffi.CostOpts(rules=ptrs if names else None, nrules=len(names), schedules=mask,
                             iterations=iter_c, steps=steps_c, f=f_c, compute_rate=rate)
        out = ctypes.POINTER(_ffi.Cost)()
        _call(_lib.dpas_cost_compute, ctypes.byref(self._s), ctypes.byref(opts), ctypes.byref(out))
        try:
            return CostRows._from_c(out.contents, f is not None)
        finally:
            _lib.dpas_cost_free(out)

    def inventory(self) -> List[InventoryRow]:
        """What a step exposes on the wire and what lies at rest, in exact bytes (the rows of
        'dpas inventory -o json')."""
        n = ctypes.c_size_t()
        _call(_lib.dpas_inventory, ctypes.byref(self._s), None, 0, ctypes.byref(n))
        rows = (_ffi.InventoryRow * max(1, n.value))()
        _call(_lib.dpas_inventory, ctypes.byref(self._s), rows, n.value, ctypes.byref(n))
        return [InventoryRow._from_c(rows[i]) for i in range(n.value)]

    def memory(self, state: str = "zero16", zero: int = 0) -> MemoryCheck:
        """Does one replica's training state fit the memory of its accelerators? state: a byte
        convention of the inventory (zero16, megatron18, ...); zero: the ZeRO stage (0 to 3,
        stages above 0 with zero16). A state that does not fit is a MemoryCheck with fits False
        (and a message), not an exception: 'dpas memory' exits 2 for it."""
        name = _check.text("state", state)
        z = _check.whole("zero", zero)
        if not _check.INT_MIN <= z <= _check.INT_MAX:  # beyond a C int: the library's words
            raise InvalidValue(f"zero stage must be 0, 1, 2 or 3, got {z}", "zero")
        conv = ctypes.POINTER(_ffi.Convention)()
        _call(_lib.dpas_convention_find, name, ctypes.byref(conv))
        m = _ffi.Memory()
        _call(_lib.dpas_memory_check, ctypes.byref(self._s), conv, z, ctypes.byref(m))
        message = None
        if not m.fits:
            buf = ctypes.create_string_buffer(1024)
            need = _lib.dpas_memory_message(ctypes.byref(self._s), conv, z, ctypes.byref(m), buf,
                                            len(buf))
            if need >= len(buf):
                buf = ctypes.create_string_buffer(need + 1)
                _lib.dpas_memory_message(ctypes.byref(self._s), conv, z, ctypes.byref(m), buf,
                                         len(buf))
            message = buf.value.decode("utf-8", "replace")
        node = ctypes.cast(self._s.node_entry, ctypes.POINTER(_ffi.Node))
        accelerator = node.contents.accelerator.contents.path.decode()
        return MemoryCheck._from_c(self.name, conv.contents, z, m,
                                   self.accelerators_per_replica, accelerator, message)

    def __repr__(self) -> str:
        return (f"<DataParallelAttackSurfaceScenario {self.name or ''} workload={self.workload} "
                f"fleet={self.fleet} dp_degree={self.dp_degree}>").replace("  ", " ")


def _attr_property(index: int, doc: str) -> property:
    return property(lambda self: self._get(index), doc=doc)


for _i, _name in enumerate(_ATTRS):
    setattr(DataParallelAttackSurfaceScenario, _name,
            _attr_property(_i, f"The seed's {_name}, computed by libdpas."))


def _schedule_names() -> List[str]:
    out = []
    while True:
        n = _lib.dpas_schedule_name(len(out))
        if n is None:
            return out
        out.append(n.decode())


def rules(n: Optional[int] = None, f: Optional[int] = None,
          convention: Optional[str] = None) -> List[RuleRow]:
    """The rule catalogue, one RuleRow per rule (the rows of 'dpas rules -o json'): with n
    (>= 1), each rule's max_f at n replicas; with f (>= 0), its min_n for f Byzantine ones.
    convention: None for each rule's default, 'all' for every convention, or a convention name.

    >>> {r.rule: r.max_f for r in rules(n=64)}["bulyan"]
    15
    """
    n_c = -1 if n is None else _check.int64("n", n, 1)
    f_c = -1 if f is None else _check.int64("f", f, 0)
    conv = _check.optional_text("convention", convention)
    rows = (_ffi.RuleRow * max(1, _lib.dpas_rule_count()))()
    count = ctypes.c_size_t()
    _call(_lib.dpas_rules_list, n_c, f_c, conv, rows, ctypes.byref(count))
    return [RuleRow._from_c(rows[i], n is not None, f is not None) for i in range(count.value)]


# ---- the namespaces, with named scenarios built on first use ---------------------------------

class _ScenarioNamespace(_Namespace):
    def __getattr__(self, name: str) -> Any:
        v = _Namespace.__getattr__(self, name)
        if isinstance(v, _LazyScenario):
            s = DataParallelAttackSurfaceScenario(None, None, None, None, None,  # type: ignore[arg-type]
                                                  _scenario=v.path)
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
from .kernels import Workspace, aggregate, attack, preaggregate, select  # noqa: E402
__all__ += ["aggregate", "attack", "select", "preaggregate", "Workspace"]

from .output import write_output  # noqa: E402

__all__ += ["write_output"]
