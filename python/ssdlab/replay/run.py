"""`replay(trace, ...)`: a block trace played on a simulated drive (docs/traces.md).

The trace is read and parsed here, a batch at a time (`ssdlab.replay.reader`); each batch is
placed on the drive (``fit``) and handed to the core, which simulates every request with the GIL
released. Memory stays bounded by the batch size, whatever the trace's length.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, Dict, List, Optional, Union

import numpy as np

from ssdlab import limits
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.replay.reader import Batch, Selection, TraceReader, extent
from ssdlab.replay.result import ReplayResult
from ssdlab.simulate import Simulator, _check_seed, _resolve_config, _series_frame
from ssdlab.sizes import format_size

__all__ = ["FITS", "PRECONDITIONS", "TIMINGS", "precondition_steps", "replay"]

UNIT = 4096
FITS = ("refuse", "wrap", "scale")
TIMINGS = ("trace", "afap")
PRECONDITIONS = ("none", "fill", "steady")
STEADY_PASSES = 2
"""``steady`` preconditioning writes this many user capacities of 4 KiB random writes after the fill."""


def precondition_steps(how: str, user_bytes: int) -> List[Dict[str, Any]]:
    """The steps that put a fresh drive in the state `how` names: ``none`` (secure erased),
    ``fill`` (every LBA written once, sequentially) or ``steady`` (filled, then 4 KiB random writes
    of `STEADY_PASSES` user capacities, by which a greedy drive's WA has settled)."""
    if how not in PRECONDITIONS:
        raise SsdlabError(f"unknown precondition {how!r}; choose none, fill or steady")
    steps: List[Dict[str, Any]] = [{"step": "secure_erase"}]
    if how in ("fill", "steady"):
        steps.append({"step": "run", "workload": {"label": "fill", "rw": "write", "pattern": "sequential",
                                                  "block_bytes": 128 * 1024, "queue_depth": 32}})
    if how == "steady":
        steps.append({"step": "run", "workload": {"label": "random-write", "rw": "write", "pattern": "random",
                                                  "block_bytes": UNIT, "queue_depth": 32,
                                                  "byte_limit": STEADY_PASSES * user_bytes}})
    return steps


def _round_up(x: np.ndarray) -> np.ndarray:
    return (x + np.uint64(UNIT - 1)) // np.uint64(UNIT) * np.uint64(UNIT)


def place(batch: Batch, user_bytes: int, fit: str, trace_extent: int, shown: str) -> np.ndarray:
    """The drive offsets of a batch's requests. ``refuse`` keeps them and refuses one that does
    not fit; ``wrap`` takes them modulo the capacity; ``scale`` multiplies them by capacity /
    the trace's extent. Both keep each request's position within its 4 KiB unit (so aligned
    requests stay aligned) and move one that would run past the end back by whole units."""
    user = np.uint64(user_bytes)
    off, length = batch.offsets, batch.lengths
    too_long = length > user
    if fit == "refuse" or too_long.any():
        bad = (off + length > user) | (off + length < off) if fit == "refuse" else too_long
        if bad.any():
            i = int(np.argmax(bad))
            hint = ("use --fit wrap or --fit scale to fold the trace onto the drive, or a larger --capacity"
                    if fit == "refuse" else "choose a larger --capacity")
            raise SsdlabError(f"trace {shown!r} line {int(batch.lines[i])}: {int(length[i])} bytes at offset "
                              f"{int(off[i])} do not fit the drive's {format_size(user_bytes)} "
                              f"({user_bytes} bytes); {hint}")
        return off
    within = off % np.uint64(UNIT)
    if fit == "wrap":
        new = off % user
    else:
        ratio = user_bytes / max(trace_extent, 1)
        new = np.floor(off.astype(np.float64) * ratio).astype(np.uint64)
        new = new - new % np.uint64(UNIT) + within
    over = new + length
    straddle = over > user
    if straddle.any():
        back = _round_up(np.where(straddle, over - user, np.uint64(0)))
        new = np.where(straddle, new - np.minimum(back, new - within), new)
    return new


def _summary_latency(stats: Optional[Dict[str, Any]]) -> Optional[Dict[str, float]]:
    if not stats:
        return None
    out = {"min": stats["min_ns"] / 1e3, "mean": stats["mean_ns"] / 1e3, "max": stats["max_ns"] / 1e3}
    for p, ns in stats["percentiles"]:
        out[f"p{p:g}"] = ns / 1e3
    return out


def replay(
    trace: Any,
    config: Union[DriveConfig, str, None] = None,
    *,
    format: str = "auto",
    trace_device: Optional[str] = None,
    start_s: Optional[float] = None,
    end_s: Optional[float] = None,
    limit: Optional[int] = None,
    fit: str = "refuse",
    timing: str = "trace",
    speed: float = 1.0,
    qd: int = 32,
    precondition: str = "none",
    skip_bad_lines: bool = False,
    blkparse_action: str = "D",
    seed: int = 1,
    interval_ms: float = 1000.0,
    progress: Any = False,
) -> ReplayResult:
    """Replays the block trace at `trace` on a simulated drive; returns a `ReplayResult`.

    `format`: ``auto`` (sniffs the first lines) or one of `ssdlab.replay.FORMATS`. Selection:
    `trace_device` (the device/volume/disk the format names, see docs/traces.md), `start_s` and
    `end_s` (a window in seconds from the first selected request), `limit` (requests). `fit`:
    ``refuse`` offsets beyond the capacity, or ``wrap``/``scale`` them onto it. `timing`: ``trace``
    (open loop at the timestamps divided by `speed`) or ``afap`` (closed loop at queue depth `qd`).
    `precondition`: ``none``, ``fill`` or ``steady`` (see `precondition_steps`). `progress`: True
    shows bars on stderr, or a callable ``(phase, fraction, detail)``.
    """
    cfg = _resolve_config(config)
    seed = _check_seed(seed)
    if fit not in FITS:
        raise SsdlabError(f"unknown fit {fit!r}; choose refuse, wrap or scale")
    if timing not in TIMINGS:
        raise SsdlabError(f"unknown timing {timing!r}; choose trace or afap")
    speed = limits.replay_speed(speed)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise SsdlabError(f"the request limit must be a positive whole number, got {limit!r}")
    for name, v in (("start", start_s), ("end", end_s)):
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise SsdlabError(f"the window's {name} must be a number of seconds, zero or more, got {v!r}")
    if start_s is not None and end_s is not None and end_s <= start_s:
        raise SsdlabError(f"the window ends ({end_s:g} s) before it starts ({start_s:g} s)")
    selection = Selection(trace_device, start_s, end_s, limit)
    wall = time.perf_counter()
    sim = Simulator(cfg, seed)
    user = sim.user_bytes
    reader_args: Dict[str, Any] = dict(selection=selection, skip_bad_lines=skip_bad_lines,
                                       blkparse_action=blkparse_action)
    with TraceReader(trace, format, **reader_args) as reader:  # checks the file and format first
        fmt = reader.format
        shown = reader.shown
        sniffed = reader.sniffed
        bars = _Bars(progress, reader.size)
        try:
            if sniffed is not None:
                bars.note(f"trace format: {fmt} ({sniffed})")
            trace_extent = 0
            if fit == "scale":
                with TraceReader(trace, fmt, **reader_args) as first_pass:
                    trace_extent, _ = extent(first_pass)
                if trace_extent == 0:
                    raise SsdlabError(f"trace {shown!r}: no request was selected; nothing to scale")
            steps = precondition_steps(precondition, user)
            sim.run_steps(steps, progress=bars.steps(steps))
            mode: Dict[str, Any] = ({"mode": "trace", "speed": float(speed)} if timing == "trace"
                                    else {"mode": "afap", "queue_depth": int(qd)})
            options = {"label": "replay", "interval_ms": interval_ms, "timing": mode}
            sim._core.replay_start(json.dumps(options))
            for batch in reader.batches():
                offsets = place(batch, user, fit, trace_extent, shown)
                _, sim_s = sim._core.replay_feed(batch.kinds, offsets, batch.lengths, batch.times_ns)
                bars.replay(reader.position, reader.counts.requests, sim_s)
            raw, series = sim._core.replay_finish()
        finally:
            bars.close()
        counts = reader.counts
        original_latency = reader.original_latency()
    out = json.loads(raw)
    phase, stats = out["phase"], out["stats"]
    interval_s, frame = _series_frame(series)
    c = phase["counters"]
    host_units = c["host_write_units"]
    directions = ("read", "write", "trim")
    summary: Dict[str, Any] = {
        "scenario": "replay",
        "label": f"{cfg.name} · replay of {shown.rsplit('/', 1)[-1]}",
        "drive": cfg.name,
        "user_capacity_bytes": user,
        "op": cfg.describe()["op"],
        "effective_spare_factor": cfg.spare(seed)["effective_spare_factor"],
        "gc_policy": cfg.ftl.gc_policy,
        "seed": seed,
        "trace": shown,
        "format": fmt,
        "format_sniffed": sniffed,
        "compression": reader.compression,
        "trace_device": trace_device,
        "window_s": [start_s, end_s],
        "limit": limit,
        "fit": fit,
        "trace_extent_bytes": trace_extent if fit == "scale" else None,
        "timing": timing,
        "speed": float(speed) if timing == "trace" else None,
        "queue_depth": int(qd) if timing == "afap" else None,
        "precondition": precondition,
        "requests": stats["requests"],
        "reads": phase["ios"][0],
        "writes": phase["ios"][1],
        "trims": phase["ios"][2],
        "host_read_bytes": phase["bytes"][0],
        "host_write_bytes": phase["bytes"][1],
        "host_trim_bytes": phase["bytes"][2],
        "unaligned_requests": dict(zip(directions, stats["unaligned_requests"])),
        "rmw_read_units": stats["rmw_read_units"],
        "trim_bytes_not_unmapped": stats["trim_bytes_not_unmapped"],
        "units": dict(zip(directions, stats["units"])),
        "out_of_order": stats["out_of_order"],
        "host_write_units": host_units,
        "nand_write_units": c["nand_write_units"],
        "gc_write_units": c["gc_write_units"],
        "write_amplification": c["nand_write_units"] * 4096 / c["host_write_bytes"] if c["host_write_bytes"] else None,
        "erases": c["erases"],
        "gc_victims": c["gc_victims"],
        "duration_s": (phase["end_ns"] - phase["start_ns"]) / 1e9,
        "latency_us": {d: _summary_latency(phase["latency"][i]) for i, d in enumerate(directions)},
        "lines": {"read": counts.lines, "requests": counts.requests, "no_data": counts.no_data,
                  "header": counts.header, "bad_skipped": counts.bad, "other_device": counts.other_device,
                  "outside_window": counts.outside_window, "zero_length": counts.zero_length,
                  "summary": counts.summary},
        "trace_latency_us": original_latency,
        "devices": len(counts.devices),
        "first_bad_line": counts.first_bad,
    }
    summary["wall_seconds"] = time.perf_counter() - wall
    summary["requests_per_wall_second"] = stats["requests"] / max(summary["wall_seconds"], 1e-9)
    if len(counts.devices) > 1 and trace_device is None:
        shown_devices = ", ".join(sorted(counts.devices)[:5])
        summary["note"] = (f"the trace holds {len(counts.devices)} devices ({shown_devices}"
                           f"{', ...' if len(counts.devices) > 5 else ''}); all were replayed onto one drive -- "
                           f"pick one with --trace-device")
    if stats["requests"] == 0:
        raise SsdlabError(f"trace {shown!r}: no request was selected ({counts.lines} lines read); check "
                          f"--trace-device, the time window and --format")
    return ReplayResult(summary, frame, interval_s, phase["latency"], config=cfg)


class _Bars:
    """Progress: the preconditioning steps' bars, then one bar over the trace file's bytes."""

    def __init__(self, progress: Any, size: int) -> None:
        self.show = progress is True
        self.user = progress if callable(progress) else None
        if progress not in (None, False, True) and self.user is None:
            raise SsdlabError(f"progress must be True, False or a callable, got {progress!r}")
        self.size = max(size, 1)
        self.bar: Any = None

    def note(self, text: str) -> None:
        if self.show:
            import click

            click.echo(f"ssdlab: {text}", err=True)

    def steps(self, steps: List[Dict[str, Any]]) -> Any:
        if len(steps) <= 1:
            return None
        if self.show:
            return True
        if self.user is not None:
            user = self.user
            return lambda step, fraction, sim_s: user("precondition", fraction, sim_s)
        return None

    def replay(self, position: int, requests: int, sim_s: float) -> None:
        if self.user is not None:
            self.user("replay", min(position / self.size, 1.0), sim_s)
        if not self.show:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=self.size, unit="B", unit_scale=True, desc="replay", leave=True,
                            bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {postfix} "
                                       "[{elapsed}<{remaining}]")
        self.bar.set_postfix_str(f"{requests:,} requests, sim {sim_s:,.0f} s", refresh=False)
        self.bar.update(max(0, min(position, self.size) - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
