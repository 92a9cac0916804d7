# SPDX-License-Identifier: Apache-2.0
"""The step analysis from Python: the library's own rows (dpas_request_step), rendered by the
library as 'dpas step -o json' renders them, read back as a dict. No number is computed here."""

from __future__ import annotations

import ctypes
import json
from typing import Any, Dict

from . import _ffi, errors
from ._request import Request

_lib = _ffi.lib
_lib.dpas_request_step.restype = ctypes.c_int
_lib.dpas_request_step.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.POINTER(_ffi.Error)]
_lib.dpas_render_step.restype = ctypes.c_void_p
_lib.dpas_render_step.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(_ffi.Error)]
_lib.dpas_step_free.restype = None
_lib.dpas_step_free.argtypes = [ctypes.c_void_p]


class _StepView(ctypes.Structure):  # dpas_step_view
    _fields_ = [("format", ctypes.c_int), ("units", ctypes.c_int), ("all", ctypes.c_int),
                ("label", ctypes.c_char_p)]


def step_of(r: Request) -> Dict[str, Any]:
    """The step document of a resolved step request: its fields, notes and rows (each row a
    dict: rule, schedule, bytes_per_worker (an exact int), exchange_s, exposed_s, rule_s, step_s,
    step_band_low_s, step_band_high_s, added_s, share, ...)."""
    st = ctypes.c_void_p()
    r.call(_lib.dpas_request_step, ctypes.byref(st))
    try:
        label = r.label
        view = _StepView(_ffi.FORMAT_JSON, _ffi.UNITS_SI, 0,
                         label.encode() if label is not None else None)
        err = _ffi.Error()
        text = _lib.dpas_render_step(st, ctypes.byref(view), ctypes.byref(err))
        if not text:
            errors.raise_c(err)
        try:
            return dict(json.loads(ctypes.string_at(text).decode()))
        finally:
            _lib.dpas_free(text)
    finally:
        _lib.dpas_step_free(st)
