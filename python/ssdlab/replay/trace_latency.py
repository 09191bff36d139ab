"""The original latency a trace records, gathered while it is read, in bounded memory.

Some traces say how long each request took on the system they were captured on: blkparse output
holds the issue (D) and the completion (C) of each request, SYSTOR '17 traces a Response time per
request. `OriginalLatency` pairs or collects those times for the requests that are replayed and
keeps them in one `LatencyHistogram` per direction, so the summary can show the original latency
next to the simulated one (``trace_latency_us`` in summary.json, docs/traces.md).

Pairing blkparse events: a D event with data is remembered under ``(device, sector, sectors)``
until the C event of the same range; the time between them is the device's service time, the
latency the simulator models (from the request reaching the drive to its completion). At most
`MAX_PENDING` issues wait for their completion; beyond that the oldest is dropped and counted.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Dict, Optional, Tuple

__all__ = ["LatencyHistogram", "MAX_PENDING", "OriginalLatency", "PERCENTILES"]

MAX_PENDING = 1 << 16
"""Issues that may wait for their completion at once: more than any device's queue holds."""

PERCENTILES = (1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99)

_EXACT_BITS = 7  # values below 2**7 ns are counted exactly; above, 64 buckets per power of two


class LatencyHistogram:
    """Latencies in ns: count, sum, min and max exactly, percentiles from log-linear buckets of
    64 per power of two (each within 1/64 = 1.6 % of the values it holds)."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.low: Optional[int] = None
        self.high = 0
        self.buckets: Dict[int, int] = {}

    @staticmethod
    def bucket(ns: int) -> int:
        shift = ns.bit_length() - _EXACT_BITS
        if shift <= 0:
            return ns
        return (shift << (_EXACT_BITS - 1)) + (ns >> shift)

    @staticmethod
    def bounds(bucket: int) -> Tuple[int, int]:
        """The smallest and largest ns a bucket holds."""
        if bucket < (1 << _EXACT_BITS):
            return bucket, bucket
        shift = (bucket >> (_EXACT_BITS - 1)) - 1
        mantissa = bucket - (shift << (_EXACT_BITS - 1))
        return mantissa << shift, ((mantissa + 1) << shift) - 1

    def add(self, ns: int) -> None:
        self.count += 1
        self.total += ns
        if self.low is None or ns < self.low:
            self.low = ns
        if ns > self.high:
            self.high = ns
        b = self.bucket(ns)
        self.buckets[b] = self.buckets.get(b, 0) + 1

    def percentile(self, p: float) -> int:
        """The value at percentile `p` (the smallest value with at least p % of the count at or
        below it), as the middle of its bucket, kept within the exact minimum and maximum."""
        rank = max(1, math.ceil(p / 100 * self.count - 1e-9))
        seen = 0
        for b in sorted(self.buckets):
            seen += self.buckets[b]
            if seen >= rank:
                lo, hi = self.bounds(b)
                return min(max((lo + hi) // 2, self.low or 0), self.high)
        return self.high

    def summary_us(self) -> Optional[Dict[str, float]]:
        """``min``, ``mean``, ``max`` and ``p1`` ... ``p99.99`` in µs, and ``count``; None when empty."""
        if not self.count:
            return None
        out: Dict[str, float] = {"count": self.count, "min": (self.low or 0) / 1e3,
                                 "mean": self.total / self.count / 1e3, "max": self.high / 1e3}
        for p in PERCENTILES:
            out[f"p{p:g}"] = self.percentile(p) / 1e3
        return out


class OriginalLatency:
    """The original latency of the replayed requests. `source` is ``"blkparse"`` (pairing D and C
    events; `action` is the event replayed, D or C) or ``"response"`` (a time per request)."""

    def __init__(self, source: str, action: str = "D") -> None:
        self.source = source
        self.action = action
        self.pending: Dict[Any, int] = {}  # in issue order: time_ns << 3 | direction << 1 | replayed
        self.histograms = (LatencyHistogram(), LatencyHistogram(), LatencyHistogram())
        self.completions = 0
        self.unmatched_completions = 0
        self.dropped = 0
        self.off = False

    def issue(self, key: Any, t_ns: int, direction: int) -> Any:
        """A request issued (a blkparse D event); returns the token `selected` takes. Pending issues
        are plain ints (time, direction, replayed) so that holding many costs the garbage collector
        nothing."""
        if self.off:
            return None
        pending = self.pending
        pending[key] = (t_ns << 3) | (direction << 1)
        if len(pending) > MAX_PENDING:  # issues whose completions are not in the trace
            if not self.completions:  # a capture without C events (blktrace -a issue): stop pairing
                self.off = True
                pending.clear()
                return None
            for old in list(itertools.islice(pending, MAX_PENDING // 2)):  # drop the older half
                del pending[old]
            self.dropped += MAX_PENDING // 2
        return key

    def complete(self, key: Any, t_ns: int) -> Optional[int]:
        """A request completed (a blkparse C event): counts its latency if its issue was replayed
        (action D), or returns the latency for `selected` (action C)."""
        self.completions += 1
        entry = self.pending.pop(key, None)
        if entry is None or t_ns < entry >> 3:
            self.unmatched_completions += 1
            return None
        latency: int = t_ns - (entry >> 3)
        if self.action == "D":
            if entry & 1:
                self.histograms[(entry >> 1) & 3].add(latency)
            return None
        return latency

    def selected(self, token: Any, direction: int) -> None:
        """The request whose line gave `token` (an issue's key, or a latency in ns) is replayed."""
        if token is None:
            return
        if token.__class__ is int:
            self.histograms[direction].add(token)
            return
        entry = self.pending.get(token)
        if entry is not None:
            self.pending[token] = entry | 1  # its latency is counted when its completion comes

    def summary(self, requests: int) -> Optional[Dict[str, Any]]:
        """``trace_latency_us``: per direction (or None), how many of the `requests` replayed have
        an original latency, and where it comes from; None when none has."""
        counted = sum(h.count for h in self.histograms)
        if not counted:
            return None
        how = ("blkparse D (issue) to C (completion) of the same sector range" if self.source == "blkparse"
               else "the trace's response time of each request")
        out: Dict[str, Any] = {"source": how, "requests_with_latency": counted, "requests": requests}
        for i, d in enumerate(("read", "write", "trim")):
            out[d] = self.histograms[i].summary_us()
        return out
