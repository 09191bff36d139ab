"""The TC × QD sweep of PTS's composite block size workload (CBW, PTS-E 1.1's ECW) and demand
intensity test (DIRTH), after [YF] (yfwayne/SSS-PTS-TEST, the only implementation): a stimulus
(R/W mix, block size or size mix, access distribution) run at every thread count × queue depth of
`THREADS` × `DEPTHS`, from 32 × 32 down to 1 × 1, one ``round_s`` point each, round after round
until the IOPS at the highest load (TC 32 × QD 32) is steady (`ssdlab.pts.steady`).

Every point is one ``run_together`` step of the core: TC workloads over the active range, each
with its own queue of QD requests and its own seed, drawing sizes from the mix (fio's
``bssplit``) and offsets from the distribution (fio's ``random_distribution``) in the core's
request streams (`crates/ssdlab/src/workload`); a round is one call of the core on the same drive.
Seeds as `ssdlab.pts.rounds`: point p of round r, thread t from
``derive(derive(derive(seed, r), p), t)``.

After the rounds, the maximum, middle and minimum IOPS points of the last round ([YF]: among the
points with an average response time under 5 ms, the highest IOPS; the one closest to the middle
of the highest and the lowest; TC 1 × QD 1) are run once more, ``round_s`` each, with the core's
response-time histogram (`ssdlab.pts.histogram`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.pts import steady
from ssdlab.pts.rounds import derive_seed

__all__ = ["ART_CEILING_US", "DEPTHS", "ROW_COLUMNS", "THREADS", "Stimulus", "SweepPoint", "extremes", "histogram_runs",
           "points", "precondition_steps", "run_sweep", "write_cache_step"]

THREADS = (32, 16, 8, 6, 4, 2, 1)
DEPTHS = (32, 16, 8, 6, 4, 2, 1)
"""[YF]: TC ∈ {32, 16, 8, 6, 4, 2, 1} × QD ∈ {32, 16, 8, 6, 4, 2, 1}, "High to Low TOIO"."""
ART_CEILING_US = 5000.0
"""[YF]'s ceiling on a histogram point's average response time (5 ms); UNVERIFIED against 2.0.2."""
ROW_COLUMNS = ("round", "threads", "queue_depth", "oio", "seconds", "iops", "mb_s", "read_ios", "write_ios",
               "mean_latency_us", "p99_999_latency_us", "max_latency_us", "write_amplification")


@dataclass(frozen=True)
class Stimulus:
    """What every point of a sweep runs: `read_pct` % reads, requests of `block_bytes` or of the
    size mix `block_sizes` ((bytes, percent), fio's bssplit; `block_bytes` is then its smallest),
    random offsets over the active range drawn from `zones` ((access %, size %), fio's
    ``random_distribution=zoned``) or uniformly."""

    read_pct: int
    block_bytes: int
    block_sizes: Tuple[Tuple[int, int], ...] = ()
    zones: Tuple[Tuple[int, int], ...] = ()

    def workload(self, *, read_pct: Optional[int] = None) -> Dict[str, Any]:
        """The core's workload fields of this stimulus (at `read_pct` instead of its own)."""
        pct = self.read_pct if read_pct is None else read_pct
        w: Dict[str, Any] = ({"rw": "read"} if pct == 100 else {"rw": "write"} if pct == 0 else
                             {"rw": "mixed", "read_fraction": pct / 100})
        w.update(pattern="random", block_bytes=self.block_bytes)
        if self.block_sizes:
            w["block_sizes"] = [{"bytes": b, "pct": float(p)} for b, p in self.block_sizes]
        if self.zones:
            w["distribution"] = {"kind": "zoned", "zones": [{"access_pct": float(a), "size": float(s)}
                                                             for a, s in self.zones]}
        return w

    @property
    def mean_bytes(self) -> float:
        """The mean request size."""
        if not self.block_sizes:
            return float(self.block_bytes)
        return sum(b * p for b, p in self.block_sizes) / 100.0


@dataclass(frozen=True)
class SweepPoint:
    threads: int
    queue_depth: int

    @property
    def name(self) -> str:
        return f"T{self.threads}Q{self.queue_depth}"


def points() -> List[SweepPoint]:
    """The sweep, high to low: TC 32 (QD 32 … 1), then TC 16, … down to TC 1 × QD 1."""
    return [SweepPoint(t, q) for t in THREADS for q in DEPTHS]


TRACKED = SweepPoint(32, 32)
"""The tracking variable: IOPS at the highest load ([YF], the issue)."""


def write_cache_step(enabled: bool) -> Dict[str, Any]:
    return {"step": "write_cache", "enabled": bool(enabled)}


def precondition_steps(stimulus: Stimulus, *, user_bytes: int, span_bytes: int, write_cache: Optional[bool],
                       seed: int) -> List[Dict[str, Any]]:
    """Purge (secure erase), the write cache set, then the preconditioning: the stimulus as 100 %
    writes at TC 32 × QD 32 over the active range ([YF]: "composite 100% W at TC32/QD32"), twice
    the user capacity in all (ssdlab's choice, as HIR's: a fixed amount instead of [YF]'s rounds to
    steady state; the sweep's own rounds then run to steady state). `write_cache` None (a device,
    which keeps its own) sets nothing."""
    per_thread = max(2 * user_bytes // TRACKED.threads // stimulus.block_bytes * stimulus.block_bytes,
                     stimulus.block_bytes)
    workloads = [{"label": f"precondition T{t + 1}", **stimulus.workload(read_pct=0), "queue_depth": TRACKED.queue_depth,
                  "span_bytes": span_bytes, "byte_limit": per_thread, "interval_ms": 60_000.0,
                  "seed": derive_seed(seed, t)} for t in range(TRACKED.threads)]
    cache = [] if write_cache is None else [write_cache_step(write_cache)]
    return [{"step": "secure_erase"}, *cache, {"step": "run_together", "workloads": workloads}]


def point_step(stimulus: Stimulus, point: SweepPoint, *, span_bytes: int, seconds: float, seed: int,
               histogram: bool = False) -> Dict[str, Any]:
    w = stimulus.workload()
    workloads = []
    for t in range(point.threads):
        job = {"label": f"{point.name} T{t + 1}", **w, "queue_depth": point.queue_depth, "span_bytes": span_bytes,
               "duration_s": seconds, "interval_ms": seconds * 1000.0, "seed": derive_seed(seed, t)}
        if histogram:
            job["latency_histogram"] = True
        workloads.append(job)
    return {"step": "run_together", "workloads": workloads}


def _row(round_number: int, point: SweepPoint, step: Any, unit_bytes: int) -> Dict[str, Any]:
    phase = step.phase or {}
    ios, moved = phase.get("ios", [0, 0, 0]), phase.get("bytes", [0, 0, 0])
    lat = phase.get("latency_rw")
    counters = phase.get("counters", {})
    host, nand = counters.get("host_write_bytes", 0), counters.get("nand_write_units", 0)
    seconds = float(step.duration_s)
    n = int(ios[0]) + int(ios[1])
    return {"round": round_number, "threads": point.threads, "queue_depth": point.queue_depth,
            "oio": point.threads * point.queue_depth, "seconds": seconds,
            "iops": n / seconds if seconds > 0 else 0.0,
            "mb_s": (int(moved[0]) + int(moved[1])) / seconds / 1e6 if seconds > 0 else 0.0,
            "read_ios": int(ios[0]), "write_ios": int(ios[1]),
            "mean_latency_us": lat["mean_ns"] / 1e3 if lat else None,
            "p99_999_latency_us": lat["p99_999_ns"] / 1e3 if lat else None,
            "max_latency_us": lat["max_ns"] / 1e3 if lat else None,
            "write_amplification": nand * unit_bytes / host if host else None}


def unit_bytes(sim: Any) -> int:
    d = sim.config.describe()
    return int(d["physical_capacity_bytes"] // (d["dies"] * d["blocks_per_die"] * d["units_per_block"]))


RoundCallback = Callable[[int, List[Dict[str, Any]], Optional[steady.Verdict]], None]


def run_sweep(sim: Any, stimulus: Stimulus, *, span_bytes: int, round_s: float, rounds_max: int, seed: int,
              on_round: Optional[RoundCallback] = None) -> Tuple[List[Dict[str, Any]], steady.Verdict]:
    """The sweep's rounds on `sim` (preconditioned) until the IOPS at TC 32 × QD 32 is steady over
    5 rounds or `rounds_max` rounds ran. Returns every point's row (`ROW_COLUMNS`) and the verdict."""
    unit = unit_bytes(sim)
    sweep = points()
    rows: List[Dict[str, Any]] = []
    tracked: List[float] = []
    verdict: Optional[steady.Verdict] = None
    for r in range(1, rounds_max + 1):
        round_seed = derive_seed(seed, r)
        steps = [point_step(stimulus, p, span_bytes=span_bytes, seconds=round_s, seed=derive_seed(round_seed, i))
                 for i, p in enumerate(sweep)]
        done = sim.run_steps(steps)
        this = [_row(r, p, s, unit) for p, s in zip(sweep, done)]
        rows.extend(this)
        tracked.append(next(x["iops"] for x in this if (x["threads"], x["queue_depth"]) == (32, 32)))
        verdict = (steady.assess({TRACKING_KEY: tracked}, rounds_max=rounds_max)
                   if r >= min(steady.WINDOW, rounds_max) else None)
        if on_round is not None:
            on_round(r, this, verdict)
        if verdict is not None:
            break
    if verdict is None:
        raise SsdlabError(f"at least {steady.WINDOW} rounds are needed for a steady-state window, got {rounds_max}")
    return rows, verdict


TRACKING_KEY = "iops_t32q32"


def extremes(last_round: Sequence[Dict[str, Any]]) -> Dict[str, SweepPoint]:
    """[YF]'s histogram points among `last_round`'s rows: ``max`` the highest IOPS with an average
    response time under `ART_CEILING_US` (the highest IOPS at all when none is under it), ``min``
    TC 1 × QD 1, ``mid`` the point whose IOPS is closest to the middle of the two (ties: the
    earlier point of the sweep)."""
    def pt(row: Dict[str, Any]) -> SweepPoint:
        return SweepPoint(int(row["threads"]), int(row["queue_depth"]))

    under = [r for r in last_round if (r["mean_latency_us"] or 0.0) < ART_CEILING_US] or list(last_round)
    top = max(under, key=lambda r: r["iops"])
    low = next(r for r in last_round if (r["threads"], r["queue_depth"]) == (1, 1))
    middle = (top["iops"] + low["iops"]) / 2
    mid = min(under, key=lambda r: abs(r["iops"] - middle))
    return {"max": pt(top), "mid": pt(mid), "min": pt(low)}


def histogram_runs(sim: Any, stimulus: Stimulus, chosen: Dict[str, SweepPoint], *, span_bytes: int, seconds: float,
                   seed: int) -> Dict[str, Tuple[Dict[str, Any], List[List[int]]]]:
    """Runs each chosen point once more for `seconds` with the response-time histogram; returns
    name -> (the run's row, its histogram buckets)."""
    names = list(chosen)
    steps = [point_step(stimulus, chosen[n], span_bytes=span_bytes, seconds=seconds,
                        seed=derive_seed(derive_seed(seed, 1_000_000), i), histogram=True) for i, n in enumerate(names)]
    done = sim.run_steps(steps)
    unit = unit_bytes(sim)
    out = {}
    for n, s in zip(names, done):
        row = _row(0, chosen[n], s, unit)
        out[n] = (row, [list(map(int, b)) for b in (s.phase or {}).get("latency_histogram") or []])
    return out
