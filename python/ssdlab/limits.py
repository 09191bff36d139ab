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
    "MAX_BLOCK_BYTES",
    "MAX_INTERVALS",
    "MAX_REPLAY_SPEED",
    "MAX_QUEUE_DEPTH",
    "MAX_SCHEDULED_SECONDS",
    "MAX_SERIES_SECONDS",
    "MIN_REPLAY_SPEED",
    "MIN_SECONDS",
    "SECTOR_BYTES",
    "block_size",
    "fraction",
    "number",
    "parse_number",
    "percent",
    "queue_depth",
    "replay_speed",
    "seconds",
    "minutes",
]

_L = json.loads(_core.limits())
MAX_QUEUE_DEPTH: int = int(_L["max_queue_depth"])
MAX_INTERVALS: int = int(_L["max_intervals"])
MAX_SCHEDULED_SECONDS: float = float(_L["max_scheduled_seconds"])
MIN_RATE_IOPS: float = float(_L["min_rate_iops"])
MAX_SERIES_SECONDS: float = float(MAX_INTERVALS)
"""The longest phase with a per-second series (consistency, used-vs-new, device runs): 10^7 s."""
MAX_BLOCK_BYTES: int = int(_L["max_block_bytes"])
"""The largest request: 32 MiB, the largest command Linux sends a drive (ATA's 48-bit commands:
65 536 sectors of 512 bytes; NVMe drives take less)."""
SECTOR_BYTES: int = int(_L["sector_bytes"])
"""The host's addressing granule: requests are whole 512-byte sectors at sector-aligned offsets (a
request that covers a 4 KiB mapping unit only in part costs the drive a read-modify-write of it)."""
MIN_REPLAY_SPEED: float = float(_L["min_replay_speed"])
MAX_REPLAY_SPEED: float = float(_L["max_replay_speed"])
"""A trace replay's speed factor: 10^-9 to 10^9. Slower than 10^-9, one nanosecond of the trace
lasts more than a simulated second, and one second of it more than the 10^9 s a drive may be
scheduled for."""
MIN_SECONDS = 0.001
"""The shortest duration a command takes (--duration, --torture-minutes, --idle-minutes): 1 ms.
fio runs and logs whole milliseconds, and the core's finest series interval is 1 ms, so a shorter
duration cannot be run or recorded as given."""


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
    """A duration in seconds: positive (or zero with `allow_zero`), at least 1 ms unless zero, and
    at most `maximum`."""
    v = number(value, what)
    if v < 0 or (v == 0 and not allow_zero):
        raise SsdlabError(f"{what} must be {'zero or more' if allow_zero else 'positive'}, got {value!r}")
    if 0 < v < MIN_SECONDS:
        raise SsdlabError(f"{what} of {v:g} s is shorter than 1 ms, the finest time ssdlab runs and records "
                          f"(fio counts whole milliseconds){'; give 0 for none' if allow_zero else ''}")
    if v > maximum:
        raise SsdlabError(f"{what} of {v:g} s is more than the {maximum:g} s (about {maximum / 86400:,.0f} days) "
                          f"ssdlab can run or record per phase")
    return v


def minutes(value: Any, what: str, *, allow_zero: bool = False, maximum_s: float = MAX_SERIES_SECONDS) -> float:
    """A duration in minutes (checked as `seconds`)."""
    v = number(value, what)
    if v < 0 or (v == 0 and not allow_zero):
        raise SsdlabError(f"{what} must be {'zero or more' if allow_zero else 'positive'} minutes, got {value!r}")
    if 0 < v * 60 < MIN_SECONDS:
        raise SsdlabError(f"{what} of {v:g} min is shorter than 1 ms, the finest time ssdlab runs and records "
                          f"(fio counts whole milliseconds){'; give 0 for none' if allow_zero else ''}")
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
    """A request size: a positive multiple of 512 bytes, a sector (a size string such as "4k" is
    read), at most `MAX_BLOCK_BYTES` and no larger than `span` when given. A size that is not a
    multiple of 4 KiB costs the simulated drive read-modify-writes of its partial units."""
    v = parse_size(value, what=what) if isinstance(value, (str, int)) else value
    if isinstance(v, bool) or not isinstance(v, int):
        raise SsdlabError(f"{what} must be a size such as 4096 or '4k', got {value!r}")
    if v <= 0 or v % SECTOR_BYTES:
        lower = v // SECTOR_BYTES * SECTOR_BYTES
        mend = f"{lower} or {lower + SECTOR_BYTES}" if lower > 0 else f"{SECTOR_BYTES} or a multiple of it"
        raise SsdlabError(f"{what} must be a positive multiple of {SECTOR_BYTES} bytes (a sector), got {v}; use {mend}")
    if v > MAX_BLOCK_BYTES:
        raise SsdlabError(f"{what} {format_size(v)} is larger than {format_size(MAX_BLOCK_BYTES)}, the largest "
                          f"request a drive takes in one command; use a smaller block size")
    if span is not None and v > span:
        raise SsdlabError(f"{what} {format_size(v)} is larger than the {format_size(span)} being tested; "
                          f"use a smaller block size or a larger --capacity")
    return v


def replay_speed(value: Any, what: str = "speed") -> float:
    """A trace replay's speed factor, from `MIN_REPLAY_SPEED` to `MAX_REPLAY_SPEED`."""
    v = number(value, what)
    if not MIN_REPLAY_SPEED <= v <= MAX_REPLAY_SPEED:
        why = (f": slower than {MIN_REPLAY_SPEED:g}, one nanosecond of the trace would last more than a simulated "
               f"second" if v < MIN_REPLAY_SPEED else "")
        raise SsdlabError(f"{what} must be a factor from {MIN_REPLAY_SPEED:g} to {MAX_REPLAY_SPEED:g} (2 replays "
                          f"twice as fast, 0.5 half as fast), got {value!r}{why}")
    return v
