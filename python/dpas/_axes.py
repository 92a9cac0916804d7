# SPDX-License-Identifier: Apache-2.0
"""dpas.plot(ax=...): the plot of a sweep drawn on matplotlib Axes, the same plot the library
draws to a file (src/lib/render/plot.c) from the same numbers (Request.figure_data): y against
the first varied input, a series per value of the second, a panel (an Axes) per value of the
third; log axes of base 2 or 10 and tick labels in bytes or seconds as the library chooses them;
a point with a non-finite coordinate, or one not positive on a log axis, left out; every series
in the legend: one that lies on an earlier one dashed and named '(same as OTHER)', one with no
point that can be drawn said so. matplotlib is imported only here, when an Axes is given."""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence

from . import _ffi
from ._quantity import human
from .errors import ArgumentTypeError, InvalidValue

AXIS_BYTES, AXIS_SECONDS = 1, 2  # enum dpas_axis_unit
MARKERS_UP_TO = 200  # points of a series drawn as dots too, as the library's plot


def _usable(log: int, v: float) -> bool:
    return math.isfinite(v) and (not log or v > 0)


def _coincide(a: Any, b: Any, xlog: int, ylog: int) -> bool:
    """Do series a and b draw the same points (the same x and, within rounding, the same y)?"""
    (_, ax, ay), (_, bx, by) = a, b
    if len(ax) != len(bx):
        return False
    drawn = 0
    for i in range(len(ax)):
        ua = _usable(xlog, ax[i]) and _usable(ylog, ay[i])
        ub = _usable(xlog, bx[i]) and _usable(ylog, by[i])
        if ua != ub:
            return False
        if not ua:
            continue
        if ax[i] != bx[i] or abs(ay[i] - by[i]) > 1e-9 * max(abs(ay[i]), abs(by[i])):
            return False
        drawn += 1
    return drawn > 0


def tick_text(unit: int, v: float) -> str:
    """A tick's label as the library writes it: SI bytes ('1 GB'), seconds ('10 ms'), else %g."""
    if unit == AXIS_BYTES and v >= 1 and math.isfinite(v):
        if v < 2.0 ** 64:
            return human(_ffi.Bytes(int(math.floor(v + 0.5)), 0, 1), _ffi.UNITS_SI)
        return ("%.3f" % (v / 1e18)).rstrip("0").rstrip(".") + " EB"
    if unit == AXIS_SECONDS and v != 0 and math.isfinite(v):
        a = abs(v)
        return ("%g s" % v if a >= 1 else "%g ms" % (v * 1e3) if a >= 1e-3
                else "%g \u00b5s" % (v * 1e6))
    return "%g" % v


def _axes_list(ax: Any, panels: int) -> List[Any]:
    """The Axes to draw each panel on: one Axes for one panel, a sequence of as many as the
    panels (the third varied input's values) otherwise."""
    if hasattr(ax, "plot") and hasattr(ax, "set_xscale"):
        many = [ax]
    elif isinstance(ax, (str, bytes)) or not isinstance(ax, Sequence) and not hasattr(ax, "flat"):
        raise ArgumentTypeError(f"ax must be a matplotlib Axes or a sequence of them, got "
                                f"{type(ax).__name__}", "ax")
    else:
        many = list(ax.flat) if hasattr(ax, "flat") else list(ax)
        for a in many:
            if not (hasattr(a, "plot") and hasattr(a, "set_xscale")):
                raise ArgumentTypeError(f"ax must be a matplotlib Axes or a sequence of them, "
                                        f"got an item of type {type(a).__name__}", "ax")
    if len(many) != panels:
        raise InvalidValue(f"ax must give one Axes per panel: this plot has {panels} "
                           f"panel{'s' if panels != 1 else ''} (one per value of its third "
                           f"varied input), got {len(many)} Axes", "ax")
    return many


def draw(data: Dict[str, Any], ax: Any, xlabel: Optional[str], ylabel: Optional[str],
         font: Optional[str], font_size: Optional[float]) -> List[Any]:
    """Draws each panel of figure_data() on its Axes; returns the Axes."""
    try:
        from matplotlib.ticker import FuncFormatter
    except ImportError as e:  # an Axes without matplotlib cannot be: say what is missing
        raise InvalidValue("ax needs matplotlib (Debian: python3-matplotlib): " + str(e),
                           "ax") from None
    panels = data["panels"]
    many = _axes_list(ax, len(panels))
    xlog, ylog = data["xlog"], data["ylog"]
    text: Dict[str, Any] = {}
    if font is not None:
        text["fontfamily"] = font
    size = font_size
    for a, panel in zip(many, panels):
        series = panel["series"]
        kept = [(name, [x for x, y in zip(xs, ys) if _usable(xlog, x) and _usable(ylog, y)],
                 [y for x, y in zip(xs, ys) if _usable(xlog, x) and _usable(ylog, y)])
                for name, xs, ys in series]
        if not any(xs for _, xs, _ in kept):
            raise InvalidValue("nothing to plot: no point has finite%s coordinates"
                               % (", positive" if xlog or ylog else ""), "plot")
        if xlog:
            a.set_xscale("log", base=xlog)
        if ylog:
            a.set_yscale("log", base=ylog)
        for k, (name, xs, ys) in enumerate(kept):
            label = name or ""
            same = next((series[j][0] for j in range(k)
                         if _coincide(series[j], series[k], xlog, ylog)), None)
            if same is not None:
                label += f" (same as {same or ''})"
            if not xs:
                any_value = any(math.isfinite(x) and math.isfinite(y)
                                for x, y in zip(series[k][1], series[k][2]))
                label += (" (every point left out)" if not any_value
                          else " (no positive value: not drawn on a log axis)")
            a.plot(xs, ys, linestyle="--" if same is not None else "-",
                   marker="o" if len(xs) <= MARKERS_UP_TO else None, markersize=3,
                   label=label if (len(series) > 1 or name) else None, color="C%d" % (k % 10))
        # the library's tick labels: bytes and seconds in their units, numbers as %g (2, 64:
        # not 2^1, 2^6 on a log axis)
        for axis, unit in ((a.xaxis, data["xunit"]), (a.yaxis, data["yunit"])):
            axis.set_major_formatter(FuncFormatter(lambda v, _pos, u=unit: tick_text(u, v)))
        a.set_xlabel(xlabel or data["x"], fontsize=size, **text)
        a.set_ylabel(ylabel or data["y"], fontsize=size, **text)
        a.set_title(panel["title"], fontsize=size, **text)
        if size is not None:
            a.tick_params(labelsize=size)
        if len(series) > 1 or (series and series[0][0]):
            a.legend(title=data["series_input"], fontsize=size, title_fontsize=size)
        a.grid(True, color="#e0e0e0")
    return many
