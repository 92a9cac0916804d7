# SPDX-License-Identifier: Apache-2.0
"""Arguments checked before ctypes sees them. ctypes converts silently: an int beyond int64 wraps
(2**64 + 64 becomes 64), a str with a NUL is cut at the NUL by C, a bool is an int. So every value
the binding hands to the library goes through one of these, and a bad one raises
ArgumentTypeError (a TypeError) or an InvalidValue / RangeError (ValueErrors) naming the field,
the value and the rule, in the words the C library uses for its own checks.

Counts (dp_degree, nodes, f, steps, ...) are ints. A float is accepted when it is a whole number
of magnitude at most 2^53, where every whole number is exactly a float (so 175e9 is 175000000000);
any other float is refused rather than rounded. Decimal and Fraction values that are whole
numbers are accepted too; bool is not a count."""
from __future__ import annotations

import decimal
import fractions
import math
import numbers
from typing import Any, Optional

from .errors import ArgumentTypeError, InvalidValue, RangeError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT_MIN, INT_MAX = -(2**31), 2**31 - 1       # a C int
FLOAT_EXACT = 2**53                          # every whole number up to here is a float


def _show(v: Any) -> str:
    """A value in a message: repr, cut to 80 characters so a hostile value cannot flood it."""
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def whole(field: str, v: Any) -> int:
    """v as an exact int, or an error naming field."""
    if isinstance(v, bool) or not isinstance(v, (numbers.Real, decimal.Decimal)):
        raise ArgumentTypeError(f"{field} must be an int, got {type(v).__name__} {_show(v)}", field)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, float):
        if not math.isfinite(v) or v != math.floor(v):
            raise InvalidValue(f"{field} must be a whole number, got {_show(v)}", field)
        if abs(v) > FLOAT_EXACT:
            raise InvalidValue(f"{field} = {_show(v)} is a float above 2^53, which may not be the "
                               f"number written; give it as an int", field)
        return int(v)
    if isinstance(v, decimal.Decimal):
        if not v.is_finite() or v != v.to_integral_value():
            raise InvalidValue(f"{field} must be a whole number, got {_show(v)}", field)
        return int(v)
    q = fractions.Fraction(v) if isinstance(v, numbers.Rational) else None
    if q is None or q.denominator != 1:
        raise InvalidValue(f"{field} must be a whole number, got {_show(v)}", field)
    return int(q)


def int64(field: str, v: Any, minimum: Optional[int] = None) -> int:
    """A count for an int64_t argument: whole, within int64, and >= minimum when given (with the
    C library's wording: "f must be >= 0, got -1")."""
    i = whole(field, v)
    if not INT64_MIN <= i <= INT64_MAX:
        raise RangeError(f"{field} is out of range: must fit a signed 64-bit integer, got {i}", field)
    if minimum is not None and i < minimum:
        raise InvalidValue(f"{field} must be >= {minimum}, got {i}", field)
    return i


def count_text(field: str, v: Any) -> str:
    """A count the library parses from text (it checks the range and names the field)."""
    return str(whole(field, v))


def real(field: str, v: Any) -> float:
    """A real number (not a bool), as a float; a value no float holds is a RangeError."""
    if isinstance(v, bool) or not isinstance(v, (numbers.Real, decimal.Decimal)):
        raise ArgumentTypeError(f"{field} must be a number, got {type(v).__name__} {_show(v)}", field)
    try:
        return float(v)
    except OverflowError:
        raise RangeError(f"{field} is out of range: beyond the largest float, got {_show(v)}",
                         field) from None


def flag(field: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ArgumentTypeError(f"{field} must be True or False, got {type(v).__name__} {_show(v)}",
                                field)
    return v


def text(field: str, v: Any) -> bytes:
    """A str for a char * argument: no NUL (C would stop there: 'GPT3\\x00garbage' would be
    GPT3), encodable as UTF-8 (no lone surrogates)."""
    if not isinstance(v, str):
        raise ArgumentTypeError(f"{field} must be a str, got {type(v).__name__} {_show(v)}", field)
    if "\x00" in v:
        raise InvalidValue(f"{field} must not contain a NUL character, got {_show(v)}", field)
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValue(f"{field} must be valid Unicode text (no lone surrogates), "
                           f"got {_show(v)}", field) from None


def optional_text(field: str, v: Any) -> Optional[bytes]:
    return None if v is None else text(field, v)


def names(field: str, v: Any) -> list:
    """One name or a list (any iterable but a str) of names; None for all. An empty list is an
    error: it was given, and would otherwise mean 'all'."""
    if v is None:
        return []
    if isinstance(v, str):
        items = [v]
    else:
        try:
            items = list(v)
        except TypeError:
            raise ArgumentTypeError(f"{field} must be a name or a list of names, got "
                                    f"{type(v).__name__} {_show(v)}", field) from None
        if not items:
            raise InvalidValue(f"{field} needs at least one name, got an empty {type(v).__name__}",
                               field)
    return [text(field, x) for x in items]
