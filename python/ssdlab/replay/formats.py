"""The block-trace formats `ssdlab replay` reads: one parser per format, turning one line of text
into one request, and the sniffer behind ``--format auto``.

A parser takes a line (without its newline) and returns ``(direction, offset_bytes,
length_bytes, time_ns, device)`` for a request, `None` for a line that holds no request (a
header, a comment, a blkparse event other than the one replayed, a flush), or raises
`BadLine` saying what is wrong. Directions are 0 read, 1 write, 2 trim (fio's order). Times are
whole nanoseconds, converted from each format's unit without floating point, so no trace loses
precision however large its timestamps.

The field layout and units of each format are in docs/traces.md; `FORMATS` is the table the
documentation and the tests follow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

__all__ = ["BadLine", "FORMATS", "Format", "Request", "decimal_ns", "sniff"]

Request = Tuple[int, int, int, int, str]
"""``(direction, offset_bytes, length_bytes, time_ns, device)``."""

SECTOR = 512
READ, WRITE, TRIM = 0, 1, 2


class BadLine(ValueError):
    """A line the format cannot read; the message says which field is wrong."""


def decimal_ns(text: str, scale: int) -> int:
    """A non-negative decimal number of some unit (``scale`` ns each) as whole ns, exactly:
    ``decimal_ns("1.5", 10**9)`` is 1_500_000_000. Digits below a nanosecond are dropped."""
    whole, dot, frac = text.strip().partition(".")
    if not whole.isdigit() and not (whole == "" and dot and frac.isdigit()):
        raise BadLine(f"timestamp {text.strip()!r} is not a non-negative number")
    if frac and not frac.isdigit():
        raise BadLine(f"timestamp {text.strip()!r} is not a non-negative number")
    ns = int(whole or "0") * scale
    if frac:
        digits = len(str(scale)) - 1  # scale is a power of ten
        frac = (frac + "0" * digits)[:digits]
        ns += int(frac) if digits else 0
    return ns


def _int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise BadLine(f"{what} {text.strip()!r} is not a whole number") from None
    if value < 0:
        raise BadLine(f"{what} {value} is negative")
    return value


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

BLKPARSE_ACTIONS = ("D", "Q", "C")


def blkparse_parser(action: str = "D") -> Callable[[str], Optional[Request]]:
    def parse_blkparse(line: str) -> Optional[Request]:
        f = line.split()
        if len(f) < 6 or "," not in f[0]:
            if line.lstrip().startswith(("CPU", "Total", "Reads", "Writes", "Events", "Throughput", "Skips")):
                return None  # the summary blkparse prints at the end
            if not line.strip():
                return None
            raise BadLine("not a blkparse event line (maj,min cpu seq time pid action ...)")
        if f[5] != action:
            return None
        if len(f) < 10 or f[8] != "+":
            return None  # an event without a sector range (a flush, a plug)
        rwbs = f[6]
        if "D" in rwbs:
            d = TRIM
        elif "W" in rwbs:
            d = WRITE
        elif "R" in rwbs:
            d = READ
        else:
            return None  # no data (N, F alone)
        sectors = _int(f[9], "sector count")
        if sectors == 0:
            return None
        return d, _int(f[7], "sector") * SECTOR, sectors * SECTOR, decimal_ns(f[3], 10**9), f[0]

    return parse_blkparse


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
    )
}

_BLKPARSE_LINE = re.compile(r"^\s*\d+,\d+\s+\d+\s+\d+\s+\d+\.\d+\s+\d+\s+[A-Za-z]{1,2}\s")
_NUM = re.compile(r"^\d+(\.\d+)?$")


def _sniff_line(line: str) -> Optional[str]:
    text = line.strip()
    if text.startswith("fio version"):
        return "iolog"
    if _BLKPARSE_LINE.match(line):
        return "blkparse"
    if "," in text:
        f = [x.strip() for x in text.split(",")]
        if len(f) >= 6 and f[3].lower() in ("read", "write") and f[0].isdigit():
            return "msr"
        if len(f) == 5:
            if f[1].upper() in ("R", "W") and f[2].isdigit() and f[4].isdigit():
                return "alibaba"
            if f[3].lower() in ("r", "w") and f[1].isdigit() and _NUM.match(f[4]):
                return "spc"
            if f[3] in ("0", "1") and _NUM.match(f[0]) and f[1].isdigit() and f[2].isdigit():
                return "tencent"
        return None
    f = text.split()
    if len(f) >= 8 and f[5].upper() in ("R", "W") and f[0].isdigit() and f[3].isdigit():
        return "fiu"
    if len(f) == 5 and _NUM.match(f[0]) and all(x.isdigit() for x in f[1:]):
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
        name = _sniff_line(line)
        if name == "iolog":
            return name, "its first line is an fio iolog header"
        if name is not None:
            votes[name] = votes.get(name, 0) + 1
    if not votes:
        return None, f"none of its first {looked} lines looks like msr, fiu, spc, alibaba, tencent, blkparse, " \
                     "iolog or disksim"
    best = max(votes, key=lambda k: votes[k])
    if votes[best] * 2 < looked and best != "blkparse":
        return None, f"only {votes[best]} of its first {looked} lines look like {best}"
    return best, f"{votes[best]} of its first {looked} lines look like {FORMATS[best].title}"
