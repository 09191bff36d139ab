"""The PTS tests' columns in a sweep's ``results.parquet`` (``ssdlab sweep``, docs/sweeps.md), and
every PTS module's `SweepEntry` takes its figures from here.

Every PTS point has the drive's columns, the variant and the write cache it ran with; a test with a
steady-state rule (IOPS, latency, throughput, HIR's preconditioning, CBW, DIRTH) adds ``steady``,
``rounds_run`` and, per tracking variable, its window average and its range and excursion in % of
that average (the spec's two tests). WSAT and XSR have no tracking variable: their scalars are
chosen in `wsat` and `xsr` (docs/pts.md, *Sweeps*).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from ssdlab.scenarios.base import drive_figures

__all__ = ["base", "cbw_dirth", "hir", "iops", "latency", "steady", "throughput", "wsat", "xsr"]


def base(s: Mapping[str, Any]) -> Dict[str, Any]:
    """The columns every PTS point has."""
    figures = drive_figures(s)
    for key in ("variant", "write_cache", "simulated_seconds"):
        figures[key] = s.get(key)
    return figures


def steady(s: Mapping[str, Any], verdict: Optional[Mapping[str, Any]] = None, prefix: str = "") -> Dict[str, Any]:
    """``steady``, ``rounds_run`` and each tracking variable's window average, range % and
    excursion % (``{prefix}{name}``, ``…_range_pct``, ``…_excursion_pct``) of the verdict
    `verdict` (default: the summary's ``steady_state``)."""
    v = verdict if verdict is not None else (s.get("steady_state") or {})
    figures: Dict[str, Any] = {f"{prefix}steady": v.get("steady"), f"{prefix}rounds_run": v.get("rounds_run")}
    for name, w in (v.get("tracking") or {}).items():
        figures[f"{prefix}{name}"] = w.get("average")
        figures[f"{prefix}{name}_range_pct"] = w.get("range_pct")
        figures[f"{prefix}{name}_excursion_pct"] = w.get("excursion_pct")
    return figures


def iops(s: Mapping[str, Any]) -> Dict[str, Any]:
    """The IOPS test: the three tracking variables' window averages (IOPS), and the 4 KiB
    random-read IOPS of the window (the table's 4 KiB 100/0 cell)."""
    figures = {**base(s), **steady(s)}
    figures["rnd_4k_100_0"] = ((s.get("window_iops") or {}).get("4096") or {}).get("100/0")
    return figures


def latency(s: Mapping[str, Any]) -> Dict[str, Any]:
    """The latency test: the 4 KiB random-write average response time (µs, the tracking variable)
    and, over the window, its 99.999 % and maximum response times and the 4 KiB random-read
    average."""
    figures = {**base(s), **steady(s)}
    cells = {(c["read_pct"], c["block_bytes"]): c for c in s.get("window") or []}
    write, read = cells.get((0, 4096), {}), cells.get((100, 4096), {})
    figures["rnd_4k_0_100_p99_999_us"] = write.get("p99_999_us")
    figures["rnd_4k_0_100_max_us"] = write.get("max_us")
    figures["rnd_4k_100_0_mean_us"] = read.get("mean_us")
    return figures


def throughput(s: Mapping[str, Any]) -> Dict[str, Any]:
    """The throughput test, per block size (1024k, 128k): the window's write MB/s (the tracking
    variable), read MB/s and verdict."""
    figures = {**base(s), "steady": s.get("steady")}
    for size, b in (s.get("block_sizes") or {}).items():
        k = f"{int(size) // 1024}k"
        figures[f"write_mb_s_{k}"] = b.get("write_mb_s")
        figures[f"read_mb_s_{k}"] = b.get("read_mb_s")
        figures.update(steady(s, b.get("steady_state") or {}, prefix=f"{k}_"))
    return figures


def wsat(s: Mapping[str, Any]) -> Dict[str, Any]:
    """WSAT has no steady-state rule: ``saturated_iops``, the average of the last 5 samples (the
    level the drive fell to; the window the steady-state rule would look at), ``first_sample_iops``
    (the purged drive's burst), their ratio, the 0-IOPS seconds (a clean-up-later drive's stalls),
    the drive fills and write amplification at the end, and what stopped it."""
    figures = base(s)
    window = s.get("last_window") or {}
    first, last = s.get("first_sample_iops"), window.get("average")
    figures["saturated_iops"] = last
    figures["saturated_steady"] = window.get("steady")
    figures["first_sample_iops"] = first
    figures["saturated_vs_first"] = last / first if first and last is not None else None
    for key in ("zero_iops_seconds", "drive_fills", "write_amplification", "samples", "stopped_by"):
        figures[key] = s.get(key)
    return figures


def hir(s: Mapping[str, Any]) -> Dict[str, Any]:
    """HIR: the preconditioning's steady IOPS and verdict, and per wait state (5 … 50 s idle) its
    write slices' IOPS over the steady state (``wait_50s_vs_steady``: what 50-s idle gaps
    recover) and its return to baseline's."""
    figures = {**base(s), **steady(s), "steady_iops": s.get("steady_iops")}
    for w in s.get("wait_states") or []:
        k = f"{w['wait_s']:g}s"
        figures[f"wait_{k}_iops"] = w.get("wait_iops")
        figures[f"wait_{k}_vs_steady"] = w.get("wait_vs_steady")
        figures[f"baseline_{k}_vs_steady"] = w.get("baseline_vs_steady")
    return figures


def xsr(s: Mapping[str, Any]) -> Dict[str, Any]:
    """XSR has no tracking variable: each access group's average MB/s and response-time maximum,
    ``group3_vs_group1`` (the sequential writes after the random ones over the same writes before
    them: how far the drive recovered within group 3) and ``recovery_s`` (the time into group 3
    until a sample reached group 1's average; empty when none did)."""
    figures = base(s)
    groups = {g["group"]: g for g in s.get("groups") or []}
    for n, g in groups.items():
        figures[f"group{n}_mb_s"] = g.get("mb_s")
        figures[f"group{n}_mrt_us"] = g.get("mrt_us")
    one, three = groups.get(1, {}).get("mb_s"), groups.get(3, {}).get("mb_s")
    figures["group3_vs_group1"] = three / one if one and three is not None else None
    figures["recovery_s"] = (s.get("recovery") or {}).get("seconds")
    return figures


def cbw_dirth(s: Mapping[str, Any]) -> Dict[str, Any]:
    """CBW and DIRTH: the IOPS at TC 32 × QD 32 (the tracking variable), and over the window's
    TC × QD points the highest IOPS and TC 1 × QD 1's IOPS and average response time."""
    figures = {**base(s), **steady(s)}
    points = s.get("window") or []
    figures["max_iops"] = max((p["iops"] for p in points), default=None)
    t1q1 = next((p for p in points if p["threads"] == 1 and p["queue_depth"] == 1), {})
    figures["t1q1_iops"] = t1q1.get("iops")
    figures["t1q1_mean_latency_us"] = t1q1.get("mean_latency_us")
    return figures
