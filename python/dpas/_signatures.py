# SPDX-License-Identifier: Apache-2.0
"""Signatures of the keyword functions (cost, sweep, scenario, memory, ...) from the library's key
table: each keyword its analysis takes, keyword-only with default None, its annotation from the
key's kind (a list, a switch, a count, a width, a file) and its one line of help, so that
help(dpas.cost) and inspect.signature list the parameters the request takes, and a key added to
the table (src/lib/request/keys.c) appears here with no change to the Python code."""
import inspect
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _ffi
from ._quantity import Quantity

_lib = _ffi.lib

_COUNTS = {"N", "K", "T", "F", "STAGE", "COUNT"}
_Path = Union[str, "os.PathLike[str]"]


def _annotation(analysis: str, flags: int, metavar: Optional[str]) -> Any:
    """The type a key takes from Python, read from its flags and its metavar (a list or a range
    where a sweep varies it)."""
    axis = bool(flags & _ffi.KEY_AXIS) and analysis in ("sweep", "plot")
    if flags & _ffi.KEY_SWITCH:
        return Optional[bool]
    if metavar == "FILE":
        return Union[_Path, Sequence[_Path], None]
    if flags & _ffi.KEY_LIST:
        return Union[str, Sequence[str], None]
    if metavar == "WIDTH":  # "2 B", "bf16", a Quantity of bytes per parameter
        return Union[str, Quantity, Sequence[Union[str, Quantity]], None] if axis \
            else Union[str, Quantity, None]
    if metavar in _COUNTS:  # a list or a range ("2..4096") when a sweep varies it
        return Union[int, str, Sequence[int], None] if axis else Union[int, str, None]
    if metavar in ("FLOPS", "B/s"):
        return Union[int, float, str, None]
    return Union[str, Sequence[str], None] if axis else Optional[str]


def _table() -> List[Dict[str, Any]]:
    keys = []
    for k in range(256):
        name = _lib.dpas_key_name(k)
        if name is None:
            break
        kw = _lib.dpas_key_keyword(k)
        if kw is None:
            continue
        meta = _lib.dpas_key_metavar(k)
        helptext = _lib.dpas_key_help(k)
        keys.append({"key": k, "name": kw.decode(), "flags": _lib.dpas_key_flags(k),
                     "metavar": meta.decode() if meta else None,
                     "help": helptext.decode() if helptext else ""})
    return keys


_KEYS = _table()


def parameters(analysis: str) -> List[inspect.Parameter]:
    """The keyword-only parameters of an analysis ("cost", "sweep", ...), in the table's order."""
    a = _lib.dpas_analysis_from_name(analysis.encode())
    return [inspect.Parameter(k["name"], inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation=_annotation(analysis, k["flags"], k["metavar"]))
            for k in _KEYS if a >= 0 and _lib.dpas_analysis_takes(a, k["key"])]


def apply(fn: Callable[..., Any], analysis: str, extra: Sequence[inspect.Parameter] = ()) -> None:
    """Give fn (which takes **keys) the signature of the analysis' keys, its annotations, and a
    list of the keys with their help appended to its docstring."""
    params = list(extra) + parameters(analysis)
    ret = inspect.signature(fn).return_annotation
    fn.__signature__ = inspect.Signature(params, return_annotation=ret)  # type: ignore[attr-defined]
    fn.__annotations__ = dict({p.name: p.annotation for p in params}, **{"return": ret})
    a = _lib.dpas_analysis_from_name(analysis.encode())
    lines = [f"    {k['name']}: {k['help']}" for k in _KEYS
             if a >= 0 and _lib.dpas_analysis_takes(a, k["key"])]
    fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n\n    Keys (the library's key table):\n" + \
        "\n".join(lines) + "\n"
