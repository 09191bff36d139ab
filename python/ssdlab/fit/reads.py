"""The read side of a fit, from PTS runs: the read time, the read parallelism (dies) and the link.

The write procedures (consistency, saturation, HD Tach) show the array's write rate, not how fast
or how many ways it reads. PTS tests do (docs/fit.md, "What each measurement determines"):

* the **latency** test's 4 KiB 100/0 point at TC 1 x QD 1: the mean response time of one read
  (the NAND read time, plus the page's transfer and the host link) -> the read time ``read_us``;
* the **IOPS** test's 0.5 KiB 100/0 point at its TC x QD (32 or 128 outstanding): how many dies
  read at once and over how many channels (small requests: the link does not bound them) ->
  ``dies`` and ``channels``;
* the **throughput** test's 1024 KiB sequential reads at QD 32: the host link when they run at a
  standard link's rate.

Each reading becomes a knob through the simulator, as the write stages do: the twin is filled as
PTS preconditions it (purge and WIPC) and runs the same points (a point of larger reads first, as
the tests run them, so the reads do not meet the fill's last writes), at `READ_SIM_BYTES` at most
(reads do not depend on the capacity: the capacity rule keeps the dies). The read time is solved by
secant steps on the latency (about linear in it); the dies by a bracketing search over 8 channels x
1-16 dies per channel (IOPS grows with them until something else bounds it). The dies change the
array's write rate too (dies x page / tPROG), so the program times are scaled with them
(`with_dies`) before the write stages fit them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from ssdlab.fit.measurements import Measurements, Pts
from ssdlab.fit.twin import LINKS_MB_S, Knobs

__all__ = ["ReadFigures", "ReadFit", "fit_reads", "measured_read_figures", "read_figures", "with_dies"]

READ_SIM_BYTES = 4 * 2**30
"""The largest capacity the read points are simulated at."""
LAT_BLOCK, IOPS_BLOCK, SEQ_BLOCK = 4096, 512, 1024 * 1024
CHANNELS = (4, 8)
DIES_PER_CHANNEL = (1, 2, 4, 8, 16)
"""The twin's geometries: 4 or 8 channels x 1-16 dies each, powers of two as controllers and NAND
packages come (16 to 128 dies with 8 channels); a drive of 16 channels reads as 8 x twice the dies."""
READ_US_BOUNDS = (5.0, 2000.0)
LINK_SHARE = 0.95
"""Sequential reads at this share of a standard link or more run at the link's rate: the link is determined."""


@dataclass(frozen=True)
class ReadFigures:
    """A drive's read figures (measured, or the twin's), None where the test was not run."""

    latency_us: Optional[float] = None  # latency test: 4 KiB 100/0 mean response time, QD 1
    iops: Optional[float] = None  # IOPS test: 0.5 KiB 100/0 at TC x QD
    iops_4k: Optional[float] = None  # IOPS test: 4 KiB 100/0 at TC x QD (reported, not fitted)
    seq_read_mb_s: Optional[float] = None  # throughput test: 1024 KiB sequential reads, QD 32

    def as_dict(self) -> Dict[str, Optional[float]]:
        return {"latency_us": self.latency_us, "iops": self.iops, "iops_4k": self.iops_4k,
                "seq_read_mb_s": self.seq_read_mb_s}


def measured_read_figures(m: Measurements) -> Optional[ReadFigures]:
    lat, iops, tp = m.pts_test("latency"), m.pts_test("iops"), m.pts_test("throughput")
    if lat is None and iops is None and tp is None:
        return None
    return ReadFigures(latency_us=None if lat is None else lat.read.get(LAT_BLOCK),
                       iops=None if iops is None else iops.read.get(IOPS_BLOCK),
                       iops_4k=None if iops is None else iops.read.get(LAT_BLOCK),
                       seq_read_mb_s=None if tp is None else tp.read.get(SEQ_BLOCK))


def with_dies(k: Knobs, dies: int, channels: Optional[int] = None) -> Knobs:
    """`k` with `dies` (over `channels`), its program times scaled so the array writes at the same rate."""
    ratio = dies / k.dies
    return k.with_(dies=int(dies), channels=int(channels or k.channels), program_us=k.program_us * ratio,
                   pslc_program_us=k.pslc_program_us * ratio)


def read_figures(k: Knobs, m: Measurements, seed: int = 1) -> ReadFigures:
    """The twin's read figures: purge, WIPC, then each measured test's read points, as PTS runs them."""
    from ssdlab.pts.rounds import Point, _point_result, _unit_bytes, active_bytes, point_step, purge_and_wipc
    from ssdlab.simulate import Simulator

    cap = int(min(k.capacity_bytes, READ_SIM_BYTES)) // 4096 * 4096
    sim = Simulator(k.config(cap), seed)
    tests = [p for p in (m.pts_test("latency"), m.pts_test("iops"), m.pts_test("throughput")) if p is not None]
    whole = active_bytes(sim.user_bytes, max(p.active_range_pct for p in tests), SEQ_BLOCK)
    sim.run_steps(purge_and_wipc(sim.user_bytes, whole, queue_depth=32))
    plan: List[Tuple[str, Point, int, int, int, float]] = []  # (figure, point, threads, qd, span, seconds)
    for p in tests:
        span = active_bytes(sim.user_bytes, p.active_range_pct, SEQ_BLOCK)
        if p.test == "latency":
            plan += [("", Point(100, 8192), 1, 1, span, 0.5), ("latency_us", Point(100, LAT_BLOCK), 1, 1, span, 1.0)]
        elif p.test == "iops":
            plan += [("", Point(100, 8192), p.threads, p.qd, span, 0.2),
                     ("iops_4k", Point(100, LAT_BLOCK), p.threads, p.qd, span, 0.3),
                     ("iops", Point(100, IOPS_BLOCK), p.threads, p.qd, span, 0.3)]
        else:
            plan.append(("seq_read_mb_s", Point(100, SEQ_BLOCK, "sequential"), 1, 32, span, 0.5))
    steps = [point_step(pt, threads=t, queue_depth=q, span_bytes=s, seconds=sec, seed=seed + i)
             for i, (_f, pt, t, q, s, sec) in enumerate(plan)]
    done = sim.run_steps(steps)
    unit = _unit_bytes(sim)
    got: Dict[str, float] = {}
    for (fig, pt, *_rest), step in zip(plan, done):
        if fig:
            r = _point_result(1, pt, step, unit)
            got[fig] = (r.mean_latency_us or 0.0) if fig == "latency_us" else (r.mb_s if fig == "seq_read_mb_s"
                                                                               else r.iops)
    return ReadFigures(**got)


def read_errors(twin: ReadFigures, meas: Optional[ReadFigures]) -> Dict[str, Optional[float]]:
    """twin / measured - 1 of each read figure both have (keys ``pts_read_*``)."""
    out: Dict[str, Optional[float]] = {}
    if meas is None:
        return out
    for name, key in (("latency_us", "pts_read_latency_us"), ("iops", "pts_read_iops_512"),
                      ("iops_4k", "pts_read_iops_4k"), ("seq_read_mb_s", "pts_seq_read_mb_s")):
        a, b = getattr(twin, name), getattr(meas, name)
        if a is not None and b is not None and b > 0:
            out[key] = a / b - 1.0
    return out


@dataclass
class ReadFit:
    knobs: Knobs
    measured: ReadFigures
    twin: Optional[ReadFigures]
    notes: Dict[str, Tuple[object, str, str]] = field(default_factory=dict)  # knob -> (value, status, by)
    evaluations: int = 0


def fit_reads(k: Knobs, m: Measurements, say: Callable[[str], None] = lambda _: None, seed: int = 1,
              max_evaluations: int = 16, seen_mb_s: float = 0.0) -> Optional[ReadFit]:
    """The read time, dies and link from the PTS runs in `m` (None without one); `seen_mb_s` is the
    fastest write speed measured (a link the reads name must carry it)."""
    meas = measured_read_figures(m)
    if meas is None:
        return None
    out = ReadFit(k, meas, None)
    cache: Dict[Tuple[int, int, float, float], ReadFigures] = {}

    def run(kn: Knobs) -> ReadFigures:
        key = (kn.channels, kn.dies, round(kn.read_us or 0.0, 3), kn.link_mb_s)
        if key not in cache:
            cache[key] = read_figures(kn, m, seed)
            out.evaluations += 1
            f = cache[key]
            say(f"fit: reads {out.evaluations}: {kn.channels} x {kn.dies // kn.channels} dies, tR {kn.read_us or 0:.1f} us, link {kn.link_mb_s:g} "
                f"MB/s -> {_text(f)}")
        return cache[key]

    # the link: sequential reads at a standard link's rate are that link
    if meas.seq_read_mb_s is not None:
        link = next((x for x in LINKS_MB_S if meas.seq_read_mb_s <= x * 1.05), None)
        if link is not None and meas.seq_read_mb_s >= LINK_SHARE * link:
            # reads at a link's rate are that link; the write side's guess (the slowest link above the
            # fastest noisy write speed) yields to it, unless a write ran clearly faster than it
            contradicted = k.link_mb_s > link and seen_mb_s > 1.05 * link
            if not contradicted:
                k = k.with_(link_mb_s=link)
            out.notes["link_mb_s"] = (k.link_mb_s, "assumed" if contradicted else "determined",
                                      f"PTS throughput: 1 MiB sequential reads at {meas.seq_read_mb_s:,.0f} MB/s, "
                                      f"{100 * meas.seq_read_mb_s / link:.0f} % of a {link:g} MB/s link"
                                      + (f", but writes ran at {seen_mb_s:,.0f} MB/s: the faster link kept"
                                         if contradicted else ""))
    design = k.config(int(min(k.capacity_bytes, READ_SIM_BYTES)) // 4096 * 4096)
    tr: float = k.read_us if k.read_us is not None else float(design.timing.read_us)
    k = k.with_(read_us=tr)
    # the read time: secant steps on the QD 1 latency (the dies do not change it)
    if meas.latency_us is not None:
        target: float = meas.latency_us
        lo, hi = READ_US_BOUNDS
        x0, f0 = tr, run(k).latency_us or 0.0
        x1 = min(max(x0 + (target - f0), lo), hi)
        for _ in range(4):
            if abs(f0 / target - 1) < 0.005 or out.evaluations >= max_evaluations:
                break
            f1 = run(k.with_(read_us=x1)).latency_us or 0.0
            slope = (f1 - f0) / (x1 - x0) if x1 != x0 else 1.0
            x0, f0 = x1, f1
            x1 = min(max(x1 + (target - f1) / (slope if slope > 0.2 else 1.0), lo), hi)
        k = k.with_(read_us=round(x0, 3))
        out.notes["read_us"] = (round(x0, 2), "determined", f"PTS latency: 4 KiB random reads at QD 1, mean "
                                                            f"{meas.latency_us:,.1f} µs")
    # the geometry: 0.5 KiB random reads at TC x QD, over `GEOMETRIES` (IOPS grow with the dies per
    # channel: a bisection for each channel count), the closest kept
    if meas.iops is not None:
        iops_meas: float = meas.iops
        iops_test = m.pts_test("iops")
        assert iops_test is not None
        tried: Dict[Tuple[int, int], float] = {}

        def at(ch: int, dpc: int) -> float:
            if (ch, dpc) not in tried:
                tried[(ch, dpc)] = run(with_dies(k, ch * dpc, ch)).iops or 0.0
            return tried[(ch, dpc)]

        for ch in CHANNELS:
            lo, hi = 0, len(DIES_PER_CHANNEL) - 1
            mid = len(DIES_PER_CHANNEL) // 2
            while lo < hi and out.evaluations < max_evaluations:
                if at(ch, DIES_PER_CHANNEL[mid]) >= meas.iops:
                    hi = mid
                else:
                    lo = mid + 1
                mid = (lo + hi) // 2
            for j in (lo, lo - 1):
                if 0 <= j and out.evaluations < max_evaluations:
                    at(ch, DIES_PER_CHANNEL[j])
        if not tried:  # no simulation left for the geometry: the design's, undetermined
            out.knobs = k
            out.twin = run(k)
            return out
        best = min(tried, key=lambda g: abs(math.log(max(tried[g], 1e-9) / iops_meas)))
        most, fewest = max(tried.values()), min(tried.values())
        bound = most < meas.iops * 0.97
        floor = fewest > meas.iops * 1.03
        flat = len(tried) > 1 and most < 1.03 * fewest
        k = with_dies(k, best[0] * best[1], best[0])
        by = (f"PTS IOPS: 0.5 KiB random reads at TC {iops_test.threads} x QD {iops_test.qd}, "
              f"{meas.iops:,.0f} IOPS: the twin's {best[0]} channels x {best[1]} dies each (of "
              f"{' or '.join(map(str, CHANNELS))} channels x 1-{DIES_PER_CHANNEL[-1]} dies, powers of two)")
        if flat:
            out.notes["dies"] = (k.dies, "undetermined", by + ": bounded by something else (the link), the dies do "
                                                              "not show")
        else:
            out.notes["dies"] = (k.dies, "assumed" if bound or floor else "determined",
                                 by + ("; at least this many: the twin's most" if bound else
                                       "; at most this many: the twin's fewest" if floor else ""))
            out.notes["channels"] = (k.channels, out.notes["dies"][1], "with the dies, the closest of the geometries "
                                                                       "tried (fewer channels read small blocks slower)")
    out.knobs = k
    out.twin = run(k)
    return out


def _text(f: ReadFigures) -> str:
    parts = []
    if f.latency_us is not None:
        parts.append(f"QD1 {f.latency_us:.1f} us")
    if f.iops is not None:
        parts.append(f"0.5 KiB {f.iops:,.0f} IOPS")
    if f.seq_read_mb_s is not None:
        parts.append(f"seq {f.seq_read_mb_s:,.0f} MB/s")
    return ", ".join(parts)
