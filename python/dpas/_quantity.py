# SPDX-License-Identifier: Apache-2.0
"""Exact byte counts: Quantity, and the conversions from the library's dpas_bytes and to the
width text its parser reads."""
from __future__ import annotations

import ctypes
import decimal
import fractions
import math
import numbers
from typing import Any, Optional, Union

from . import _ffi
from ._check import _show
from .errors import ArgumentTypeError, InvalidValue

Number = Union[int, fractions.Fraction]

_BYTE_UNITS = {"B": 1, "byte": 1, "bytes": 1, "bit": fractions.Fraction(1, 8),
               "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15, "EB": 10**18,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50, "EiB": 2**60}


def _unit(field: str, units: Any) -> str:
    if not isinstance(units, str) or units not in _BYTE_UNITS:
        raise InvalidValue(f"{field} must be one of {', '.join(_BYTE_UNITS)}, got {_show(units)}",
                           field)
    return units


def exact_decimal(q: fractions.Fraction) -> Optional[decimal.Decimal]:
    """q as an exact Decimal, or None when its decimal expansion does not terminate."""
    den, twos, fives = q.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return None
    k = max(twos, fives)
    return decimal.Decimal(f"{q.numerator * 10**k // q.denominator}E-{k}")  # str: no rounding


def _fraction(field: str, x: Any) -> fractions.Fraction:
    """A real number exactly (a float, or numpy's float16/32/64, is its binary value), or
    InvalidValue naming the field when it is not finite."""
    if isinstance(x, (int, fractions.Fraction)):
        return fractions.Fraction(x)
    if isinstance(x, decimal.Decimal):
        if not x.is_finite():
            raise InvalidValue(f"{field} must be finite, got {_show(x)}", field)
        return fractions.Fraction(x)
    if isinstance(x, numbers.Integral):  # numpy's integers
        return fractions.Fraction(int(x))
    f = float(x)  # float, or any other real (numpy's floats): exact for every binary width
    if not math.isfinite(f):
        raise InvalidValue(f"{field} must be finite, got {_show(x)}", field)
    return fractions.Fraction(f)


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

    magnitude: Number
    units: str

    def __init__(self, magnitude: Any, units: str = "byte") -> None:
        self.units = _unit("units", units)
        if isinstance(magnitude, bool) or not isinstance(magnitude, (numbers.Real, decimal.Decimal)):
            raise ArgumentTypeError(f"magnitude must be a number, got {type(magnitude).__name__}",
                                    "magnitude")
        if not isinstance(magnitude, numbers.Integral):
            magnitude = _fraction("magnitude", magnitude)  # exact: a float is its binary value
            if magnitude.denominator == 1:
                magnitude = magnitude.numerator
        self.magnitude = int(magnitude) if isinstance(magnitude, numbers.Integral) else magnitude

    def to(self, units: str) -> "Quantity":
        """The same quantity in another byte unit (exact)."""
        units = _unit("units", units)
        b = fractions.Fraction(self.magnitude) * _BYTE_UNITS[self.units]
        return Quantity(b / _BYTE_UNITS[units], units)

    @property
    def bytes(self) -> Number:
        """The exact number of bytes (int, or Fraction when not whole)."""
        return self.to("byte").magnitude

    # Arithmetic as a units library does it (pint's rules for one dimension): a count of bytes
    # scales by a number and adds to another count of bytes (in this one's unit); a ratio of two
    # counts is a plain number. Exact: a float operand is its binary value, and a result that
    # leaves whole bytes is a Fraction (as sub-byte widths are). Anything else is a TypeError.
    def _scaled(self, k: Any) -> "Quantity":
        if isinstance(k, bool) or not isinstance(k, (numbers.Real, decimal.Decimal)):
            return NotImplemented  # type: ignore[return-value]
        return Quantity(fractions.Fraction(self.magnitude) * _fraction("factor", k), self.units)

    def __mul__(self, k: Any) -> "Quantity":
        return self._scaled(k)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, Quantity):
            ratio = fractions.Fraction(self.bytes) / fractions.Fraction(other.bytes)
            return ratio.numerator if ratio.denominator == 1 else ratio
        if isinstance(other, bool) or not isinstance(other, (numbers.Real, decimal.Decimal)):
            return NotImplemented
        d = _fraction("divisor", other)
        if d == 0:
            raise ZeroDivisionError("Quantity divided by zero")
        return self._scaled(1 / d)

    def __add__(self, other: Any) -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(fractions.Fraction(self.magnitude) + other.to(self.units).magnitude,
                        self.units)

    def __sub__(self, other: Any) -> "Quantity":
        if not isinstance(other, Quantity):
            return NotImplemented
        return Quantity(fractions.Fraction(self.magnitude) - other.to(self.units).magnitude,
                        self.units)

    def __neg__(self) -> "Quantity":
        return Quantity(-fractions.Fraction(self.magnitude), self.units)

    def __lt__(self, other: Any) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return fractions.Fraction(self.bytes) < fractions.Fraction(other.bytes)

    def __le__(self, other: Any) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return fractions.Fraction(self.bytes) <= fractions.Fraction(other.bytes)

    def __gt__(self, other: Any) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return fractions.Fraction(self.bytes) > fractions.Fraction(other.bytes)

    def __ge__(self, other: Any) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return fractions.Fraction(self.bytes) >= fractions.Fraction(other.bytes)

    def to_pint(self, registry: Any = None) -> Any:
        """The same quantity as a pint Quantity (pint imported here, only when asked; its
        registry is the one given, or pint's application registry). Exact magnitudes stay
        exact: pint keeps a Fraction as it is."""
        import pint
        ureg = registry if registry is not None else pint.get_application_registry()
        return ureg.Quantity(self.magnitude, self.units)

    def __float__(self) -> float:
        return float(self.magnitude)

    def __int__(self) -> int:
        return int(self.magnitude)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return fractions.Fraction(self.bytes) == fractions.Fraction(other.bytes)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(fractions.Fraction(self.bytes))

    def __repr__(self) -> str:
        return f"Quantity({self.magnitude!r}, {self.units!r})"

    def __str__(self) -> str:
        m: Any = self.magnitude
        if isinstance(m, fractions.Fraction):  # an exact decimal when there is one
            d = exact_decimal(m)
            if d is not None:
                m = f"{d:f}"
        return f"{m} {self.units}"


def exact(b: _ffi.Bytes) -> Number:
    """A dpas_bytes as an exact number: int when whole, else Fraction."""
    if b.frac_num:
        return b.whole + fractions.Fraction(b.frac_num, b.frac_den)
    return int(b.whole)


def quantity(b: _ffi.Bytes) -> Quantity:
    return Quantity(exact(b), "byte")


def human(b: _ffi.Bytes, units: int) -> str:
    """The library's human text of a byte count ("350 GB", "325.963 GiB")."""
    buf = ctypes.create_string_buffer(64)
    n = _ffi.lib.dpas_format_bytes_human(b, units, buf, len(buf))
    if n >= len(buf):
        buf = ctypes.create_string_buffer(n + 1)
        _ffi.lib.dpas_format_bytes_human(b, units, buf, len(buf))
    return buf.value.decode()


def width_text(field: str, w: Any) -> Optional[bytes]:
    """A width as text for the C parser: text as given, numbers as bytes, written exactly."""
    from ._check import text
    if w is None:
        return None
    if isinstance(w, Quantity):
        w = fractions.Fraction(w.bytes)
    if isinstance(w, str):
        return text(field, w)
    if isinstance(w, bool) or not isinstance(w, (numbers.Number, decimal.Decimal)):
        raise ArgumentTypeError(f"{field} must be text ('2 byte', 'bf16') or a number of bytes, "
                                f"got {type(w).__name__} {_show(w)}", field)
    if isinstance(w, numbers.Integral):
        return f"{int(w)} B".encode()
    if isinstance(w, float):
        return f"{w!r} B".encode()  # repr reads back as the same float; the C parser reads it exactly
    if isinstance(w, decimal.Decimal):
        return f"{w} B".encode()
    if isinstance(w, fractions.Fraction):
        d = exact_decimal(w)
        if d is None:
            raise InvalidValue(f"{field} = {w} B has no exact decimal form; give it as text "
                               f"or as a terminating fraction", field)
        return f"{d:f} B".encode()
    raise ArgumentTypeError(f"{field} must be text or a real number of bytes, got "
                            f"{type(w).__name__} {_show(w)}", field)
