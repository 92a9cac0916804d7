# SPDX-License-Identifier: Apache-2.0
"""The analyses' rows as Python objects, built from the C library's typed rows (dpas_cost_row,
dpas_rule_row, dpas_inventory_row, dpas_memory): never from rendered text.

Each row has attributes (``row.bytes_per_worker``) and a dict view (``row.as_dict()``,
``dict(row)``, ``row["bytes_per_worker"]``) whose keys and values are those of the CLI's
``-o json`` rows. The two differ only in types: an attribute holding bytes is a Quantity, the
dict view holds its exact number of bytes (int, or Fraction when not whole), as JSON does. A
value that does not apply is None (JSON's null): a C real that is NaN, a count of -1 ("none").

    >>> import dpas
    >>> row = dpas.Scenarios.ReferenceJobAttackSurface.cost(rule="median", schedule="sharded")[0]
    >>> row.bytes_per_worker
    Quantity(694531250000, 'byte')
    >>> row["bytes_per_worker"], row.ratio_to_allreduce, row.compute_s
    (694531250000, 1.0, None)
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Dict, Iterator, List, Optional, Tuple

from . import _ffi
from ._quantity import Number, Quantity, exact, human, quantity
from .errors import PhysicsViolation

__all__ = ["CostRow", "CostRows", "RuleRow", "InventoryRow", "MemoryCheck"]


def _plain(v: Any) -> Any:
    return v.bytes if isinstance(v, Quantity) else v


class _Row:
    """The dict view shared by every row: the keys the CLI's JSON row has, in its order."""

    _keys: Tuple[str, ...]

    def keys(self) -> Tuple[str, ...]:
        """The keys of the CLI's JSON row (some appear only when asked for: max_f, tolerates)."""
        return self._keys

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(key)
        return _plain(getattr(self, key))

    def as_dict(self) -> Dict[str, Any]:
        """The row as the CLI's JSON gives it: bytes as exact numbers, None for null."""
        return {k: _plain(getattr(self, k)) for k in self._keys}

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


def _real(v: float) -> Optional[float]:
    """A C real: None where it does not apply (NaN) or is not finite, as JSON's null."""
    return v if math.isfinite(v) else None


def _count(v: int) -> Optional[int]:
    """A C count where -1 means none."""
    return None if v < 0 else int(v)


def _text(p: Optional[bytes]) -> Optional[str]:
    return _ffi.text(p)


def _keys_field() -> Any:
    return dataclasses.field(default=(), repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class CostRow(_Row):
    """One rule under one schedule (dpas_cost_row): what it costs per worker and per step.

    Byte counts and times are for the ``steps`` asked for. ``max_f`` is the largest f the rule
    tolerates at dp_degree (None: not even 0); ``tolerates`` is whether it tolerates the f asked
    for (None, and no key in the dict view, when no f was asked). Bytes, ratio and times are None
    when the schedule cannot realise the rule (``why`` says why) or, for times, when the links
    are unknown. ``time_s`` is the row's one time: the calibration's when one is given, else the
    alpha-beta time of the schedule the fleet runs (hierarchical where pre-reducing inside a node
    is sound); ``time_model`` names the model that gave it, ``time_basis`` its evidence (None:
    from the links) and ``time_band_low_s``/``time_band_high_s`` its band by the same model
    (None when that model gives none). ``time_flat_s`` and ``time_hierarchical_s`` are the
    alternatives it was chosen from. ``compute_s`` needs a compute rate or a memory bandwidth: the rule's own compute
    as a roofline, max(``compute_flops`` / rate, ``compute_bytes`` / bandwidth), and
    ``compute_bound`` the bound that holds ("compute" or "memory"), ``total_s`` = ``time_s`` +
    ``compute_s`` (these four keys only then). With a calibration (and only then: no key
    in the dict view otherwise), ``time_extrapolated`` and ``time_rescaled`` say whether the time
    left the measured sizes or scales."""

    rule: str
    convention: str
    schedule: str
    realisable: bool
    why: Optional[str]
    max_f: Optional[int]
    tolerates: Optional[bool]
    bytes_per_worker: Optional[Quantity]
    bytes_received: Optional[Quantity]
    scalar_bytes: Optional[Quantity]
    ratio_to_allreduce: Optional[float]
    time_s: Optional[float]
    time_model: Optional[str]
    time_basis: Optional[str]
    time_band_low_s: Optional[float]
    time_band_high_s: Optional[float]
    time_flat_s: Optional[float]
    time_hierarchical_s: Optional[float]
    compute_s: Optional[float]
    time_extrapolated: Optional[bool] = None
    time_rescaled: Optional[bool] = None
    compute_flops: Optional[float] = None
    compute_bytes: Optional[float] = None
    compute_bound: Optional[str] = None
    total_s: Optional[float] = None
    _keys: Tuple[str, ...] = _keys_field()

    KEYS: ClassVar[Tuple[str, ...]] = (
        "rule", "convention", "schedule", "realisable", "why", "max_f", "tolerates",
        "bytes_per_worker", "bytes_received", "scalar_bytes", "ratio_to_allreduce", "time_s",
        "time_model", "time_basis", "time_band_low_s", "time_band_high_s", "time_flat_s",
        "time_hierarchical_s", "compute_s")
    COMPUTE_KEYS: ClassVar[Tuple[str, ...]] = (
        "compute_flops", "compute_bytes", "compute_bound", "total_s")
    NET_KEYS: ClassVar[Tuple[str, ...]] = ("time_extrapolated", "time_rescaled")

    @classmethod
    def _from_c(cls, r: _ffi.CostRow, with_f: bool, with_net: bool = False,
                with_compute: bool = False) -> "CostRow":
        ok = bool(r.realisable)
        net = with_net and ok
        basis = _ffi.lib.dpas_time_basis_name(r.time_basis) if ok else None
        rule = r.rule.contents
        return cls(rule=_text(rule.name) or "", convention=_text(rule.convention) or "",
                   schedule=_text(_ffi.lib.dpas_schedule_name(r.schedule)) or "",
                   realisable=ok, why=_text(r.why), max_f=_count(r.max_f),
                   tolerates=bool(r.tolerates) if with_f else None,
                   bytes_per_worker=quantity(r.bytes_per_worker) if ok else None,
                   bytes_received=quantity(r.bytes_received) if ok else None,
                   scalar_bytes=quantity(r.scalar_bytes) if ok else None,
                   ratio_to_allreduce=_real(r.ratio_to_allreduce),
                   time_s=_real(r.time_s),
                   time_model=_text(r.time_model) if ok else None,
                   time_basis=_text(basis),
                   time_band_low_s=_real(r.time_band_lo_s),
                   time_band_high_s=_real(r.time_band_hi_s),
                   time_flat_s=_real(r.time_flat_s),
                   time_hierarchical_s=_real(r.time_hierarchical_s),
                   compute_s=_real(r.compute_s),
                   time_extrapolated=bool(r.time_extrapolated) if net else None,
                   time_rescaled=bool(r.time_rescaled) if net else None,
                   compute_flops=_real(r.compute_flops) if with_compute else None,
                   compute_bytes=_real(r.compute_bytes) if with_compute else None,
                   compute_bound=_text(r.compute_bound) if with_compute else None,
                   total_s=_real(r.total_s) if with_compute else None,
                   _keys=tuple(k for k in cls.KEYS if with_f or k != "tolerates") +
                   (cls.COMPUTE_KEYS if with_compute else ()) +
                   (cls.NET_KEYS if with_net else ()))


class CostRows(List[CostRow]):
    """The rows of one cost analysis (a list of CostRow), with what the CLI's JSON document has
    beside them: ``dp_degree``, ``gradient_bytes`` (a Quantity), ``steps``, ``iterations``,
    ``links`` (the inter- and intra-node alpha and beta used, as the JSON's dict, or None when
    the fleet has no known fabric and node: then no times) and ``notes`` (how to read the rows)."""

    dp_degree: int
    gradient_bytes: Quantity
    steps: int
    iterations: int
    links: Optional[Dict[str, Any]]
    notes: List[str]

    @classmethod
    def _from_c(cls, c: _ffi.Cost, with_f: bool) -> "CostRows":
        with_compute = c.peak_flops > 0 or c.memory_bandwidth > 0
        rows = cls(CostRow._from_c(c.rows[i], with_f, c.net_kind >= 0, with_compute)
                   for i in range(c.nrows))
        rows.dp_degree, rows.steps, rows.iterations = c.dp_degree, c.steps, c.iterations
        rows.gradient_bytes = quantity(c.gradient_bytes)
        rows.notes = [c.notes[i].value.decode("utf-8", "replace") for i in range(c.nnotes)]
        rows.links = None
        if c.have_links:
            L = c.links
            fabric = (c.links_source or b"calibration") if c.calibrated else c.fabric
            rows.links = {"fabric": _text(fabric), "node": _text(c.node),
                          "inter_bandwidth": _real(L.inter_bandwidth),
                          "inter_latency": _real(L.inter_latency),
                          "intra_bandwidth": _real(L.intra_bandwidth),
                          "intra_latency": _real(L.intra_latency)}
        return rows


@dataclasses.dataclass(frozen=True)
class RuleRow(_Row):
    """One rule of the catalogue (dpas_rule_row) under one convention.

    ``condition`` is its resilience condition on n replicas with f Byzantine ones; ``max_f`` (the
    largest f at the n asked for) and ``min_n`` (the smallest n for the f asked for) are None
    when not asked for, and when there is none (mean tolerates no f); the dict view has those
    keys only when asked for. The capability flags come from the catalogue: ``coordinatewise``
    (shardable), ``needs_distances``, ``sums`` (an AllReduce realises it), ``iterative``,
    ``selects`` (picks whole gradients), ``preaggregation``."""

    rule: str
    convention: str
    condition: str
    max_f: Optional[int]
    min_n: Optional[int]
    coordinatewise: bool
    needs_distances: bool
    compute: str
    neighbours: Optional[str]
    source: str
    display: str = ""
    default: bool = False
    sums: bool = False
    iterative: bool = False
    selects: bool = False
    preaggregation: bool = False
    notes: Optional[str] = None
    _keys: Tuple[str, ...] = _keys_field()

    KEYS: ClassVar[Tuple[str, ...]] = (
        "rule", "convention", "condition", "max_f", "min_n", "coordinatewise", "needs_distances",
        "compute", "neighbours", "source")

    @classmethod
    def _from_c(cls, r: _ffi.RuleRow, with_n: bool, with_f: bool) -> "RuleRow":
        rule = r.rule.contents
        caps = rule.caps
        keys = tuple(k for k in cls.KEYS
                     if (k != "max_f" or with_n) and (k != "min_n" or with_f))
        return cls(rule=_text(rule.name) or "", convention=_text(rule.convention) or "",
                   condition=_text(rule.condition) or "",
                   max_f=_count(r.max_f) if with_n else None,
                   min_n=_count(r.min_n) if with_f else None,
                   coordinatewise=bool(caps & _ffi.CAP_COORDINATEWISE),
                   needs_distances=bool(caps & _ffi.CAP_DISTANCES),
                   compute=_text(rule.compute) or "", neighbours=_text(rule.neighbours),
                   source=_text(rule.source) or "", display=_text(rule.display) or "",
                   default=bool(rule.is_default), sums=bool(caps & _ffi.CAP_SUMS),
                   iterative=bool(caps & _ffi.CAP_ITERATIVE),
                   selects=bool(caps & _ffi.CAP_SELECTS),
                   preaggregation=bool(caps & _ffi.CAP_PREAGGREGATION),
                   notes=_text(rule.notes), _keys=keys)


@dataclasses.dataclass(frozen=True)
class InventoryRow(_Row):
    """What one step exposes on the wire (``where == "wire"``, per step) or what lies at rest
    (``"rest"``), in exact bytes (dpas_inventory_row); ``si`` and ``iec`` are the library's human
    forms ("350 GB", "325.963 GiB")."""

    where: str
    item: str
    basis: str
    bytes: Quantity
    si: str
    iec: str
    source: str
    _keys: Tuple[str, ...] = _keys_field()

    KEYS: ClassVar[Tuple[str, ...]] = ("where", "item", "basis", "bytes", "si", "iec", "source")

    @classmethod
    def _from_c(cls, r: _ffi.InventoryRow) -> "InventoryRow":
        return cls(where=_text(r.where) or "", item=_text(r.item) or "",
                   basis=_text(r.basis) or "", bytes=quantity(r.bytes),
                   si=human(r.bytes, _ffi.UNITS_SI), iec=human(r.bytes, _ffi.UNITS_IEC),
                   source=_text(r.source) or "", _keys=cls.KEYS)


@dataclasses.dataclass(frozen=True)
class MemoryCheck(_Row):
    """Does one replica's training state fit the memory of its accelerators (dpas_memory)?

    ``headroom_bytes`` is exact and signed: the free memory when it fits, minus the shortfall
    when it does not (``fits`` False; ``message`` then says so with the numbers, as the CLI's
    physics violation does). The dict view is the CLI's ``memory -o json`` document (which the
    CLI prints only when it fits)."""

    scenario: Optional[str]
    state: str
    zero_stage: int
    state_bytes: Quantity
    capacity_bytes: Quantity
    accelerators_per_replica: float
    accelerator: str
    headroom_bytes: Quantity
    utilisation: float
    fits: bool
    smallest_zero_stage_that_fits: Optional[int]
    largest_dp_degree_that_fits: Optional[int]
    smallest_dp_degree_that_fits: Optional[int]
    smallest_nodes_that_fits: Optional[int]
    smallest_recompute_that_fits: Optional[str]
    optimizer: Optional[str]
    optimizer_bytes_per_param: int
    activations_counted: bool
    activations_bytes: Quantity
    activations_per_layer_bytes: Quantity
    activations: str
    recompute: str
    micro_batch: int
    sequence: int
    layers: int
    total_bytes: Quantity
    source: str
    message: Optional[str] = None
    _keys: Tuple[str, ...] = _keys_field()

    def require(self) -> "MemoryCheck":
        """self when the state fits; else PhysicsViolation with the message (as 'dpas memory'
        exits 2)."""
        if not self.fits:
            raise PhysicsViolation(self.message or "the training state does not fit", "memory")
        return self

    KEYS: ClassVar[Tuple[str, ...]] = (
        "scenario", "state", "zero_stage", "state_bytes", "capacity_bytes",
        "accelerators_per_replica", "accelerator", "headroom_bytes", "utilisation", "fits",
        "smallest_zero_stage_that_fits", "largest_dp_degree_that_fits",
        "smallest_dp_degree_that_fits", "smallest_nodes_that_fits", "smallest_recompute_that_fits",
        "optimizer",
        "optimizer_bytes_per_param",
        "activations_counted", "activations_bytes", "activations_per_layer_bytes", "activations",
        "recompute", "micro_batch", "sequence", "layers", "total_bytes", "source")

    @classmethod
    def _from_c(cls, label: Optional[str], conv: _ffi.Convention, zero: int, m: _ffi.Memory,
                per_replica: float, accelerator: str, message: Optional[str]) -> "MemoryCheck":
        head: Number = exact(m.headroom)
        return cls(scenario=label, state=_text(conv.name) or "", zero_stage=zero,
                   state_bytes=quantity(m.state), capacity_bytes=quantity(m.capacity),
                   accelerators_per_replica=per_replica, accelerator=accelerator,
                   headroom_bytes=Quantity(head if m.fits else -head, "byte"),
                   utilisation=m.utilisation, fits=bool(m.fits),
                   smallest_zero_stage_that_fits=(m.smallest_zero_stage
                                                  if m.smallest_zero_stage >= 0 else None),
                   largest_dp_degree_that_fits=(m.largest_dp_degree
                                                if m.largest_dp_degree >= 1 else None),
                   smallest_dp_degree_that_fits=(m.smallest_dp_degree
                                                 if m.smallest_dp_degree >= 1 else None),
                   smallest_nodes_that_fits=(m.smallest_nodes
                                             if m.smallest_dp_degree >= 1 else None),
                   smallest_recompute_that_fits=(
                       ("none", "selective", "full")[m.smallest_recompute]
                       if m.smallest_recompute >= 0 else None),
                   optimizer=_text(m.optimizer), optimizer_bytes_per_param=m.optimizer_bytes,
                   activations_counted=bool(m.activations_counted),
                   activations_bytes=quantity(m.activations),
                   activations_per_layer_bytes=quantity(m.activations_per_layer),
                   activations=m.activations_note.decode("utf-8", "replace"),
                   recompute=_text(m.recompute) or "none", micro_batch=m.micro_batch,
                   sequence=m.sequence, layers=m.layers, total_bytes=quantity(m.total),
                   source=_text(conv.source) or "",
                   message=message, _keys=cls.KEYS)
