"""The block-trace formats `ssdlab replay` reads: one parser per format, turning one line of text
into one request, and the sniffer behind ``--format auto``.

A parser takes a line (without its newline) and returns ``(direction, offset_bytes,
length_bytes, time_ns, device)`` for a request, `None` for a line that holds no request (a
header, a comment, a blkparse event other than the one replayed, a flush), or raises
`BadLine` saying what is wrong. Directions are 0 read, 1 write, 2 trim (fio's order). Times are
whole nanoseconds, converted from each format's unit without floating point, so no trace loses
precision however large its timestamps.

Numbers are read strictly: ASCII digits (and one decimal point where the format has fractions),
at most `MAX_NUMBER_CHARS` characters, so a 5000-digit timestamp or one written in Unicode digits
is a `BadLine` naming the field, never a Python error or a silently converted value.

The field layout and units of each format are in docs/traces.md; `FORMATS` is the table the
documentation and the tests follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.limits import MAX_NUMERAL_CHARS

__all__ = ["BadLine", "BlkparseParser", "FORMATS", "Format", "MAX_NUMBER_CHARS", "Request", "decimal_ns", "sniff"]

Request = Tuple[int, int, int, int, str]
"""``(direction, offset_bytes, length_bytes, time_ns, device)``."""

SECTOR = 512
READ, WRITE, TRIM = 0, 1, 2


MAX_NUMBER_CHARS = MAX_NUMERAL_CHARS
"""The longest number a trace field may hold: 40 characters, ssdlab's bound for every numeral it
reads (`ssdlab.limits.MAX_NUMERAL_CHARS`); 64-bit values and nanosecond fractions fit easily."""

_POW10 = {10**k: k for k in range(19)}


class BadLine(ValueError):
    """A line the format cannot read; the message says which field is wrong."""


def _number_problem(text: str, what: str, kind: str) -> BadLine:
    """Why `text` is not a `kind` ("whole number" or "non-negative number"), as a `BadLine`."""
    s = text.strip()
    if not s:
        return BadLine(f"{what} is empty")
    if len(s) > MAX_NUMBER_CHARS:
        return BadLine(f"{what} {s[:12]}... is a {len(s)}-character number; trace fields hold at most "
                       f"{MAX_NUMBER_CHARS} characters")
    if not s.isascii() and any(ch.isdigit() for ch in s):
        return BadLine(f"{what} {s!r} has non-ASCII digits; trace numbers are written with the digits 0-9")
    if s.startswith("-") and len(s) > 1 and s[1:].replace(".", "", 1).isdigit():
        return BadLine(f"{what} {s} is negative")
    return BadLine(f"{what} {s!r} is not a {kind}")


def decimal_ns(text: str, scale: int, what: str = "timestamp") -> int:
    """A non-negative decimal number of some unit (``scale`` ns each, a power of ten) as whole ns,
    exactly: ``decimal_ns("1.5", 10**9)`` is 1_500_000_000. Digits below a nanosecond are dropped.
    ASCII digits with at most one point, at most `MAX_NUMBER_CHARS` characters; else `BadLine`."""
    whole, dot, frac = text.partition(".")
    if ((whole.isdigit() or (not whole and frac)) and (not frac or frac.isdigit()) and text.isascii()
            and len(text) <= MAX_NUMBER_CHARS):
        ns = int(whole) * scale if whole else 0
        if frac:
            digits = _POW10[scale]
            if digits:
                ns += int(frac[:digits].ljust(digits, "0"))
        return ns
    stripped = text.strip()
    if stripped != text and stripped:
        return decimal_ns(stripped, scale, what)
    raise _number_problem(text, what, "non-negative number")


def _int(text: str, what: str) -> int:
    """A non-negative whole number: ASCII digits only, at most `MAX_NUMBER_CHARS` of them."""
    if text.isdigit() and text.isascii() and len(text) <= MAX_NUMBER_CHARS:
        return int(text)
    stripped = text.strip()
    if stripped != text and stripped:
        return _int(stripped, what)
    raise _number_problem(text, what, "whole number")


def _fields(line: str, sep: Optional[str], n: int, what: str) -> List[str]:
    parts = line.split(sep)
    if len(parts) < n:
        raise BadLine(f"{len(parts)} fields where {what} has {n}")
    return parts


# -- MSR Cambridge ---------------------------------------------------------------------------------
# Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
# Timestamp: Windows FILETIME (100 ns ticks since 1601); Offset, Size: bytes; Type: Read|Write.


def parse_msr(line: str) -> Optional[Request]:
    f = _fields(line, ",", 6, "an MSR line")
    kind = f[3].strip().lower()
    if kind == "read":
        d = READ
    elif kind == "write":
        d = WRITE
    else:
        raise BadLine(f"type {f[3].strip()!r} is neither Read nor Write")
    return d, _int(f[4], "offset"), _int(f[5], "size"), _int(f[0], "timestamp") * 100, f"{f[1].strip()}_{f[2].strip()}"


# -- FIU (SRCMap) ----------------------------------------------------------------------------------
# ts pid process lba size op major minor md5; ts: ns; lba, size: 512 B sectors; op: R|W.


def parse_fiu(line: str) -> Optional[Request]:
    f = _fields(line, None, 8, "an FIU line")
    op = f[5].upper()
    if op not in ("R", "W"):
        raise BadLine(f"operation {f[5]!r} is neither R nor W")
    return (READ if op == "R" else WRITE, _int(f[3], "LBA") * SECTOR, _int(f[4], "size") * SECTOR,
            _int(f[0], "timestamp"), f"{f[6]},{f[7]}")


# -- SPC (UMass Financial, WebSearch) --------------------------------------------------------------
# ASU,LBA,Size,Opcode,Timestamp; LBA: 512 B sectors; Size: bytes; Opcode r|w; Timestamp: seconds.


def parse_spc(line: str) -> Optional[Request]:
    f = _fields(line, ",", 5, "an SPC line")
    op = f[3].strip().lower()
    if op not in ("r", "w"):
        raise BadLine(f"opcode {f[3].strip()!r} is neither r nor w")
    return (READ if op == "r" else WRITE, _int(f[1], "LBA") * SECTOR, _int(f[2], "size"),
            decimal_ns(f[4], 10**9), f[0].strip())


# -- Alibaba block traces (2020) -------------------------------------------------------------------
# device_id,opcode,offset,length,timestamp; offset, length: bytes; opcode R|W; timestamp: µs.


def parse_alibaba(line: str) -> Optional[Request]:
    f = _fields(line, ",", 5, "an Alibaba line")
    op = f[1].strip().upper()
    if op not in ("R", "W"):
        raise BadLine(f"opcode {f[1].strip()!r} is neither R nor W")
    return (READ if op == "R" else WRITE, _int(f[2], "offset"), _int(f[3], "length"),
            _int(f[4], "timestamp") * 1000, f[0].strip())


# -- Tencent CBS (2018) ----------------------------------------------------------------------------
# Timestamp,Offset,Size,IOType,VolumeID; Timestamp: s (Unix); Offset, Size: 512 B sectors;
# IOType 0 read, 1 write.


def parse_tencent(line: str) -> Optional[Request]:
    f = _fields(line, ",", 5, "a Tencent line")
    op = f[3].strip()
    if op not in ("0", "1"):
        raise BadLine(f"IO type {op!r} is neither 0 (read) nor 1 (write)")
    return (READ if op == "0" else WRITE, _int(f[1], "offset") * SECTOR, _int(f[2], "size") * SECTOR,
            decimal_ns(f[0], 10**9), f[4].strip())


# -- blkparse (default output) ---------------------------------------------------------------------
# maj,min cpu seq time pid action RWBS sector + nsectors [process]; time: s; sector: 512 B.
# Only the events of one action are requests (D, dispatched to the device, by default); flushes
# and requests with no sectors hold no data.
#
# blkparse ends its output with a summary (blkparse.c, show_device_and_cpu_stats): per device, a
# block per CPU that had events ("CPU0 (8,16):" and indented " Reads Queued: ..." lines), a
# "Total (8,16):" block when more than one CPU had events, then "Throughput (R/W): ...",
# "Events (8,16): N entries" and "Skips: ..." (older versions: "Events (8,16): N entries, M skips").
# With -s, per-process blocks ("fio (4162)") come first. Counts carry thousands separators in an
# en_US locale ("1,060KiB"). Reading per-CPU files (blkparse -i NAME) it also prints "Input file
# NAME.blktrace.N added" on stdout, before the events or after the summary depending on buffering.
# The summary ends the trace: every line after its first is summary, and an event line there is
# refused (two outputs joined into one file).

BLKPARSE_ACTIONS = ("D", "Q", "C")
_BLK_TRAILER = re.compile(r"(?:CPU\d+|Total) \(.*\):|Throughput \(R/W\):.*|Events \(.*\):.*|Skips:.*"
                          r"|\S.* \(\d+(?:, \.\.\.)?\)", re.ASCII)
_BLK_INPUT_FILE = re.compile(r"Input file .* added", re.ASCII)


class BlkparseParser:
    """blkparse's default output. The events of `action` are the requests. It counts what it sees:
    `ranged` (events with a sector range, per action letter), `bare` (events without, per action
    letter) and `trailer` (lines of the closing summary, `trailer_start` its first line). With
    `original` (an `OriginalLatency`), D and C events with data are paired there, and `token` is
    left for the request just returned (see `OriginalLatency.selected`)."""

    def __init__(self, action: str = "D", original: Any = None) -> None:
        if action not in BLKPARSE_ACTIONS:
            raise SsdlabError(f"unknown blkparse action {action!r}; choose D (issued to the device), Q (queued) or "
                              f"C (completed)")
        self.action = action
        self.original = original
        self.paired = ("D", "C") if original is not None else ()
        self.ranged: Dict[str, int] = {}
        self.bare: Dict[str, int] = {}
        self.trailer = 0
        self.trailer_start: Optional[str] = None
        self.token: Any = None

    def __call__(self, line: str) -> Optional[Request]:
        f = line.split()
        n = len(f)
        if n < 6 or "," not in f[0]:
            return self._not_an_event(line)
        if self.trailer:
            raise BadLine(f"an event after the summary blkparse ends its output with (from "
                          f"{self.trailer_start!r}); are two blkparse outputs joined in one file? Replay each "
                          f"on its own")
        a = f[5]
        if n < 10 or f[8] != "+":
            self.bare[a] = self.bare.get(a, 0) + 1
            return None  # an event without a sector range (a flush, a plug)
        ranged = self.ranged
        ranged[a] = ranged.get(a, 0) + 1
        if a != self.action and a not in self.paired:
            return None
        rwbs = f[6]
        if "D" in rwbs:
            d = TRIM
        elif "W" in rwbs:
            d = WRITE
        elif "R" in rwbs:
            d = READ
        else:
            return None  # no data: N, or a flush (F) alone
        sectors = _int(f[9], "sector count")
        if sectors == 0:
            return None
        sector = _int(f[7], "sector")
        t = decimal_ns(f[3], 10**9, "time")
        original = self.original
        if original is not None:  # key: "device sector sectors", a string (no work for the garbage collector)
            if a == "D":
                self.token = original.issue(f"{f[0]} {f[7]} {f[9]}", t, d)
            else:
                self.token = original.complete(f"{f[0]} {f[7]} {f[9]}", t)
        if a != self.action:
            return None
        return d, sector * SECTOR, sectors * SECTOR, t, f[0]

    def _not_an_event(self, line: str) -> None:
        text = line.strip()
        if not text:
            return None
        if self.trailer:
            self.trailer += 1
            return None
        if _BLK_TRAILER.fullmatch(text):
            self.trailer = 1
            self.trailer_start = text if len(text) <= 40 else text[:37] + "..."
            return None
        if _BLK_INPUT_FILE.fullmatch(text):
            return None
        raise BadLine("not a blkparse event line (maj,min cpu seq time pid action ...) nor part of the summary "
                      "blkparse ends with")

    def missing(self, shown: str) -> Optional[str]:
        """Why a trace with no request of `action` holds none, naming what it does hold; None when
        it holds some."""
        if self.ranged.get(self.action):
            return None
        held = [f"{a} {self.ranged[a]:,}" for a in BLKPARSE_ACTIONS if self.ranged.get(a)]
        if held:
            choice = next(a for a in ("Q", "C", "D") if self.ranged.get(a))
            return (f"trace {shown!r} holds no {self.action} events (it has {', '.join(held)}); choose one with "
                    f"--blkparse-action {choice}")
        others: Dict[str, int] = dict(self.bare)
        for a, n in self.ranged.items():
            others[a] = others.get(a, 0) + n
        listed = [f"{a} {n:,}" for a, n in sorted(others.items())]
        if listed:
            return (f"trace {shown!r} holds no D, Q or C events with data (only {', '.join(listed[:8])}"
                    f"{', ...' if len(listed) > 8 else ''}); capture with blktrace's default actions, or -a issue, "
                    f"-a queue or -a complete")
        return (f"trace {shown!r} holds no blkparse events, only {'its summary' if self.trailer else 'no lines'}"
                f"; was it written with blkparse -O (summary only)? Run blkparse without -O")


def blkparse_parser(action: str = "D", original: Any = None) -> BlkparseParser:
    """The parser of blkparse output whose requests are the events of `action` (D, Q or C)."""
    return BlkparseParser(action, original)


# -- fio iolog v2 and v3 ---------------------------------------------------------------------------
# v2: "fio version 2 iolog", then "file action offset length" or "file add|open|close";
#     "file wait usec" pauses; timing comes from the waits.
# v3: "fio version 3 iolog", then "time_ms file action offset length" or "time_ms file add|...".
# Offsets and lengths in bytes; actions read, write, trim (sync and datasync hold no data).

_IOLOG_DIRS = {"read": READ, "write": WRITE, "trim": TRIM}
_IOLOG_NODATA = ("add", "open", "close", "sync", "datasync")


class IologParser:
    """The iolog parser keeps the version from the header and v2's clock of waits."""

    def __init__(self) -> None:
        self.version: Optional[int] = None
        self.clock_ns = 0

    def __call__(self, line: str) -> Optional[Request]:
        text = line.strip()
        if not text:
            return None
        if text.startswith("fio version"):
            m = re.fullmatch(r"fio version (\d+) iolog", text)
            if not m or m.group(1) not in ("2", "3"):
                raise BadLine(f"{text!r}: only fio iolog versions 2 and 3 are read")
            self.version = int(m.group(1))
            return None
        if self.version is None:
            raise BadLine("an iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'")
        f = text.split()
        if self.version == 3:
            if len(f) < 3:
                raise BadLine(f"{len(f)} fields where an iolog v3 line has 3 or 5")
            t = _int(f[0], "timestamp") * 1_000_000
            f = f[1:]
        else:
            t = self.clock_ns
        action = f[1] if len(f) > 1 else ""
        if action in _IOLOG_NODATA:
            return None
        if action == "wait" and self.version == 2:
            self.clock_ns += _int(f[2] if len(f) > 2 else "", "wait") * 1000
            return None
        if action not in _IOLOG_DIRS:
            raise BadLine(f"action {action!r} is not read, write, trim, sync, datasync, wait, add, open or close")
        if len(f) < 4:
            raise BadLine(f"a {action} needs an offset and a length")
        return _IOLOG_DIRS[action], _int(f[2], "offset"), _int(f[3], "length"), t, f[0]


# -- DiskSim ASCII input ---------------------------------------------------------------------------
# arrival_ms devno blkno size flags; blkno, size: 512 B sectors; flags bit 0: 1 read, 0 write.


def parse_disksim(line: str) -> Optional[Request]:
    f = _fields(line, None, 5, "a DiskSim line")
    flags = _int(f[4], "flags")
    return (READ if flags & 1 else WRITE, _int(f[2], "block number") * SECTOR, _int(f[3], "size") * SECTOR,
            decimal_ns(f[0], 10**6), f[1])


# -- SNIA IOTTA SYSTOR '17 (Fujitsu VDI traces) ------------------------------------------------------
# Timestamp,Response,IOType,LUN,Offset,Size, with that header row. Timestamp: Unix seconds with a
# nine-digit fraction (accurate to the microsecond); Response: seconds; IOType R, W or blank (no
# response message was captured: not a request); Offset, Size: bytes. Source: the distribution's
# README.txt (docs/traces.md).

SYSTOR_HEADER = "Timestamp,Response,IOType,LUN,Offset,Size"


class SystorParser:
    """SYSTOR '17 lines. With `original` (an `OriginalLatency`), each request's Response is left in
    `token`: the traced system's latency of that request, in ns."""

    def __init__(self, original: Any = None) -> None:
        self.original = original
        self.token: Any = None

    def __call__(self, line: str) -> Optional[Request]:
        f = _fields(line, ",", 6, "a SYSTOR '17 line")
        op = f[2].strip()
        if op == "W":
            d = WRITE
        elif op == "R":
            d = READ
        elif op == "":
            return None  # "no response message": the README asks to ignore these
        else:
            raise BadLine(f"IOType {op!r} is neither R, W nor blank")
        self.token = decimal_ns(f[1], 10**9, "response time")
        return d, _int(f[4], "offset"), _int(f[5], "size"), decimal_ns(f[0], 10**9), f[3].strip()


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    make_parser: Callable[[], Callable[[str], Optional[Request]]]
    header: bool  # may start with a header row of column names
    time_unit: str
    offset_unit: str
    length_unit: str
    device: str  # what the device filter matches


FORMATS: Dict[str, Format] = {
    f.name: f
    for f in (
        Format("msr", "MSR Cambridge", lambda: parse_msr, True, "100 ns (FILETIME)", "bytes", "bytes",
               "Hostname_DiskNumber, e.g. hm_0"),
        Format("fiu", "FIU SRCMap", lambda: parse_fiu, False, "ns", "512 B sectors", "512 B sectors",
               "major,minor"),
        Format("spc", "SPC (UMass)", lambda: parse_spc, True, "s", "512 B sectors", "bytes", "ASU"),
        Format("alibaba", "Alibaba block trace", lambda: parse_alibaba, True, "µs", "bytes", "bytes",
               "device_id"),
        Format("tencent", "Tencent CBS", lambda: parse_tencent, True, "s", "512 B sectors", "512 B sectors",
               "VolumeID"),
        Format("blkparse", "blktrace/blkparse", blkparse_parser, False, "s", "512 B sectors", "512 B sectors",
               "maj,min"),
        Format("iolog", "fio iolog v2/v3", IologParser, False, "ms (v3), waits in µs (v2)", "bytes", "bytes",
               "file name"),
        Format("disksim", "DiskSim ASCII", lambda: parse_disksim, False, "ms", "512 B sectors", "512 B sectors",
               "devno"),
        Format("systor", "SYSTOR '17 (SNIA IOTTA)", SystorParser, True, "s (Unix)", "bytes", "bytes", "LUN"),
    )
}

_BLKPARSE_LINE = re.compile(r"^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+[A-Za-z]{1,2}\s", re.ASCII)
_NUM = re.compile(r"^[0-9]+(\.[0-9]+)?$")


def _digits(text: str) -> bool:
    return text.isdigit() and text.isascii()


def _sniff_line(line: str) -> Optional[str]:
    text = line.strip()
    if text.startswith("fio version"):
        return "iolog"
    if _BLKPARSE_LINE.match(line) or _BLK_INPUT_FILE.fullmatch(text):
        return "blkparse"
    if "," in text:
        f = [x.strip() for x in text.split(",")]
        if len(f) >= 6 and f[3].lower() in ("read", "write") and _digits(f[0]):
            return "msr"
        if len(f) == 6 and f[2] in ("R", "W", "") and _NUM.match(f[0]) and _NUM.match(f[1]) and all(
                _digits(x) for x in f[3:]):
            return "systor"
        if len(f) == 5:
            if f[1].upper() in ("R", "W") and _digits(f[2]) and _digits(f[4]):
                return "alibaba"
            if f[3].lower() in ("r", "w") and _digits(f[1]) and _NUM.match(f[4]):
                return "spc"
            if f[3] in ("0", "1") and _NUM.match(f[0]) and _digits(f[1]) and _digits(f[2]):
                return "tencent"
        return None
    f = text.split()
    if len(f) >= 8 and f[5].upper() in ("R", "W") and _digits(f[0]) and _digits(f[3]):
        return "fiu"
    if len(f) == 5 and _NUM.match(f[0]) and all(_digits(x) for x in f[1:]):
        return "disksim"
    return None


def sniff(lines: List[str]) -> Tuple[Optional[str], str]:
    """The format the first lines of a trace are in, and why: ``(name or None, explanation)``.
    A format wins when it reads most of the lines it looked at; a header row is allowed."""
    votes: Dict[str, int] = {}
    looked = 0
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        looked += 1
        if looked == 1 and line.strip().replace(" ", "").lower() == SYSTOR_HEADER.lower():
            return "systor", f"its header is SYSTOR '17's ({SYSTOR_HEADER})"
        name = _sniff_line(line)
        if name == "iolog":
            return name, "its first line is an fio iolog header"
        if name is not None:
            votes[name] = votes.get(name, 0) + 1
    if not votes:
        return None, f"none of its first {looked} lines looks like {', '.join(list(FORMATS)[:-1])} or " \
                     f"{list(FORMATS)[-1]}"
    best = max(votes, key=lambda k: votes[k])
    if votes[best] * 2 < looked and best != "blkparse":
        return None, f"only {votes[best]} of its first {looked} lines look like {best}"
    return best, f"{votes[best]} of its first {looked} lines look like {FORMATS[best].title}"
