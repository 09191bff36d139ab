"""Byte sizes as people write them: ``8GiB``, ``256GB``, ``512MiB``, ``4096``, ``4k``.

The rule (fio's, with the SI suffixes taken literally):

=================  ==========================  ================
suffix             meaning                     example
=================  ==========================  ================
none, ``B``        bytes                       ``4096`` = 4096
``k m g t p``      powers of 1024 (fio style)  ``4k`` = 4096
``KiB MiB GiB …``  powers of 1024 (IEC)        ``2GiB`` = 2**31
``KB MB GB …``     powers of 1000 (SI)         ``256GB`` = 256e9
=================  ==========================  ================

Letters are case-insensitive (``4K``, ``8gib`` and ``1Gb`` are accepted; ``Gb`` means gigabytes
here, not gigabits). A space may separate number and suffix. Fractions are allowed and rounded to
the nearest byte (``1.5k`` = 1536). Sizes are whole, non-negative and below 2**64.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation

from ssdlab.errors import SsdlabError

__all__ = ["MAX_SIZE", "format_size", "parse_size"]

MAX_SIZE = 2**64 - 1
"""The largest size the core accepts (it counts bytes in unsigned 64-bit integers)."""

_PREFIXES = "kmgtpe"
_BINARY_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
_DECIMAL_UNITS = ["B", "KB", "MB", "GB", "TB", "PB", "EB"]
_SIZE = re.compile(r"^\s*(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>[A-Za-z]*)\s*$")
_HINT = "write a whole number of bytes or use a suffix, e.g. 4096, 4k, 512MiB, 256GB"


def _multiplier(unit: str) -> int | None:
    u = unit.lower()
    if u in ("", "b"):
        return 1
    if len(u) == 1 and u in _PREFIXES:
        return 1024 ** (_PREFIXES.index(u) + 1)
    if len(u) == 2 and u[0] in _PREFIXES and u[1] == "b":
        return 1000 ** (_PREFIXES.index(u[0]) + 1)
    if len(u) == 3 and u[0] in _PREFIXES and u[1:] == "ib":
        return 1024 ** (_PREFIXES.index(u[0]) + 1)
    return None


def parse_size(text: str | int, *, what: str = "size") -> int:
    """Bytes in `text` (see the module doc for the rule); `what` names the value in errors.

    >>> parse_size("4k"), parse_size("2GiB"), parse_size("256GB"), parse_size(" 1.5 KiB ")
    (4096, 2147483648, 256000000000, 1536)
    """
    if isinstance(text, bool):
        raise SsdlabError(f"{what}: expected a size, got {text!r}; {_HINT}")
    if isinstance(text, int):
        value = text
    elif isinstance(text, str):
        if text.strip().startswith("-"):
            raise SsdlabError(f"{what} cannot be negative, got {text.strip()!r}; {_HINT}")
        m = _SIZE.match(text)
        multiplier = _multiplier(m.group("unit")) if m else None
        if m is None or multiplier is None:
            raise SsdlabError(f"{what}: cannot read {text.strip()!r} as a size; {_HINT}")
        try:
            number = Decimal(m.group("num"))
        except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
            raise SsdlabError(f"{what}: cannot read {text.strip()!r} as a size; {_HINT}") from None
        value = int((number * multiplier).to_integral_value(rounding=ROUND_HALF_EVEN))
    else:
        raise SsdlabError(f"{what}: expected a size such as '4k' or '2GiB', got {type(text).__name__}")
    if value < 0:
        raise SsdlabError(f"{what} cannot be negative, got {value}; {_HINT}")
    if value > MAX_SIZE:
        raise SsdlabError(f"{what} {text!r} is too large: sizes must be below 16 EiB (2**64 bytes)")
    return value


def _trim(x: float, digits: int) -> str:
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")


def format_size(n: int, *, digits: int = 2) -> str:
    """A short human form of `n` bytes that `parse_size` reads back.

    Exact multiples of 1024 (or 1000) that stay below the next unit get binary (or decimal) units;
    anything else is shown in binary units with up to `digits` decimals (so it reads back within
    0.5 %).

    >>> format_size(2**31), format_size(256 * 10**9), format_size(4096), format_size(1000)
    ('2 GiB', '256 GB', '4 KiB', '1 KB')
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SsdlabError(f"format_size needs a non-negative whole number of bytes, got {n!r}")
    if n < 1000:
        return f"{n} B"
    best: tuple[int, str] | None = None
    for base, units in ((1024, _BINARY_UNITS), (1000, _DECIMAL_UNITS)):
        exp = 0
        while n % base ** (exp + 1) == 0 and exp + 1 < len(units):
            exp += 1
        # An exact form reads well only below the next unit; prefer the smallest number.
        if exp > 0 and n // base**exp < base and (best is None or n // base**exp < best[0]):
            best = (n // base**exp, units[exp])
    if best is not None:
        return f"{best[0]} {best[1]}"
    exp = 0
    while n >= 1024 ** (exp + 1) and exp + 1 < len(_BINARY_UNITS):
        exp += 1
    return f"{_trim(n / 1024**exp, digits)} {_BINARY_UNITS[exp]}"
