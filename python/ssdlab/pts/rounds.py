"""What the PTS tests share on a simulated drive: the client and enterprise variants, the load of a
test point (TC threads, each with its own queue of QD requests), and the rounds loop that runs a
test's points round after round on one drive until the steady-state rule holds (`ssdlab.pts.steady`).

Every point of every round runs in the core, as one ``run_together`` step of TC workloads over
the active range, one series interval long (no per-second series is made); a round is one call
of `Simulator.run_steps` on the same drive, so nothing is refilled between points or rounds.
The steady-state check between rounds is the only Python in the loop.

Seeds: a test's seed S gives point p of round r, thread t the seed
``derive(derive(derive(S, r), p), t)`` (`derive_seed`, the core's SplitMix64), so every round draws
fresh addresses and a run is reproducible bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.pts import steady
from ssdlab.sizes import format_size

__all__ = ["ROW_COLUMNS", "VARIANTS", "Point", "PointResult", "Variant", "active_bytes", "derive_seed", "point_step",
           "purge_and_wipc", "run_rounds"]

_M64 = 2**64 - 1


def derive_seed(seed: int, index: int) -> int:
    """The core's `scenario::derive_seed` (SplitMix64): an independent seed for part `index`."""
    z = (seed + ((index + 1) * 0x9E37_79B9_7F4A_7C15 & _M64)) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & _M64
    return z ^ (z >> 31)


@dataclass(frozen=True)
class Variant:
    """A PTS variant: the share of the LBAs tested (`active_range_pct`), the recommended thread
    count and queue depth of the IOPS test, and the drive's volatile write cache (PTS-C: enabled,
    WCE; PTS-E: disabled, WCD)."""

    name: str
    spec: str
    active_range_pct: float
    threads: int
    queue_depth: int
    write_cache: bool


VARIANTS = {
    # ccrssaa/py-sss-pts and ljishen/SSSPT (vars/PTS-*.yml) quoting PTS 2.0.x: "For PTS-E, WCD and
    # AR=100. For PTS-C, WCE and AR=75"; IOPS "recommended PTS-E QD=32 ... TC=4; PTS-C QD=16 ... TC=2".
    "client": Variant("client", "PTS-C", 75.0, 2, 16, True),
    "enterprise": Variant("enterprise", "PTS-E", 100.0, 4, 32, False),
}


def active_bytes(user_bytes: int, pct: float, align: int) -> int:
    """The active range: the first `pct` percent of the LBAs, in whole `align`-byte blocks (the
    largest request a test makes, so every point's random offsets fall inside the same range)."""
    span = int(user_bytes * pct / 100.0) // align * align
    if span < align:
        raise SsdlabError(f"an active range of {pct:g} % of {format_size(user_bytes)} holds no "
                          f"{format_size(align)} request; raise the active range or the capacity")
    return span


def purge_and_wipc(user_bytes: int, span_bytes: int, *, block_bytes: int = 128 * 1024, queue_depth: int
                   ) -> List[Dict[str, Any]]:
    """PTS's purge and WIPC as the core's steps: a secure erase, then twice the user capacity in
    `block_bytes` sequential writes over the active range (PTS 2.0.2 §2.2, quoted in
    ccrssaa/py-sss-pts: "Write 2X User Capacity with 128KiB SEQ writes, writing to the entire
    ActiveRange without LBA restrictions"): whole passes of the range (`ssdlab.scenarios.precondition`'s
    steps), then, when the range is smaller than the drive, the rest of the 2X as a partial pass
    from its start. One stream at the test's TC × QD outstanding requests."""
    from ssdlab.scenarios.precondition import steps as wipc_steps

    total = 2 * user_bytes // block_bytes * block_bytes
    passes, rest = divmod(total, span_bytes)
    out = wipc_steps(span_bytes, passes, block_bytes, queue_depth)
    rest = rest // block_bytes * block_bytes
    if rest:
        out.append({"step": "run", "workload": {"label": f"WIPC pass {passes + 1} (part)", "rw": "write",
                                                "pattern": "sequential", "block_bytes": block_bytes,
                                                "queue_depth": queue_depth, "span_bytes": span_bytes,
                                                "byte_limit": rest}})
    return out


@dataclass(frozen=True)
class Point:
    """One test point: `read_pct` percent reads (the rest writes), `block_bytes` requests,
    `pattern` (random or sequential)."""

    read_pct: int
    block_bytes: int
    pattern: str = "random"

    @property
    def mix(self) -> str:
        """The R/W mix as PTS writes it, ``65/35``."""
        return f"{self.read_pct}/{100 - self.read_pct}"

    @property
    def label(self) -> str:
        return f"{'RND' if self.pattern == 'random' else 'SEQ'} {format_size(self.block_bytes)} {self.mix}"


def point_step(point: Point, *, threads: int, queue_depth: int, span_bytes: int, seconds: float, seed: int,
               histogram: bool = False) -> Dict[str, Any]:
    """The core's step for one point: `threads` workloads run together, each keeping `queue_depth`
    requests outstanding (a TC × QD load: every thread its own queue), over the first `span_bytes`
    of the drive for `seconds`; one series interval covers the whole point. With `histogram`,
    the phase returns its response-time histogram (`ssdlab.pts.histogram`)."""
    if point.read_pct == 100:
        rw: Dict[str, Any] = {"rw": "read"}
    elif point.read_pct == 0:
        rw = {"rw": "write"}
    else:
        rw = {"rw": "mixed", "read_fraction": point.read_pct / 100}
    workloads = [{"label": f"{point.label} T{t + 1}", **rw, "pattern": point.pattern,
                  "block_bytes": point.block_bytes, "queue_depth": queue_depth, "span_bytes": span_bytes,
                  "duration_s": seconds, "interval_ms": seconds * 1000.0, "seed": derive_seed(seed, t)}
                 for t in range(threads)]
    if histogram:
        for w in workloads:
            w["latency_histogram"] = True
    return {"step": "run_together", "workloads": workloads}


@dataclass(frozen=True)
class PointResult:
    """What one point of one round measured: completions and bytes by direction over the point's
    own time (from its start to its last completion), and the response times of its reads and
    writes as one distribution (the core's ``latency_rw``): mean, 99.999th percentile (PTS's
    "5 9s") and largest, in µs."""

    round: int
    point: Point
    seconds: float
    read_ios: int
    write_ios: int
    read_bytes: int
    write_bytes: int
    mean_latency_us: Optional[float]
    p99_999_latency_us: Optional[float]
    max_latency_us: Optional[float]
    write_amplification: Optional[float]
    histogram: Optional[List[List[int]]] = None
    """The response-time buckets, when asked for (`ssdlab.pts.histogram`)."""

    @property
    def iops(self) -> float:
        return (self.read_ios + self.write_ios) / self.seconds if self.seconds > 0 else 0.0

    @property
    def mb_s(self) -> float:
        return (self.read_bytes + self.write_bytes) / self.seconds / 1e6 if self.seconds > 0 else 0.0

    def row(self) -> Dict[str, Any]:
        return {"round": self.round, "pattern": self.point.pattern, "read_pct": self.point.read_pct,
                "block_bytes": self.point.block_bytes, "seconds": self.seconds, "iops": self.iops,
                "mb_s": self.mb_s, "read_ios": self.read_ios, "write_ios": self.write_ios,
                "mean_latency_us": self.mean_latency_us, "p99_999_latency_us": self.p99_999_latency_us,
                "max_latency_us": self.max_latency_us, "write_amplification": self.write_amplification}


ROW_COLUMNS = ("round", "pattern", "read_pct", "block_bytes", "seconds", "iops", "mb_s", "read_ios", "write_ios",
               "mean_latency_us", "p99_999_latency_us", "max_latency_us", "write_amplification")
"""The columns of `PointResult.row` (a test's ``rounds.csv``)."""


def _point_result(round_number: int, point: Point, step: Any, unit_bytes: int) -> PointResult:
    phase = step.phase or {}
    ios, moved = phase.get("ios", [0, 0, 0]), phase.get("bytes", [0, 0, 0])
    lat = phase.get("latency_rw")
    counters = phase.get("counters", {})
    host, nand = counters.get("host_write_bytes", 0), counters.get("nand_write_units", 0)
    return PointResult(round=round_number, point=point, seconds=step.duration_s, read_ios=int(ios[0]),
                       write_ios=int(ios[1]), read_bytes=int(moved[0]), write_bytes=int(moved[1]),
                       mean_latency_us=lat["mean_ns"] / 1e3 if lat else None,
                       p99_999_latency_us=lat["p99_999_ns"] / 1e3 if lat else None,
                       max_latency_us=lat["max_ns"] / 1e3 if lat else None,
                       write_amplification=nand * unit_bytes / host if host else None,
                       histogram=phase.get("latency_histogram"))


RoundCallback = Callable[[int, List[PointResult], Optional[steady.Verdict]], None]


def run_rounds(sim: Any, points: Sequence[Point], *, threads: int, queue_depth: int, span_bytes: int,
               round_s: float, rounds_max: int, tracking: Dict[str, Callable[[List[PointResult]], float]],
               seed: int, progress: Any = None, on_round: Optional[RoundCallback] = None, histogram: bool = False
               ) -> tuple[List[PointResult], steady.Verdict]:
    """Runs `points` round after round on `sim` (a `Simulator`, preconditioned) until every
    tracking variable (a function of a round's point results) is steady over the last 5 rounds, or
    `rounds_max` rounds were run (`histogram`: every point keeps its response-time histogram).
    Returns every point of every round and the verdict."""
    unit_bytes = _unit_bytes(sim)
    results: List[PointResult] = []
    series: Dict[str, List[float]] = {name: [] for name in tracking}
    verdict: Optional[steady.Verdict] = None
    for r in range(1, rounds_max + 1):
        round_seed = derive_seed(seed, r)
        steps = [point_step(p, threads=threads, queue_depth=queue_depth, span_bytes=span_bytes, seconds=round_s,
                            seed=derive_seed(round_seed, i), histogram=histogram) for i, p in enumerate(points)]
        done = sim.run_steps(steps, progress)
        this = [_point_result(r, p, s, unit_bytes) for p, s in zip(points, done)]
        results.extend(this)
        for name, value in tracking.items():
            series[name].append(float(value(this)))
        verdict = steady.assess(series, rounds_max=rounds_max) if r >= min(steady.WINDOW, rounds_max) else None
        if on_round is not None:
            on_round(r, this, verdict)
        if verdict is not None:
            break
    if verdict is None:  # fewer rounds allowed than a window holds
        raise SsdlabError(f"at least {steady.WINDOW} rounds are needed for a steady-state window, got {rounds_max}")
    return results, verdict


def _unit_bytes(sim: Any) -> int:
    d = sim.config.describe()
    return int(d["physical_capacity_bytes"] // (d["dies"] * d["blocks_per_die"] * d["units_per_block"]))
