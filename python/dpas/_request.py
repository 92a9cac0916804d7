# SPDX-License-Identifier: Apache-2.0
"""Keyword arguments to the C library's request (dpas/request.h). Python maps each keyword to a
key of the library's key table and each value to the text the C parser reads (a list to its
items); the library checks everything else, in one fixed order, and types the request, so that
Python refuses what the CLI and the server refuse, with the same message. Errors carry Python's
own hint ("give dp_degree=...") for a key that is missing."""
from __future__ import annotations

import ctypes
import decimal
import fractions
import math
import numbers
import os
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import _check, _ffi, errors
from ._quantity import Quantity, width_text
from .errors import ArgumentTypeError

_lib = _ffi.lib

# The library's key table: keyword -> (key, flags), for the keys Python takes (an alias the
# library knows, such as model for workload, is taken too).
KEYS: Dict[str, Tuple[int, int]] = {}
for _k in range(256):
    _name = _lib.dpas_key_name(_k)
    if _name is None:
        break
    _kw = _lib.dpas_key_keyword(_k)
    if _kw is not None:
        KEYS[_kw.decode()] = (_k, _lib.dpas_key_flags(_k))


def _key(kw: str) -> Tuple[int, int]:
    """The key of a keyword (or of an alias of one): (-1, 0) when the library has none."""
    if kw in KEYS:
        return KEYS[kw]
    k = _lib.dpas_key_from_name(_check.text("key", kw))
    if k >= 0 and _lib.dpas_key_keyword(k) is not None:
        return k, _lib.dpas_key_flags(k)
    if k >= 0:
        raise errors.InvalidValue(f"{kw} is not taken from Python", kw)
    return -1, 0

# How a Python value becomes the text of a key, by the key's type in the library's key table:
# integers (a str only where a sweep reads a list or a range), counts and bytes (an int, or text
# with a multiplier or a unit: '4M', '25MiB'), widths, a fraction, rates (text with its unit,
# '3.35 TB/s', or a number in the key's unit), names and text.
def _type(key: str) -> str:
    k = _lib.dpas_key_from_name(key.encode())
    return _lib.dpas_key_type_name(_lib.dpas_key_type_of(k)).decode() if k >= 0 else "text"


def _unit(key: str) -> str:
    u = _lib.dpas_key_unit(_lib.dpas_key_from_name(key.encode()))
    return u.decode() if u else ""


def _scalar(key: str, flags: int, v: Any) -> bytes:
    """One value as the library's text, by what the key holds: an integer an int (a str only
    where a sweep reads a range), a count or bytes an int, a whole float, Decimal or Fraction
    or text with a multiplier or unit ('4M', '25MiB'), a width text
    or a number of bytes, a name a str or a registry entry. Another type is an
    ArgumentTypeError; the value itself is the library's to check."""
    kind = _type(key)
    if isinstance(v, str) and (kind != "integer" or flags & _ffi.KEY_AXIS):
        return _check.text(key, v)
    if hasattr(v, "path") and isinstance(getattr(v, "path"), str):
        return _check.text(key, v.path)  # a registry entry: its path
    if kind == "width":
        t = width_text(key, v)
        if t is None:
            raise ArgumentTypeError(f"{key} must be text ('2 byte', 'bf16') or a number of "
                                    f"bytes, got None", key)
        return t
    if kind == "integer" and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
        # an integer key (a replica count, f, a ZeRO stage) is a whole number written as one:
        # the CLI and the server refuse "1.0" for it, so Python refuses 1.0 and True (a count,
        # bytes or a rate may be written 175e9)
        raise ArgumentTypeError(f"{key} must be an int, got {type(v).__name__} "
                                f"{_check._show(v)} (an integer key takes a whole number "
                                f"written as one: the CLI and HTTP refuse \"1.0\" too)", key)
    if kind in ("integer", "count", "bytes"):
        return _check.count_text(key, v).encode()
    if kind == "real" and isinstance(v, (float, int, decimal.Decimal, fractions.Fraction)) \
            and not isinstance(v, bool):
        return repr(float(v)).encode()  # the library checks the range
    if kind == "rate":
        unit = _unit(key)
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, decimal.Decimal)):
            raise ArgumentTypeError(f"{key} must be a number ({unit}) or text with its "
                                    f"unit, got {type(v).__name__} {_check._show(v)}", key)
        finite = not isinstance(v, (float, decimal.Decimal)) or math.isfinite(v)
        q = fractions.Fraction(v) if finite else None
        num = str(q.numerator) if q is not None and q.denominator == 1 else str(v)
        # in the base unit; the library checks the value (> 0, finite, in range) as for the CLI
        return f"{num} {unit}".encode()
    raise ArgumentTypeError(f"{key} must be a str, got {type(v).__name__} {_check._show(v)}", key)


def _file(key: str, v: Any) -> bytes:
    """A file name as Python makes it: a str, bytes or an os.PathLike (pathlib.Path), whole,
    commas and all (issue 29: a name holding a comma could not be given)."""
    if isinstance(v, os.PathLike):
        v = os.fspath(v)
    if isinstance(v, bytes):
        v = os.fsdecode(v)
    if not isinstance(v, str):
        raise ArgumentTypeError(f"{key} must be a path (str, bytes or os.PathLike) or a list of "
                                f"them, got {type(v).__name__} {_check._show(v)}", key)
    return _check.text(key, v)


def _items(key: str, flags: int, v: Any, sweep: bool) -> Tuple[bool, List[bytes]]:
    """(as items, texts): a list or tuple of a list or repeated key is its items, and of an
    input a sweep varies, in a sweep. A repeated key's files are items one by one: one path is
    one file (not split at commas, as the CLI's --calibration A,B is), a list is several."""
    if flags & _ffi.KEY_REPEAT:
        many = isinstance(v, (list, tuple))
        if many and not v:
            raise errors.InvalidValue(f"{key} needs at least one item, got an empty "
                                      f"{type(v).__name__}", key)
        return True, [_file(key, x) for x in (v if many else [v])]
    if flags & _ffi.KEY_SWITCH:
        return False, [b"true" if _check.flag(key, v) else b"false"]
    if not sweep:
        flags &= ~_ffi.KEY_AXIS
    if isinstance(v, (list, tuple)) and flags & (_ffi.KEY_LIST | _ffi.KEY_AXIS | _ffi.KEY_REPEAT):
        if not v:
            raise errors.InvalidValue(f"{key} needs at least one item, got an empty "
                                      f"{type(v).__name__}", key)
        return True, [_scalar(key, flags, x) for x in v]
    return False, [_scalar(key, flags, v)]


def hint(key: int) -> str:
    """Python's words for a missing key."""
    kw = _lib.dpas_key_keyword(key)
    name = (kw or _lib.dpas_key_name(key) or b"?").decode()
    return f"give {name}=..." if kw else f"{name} is not taken from Python"


class Request:
    """One resolved request of the C library: analysis, keys (keyword -> value; None: not given)
    and base inputs below them (the inputs of a scenario object that the keys override)."""

    def __init__(self, analysis: str, keys: Dict[str, Any],
                 base: Iterable[Tuple[bytes, bytes]] = ()) -> None:
        self._rq = ctypes.c_void_p()
        a = _lib.dpas_analysis_from_name(analysis.encode())
        err = _ffi.Error()
        if _lib.dpas_request_new(a, ctypes.byref(self._rq), ctypes.byref(err)):
            errors.raise_c(err)
        self.keys: List[Tuple[bytes, bytes]] = []  # the inputs given, as the library read them
        for key, value in base:
            self._call(_lib.dpas_request_base, key, value)
        for kw, v in keys.items():
            if v is None:
                continue
            k, flags = _key(kw)
            if k < 0:  # no key of the library's: its message names it
                self._call(_lib.dpas_request_set, _check.text("key", kw), b"")
            as_items, texts = _items(kw, flags, v, analysis in ("sweep", "plot"))
            for t in texts:
                self._call(_lib.dpas_request_add if as_items else _lib.dpas_request_set,
                           kw.encode(), t)
                if flags & _ffi.KEY_INPUT:
                    self.keys.append((kw.encode(), t))
        self._call(_lib.dpas_request_resolve, ctypes.c_void_p(_REG[0]))

    def _call(self, fn: Any, *args: Any) -> None:
        err = _ffi.Error()
        if fn(self._rq, *args, ctypes.byref(err)):
            missing = _lib.dpas_request_missing(self._rq)
            e = errors.from_c(err)
            if missing >= 0:
                e.hint = hint(missing)
            raise e

    def __del__(self) -> None:
        if getattr(self, "_rq", None):
            _lib.dpas_request_free(self._rq)
            self._rq = None

    @property
    def scenario(self) -> _ffi.Scenario:
        return _lib.dpas_request_scenario(self._rq).contents

    @property
    def report(self) -> _ffi.Report:
        return _lib.dpas_request_report(self._rq).contents

    @property
    def label(self) -> Optional[str]:
        return _ffi.text(_lib.dpas_request_label(self._rq))

    @property
    def opts(self) -> _ffi.RequestOpts:
        return _lib.dpas_request_opts_of(self._rq).contents

    def call(self, fn: Any, *args: Any) -> None:
        """An analysis over the resolved request (dpas_request_cost, ...)."""
        err = _ffi.Error()
        if fn(self._rq, *args, ctypes.byref(err)):
            errors.raise_c(err)

    def sweep_rows(self) -> Tuple[List[Dict[str, Any]], int, Optional[str]]:
        """The kept points' rows as dicts (column -> value), the number left out and why the
        first was."""
        sw = _lib.dpas_request_sweep(self._rq)
        n = _lib.dpas_sweep_ncolumns(sw)
        cols = (_ffi.Column * n)()
        _lib.dpas_sweep_columns(sw, cols)
        names = [c.name.decode() for c in cols]
        types = [c.type for c in cols]
        rows: List[Dict[str, Any]] = []

        def take(_ctx: Any, cells: Any) -> int:
            rows.append({names[i]: _cell(types[i], cells[i]) for i in range(n)})
            return 0

        tally = _ffi.SweepTally()
        err = _ffi.Error()
        if _lib.dpas_sweep_rows(sw, _ffi.SWEEP_FN(take), None, ctypes.byref(tally),
                                ctypes.byref(err)):
            errors.raise_c(err)
        first = tally.first.decode("utf-8", "replace") if tally.skipped else None
        return rows, tally.skipped, first


    def sweep_render(self, fmt: int) -> str:
        """The kept points' rows through the library's table writer, as 'dpas sweep -o FORMAT'
        prints them (the writer's text, escaping and numbers; nothing computed here)."""
        sw = _lib.dpas_request_sweep(self._rq)
        n = _lib.dpas_sweep_ncolumns(sw)
        cols = (_ffi.Column * n)()
        _lib.dpas_sweep_columns(sw, cols)
        out: List[bytes] = []

        def sink(_ctx: Any, data: Any, length: int) -> int:
            out.append(ctypes.string_at(data, length))
            return 0

        sink_fn = _ffi.SINK_FN(sink)
        opts = _ffi.WriterOpts(format=fmt, stream=1, document=1)  # JSON: the CLI's document
        w = ctypes.c_void_p()
        err = _ffi.Error()
        if _lib.dpas_writer_new(cols, n, ctypes.byref(opts), sink_fn, None, ctypes.byref(w),
                                ctypes.byref(err)):
            errors.raise_c(err)
        try:
            def take(_ctx: Any, cells: Any) -> int:
                return _lib.dpas_writer_row(w, cells, ctypes.byref(err))

            tally = _ffi.SweepTally()
            if _lib.dpas_sweep_rows(sw, _ffi.SWEEP_FN(take), None, ctypes.byref(tally),
                                    ctypes.byref(err)) or _lib.dpas_writer_end(w, ctypes.byref(err)):
                errors.raise_c(err)
        finally:
            _lib.dpas_writer_free(w)
        text = b"".join(out).decode("utf-8")
        return text + "\n" if fmt == _ffi.FORMAT_JSON else text

    def _sweep_figure(self) -> Any:
        """The library's figure of a plot request (dpas_sweep_figure_new): the caller frees it
        (dpas_sweep_figure_free)."""
        sw = _lib.dpas_request_sweep(self._rq)
        fig = ctypes.POINTER(_ffi.SweepFigure)()
        err = _ffi.Error()
        if _lib.dpas_sweep_figure_new(sw, self.opts.y, ctypes.byref(fig), ctypes.byref(err)):
            errors.raise_c(err)
        return fig

    def _titles(self, g: Any) -> Tuple[str, List[str]]:
        """The plot's title ('y vs x' unless the key title gives one) and each panel's."""
        y, x = g.yname.decode(), g.xname.decode()
        title = self.opts.title.decode() if self.opts.title else f"{y} vs {x}"
        panels = [f"{title} ({g.facet_input.decode()} {g.facet_names[k].decode()})"
                  for k in range(g.nfacets)] if g.facet_input else [title]
        return title, panels

    def figure(self, fmt: int, look: Dict[str, Any]) -> bytes:
        """The plot of a plot request as the library draws it (dpas_sweep_figure_new, then
        dpas_plot_figure): SVG, PNG or PDF bytes, as 'dpas sweep --plot' writes them."""
        fig = self._sweep_figure()
        err = _ffi.Error()
        try:
            g = fig.contents
            y, x = g.yname.decode(), g.xname.decode()
            title, panels = self._titles(g)

            def enc(v: Optional[str]) -> Optional[bytes]:
                return None if v is None else _check.text("plot", v)

            spec = _ffi.PlotSpec(title=enc(title), xlabel=enc(look.get("xlabel") or x),
                                 ylabel=enc(look.get("ylabel") or y), xlog=g.xlog, ylog=g.ylog,
                                 xunit=g.xunit, yunit=g.yunit, width=look.get("width") or 0,
                                 height=look.get("height") or 0, font=enc(look.get("font")),
                                 font_size=look.get("font_size") or 0.0,
                                 legend_title=g.series_input)
            titles = None
            if g.facet_input:
                titles = (ctypes.c_char_p * g.nfacets)(*[enc(t) for t in panels])
            data = ctypes.POINTER(ctypes.c_ubyte)()
            length = ctypes.c_size_t()
            if _lib.dpas_plot_figure(ctypes.byref(spec), fmt, g.series, g.nseries, g.nfacets,
                                     titles, ctypes.byref(data), ctypes.byref(length),
                                     ctypes.byref(err)):
                errors.raise_c(err)
            try:
                return ctypes.string_at(data, length.value)
            finally:
                _lib.dpas_free(data)
        finally:
            _lib.dpas_sweep_figure_free(fig)

    def figure_data(self) -> Dict[str, Any]:
        """What figure() draws, as numbers: the axes (names, log bases 0, 2 or 10, units 0
        plain, 1 bytes, 2 seconds), the series' and panels' inputs, and each panel's title and
        series (name, xs, ys: every point, as the library gives them to its plot)."""
        fig = self._sweep_figure()
        try:
            g = fig.contents
            _, panels = self._titles(g)

            def text(v: Optional[bytes]) -> Optional[str]:
                return None if v is None else v.decode()

            out = {"x": g.xname.decode(), "y": g.yname.decode(), "xlog": g.xlog, "ylog": g.ylog,
                   "xunit": g.xunit, "yunit": g.yunit, "series_input": text(g.series_input),
                   "facet_input": text(g.facet_input), "panels": []}
            for p in range(max(1, g.nfacets)):
                series = []
                for k in range(g.nseries):
                    s = g.series[p * g.nseries + k]
                    series.append((text(s.name), [s.x[i] for i in range(s.n)],
                                   [s.y[i] for i in range(s.n)]))
                out["panels"].append({"title": panels[p], "series": series})
            return out
        finally:
            _lib.dpas_sweep_figure_free(fig)


def _cell(t: int, c: _ffi.Cell) -> Any:
    """A C cell as a Python value: None for null, exact bytes as a Quantity."""
    from ._quantity import quantity
    if c.null:
        return None
    if t == _ffi.COL_TEXT:
        return _ffi.text(c.text)
    if t == _ffi.COL_INT:
        return c.i
    if t == _ffi.COL_UINT:
        return c.u
    if t == _ffi.COL_BOOL:
        return bool(c.boolean)
    if t == _ffi.COL_BYTES:
        return quantity(c.bytes)
    return c.real if c.real == c.real and abs(c.real) != float("inf") else None


_REG: List[int] = []  # the built-in registry, set by dpas/__init__.py


__all__ = ["Request", "KEYS", "hint", "Quantity"]
