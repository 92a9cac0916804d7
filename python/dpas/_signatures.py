# SPDX-License-Identifier: Apache-2.0
"""Signatures of the keyword functions (cost, sweep, scenario, memory, ...) from the library's key
table: each keyword its analysis takes, keyword-only with default None, its annotation from the
key's kind (a list, a switch, a count, a width, a file) and its one line of help, so that
help(dpas.cost) and inspect.signature list the parameters the request takes, and a key added to
the table (src/lib/request/keys.c) appears here with no change to the Python code."""
import ctypes
import inspect
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _ffi
from ._quantity import Quantity

_lib = _ffi.lib

_Path = Union[str, "os.PathLike[str]"]


def _annotation(analysis: str, flags: int, kind: str) -> Any:
    """The type a key takes from Python, read from its type in the key table ("integer",
    "width", ...) and its flags: a list where the key is a list, and a sequence (or a range
    given as text, "2..4096") only where the analysis sweeps the key."""
    axis = bool(flags & _ffi.KEY_AXIS) and analysis in ("sweep", "plot")
    ranged = axis and bool(flags & _ffi.KEY_RANGE)
    if kind == "switch":
        return Optional[bool]
    if kind == "file":
        return Union[_Path, Sequence[_Path], None]
    if flags & _ffi.KEY_LIST:
        return Union[str, Sequence[str], None]
    if kind == "width":  # "2 B", "bf16", a Quantity of bytes per parameter
        return Union[str, Quantity, Sequence[Union[str, Quantity]], None] if axis \
            else Union[str, Quantity, None]
    if kind == "integer":  # an int (not 1.0, not True); a list or a range in a sweep
        if ranged:
            return Union[int, str, Sequence[int], None]
        return Union[int, Sequence[int], None] if axis else Optional[int]
    if kind in ("count", "bytes"):  # 175e9, '7B', '25 MiB'; a list or a range in a sweep
        one = Union[int, float, str]
        return Union[one, Sequence[Union[int, float, str]], None] if axis else Optional[one]
    if kind in ("rate", "real"):
        return Union[int, float, str, None]
    return Union[str, Sequence[str], None] if axis else Optional[str]


def _text(b: Optional[bytes]) -> Optional[str]:
    return b.decode() if b is not None else None


def _schema(k: int) -> str:
    """The key's type, unit, bounds and default as help shows them: "integer >= 1, default 10"."""
    kind = _lib.dpas_key_type_name(_lib.dpas_key_type_of(k)).decode()
    lo, hi = ctypes.c_int64(), ctypes.c_int64()
    b = _lib.dpas_key_bounds(k, ctypes.byref(lo), ctypes.byref(hi))
    parts = [kind + (f" in {_text(_lib.dpas_key_unit(k))}" if _lib.dpas_key_unit(k) else "")]
    if b == 3:
        parts[0] += f" {lo.value}..{hi.value}"
    elif b == 1:
        parts[0] += f" >= {lo.value}"
    elif b == 2:
        parts[0] += f" <= {hi.value}"
    if _lib.dpas_key_flags(k) & _ffi.KEY_LIST:
        parts[0] = "list of " + parts[0]
    default = _text(_lib.dpas_key_default(k))
    if default is not None:
        parts.append(f"default {default}")
    return ", ".join(parts)


def _table() -> List[Dict[str, Any]]:
    keys = []
    for k in range(256):
        name = _lib.dpas_key_name(k)
        if name is None:
            break
        kw = _lib.dpas_key_keyword(k)
        if kw is None:
            continue
        helptext = _lib.dpas_key_help(k)
        keys.append({"key": k, "name": kw.decode(), "flags": _lib.dpas_key_flags(k),
                     "type": _lib.dpas_key_type_name(_lib.dpas_key_type_of(k)).decode(),
                     "schema": _schema(k), "help": helptext.decode() if helptext else ""})
    return keys


_KEYS = _table()


def parameters(analysis: str, skip: Sequence[str] = ()) -> List[inspect.Parameter]:
    """The keyword-only parameters of an analysis ("cost", "sweep", ...), in the table's order
    (but the ones named in skip)."""
    a = _lib.dpas_analysis_from_name(analysis.encode())
    return [inspect.Parameter(k["name"], inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation=_annotation(analysis, k["flags"], k["type"]))
            for k in _KEYS
            if a >= 0 and _lib.dpas_analysis_takes(a, k["key"]) and k["name"] not in skip]


def apply(fn: Callable[..., Any], analysis: str) -> None:
    """Give fn (which takes **keys) the signature of its own parameters and of the analysis'
    keys, their annotations, and a list of the keys with their type and help appended to its
    docstring."""
    own = [p for p in inspect.signature(fn).parameters.values()
           if p.kind != inspect.Parameter.VAR_KEYWORD]
    params = own + parameters(analysis, skip=[p.name for p in own])
    ret = inspect.signature(fn).return_annotation
    fn.__signature__ = inspect.Signature(params, return_annotation=ret)  # type: ignore[attr-defined]
    fn.__annotations__ = dict({p.name: p.annotation for p in params}, **{"return": ret})
    a = _lib.dpas_analysis_from_name(analysis.encode())
    lines = [f"    {k['name']} ({k['schema']}): {k['help']}" for k in _KEYS
             if a >= 0 and _lib.dpas_analysis_takes(a, k["key"])]
    fn.__doc__ = (fn.__doc__ or "").rstrip() + "\n\n    Keys (the library's key table):\n" + \
        "\n".join(lines) + "\n"
