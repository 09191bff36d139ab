"""Writing requests as trace lines of each format: the inverse of `ssdlab.replay.formats`, for the
sample traces the tests and docs generate (the same requests in every format) and for turning a
synthetic workload into a trace.

A request is ``(direction, offset_bytes, length_bytes, time_ns)``; formats that count 512 B
sectors need offsets and lengths that are multiples of 512, formats with no trim direction need
reads and writes only, and each format's time unit must divide the times (see `time_unit_ns`).
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Tuple

__all__ = ["HEADERS", "TIME_UNIT_NS", "WRITERS", "TRIMS", "write_lines"]

Req = Tuple[int, int, int, int]
_RW = ("Read", "Write")

TIME_UNIT_NS: Dict[str, int] = {
    "msr": 100, "fiu": 1, "spc": 1, "alibaba": 1000, "tencent": 10**9, "blkparse": 1, "iolog": 10**6,
    "disksim": 1, "systor": 1,
}
"""The finest time each format's writer keeps exactly, in ns."""
SECTORS = {"fiu", "spc", "tencent", "blkparse", "disksim"}
"""Formats whose offsets count 512 B sectors (spc: offsets only)."""
TRIMS = {"blkparse", "iolog"}
"""Formats that can express a TRIM."""


def _s(ns: int, digits: int = 9) -> str:
    whole, frac = divmod(ns, 10**9)
    return f"{whole}.{frac:09d}"[: len(str(whole)) + 1 + digits]


def _ms(ns: int) -> str:
    whole, frac = divmod(ns, 10**6)
    return f"{whole}.{frac:06d}"


def _blk(d: int) -> str:
    return ("R", "W", "D")[d]


WRITERS: Dict[str, Callable[[Req, int], str]] = {
    "msr": lambda r, i: f"{r[3] // 100},hm,0,{_RW[r[0]]},{r[1]},{r[2]},{1000 + i % 7}",
    "fiu": lambda r, i: f"{r[3]} {4000 + i % 3} app {r[1] // 512} {r[2] // 512} {'RW'[r[0]]} 8 0 deadbeef",
    "spc": lambda r, i: f"0,{r[1] // 512},{r[2]},{'rw'[r[0]]},{_s(r[3])}",
    "alibaba": lambda r, i: f"7,{'RW'[r[0]]},{r[1]},{r[2]},{r[3] // 1000}",
    "tencent": lambda r, i: f"{r[3] // 10**9},{r[1] // 512},{r[2] // 512},{r[0]},1234",
    "blkparse": lambda r, i: (f"  8,0    {i % 4}     {i + 1}    {_s(r[3])}  4162  D  {_blk(r[0])}S "
                              f"{r[1] // 512} + {r[2] // 512} [fio]"),
    "iolog": lambda r, i: f"{r[3] // 10**6} /dev/nvme0n1 {('read', 'write', 'trim')[r[0]]} {r[1]} {r[2]}",
    "disksim": lambda r, i: f"{_ms(r[3])} 0 {r[1] // 512} {r[2] // 512} {1 if r[0] == 0 else 0}",
    "systor": lambda r, i: f"{_s(r[3])},0.000{100 + i % 900}000,{'RW'[r[0]]},3,{r[1]},{r[2]}",
}

HEADERS: Dict[str, List[str]] = {
    "iolog": ["fio version 3 iolog", "0 /dev/nvme0n1 add", "0 /dev/nvme0n1 open"],
    "blkparse": [],
    "systor": ["Timestamp,Response,IOType,LUN,Offset,Size"],
}


def write_lines(fmt: str, requests: Iterable[Req]) -> Iterable[str]:
    """The lines of a trace in `fmt` holding `requests` (blkparse gets a Q event before each D,
    which the replay must skip, and iolog a close at the end)."""
    yield from HEADERS.get(fmt, [])
    w = WRITERS[fmt]
    for i, r in enumerate(requests):
        if fmt == "blkparse":
            yield w(r, i).replace("  D  ", "  Q  ", 1)
        yield w(r, i)
    if fmt == "iolog":
        yield "0 /dev/nvme0n1 close"
