# SPDX-License-Identifier: Apache-2.0
"""The exceptions of dpas, one class per error of the C library's table (DPAS_ERRNO_MAP in
dpas/base.h), mapped by the error's name (dpas_err_name). Every one is a ValueError, so that
``except ValueError`` keeps working; a few are also the built-in exception a Python reader
expects (an unknown name is a LookupError, out of memory a MemoryError, a file that cannot be
read an OSError). A wrong argument type is ArgumentTypeError, a TypeError.

    >>> import dpas
    >>> try:
    ...     dpas.rules(convention="blanchrd")
    ... except dpas.UnknownName as e:
    ...     print(e.name, e.code, e.field, isinstance(e, LookupError))
    ENOENT -4 convention True
    >>> dpas.errors.by_name["EPHYSICS"] is dpas.PhysicsViolation
    True
"""
from __future__ import annotations

from typing import Dict, NoReturn, Type

from . import _ffi


class Error(ValueError):
    """An error of the dpas library. str(e) is its message; also:

    - ``code``: the library's negative DPAS_E* code; ``name``: its name without the prefix
      ("EINVAL"); ``title``: the title of its error object ("invalid input");
    - ``field``: the input or option at fault ("dp_degree"), "" when none;
    - ``message``: the whole sentence (field, value and rule);
    - ``line``, ``column``: the position in a scenario file, 0 when not from a file;
    - ``hint``: for a key that is missing, how to give it from Python ("give dp_degree=..."),
      else "". str(e) is the message, and the hint in parentheses when there is one."""

    name: str = "EUNKNOWN"
    code: int = 0
    title: str = "error"

    def __init__(self, message: str, field: str = "", line: int = 0, column: int = 0,
                 code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line
        self.column = column
        self.hint = ""
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InvalidValue(Error):
    """EINVAL: a value breaks a rule (dp_degree < 1, a negative width, ...)."""
    name = "EINVAL"


class ParseError(Error):
    """EPARSE: malformed text (not a number, an unknown unit, bad YAML or JSON)."""
    name = "EPARSE"


class RangeError(Error):
    """ERANGE: a value or a product beyond what the exact arithmetic holds (int64, 2^64 bytes)."""
    name = "ERANGE"


class UnknownName(Error, LookupError):
    """ENOENT: an unknown registry entry, rule, schedule or convention name."""
    name = "ENOENT"


class Undefined(Error):
    """EUNDEF: the attribute is undefined for these inputs (gather_traffic_ratio at dp_degree 1)."""
    name = "EUNDEF"


class OutOfMemory(Error, MemoryError):
    """ENOMEM: the library ran out of memory."""
    name = "ENOMEM"


class FileError(Error, OSError):
    """EIO: a file could not be read, or the output could not be written."""
    name = "EIO"


class PhysicsViolation(Error):
    """EPHYSICS: the inputs are valid but physically infeasible."""
    name = "EPHYSICS"


class ArgumentTypeError(InvalidValue, TypeError):
    """An argument of the wrong Python type (an int where text is needed, a bool for a count).
    A TypeError, and an InvalidValue for whoever catches every dpas error."""


_KNOWN = [InvalidValue, ParseError, RangeError, UnknownName, Undefined, OutOfMemory, FileError,
          PhysicsViolation]
for _c in _KNOWN + [Error, ArgumentTypeError]:
    _c.__module__ = "dpas"  # tracebacks say dpas.InvalidValue, as users import it

by_name: Dict[str, Type[Error]] = {}
by_code: Dict[int, Type[Error]] = {}


def _build() -> None:
    """Read the C table: every code from -1 down until the library calls it EUNKNOWN. A name
    this binding knows gets its class; a newer one gets a class of its own, named after it."""
    known = {c.name: c for c in _KNOWN}
    for code in range(-1, -256, -1):
        name = _ffi.lib.dpas_err_name(code).decode()
        if name == "EUNKNOWN":
            break
        cls = known.get(name)
        if cls is None:
            cls = type(name, (Error,), {"__module__": "dpas", "name": name,
                                        "__doc__": _ffi.lib.dpas_strerror(code).decode()})
        cls.code = code
        cls.title = _ffi.lib.dpas_err_title(code).decode()
        by_name[name] = cls
        by_code[code] = cls
    ArgumentTypeError.code = InvalidValue.code
    ArgumentTypeError.title = InvalidValue.title


_build()


def from_c(err: _ffi.Error) -> Error:
    """The exception for a filled dpas_error."""
    cls = by_code.get(err.code, Error)
    return cls(err.message.decode("utf-8", "replace"), err.field.decode("utf-8", "replace"),
               err.line, err.column, code=err.code)


def raise_c(err: _ffi.Error) -> NoReturn:
    raise from_c(err)
