"""The review procedures on a real device or a regular file, through the system fio.

Each procedure checks the target first (`ssdlab.fio.safety`: nothing is written to a device that
is mounted, in use, or carries data unless the flags say so), then runs the same steps as the
simulator -- secure erase, sequential fill, random writes, HD Tach passes, idle, TRIM -- and
writes the same result directory (docs/results.md) with ``device`` set to the path and ``seed``
null. fio's own files (job file, JSON, logs, stderr) are kept in the ``fio/`` subdirectory.

==================  =======================================================================
step                on a block device                      on a regular file
==================  =======================================================================
secure erase        ``blkdiscard`` of the tested range     punch holes (``fallocate``)
                    (``nvme format --ses=1`` if discard    over the tested range
                    fails on a whole NVMe namespace)
TRIM                ``blkdiscard``                         punch holes
fill, torture,      fio (io_uring, else libaio, else psync; O_DIRECT unless the filesystem
HD Tach pass        refuses it, as tmpfs does)
per-second IOPS     fio's IOPS log with ``log_avg_msec=1000``
write amplification SMART host and NAND write counters (``smartctl -j``) when the drive has them
==================  =======================================================================

The procedures mirror the core's (crates/ssdlab/src/scenario/hdtach.rs, torture.rs): the same
steps and pass names ("clean", "after 20 min torture", ..., "after TRIM"); a torture is a secure
erase, a 128 KiB QD32 sequential fill and N minutes of 4 KiB QD32 random writes. An HD Tach pass
is one sequential write of the tested range in 128 KiB requests at QD1 by default; fio logs every
request's completion time and offset, and each 0.5 % bucket's MB/s (10^6 bytes) is its size over
the time between its last completion and the previous bucket's. fio's log times are whole
milliseconds, so buckets written in under a few milliseconds (small, fast files) are coarse.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ssdlab.errors import SsdlabError
from ssdlab.fio import logfiles, runner, smart
from ssdlab.fio.safety import Target
from ssdlab.fio.session import (Session, common_summary, device_run, fio_time, open_session, secure_erase,
                                smart_writes, target_label, trim_range)
from ssdlab import limits
from ssdlab.results import ConsistencyResult, LATENCY_KEYS, burst_seconds, check_output_dir
from ssdlab.sizes import format_size, parse_size

__all__ = [
    "DeviceConsistencyResult",
    "HdtachResult",
    "consistency_on_device",
    "hdtach_on_device",
    "torture_on_device",
    "secure_erase",
    "trim_range",
]

FILL_BLOCK = 128 * 1024
FILL_DEPTH = 32
"""The queue depth of the sequential fill and of the torture's 4 KiB random writes (QD32, as the reviews ran them)."""
PASS_BLOCK = 128 * 1024
BUCKETS = 200  # 0.5 % of the span each
MIB = 2.0**20
PathLike = Union[str, "os.PathLike[str]"]


# -- consistency --------------------------------------------------------------------------------------


class DeviceConsistencyResult(ConsistencyResult):
    """A consistency result measured on a real device (OP and GC policy unknown)."""

    def __repr__(self) -> str:
        s = self.summary
        wa = s.get("write_amplification")
        return (f"<DeviceConsistencyResult {s['label']!r}: clean {s['iops_clean']:,.0f} IOPS, steady mean "
                f"{s['iops_steady_mean']:,.0f} / min {s['iops_steady_min']:,} IOPS, "
                f"WA {'n/a' if wa is None else f'{wa:.2f}'}>")

    def subtitle(self) -> str:
        s = self.summary
        wa = s.get("write_amplification")
        wa_text = f"WA {wa:.2f} (SMART)" if isinstance(wa, (int, float)) else "WA n/a"
        return (f"{format_size(int(s['block_size']))} random writes, QD{s['qd']} · "
                f"{format_size(int(s['user_capacity_bytes']))} tested · {wa_text} · device {s['device']} · "
                f"ssdlab {s['ssdlab_version']}")


def _zoom_start(duration_s: float) -> float:
    # The core's rule (Consistency::zoom_start_s): 1400 s for 2000 s runs, else 70 %.
    return 1400.0 if duration_s >= 2000 else float(math.floor(0.7 * duration_s))


def consistency_on_device(
    path: PathLike,
    *,
    spare_area_pct: float = 0.0,
    duration_s: float = 2000.0,
    qd: int = 32,
    block_size: int = 4096,
    capacity: Optional[int] = None,
    yes_destroy_data: bool = False,
    force_signatures: bool = False,
    out_dir: Optional[PathLike] = None,
    progress: bool = False,
    label: Optional[str] = None,
    on_start: Optional[Callable[[Target], None]] = None,
) -> DeviceConsistencyResult:
    """The performance-consistency test on a real device or file (see the module doc).

    With `out_dir`, the whole result directory (with fio's files in ``out_dir/fio``) is written
    there atomically when the run succeeds; nothing is left there (nor a file the run created) when
    it fails or is interrupted. Every parameter is checked before anything is written.
    `on_start(target)` is called once the target passed the safety checks, before anything is written.
    """
    spare_area_pct = limits.percent(spare_area_pct, "spare area")
    duration_s = limits.seconds(duration_s, "duration")
    qd = limits.queue_depth(qd)
    block_size = limits.block_size(block_size)
    if capacity is not None:
        _span(parse_size(capacity, what="capacity"), spare_area_pct, block_size)
    with device_run(path, capacity=capacity, yes_destroy_data=yes_destroy_data, force_signatures=force_signatures,
                    out_dir=out_dir) as (target, stage):
        span = _span(target.size_bytes, spare_area_pct, block_size)
        s = open_session(target, stage, progress, on_start, depth=max(qd, FILL_DEPTH))
        result = _consistency(s, span, spare_area_pct, duration_s, qd, block_size, label)
        if stage is not None:
            result.save(stage.path)
            stage.commit()
        return result


def _span(size: int, spare_area_pct: float, block_size: int) -> int:
    """The tested span: the size less the spare area, in whole fill blocks; checked against the
    block size before anything is written."""
    unit = max(FILL_BLOCK, block_size)
    span = int(size * (1.0 - spare_area_pct / 100.0)) // unit * unit
    if block_size > size:
        limits.block_size(block_size, span=size)
    if span <= 0:
        raise SsdlabError(f"a spare area of {spare_area_pct:g}% of {format_size(size)} leaves less than one "
                          f"{format_size(unit)} block to test; lower --spare-area or raise --capacity")
    return span


def _consistency(s: Session, span: int, spare_area_pct: float, duration_s: float, qd: int, block_size: int,
                 label: Optional[str]) -> "DeviceConsistencyResult":
    started = time.perf_counter()
    before = smart_writes(s.target)
    method, notes = secure_erase(s.target)
    s.notes += notes
    seconds = int(math.ceil(duration_s))
    jobs = [
        runner.FioJobSpec("fill", {"rw": "write", "bs": FILL_BLOCK, "iodepth": FILL_DEPTH}, planned_bytes=span),
        runner.FioJobSpec("random-write", {
            "stonewall": True, "rw": "randwrite", "bs": block_size, "iodepth": qd, "time_based": True,
            "runtime": fio_time(duration_s), "log_avg_msec": 1000, "write_iops_log": "random-write",
            "write_bw_log": "random-write", "write_lat_log": "random-write",
        }, planned_seconds=duration_s),
    ]
    out = s.run(jobs, span, comment=f"ssdlab consistency on {s.target.path}: sequential fill, then "
                                      f"{duration_s:g} s of {format_size(block_size)} random writes at QD{qd}")
    after = smart_writes(s.target)
    d = out.workdir
    iops_log = logfiles.read_log(d / "random-write_iops.2.log")
    bw_log = logfiles.read_log(d / "random-write_bw.2.log")
    lat_log = logfiles.read_log(d / "random-write_lat.2.log")
    fill_job, rand_job = out.job("fill"), out.job("random-write")
    w = rand_job["write"]
    iops = logfiles.per_second(iops_log, seconds)
    host_mib = logfiles.per_second(bw_log, seconds).astype(np.float64) / 1024.0  # KiB/s over 1 s -> MiB
    lat_us = logfiles.per_second(lat_log, seconds, how="mean") / 1000.0
    if seconds and iops[-1] == 0 and int(w["total_ios"]) > int(iops.sum()):
        # fio often writes no window for the last second; the job's totals say what it did.
        iops[-1] = int(w["total_ios"]) - int(iops.sum())
        host_mib[-1] = max(int(w["io_bytes"]) / MIB - float(host_mib[:-1].sum()), 0.0)
        s.notes.append("fio logged no window for the last second; its IOPS are the job's total minus the logged seconds")
    t = np.arange(seconds, dtype=np.int64)
    nan = np.full(seconds, np.nan)
    iops_frame = pd.DataFrame({"time_s": t, "iops": iops.astype(np.int64)})
    series = pd.DataFrame({"time_s": t, "iops": iops.astype(np.int64), "host_mib": host_mib, "nand_mib": nan,
                           "gc_mib": nan, "erases": nan, "write_amplification": nan, "mean_latency_us": lat_us})
    pct = w["clat_ns"].get("percentile", {})

    def at(p: float) -> Optional[float]:
        v = pct.get(f"{p:f}")
        return v / 1000.0 if v is not None else None

    zoom = min(_zoom_start(duration_s), max(seconds - 1, 0))
    steady = iops[int(zoom):]
    burst = burst_seconds([int(n) for n in iops])
    wa = smart.write_amplification(before, after)
    if wa["smart_source"] is None:
        s.notes.append("no SMART write counters (a file, no smartctl, or none exposed): write amplification unknown")
    summary: Dict[str, Any] = dict(common_summary(s, "consistency", label or f"{target_label(s.target)} · {spare_area_pct:g}% spare area", started))
    summary.update({
        "user_capacity_bytes": s.target.size_bytes,
        "op": None,
        "effective_spare_factor": None,
        "spare_area_pct": spare_area_pct,
        "gc_policy": None,
        "duration_s": duration_s,
        "qd": qd,
        "block_size": block_size,
        "host_write_bytes": int(w["io_bytes"]),
        "nand_write_bytes": wa["nand_write_bytes"],
        "write_amplification": wa["write_amplification"],
        "steady_write_amplification": None,
        "iops_clean": float(iops[: max(1, min(10, burst))].mean()) if len(iops) else 0.0,
        "burst_s": float(burst),
        "iops_steady_mean": float(steady.mean()) if len(steady) else 0.0,
        "iops_steady_min": int(steady.min()) if len(steady) else 0,
        "zoom_start_s": float(zoom),
        "latency_us": {"p50": at(50.0), "p99": at(99.0), "p999": at(99.9),
                       "max": w["lat_ns"]["max"] / 1000.0, "mean": w["lat_ns"]["mean"] / 1000.0},
        "fill_seconds": fill_job["write"]["runtime"] / 1000.0,
        "erase_method": method,
        "ioengine": s.io.engine,
        "direct": s.io.direct,
        "smart_host_write_bytes": wa["host_write_bytes"],
        "smart_source": wa["smart_source"],
        "fio_version": out.doc.get("fio version"),
        "notes": s.notes,
    })
    assert set(LATENCY_KEYS) == set(summary["latency_us"])
    return DeviceConsistencyResult(iops_frame, series, summary)


# -- HD Tach passes, torture, idle, TRIM ------------------------------------------------------------


def _pass_speeds(log: pd.DataFrame, span: int, buckets: int = BUCKETS) -> pd.DataFrame:
    """MB/s per position bucket from a per-IO log with offsets (``log_offset=1``)."""
    if log.empty:
        raise SsdlabError("the HD Tach pass logged no IO")
    bucket_bytes = span / buckets
    idx = np.minimum((log["offset"].to_numpy() / bucket_bytes).astype(np.int64), buckets - 1)
    done = np.zeros(buckets)
    np.maximum.at(done, idx, log["time_ms"].to_numpy().astype(np.float64))
    done = np.maximum.accumulate(done)
    prev = np.concatenate([[0.0], done[:-1]])
    dt_s = np.maximum(done - prev, 1.0) / 1000.0
    mb_s = bucket_bytes / dt_s / 1e6
    return pd.DataFrame({"position_pct": (np.arange(buckets) + 0.5) * 100.0 / buckets, "mb_s": mb_s})


def _read_offset_log(path: Path) -> pd.DataFrame:
    rows = []
    for line in path.read_text(encoding="ascii", errors="replace").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 5 and parts[0].isdigit():
            rows.append((int(parts[0]), int(parts[2]), int(parts[4])))
    return pd.DataFrame(rows, columns=["time_ms", "direction", "offset"])


def minutes_label(minutes: float) -> str:
    """"20 min", "1.5 min": the core's pass names (scenario/hdtach.rs)."""
    return f"{minutes:.0f} min" if float(minutes).is_integer() else f"{minutes} min"


def _hdtach_pass(s: Session, span: int, name: str, block_bytes: int, queue_depth: int) -> pd.DataFrame:
    safe = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "pass"
    job = runner.FioJobSpec(f"pass-{safe}", {"rw": "write", "bs": block_bytes, "iodepth": queue_depth,
                                           "write_lat_log": "pass", "log_offset": 1}, planned_bytes=span)
    out = s.run([job], span, comment=f"ssdlab HD Tach pass '{name}': one sequential write of {format_size(span)} "
                                     f"in {format_size(block_bytes)} requests at QD{queue_depth}")
    log = _read_offset_log(out.workdir / "pass_clat.1.log")
    frame = _pass_speeds(log[log["direction"] == 1], span)
    frame.insert(0, "pass", name)
    return frame


def _fill_and_torture(s: Session, span: int, minutes: float) -> Tuple[str, List[str]]:
    """The core's fill_and_torture: secure erase, a 128 KiB QD32 sequential fill, then `minutes` of
    4 KiB QD32 random writes."""
    method, notes = secure_erase(s.target)
    jobs = [
        runner.FioJobSpec("fill", {"rw": "write", "bs": FILL_BLOCK, "iodepth": FILL_DEPTH}, planned_bytes=span),
        runner.FioJobSpec("torture", {"stonewall": True, "rw": "randwrite", "bs": 4096, "iodepth": FILL_DEPTH,
                                      "time_based": True, "runtime": fio_time(minutes * 60)},
                          planned_seconds=minutes * 60),
    ]
    s.run(jobs, span, comment=f"ssdlab fill and torture: sequential fill, then {minutes:g} min of 4 KiB random "
                              f"writes at QD32")
    return method, notes


def _idle(minutes: float, progress: bool) -> None:
    end = time.monotonic() + minutes * 60
    if progress and os.isatty(2):
        from tqdm import tqdm

        with tqdm(total=int(minutes * 60), desc="idle", unit="s", leave=True) as bar:
            while (left := end - time.monotonic()) > 0:
                time.sleep(min(1.0, left))
                bar.update(int(minutes * 60 - left) - bar.n)
    else:
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(5.0, left))


@dataclass
class HdtachResult:
    """``hdtach.csv``, ``summary.json`` and ``hdtach.png`` of docs/results.md (hdtach, torture)."""

    passes: pd.DataFrame  # pass, position_pct, mb_s
    summary: Dict[str, Any]

    def chart(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(10.0, 4.5), dpi=110, layout="constrained")
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        for name, g in self.passes.groupby("pass", sort=False):
            ax.plot(g["position_pct"], g["mb_s"], linewidth=1.2, label=str(name))
        fig.suptitle(str(self.summary["label"]), fontsize=13, fontweight="bold")
        ax.set_title(f"sequential {format_size(PASS_BLOCK)} writes across the tested range · device "
                     f"{self.summary['device']} · ssdlab {self.summary['ssdlab_version']}", fontsize=9, color="#555555")
        ax.set_xlabel("Position (% of the tested range)")
        ax.set_ylabel("MB/s")
        ax.set_xlim(0, 100)
        ax.set_ylim(0, None)
        ax.grid(True, color="#d0d0d0", linewidth=0.8)
        ax.legend(fontsize=8, frameon=False)
        return fig

    def save(self, out_dir: PathLike) -> Path:
        out = check_output_dir(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.passes.to_csv(out / "hdtach.csv", index=False, float_format="%.6g")
        text = json.dumps(self.summary, indent=2, ensure_ascii=False, allow_nan=False)
        (out / "summary.json").write_text(text + "\n", encoding="utf-8")
        self.chart().savefig(out / "hdtach.png")
        return out


def _pass_table(frame: pd.DataFrame) -> List[Dict[str, Any]]:
    rows = []
    clean = None
    for name, g in frame.groupby("pass", sort=False):
        avg = float(g["mb_s"].mean())
        if clean is None:
            clean = avg
        rows.append({"name": str(name), "avg_mb_s": avg, "min_mb_s": float(g["mb_s"].min()),
                     # The clean pass is 100 % by definition; 100 * a / a can round to 99.999...
                     "pct_of_clean": (100.0 if avg == clean else 100.0 * avg / clean) if clean else None})
    return rows


def run_procedure(
    path: PathLike,
    steps: Sequence[Tuple[str, Any]],
    *,
    scenario: str,
    capacity: Optional[int] = None,
    yes_destroy_data: bool = False,
    force_signatures: bool = False,
    out_dir: Optional[PathLike] = None,
    progress: bool = False,
    label: Optional[str] = None,
    block_bytes: int = PASS_BLOCK,
    queue_depth: int = 1,
    params: Optional[Dict[str, Any]] = None,
    on_start: Optional[Callable[[Target], None]] = None,
) -> HdtachResult:
    """Runs `steps` on the device: ``("erase", None)``, ``("pass", NAME)``, ``("torture", MINUTES)``
    (secure erase, sequential fill, then MINUTES of 4 KiB QD32 random writes), ``("idle", MINUTES)``,
    ``("trim", None)``; every ``pass`` (`block_bytes` requests at `queue_depth`) adds an HD Tach curve.

    Every step and parameter is checked before anything is written. With `out_dir`, the result
    directory (hdtach.csv, summary.json, hdtach.png, fio's files in ``fio/``) is written there
    atomically when the run succeeds, and nothing is left behind when it fails."""
    steps = _check_steps(steps)
    block_bytes = limits.block_size(block_bytes)
    queue_depth = limits.queue_depth(queue_depth)
    if capacity is not None:
        _pass_span(parse_size(capacity, what="capacity"), block_bytes)
    with device_run(path, capacity=capacity, yes_destroy_data=yes_destroy_data, force_signatures=force_signatures,
                    out_dir=out_dir) as (target, stage):
        span = _pass_span(target.size_bytes, block_bytes)
        s = open_session(target, stage, progress, on_start, depth=max(queue_depth, FILL_DEPTH))
        result = _procedure(s, span, steps, scenario, progress, label, block_bytes, queue_depth, params)
        if stage is not None:
            from ssdlab.results import HdtachResult as SavedHdtach

            SavedHdtach(result.passes, result.summary).save(stage.path)
            stage.commit()
        return result


def _pass_span(size: int, block_bytes: int) -> int:
    span = size // PASS_BLOCK * PASS_BLOCK
    if span < PASS_BLOCK * BUCKETS:
        raise SsdlabError(f"{format_size(size)} is too small for {BUCKETS} position buckets of 128 KiB; HD Tach "
                          f"passes need at least {format_size(PASS_BLOCK * BUCKETS)} (--capacity)")
    limits.block_size(block_bytes, span=span)
    return span


def _check_steps(steps: Sequence[Tuple[str, Any]]) -> List[Tuple[str, Any]]:
    """The steps with their arguments checked: positive, bounded minutes for torture and idle."""
    out: List[Tuple[str, Any]] = []
    for step in steps:
        if not isinstance(step, (tuple, list)) or len(step) != 2:
            raise SsdlabError(f"a procedure step is a (kind, argument) pair, got {step!r}")
        kind, arg = step
        if kind == "torture":
            arg = limits.minutes(arg, "torture")
        elif kind == "idle":
            arg = limits.minutes(arg, "idle")
        elif kind == "pass":
            arg = str(arg)
        elif kind not in ("erase", "trim"):
            raise SsdlabError(f"unknown procedure step {kind!r}; use erase, pass, torture, idle or trim")
        out.append((kind, arg))
    return out


def _procedure(s: Session, span: int, steps: Sequence[Tuple[str, Any]], scenario: str, progress: bool,
               label: Optional[str], block_bytes: int, queue_depth: int,
               params: Optional[Dict[str, Any]]) -> HdtachResult:
    started = time.perf_counter()
    before = smart_writes(s.target)
    torture_wa: Optional[float] = None
    frames = []
    done: List[str] = []
    for kind, arg in steps:
        if kind == "erase":
            method, notes = secure_erase(s.target)
            s.notes += notes
            done.append(f"secure erase ({method})")
        elif kind == "pass":
            frames.append(_hdtach_pass(s, span, str(arg), block_bytes, queue_depth))
            done.append(f"pass '{arg}'")
        elif kind == "torture":
            t0 = smart_writes(s.target)
            method, notes = _fill_and_torture(s, span, float(arg))
            s.notes += notes
            torture_wa = smart.write_amplification(t0, smart_writes(s.target))["write_amplification"]
            done.append(f"secure erase ({method}), fill, {minutes_label(float(arg))} torture")
        elif kind == "idle":
            _idle(float(arg), progress)
            done.append(f"{minutes_label(float(arg))} idle")
        elif kind == "trim":
            done.append(f"TRIM ({trim_range(s.target)})")
        else:
            raise SsdlabError(f"unknown procedure step {kind!r}")
    after = smart_writes(s.target)
    frame = pd.concat(frames, ignore_index=True)
    summary = common_summary(s, scenario, label or f"{target_label(s.target)} · HD Tach", started)
    wa = smart.write_amplification(before, after)
    summary.update({
        "passes": _pass_table(frame),
        **(params or {}),
        "user_capacity_bytes": s.target.size_bytes,
        "block_bytes": block_bytes,
        "queue_depth": queue_depth,
        "steps": done,
        "torture_write_amplification": torture_wa,
        "smart_host_write_bytes": wa["host_write_bytes"],
        "smart_nand_write_bytes": wa["nand_write_bytes"],
        "write_amplification": wa["write_amplification"],
        "ioengine": s.io.engine,
        "direct": s.io.direct,
        "notes": s.notes,
    })
    return HdtachResult(frame, summary)


def hdtach_on_device(path: PathLike, *, torture_minutes: float = 0.0, **kw: Any) -> HdtachResult:
    """The core's ``hdtach`` procedure on a device: secure erase and a clean pass; with
    `torture_minutes`, then a fill and torture and a pass ``after N min torture``."""
    torture_minutes = limits.minutes(torture_minutes, "torture", allow_zero=True)
    steps: List[Tuple[str, Any]] = [("erase", None), ("pass", "clean")]
    if torture_minutes:
        steps += [("torture", torture_minutes), ("pass", f"after {minutes_label(torture_minutes)} torture")]
    return run_procedure(path, steps, scenario="hdtach", params={"torture_minutes": torture_minutes}, **kw)


def torture_steps(torture_minutes: float = 20.0, pass_after_torture: bool = True, idle_minutes: float = 30.0,
                  then: Sequence[str] = (), trim: bool = True) -> List[Tuple[str, Any]]:
    """The core's ``torture`` procedure (scenario/torture.rs) as device steps, with the same pass names."""
    idle_minutes = limits.minutes(idle_minutes, "idle", allow_zero=True)
    torture_minutes = limits.minutes(torture_minutes, "torture")
    if isinstance(then, str):
        then = [a for a in then.split(",") if a.strip()]
    steps: List[Tuple[str, Any]] = [("erase", None), ("pass", "clean"), ("torture", torture_minutes)]
    history = f"{minutes_label(torture_minutes)} torture"
    if pass_after_torture:
        steps.append(("pass", f"after {history}"))
        history += ", pass"
    if idle_minutes > 0:
        steps += [("idle", idle_minutes), ("pass", f"after {history}, {minutes_label(idle_minutes)} idle")]
        history += f", {minutes_label(idle_minutes)} idle, pass"
    for action in then:
        a = action.strip()
        if a == "pass":
            steps.append(("pass", f"after {history}"))
            history += ", pass"
            continue
        try:
            minutes = float(a[len("idle:"):]) if a.startswith("idle:") else float("nan")
        except ValueError:
            minutes = float("nan")
        if not (minutes > 0 and math.isfinite(minutes)):
            raise SsdlabError(f"unknown torture action '{a}': use 'pass' or 'idle:MINUTES' with a positive number of minutes")
        minutes = limits.minutes(minutes, "idle")
        steps.append(("idle", minutes))
        history += f", {minutes_label(minutes)} idle"
    if trim:
        steps += [("trim", None), ("pass", "after TRIM")]
    return steps


def torture_on_device(path: PathLike, *, torture_minutes: float = 20.0, pass_after_torture: bool = True,
                      idle_minutes: float = 30.0, then: Sequence[str] = (), trim: bool = True,
                      **kw: Any) -> HdtachResult:
    """AnandTech's "Performance Over Time & TRIM" (review-data.md 2.3), as the core's ``torture``
    procedure runs it: secure erase, clean pass; secure erase, fill, torture; a pass, idle, a pass,
    further ``then`` actions (``"pass"``, ``"idle:MINUTES"``); TRIM and a last pass."""
    steps = torture_steps(torture_minutes, pass_after_torture, idle_minutes, then, trim)
    params = {"torture_minutes": torture_minutes, "pass_after_torture": pass_after_torture,
              "idle_minutes": idle_minutes, "then": list(then), "trim": trim}
    return run_procedure(path, steps, scenario="torture", params=params, **kw)
