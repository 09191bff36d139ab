"""The bounds of what can be simulated or run, and the checks of procedure parameters against them.

The numbers come from the core (`crates/ssdlab/src/limits.rs`, ``ssdlab._core.limits()``), so the
CLI, the device runs (which never reach the core) and the simulator refuse the same values with
the same reasons; docs/parameters.md ("Bounds") explains each. Every check returns the value as
the type the procedure needs, or raises a one-line `SsdlabError` naming the parameter.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.sizes import format_size, parse_size

__all__ = [
    "MAX_INTERVALS",
    "MAX_QUEUE_DEPTH",
    "MAX_SCHEDULED_SECONDS",
    "MAX_SERIES_SECONDS",
    "block_size",
    "fraction",
    "number",
    "parse_number",
    "percent",
    "queue_depth",
    "seconds",
    "minutes",
]

_L = json.loads(_core.limits())
MAX_QUEUE_DEPTH: int = int(_L["max_queue_depth"])
MAX_INTERVALS: int = int(_L["max_intervals"])
MAX_SCHEDULED_SECONDS: float = float(_L["max_scheduled_seconds"])
MAX_SERIES_SECONDS: float = float(MAX_INTERVALS)
"""The longest phase with a per-second series (consistency, used-vs-new, device runs): 10^7 s."""


def number(value: Any, what: str) -> float:
    """`value` as a finite float (bools, strings and NaN/inf refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SsdlabError(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise SsdlabError(f"{what} must be a finite number, got {value!r}")
    return v


MAX_NUMERAL_CHARS = 40
"""The longest numeral ssdlab reads from text (an option, a job file, a trace, a spec): 40
characters hold any 64-bit integer and any float to full precision, and keep Python's int-string
limit (4300 digits) and float overflow out of reach."""

_NUMERAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_number(text: Any, what: str, *, integer: bool = False, max_chars: int = MAX_NUMERAL_CHARS) -> Any:
    """`text` (a string) read as an ASCII decimal integer (`integer`) or finite float, with at most
    `max_chars` characters: Unicode digits, NaN, infinities, overflow and 5000-digit numerals are
    one-line `SsdlabError`s naming `what`, never a ValueError or OverflowError."""
    s = str(text).strip()
    if len(s) > max_chars:
        raise SsdlabError(f"{what}: {s[:12]}... is a {len(s)}-character number; ssdlab reads numbers of at most "
                          f"{max_chars} characters")
    if not (_INTEGER if integer else _NUMERAL).fullmatch(s):
        kind = "a whole number" if integer else "a number"
        raise SsdlabError(f"{what}: {s!r} is not {kind} (ASCII digits{'' if integer else ', a point, an exponent'})")
    if integer:
        return int(s)
    v = float(s)
    if not math.isfinite(v):
        raise SsdlabError(f"{what}: {s!r} is too large (beyond a double's range)")
    return v


def seconds(value: Any, what: str, *, allow_zero: bool = False, maximum: float = MAX_SERIES_SECONDS) -> float:
    """A duration in seconds: positive (or zero with `allow_zero`) and at most `maximum`."""
    v = number(value, what)
    if v < 0 or (v == 0 and not allow_zero):
        raise SsdlabError(f"{what} must be {'zero or more' if allow_zero else 'positive'}, got {value!r}")
    if v > maximum:
        raise SsdlabError(f"{what} of {v:g} s is more than the {maximum:g} s (about {maximum / 86400:,.0f} days) "
                          f"ssdlab can run or record per phase")
    return v


def minutes(value: Any, what: str, *, allow_zero: bool = False, maximum_s: float = MAX_SERIES_SECONDS) -> float:
    """A duration in minutes (checked as `seconds`)."""
    v = number(value, what)
    if v < 0 or (v == 0 and not allow_zero):
        raise SsdlabError(f"{what} must be {'zero or more' if allow_zero else 'positive'} minutes, got {value!r}")
    if v * 60 > maximum_s:
        raise SsdlabError(f"{what} of {v:g} min is more than the {maximum_s / 60:g} min ssdlab can run per phase")
    return v


def percent(value: Any, what: str, *, upper: float = 100.0) -> float:
    """A percentage in [0, upper)."""
    v = number(value, what)
    if not 0 <= v < upper:
        raise SsdlabError(f"{what} must be at least 0 and below {upper:g} percent, got {value!r}")
    return v


def fraction(value: Any, what: str) -> float:
    """A fraction in (0, 1]."""
    v = number(value, what)
    if not 0 < v <= 1:
        raise SsdlabError(f"{what} must be above 0 and at most 1, got {value!r}")
    return v


def queue_depth(value: Any, what: str = "queue depth") -> int:
    """Requests in flight: a whole number from 1 to fio's (and the core's) maximum."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SsdlabError(f"{what} must be a whole number, got {value!r}")
    if not 1 <= value <= MAX_QUEUE_DEPTH:
        raise SsdlabError(f"{what} must be from 1 to {MAX_QUEUE_DEPTH}, got {value}")
    return value


def block_size(value: Any, what: str = "block size", *, span: int | None = None) -> int:
    """A request size: a positive multiple of 4096 bytes (a size string such as "4k" is read), no
    larger than `span` when given."""
    v = parse_size(value, what=what) if isinstance(value, (str, int)) else value
    if isinstance(v, bool) or not isinstance(v, int):
        raise SsdlabError(f"{what} must be a size such as 4096 or '4k', got {value!r}")
    if v <= 0 or v % 4096:
        raise SsdlabError(f"{what} must be a positive multiple of 4096 bytes (4 KiB), got {v}")
    if span is not None and v > span:
        raise SsdlabError(f"{what} {format_size(v)} is larger than the {format_size(span)} being tested; "
                          f"use a smaller block size or a larger --capacity")
    return v
