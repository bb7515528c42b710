"""The Python API's arguments, checked at its boundary: a value of the wrong type, out of its range, a name with a
control character, an over-long path or one that is a file where a folder belongs is one line naming the
function's argument and what to give instead (a ``ConfigError``), before anything runs.

``checked(arg=spec, ...)`` decorates a public function or method: each named argument of a call is passed through
its spec, a function of ``(value, what)`` (``what``: "score limit") that returns the value or raises. The specs:
``instance`` (a type), ``whole`` (an integer in a range), ``real`` (a finite number in a range), ``flag`` (True or
False), ``word`` (a name: text without control characters, not too long), ``folder``, ``file`` and ``store``
(paths), each of them ``optional``.

Layer: ground (imports only ``errors``).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from reasonlab.errors import ConfigError

Spec = Callable[[Any, str], Any]
F = TypeVar("F", bound=Callable[..., Any])
NAME_CHARS = 128  # a name (a split, a metric, a profile, a kind) is at most this long
PATH_BYTES = 4096  # Linux's PATH_MAX; each part of a path at most NAME_MAX, 255 bytes
PART_BYTES = 255
# C0 and C1 control characters (ESC among them), DEL, bidirectional overrides and isolates, lone surrogates: what a
# terminal obeys or cannot encode (``terminal.printable`` escapes the same characters).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def ascii_int(text: str, signed: bool = False) -> int | None:
    """``text`` as an integer when it is 1 to 18 ASCII digits (after a '-' when ``signed``), else None: a number
    read from a command line, a file name or the environment. ``str.isdigit`` also takes '²', which ``int``
    refuses, and ``int`` reads '٣' and ' 3 ' as 3, so neither decides what is a number here."""
    return int(text) if re.fullmatch("-?[0-9]{1,18}" if signed else "[0-9]{1,18}", text) else None


def escaped(char: str) -> str:
    """One character as its escape: ``\\x1b``, ``\\u202e``."""
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def shown(value: Any) -> str:
    """A value as an error line shows it: its type and at most 40 characters, escapes for what a terminal obeys."""
    if isinstance(value, int) and value.bit_length() > 64:
        return _number(value)
    return f"{type(value).__name__} {str(value)[:40]!r}"  # repr escapes control characters and lone surrogates


def checked(**specs: Spec) -> Callable[[F], F]:
    """Check the named arguments of each call of the decorated function by their specs, in order, before it
    runs; an argument left at its default is checked too (a default is always valid)."""
    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        unknown = set(specs) - set(signature.parameters)
        if unknown:
            raise TypeError(f"checked: {func.__qualname__} has no argument {', '.join(sorted(unknown))}")
        label = func.__qualname__.replace(".__init__", "")

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)  # a missing or unknown argument: Python's TypeError
            for name, spec in specs.items():
                if name in bound.arguments:
                    bound.arguments[name] = spec(bound.arguments[name], f"{label} {name}")
            return func(*bound.args, **bound.kwargs)

        return call  # type: ignore[return-value]
    return decorate


def optional(spec: Spec) -> Spec:
    """``spec``, or None."""
    return lambda value, what: None if value is None else spec(value, what)


def instance(types: type | tuple[type, ...], expected: str) -> Spec:
    """An instance of ``types`` (True and False are no numbers), described as ``expected`` when refused."""
    def check(value: Any, what: str) -> Any:
        if (isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,))) or \
                not isinstance(value, types):
            raise ConfigError(f"{what}: expected {expected}, got {shown(value)}")
        return value
    return check


def _number(value: float) -> str:
    """A number as an error line shows it: an integer too long to print (Python's limit is 4,300 digits) by its
    size."""
    return f"an integer of {value.bit_length():,} bits" if isinstance(value, int) and value.bit_length() > 64 else \
        repr(value)


def whole(low: int, high: int | None, expected: str) -> Spec:
    """An integer (not True or False) from ``low`` to ``high`` (None: no bound); ``expected`` states the range."""
    def check(value: Any, what: str) -> int:
        instance(int, expected)(value, what)
        if value < low or (high is not None and value > high):
            raise ConfigError(f"{what}: {_number(value)} is out of range; give {expected}")
        return value
    return check


def real(low: float, high: float, expected: str) -> Spec:
    """A finite number (int or float, not True or False) from ``low`` to ``high``; ``expected`` states the range."""
    def check(value: Any, what: str) -> float:
        instance((int, float), expected)(value, what)
        try:
            inside = math.isfinite(value) and low <= value <= high
        except OverflowError:  # an integer past any float
            inside = False
        if not inside:
            raise ConfigError(f"{what}: {_number(value)} is out of range; give {expected}")
        return value
    return check


def flag(value: Any, what: str) -> bool:
    """True or False, nothing that merely reads as one ("yes", 1)."""
    return instance(bool, "True or False")(value, what)


def word(expected: str, limit: int = NAME_CHARS) -> Spec:
    """A name: non-empty text of at most ``limit`` characters with no control character (ESC, a line feed), no
    bidirectional override and no lone surrogate (it cannot be written to a file or shown)."""
    def check(value: Any, what: str) -> str:
        instance(str, expected)(value, what)
        if not value or len(value) > limit:
            raise ConfigError(f"{what}: {'empty' if not value else f'{len(value):,} characters'}; give {expected} "
                              f"(1 to {limit} characters)")
        bad = UNSAFE.search(value)
        if bad:
            raise ConfigError(f"{what}: {shown(value)} holds a control character ({escaped(bad[0])}); give "
                              f"{expected}, in plain text")
        return value
    return check


def _path(value: Any, what: str, expected: str) -> Path:
    """A ``str`` or ``Path`` the system can take: no NUL byte, at most 4,096 bytes, each part at most 255."""
    instance((str, os.PathLike), expected)(value, what)
    path = Path(value)
    raw = os.fsencode(path)
    if b"\0" in raw:
        raise ConfigError(f"{what}: {shown(value)} holds a NUL byte; give {expected}")
    longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
    if len(raw) > PATH_BYTES or longest > PART_BYTES:
        raise ConfigError(f"{what}: a path of {len(raw):,} bytes (its longest part {longest:,}) is longer than the "
                          f"system allows ({PATH_BYTES:,}, {PART_BYTES} a part); give {expected}")
    return path


def folder(expected: str) -> Spec:
    """The path of an existing folder (a link to one counts)."""
    def check(value: Any, what: str) -> Path:
        path = _path(value, what, expected)
        if not path.is_dir():
            state = "is not a folder" if path.exists() else "does not exist"
            raise ConfigError(f"{what}: {path} {state}; give {expected}")
        return value
    return check


def file(expected: str) -> Spec:
    """The path of an existing regular file (or a link to one)."""
    def check(value: Any, what: str) -> Path:
        path = _path(value, what, expected)
        if not path.is_file():
            state = "is a folder" if path.is_dir() else ("is not a regular file" if path.exists() else
                                                         "does not exist")
            raise ConfigError(f"{what}: {path} {state}; give {expected}")
        return value
    return check


def store(expected: str) -> Spec:
    """Where a folder is, or will be made: an existing folder, or a new path whose nearest existing parent is a
    folder (a file on the way could not hold it)."""
    def check(value: Any, what: str) -> Path:
        path = _path(value, what, expected)
        for place in (path, *path.absolute().parents):
            if place.exists() or place.is_symlink():
                if not place.is_dir():
                    where = "is" if place == path else f"lies under {place}, which is"
                    raise ConfigError(f"{what}: {path} {where} not a folder; give {expected}")
                break
        return value
    return check
