"""fio's formats: JSON results (``--output-format=json``), normal text, and log files.

The JSON follows fio 3.x (stat.c, ``show_thread_status_json``): top level ``fio version``,
``timestamp``, ``timestamp_ms``, ``time``, ``global options``, ``jobs``; per job ``jobname``,
``groupid``, ``job options``, and per direction (``read``, ``write``, ``trim``) ``io_bytes``,
``io_kbytes``, ``bw_bytes``, ``bw`` (KiB/s), ``iops``, ``runtime`` (ms), ``total_ios``,
``slat_ns``/``clat_ns``/``lat_ns`` {``min``, ``max``, ``mean``, ``stddev``, ``N``, ``percentile``
{"99.000000": ns}}, ``bw_min``... ``iops_samples``; then ``job_runtime``, ``iodepth_level``,
``latency_ns``/``_us``/``_ms`` and, with ``ss_dur``, ``steadystate``. A simulated run adds an
``ssdlab`` object at the top and in each job (drive, seed, write amplification, notes); tools that
read fio's JSON ignore it.

What the simulator cannot measure is reported as fio reports an unmeasured quantity: submission
latency has ``N`` = 0 (the simulated host submits instantly, so ``lat`` = ``clat``), CPU figures
are 0. The job-level ``latency_ns/us/ms`` shares are estimated from the percentiles (marked in the
``ssdlab`` object).

Logs (HOWTO, "Log File Formats"): one line per window and direction, ``time (ms), value,
direction (0 read, 1 write, 2 trim), block size, [offset,] priority``; windowed lines carry block
size 0 and offset 0, as fio's do. Values: IOPS, KiB/s, or mean latency in ns. Files are named
like fio's: ``<prefix>_iops.<N>.log``, ``_bw``, ``_lat``, ``_clat``, ``_slat`` (N = the job's
number in the file; no ``.N`` with ``per_job_logs=0``). A direction with no IO in a window has no
line, as in fio; `read_log` and `per_second` read these files back, filling such gaps with 0.
"""

from __future__ import annotations

import bisect
import datetime
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio.translate import options_dict

if TYPE_CHECKING:
    from ssdlab.fio.simrun import FioRun, JobResult
    from ssdlab.fio.translate import FioPlan

DIRS = ("read", "write", "trim")
_LAT_NS_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_LAT_MS_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)


def fio_version_string() -> str:
    return f"ssdlab-{_core.__version__}"


# -- per-direction numbers ---------------------------------------------------------------------------


def _interval_lengths_ms(n: int, interval_ms: float, runtime_ms: float) -> np.ndarray:
    """Length of each of `n` series intervals; the last one ends with the job."""
    lengths = np.full(n, float(interval_ms))
    if n:
        lengths[-1] = max(runtime_ms - interval_ms * (n - 1), 1.0)
    return lengths


def _whole_windows(spent: np.ndarray, interval_ms: float) -> np.ndarray:
    """Which windows fio samples for bandwidth and IOPS: all but a last one cut short (fio takes a
    sample only once a window is full, to within LOG_MSEC_SLACK = 1 ms)."""
    keep = np.ones(len(spent), dtype=bool)
    if len(spent) and spent[-1] < interval_ms - 1.0:
        keep[-1] = False
    return keep


def _window_rates(job: "JobResult", d: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(iops, KiB/s, index) for the whole intervals with IO in direction `d` -- fio's bw/iops samples."""
    s = job.series
    name = DIRS[d]
    ios = s[f"{name}_ios"].to_numpy(np.int64)
    by = s[f"{name}_bytes"].to_numpy(np.int64)
    spent = _interval_lengths_ms(len(ios), job.interval_s * 1000.0, job.runtime_s * 1000.0)
    idx = np.nonzero((ios > 0) & _whole_windows(spent, job.interval_s * 1000.0))[0]
    spent_ms = np.maximum(np.floor(spent[idx]), 1.0)
    iops = np.floor(ios[idx] * 1000.0 / spent_ms)
    kib = np.floor(by[idx] * 1000.0 / spent_ms / 1024.0)
    return iops, kib, idx


def _stats(values: np.ndarray) -> Tuple[int, int, float, float, int]:
    """(min, max, mean, sample stddev, n) as fio's calc_lat gives them."""
    n = len(values)
    if n == 0:
        return 0, 0, 0.0, 0.0, 0
    mean = float(values.mean())
    dev = float(values.std(ddof=1)) if n > 1 else 0.0
    return int(values.min()), int(values.max()), mean, dev, n


def _lat_object(stats: Optional[Dict[str, Any]], percentiles: Optional[Sequence[float]]) -> Dict[str, Any]:
    if not stats:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    out: Dict[str, Any] = {
        "min": int(stats["min_ns"]),
        "max": int(stats["max_ns"]),
        "mean": float(stats["mean_ns"]),
        "stddev": float(stats["stddev_ns"]),
        "N": int(stats["count"]),
    }
    if percentiles:
        table = {round(float(p), 6): int(v) for p, v in stats["percentiles"]}
        out["percentile"] = {f"{p:f}": table[round(p, 6)] for p in percentiles if round(p, 6) in table}
    return out


def _runtime_ms(job: "JobResult") -> int:
    return max(int(round(job.runtime_s * 1000.0)), 1)


def _ddir(job: "JobResult", d: int) -> Dict[str, Any]:
    ph = job.phase
    ios = int(ph["ios"][d])
    nbytes = int(ph["bytes"][d])
    runt = _runtime_ms(job) if ios else 0
    bw_bytes = (1000 * nbytes) // runt if runt else 0
    lat = ph["latency"][d]
    plan = job.plan
    iops_w, kib_w, _ = _window_rates(job, d)
    bw_min, bw_max, bw_mean, bw_dev, bw_n = _stats(kib_w)
    io_min, io_max, io_mean, io_dev, io_n = _stats(iops_w)
    return {
        "io_bytes": nbytes,
        "io_kbytes": nbytes >> 10,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // 1024,
        "iops": (1000.0 * ios / runt) if runt else 0.0,
        "runtime": runt,
        "total_ios": ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _lat_object(None, None),
        "clat_ns": _lat_object(lat, plan.percentiles if plan.clat_percentiles else None),
        "lat_ns": _lat_object(lat, plan.percentiles if plan.lat_percentiles else None),
        "bw_min": bw_min,
        "bw_max": bw_max,
        "bw_agg": 100.0 if bw_n else 0.0,
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw_n,
        "iops_min": io_min,
        "iops_max": io_max,
        "iops_mean": io_mean,
        "iops_stddev": io_dev,
        "iops_samples": io_n,
    }


# -- job-level tables --------------------------------------------------------------------------------


def _depth_level(iodepth: int) -> Dict[str, float]:
    keys = ["1", "2", "4", "8", "16", "32", ">=64"]
    out = {k: 0.0 for k in keys}
    if iodepth >= 64:
        out[">=64"] = 100.0
    else:
        out[str(1 << (iodepth.bit_length() - 1))] = 100.0
    return out


def _batch_level() -> Dict[str, float]:
    # The simulated host submits and reaps one IO at a time: fio's "1-4" bucket.
    return {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0, ">=64": 0.0}


def _cdf(stats: Dict[str, Any]):
    """Fraction of IOs at or below x ns, interpolated between the reported percentiles."""
    xs = [float(stats["min_ns"])]
    ys = [0.0]
    for p, v in stats["percentiles"]:
        if v >= xs[-1]:
            xs.append(float(v))
            ys.append(float(p) / 100.0)
    xs.append(float(stats["max_ns"]))
    ys.append(1.0)

    def f(x: float) -> float:
        if x < xs[0]:
            return 0.0
        if x >= xs[-1]:
            return 1.0
        i = bisect.bisect_right(xs, x)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y1 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    return f


def _latency_buckets(job: "JobResult") -> Tuple[Dict[str, float], Dict[str, float], Dict[str, float]]:
    ph = job.phase
    parts = [(ph["latency"][d], int(ph["ios"][d])) for d in range(3) if ph["latency"][d]]
    total = sum(n for _, n in parts)

    def share(x: float) -> float:
        if not total:
            return 0.0
        return sum(_cdf(s)(x) * n for s, n in parts) / total

    def table(edges: Sequence[int], scale: float, prev0: float, tail: Optional[str]) -> Dict[str, float]:
        out: Dict[str, float] = {}
        prev = share(prev0)
        for e in edges:
            cur = share(e * scale)
            out[str(e)] = round(100.0 * max(cur - prev, 0.0), 6)
            prev = cur
        if tail is not None:
            out[tail] = round(100.0 * max(1.0 - prev, 0.0), 6)
        return out

    ns = table(_LAT_NS_EDGES, 1.0, 0.0, None)
    us = table(_LAT_NS_EDGES, 1e3, 1000.0, None)
    ms = table(_LAT_MS_EDGES, 1e6, 1e6, ">=2000")
    return ns, us, ms


def _per_second(job: "JobResult", column: str) -> np.ndarray:
    s = job.series
    v = sum(s[f"{d}_{column}"].to_numpy(np.float64) for d in DIRS)
    per = round(1.0 / job.interval_s)
    if per >= 1 and abs(per * job.interval_s - 1.0) < 1e-9:
        n = int(np.ceil(len(v) / per))
        padded = np.zeros(n * per)
        padded[: len(v)] = v
        return padded.reshape(n, per).sum(axis=1)
    return v / job.interval_s


def _steadystate(job: "JobResult") -> Optional[Dict[str, Any]]:
    ss = job.plan.steady_state
    if ss is None:
        return None
    window = max(int(math.ceil(ss["window_s"])), 1)
    iops = _per_second(job, "ios")
    bw = _per_second(job, "bytes")
    at = job.phase.get("steady_state_at_s")
    whole = int(math.floor(job.runtime_s + 1e-9))
    end = int(at) if at is not None else min(whole, len(iops))
    start = max(end - window, 0)
    data_i = iops[start:end]
    data_b = bw[start:end]
    y = data_i if ss["metric"] == "iops" else data_b
    mean = float(y.mean()) if len(y) else 0.0
    max_dev = float(np.abs(y - mean).max()) if len(y) else 0.0
    if len(y) > 1:
        x = np.arange(len(y), dtype=np.float64)
        slope = float(np.polyfit(x, y, 1)[0])
    else:
        slope = 0.0
    value = abs(slope) if ss["criterion"] == "slope" else max_dev
    if ss["percent"]:
        value = 100.0 * value / mean if mean else 0.0
    return {
        "ss": job.plan.steady_state_text,
        "duration": window,
        "attained": 1 if at is not None else 0,
        "criterion": f"{value:f}{'%' if ss['percent'] else ''}",
        "max_deviation": max_dev,
        "slope": slope,
        "data": {
            "bw_mean": int(data_b.mean()) if len(data_b) else 0,
            "iops_mean": int(data_i.mean()) if len(data_i) else 0,
            "iops": [int(v) for v in data_i],
            "bw": [int(v) for v in data_b],
        },
    }


def _job_ssdlab(job: "JobResult", unit_bytes: int) -> Dict[str, Any]:
    c = job.phase["counters"]
    return {
        "steps": [s.get("step") for s in job.plan.steps],
        "workload": job.plan.workload,
        "start_s": job.start_s,
        "runtime_s": job.runtime_s,
        "host_write_bytes": c["host_write_units"] * unit_bytes,
        "nand_write_bytes": c["nand_write_units"] * unit_bytes,
        "gc_write_bytes": c["gc_write_units"] * unit_bytes,
        "erases": c["erases"],
        "write_amplification": job.write_amplification(),
        "steady_state_at_s": job.phase.get("steady_state_at_s"),
        "latency_buckets": "estimated from percentiles",
        "notes": list(job.plan.notes),
    }


def unit_bytes() -> int:
    return 4096


def job_json(job: "JobResult") -> Dict[str, Any]:
    plan = job.plan
    ns, us, ms = _latency_buckets(job)
    out: Dict[str, Any] = {
        "jobname": plan.name,
        "groupid": plan.groupid,
        "error": 0,
        "eta": 0,
        "elapsed": int(math.ceil(job.start_s + job.runtime_s)),
        "job options": options_dict(plan.job.own_options),
    }
    for d, name in enumerate(DIRS):
        out[name] = _ddir(job, d)
    out["sync"] = {"total_ios": 0, "lat_ns": _lat_object(None, None)}
    out.update(
        {
            "job_runtime": _runtime_ms(job),
            "usr_cpu": 0.0,
            "sys_cpu": 0.0,
            "ctx": 0,
            "majf": 0,
            "minf": 0,
            "iodepth_level": _depth_level(plan.iodepth),
            "iodepth_submit": _batch_level(),
            "iodepth_complete": _batch_level(),
            "latency_ns": ns,
            "latency_us": us,
            "latency_ms": ms,
            "latency_depth": plan.iodepth,
            "latency_target": 0,
            "latency_percentile": 100.0,
            "latency_window": 0,
        }
    )
    if plan.description is not None:
        out["desc"] = plan.description
    ss = _steadystate(job)
    if ss is not None:
        out["steadystate"] = ss
    out["ssdlab"] = _job_ssdlab(job, unit_bytes())
    return out


def fio_json(run: "FioRun") -> Dict[str, Any]:
    """The run as fio's ``--output-format=json`` document."""
    now = run.started_at
    d = run.config.describe()
    return {
        "fio version": fio_version_string(),
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": datetime.datetime.fromtimestamp(now).strftime("%a %b %d %H:%M:%S %Y"),
        "global options": dict(run.plan.global_options),
        "jobs": [job_json(j) for j in run.jobs],
        "ssdlab": {
            "simulated": True,
            "jobfile": run.plan.path,
            "drive": run.drive,
            "user_capacity_bytes": d["user_capacity_bytes"],
            "op": d["op"],
            "gc_policy": run.config.ftl.gc_policy,
            "seed": run.seed,
            "ssdlab_version": _core.__version__,
            "wall_seconds": run.wall_seconds,
            "notes": list(run.notes),
        },
    }


# -- normal text -------------------------------------------------------------------------------------


def _num(value: float, binary: bool = False, unit: str = "") -> str:
    """fio-like short numbers: at most 4 significant digits, then a k/M/G (or Ki/Mi/Gi) prefix."""
    base = 1024.0 if binary else 1000.0
    prefixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi"] if binary else ["", "k", "M", "G", "T", "P"]
    i = 0
    v = float(value)
    while abs(v) >= 10000 and i < len(prefixes) - 1:
        v /= base
        i += 1
    if float(v).is_integer():
        text = f"{int(v)}"
    elif abs(v) >= 100:
        text = f"{v:.0f}"
    elif abs(v) >= 10:
        text = f"{v:.1f}"
    else:
        text = f"{v:.2f}"
    return f"{text}{prefixes[i]}{unit}"


def _time_unit(lo: float, hi: float) -> Tuple[float, str]:
    """fio's choice of unit for a latency table: nsec for tiny values, msec for huge ones."""
    if hi < 10_000:
        return 1.0, "nsec"
    if lo >= 10_000_000:
        return 1e6, "msec"
    return 1000.0, "usec"


def _lat_line(label: str, o: Dict[str, Any]) -> str:
    scale, unit = _time_unit(o["min"], o["max"])
    return (f"    {label} ({unit}): min={o['min'] / scale:.0f}, max={o['max'] / scale:.0f}, "
            f"avg={o['mean'] / scale:.2f}, stdev={o['stddev'] / scale:.2f}")


def _pct_lines(label: str, pct: Dict[str, int]) -> List[str]:
    vals = list(pct.values())
    scale, unit = _time_unit(min(vals), max(vals))
    cells = [f"{float(k):5.2f}th=[{v / scale:6.0f}]" for k, v in pct.items()]
    lines = [f"    {label} percentiles ({unit}):"]
    for i in range(0, len(cells), 4):
        lines.append("     | " + ", ".join(cells[i:i + 4]) + ("," if i + 4 < len(cells) else ""))
    return lines


def normal_text(run: "FioRun") -> str:
    """The run in the spirit of fio's default (``normal``) output."""
    doc = fio_json(run)
    out: List[str] = []
    for j, job in zip(doc["jobs"], run.jobs):
        p = job.plan
        bs = _num(p.block_bytes, True, "B")
        top = _num(max(p.largest_block, p.block_bytes), True, "B")
        out.append(f"{p.name}: (g={p.groupid}): rw={p.fio_rw}, bs=(R) {bs}-{top}, (W) {bs}-{top}, (T) {bs}-{top}, "
                   f"ioengine=ssdlab-sim, iodepth={p.iodepth}")
    out.append(f"{fio_version_string()} (simulated drive {run.drive}, seed {run.seed})")
    for j, job in zip(doc["jobs"], run.jobs):
        p = job.plan
        out.append("")
        out.append(f"{p.name}: (groupid={p.groupid}, jobs={p.reported_jobs}): err= 0: simulated")
        if p.description:
            out.append(f"  Description  : [{p.description}]")
        for d, name in enumerate(DIRS):
            o = j[name]
            if not o["total_ios"]:
                continue
            io_p = _num(o["io_bytes"], True, "B")
            out.append(f"  {name}: IOPS={_num(o['iops'])}, BW={_num(o['bw_bytes'], True, 'B/s')} "
                       f"({_num(o['bw_bytes'], False, 'B/s')})({io_p}/{o['runtime']}msec)")
            out.append(_lat_line("clat", o["clat_ns"]))
            out.append(_lat_line(" lat", o["lat_ns"]))
            for lab, key in (("clat", "clat_ns"), ("lat", "lat_ns")):
                if "percentile" in o[key]:
                    out.extend(_pct_lines(lab, o[key]["percentile"]))
            if o["bw_samples"]:
                out.append(f"   bw (  KiB/s): min={o['bw_min']}, max={o['bw_max']}, per={o['bw_agg']:.2f}%, "
                           f"avg={o['bw_mean']:.2f}, stdev={o['bw_dev']:.2f}, samples={o['bw_samples']}")
                out.append(f"   iops        : min={o['iops_min']}, max={o['iops_max']}, avg={o['iops_mean']:.2f}, "
                           f"stdev={o['iops_stddev']:.2f}, samples={o['iops_samples']}")
        lv = j["iodepth_level"]
        out.append("  IO depths    : " + ", ".join(f"{k}={v:.1f}%" for k, v in lv.items()))
        totals = ",".join(str(j[n]["total_ios"]) for n in DIRS)
        out.append(f"     issued rwts: total={totals},0 short=0,0,0,0 dropped=0,0,0,0")
        if "steadystate" in j:
            ss = j["steadystate"]
            out.append(f"  steadystate  : attained={'yes' if ss['attained'] else 'no'}, {ss['ss']}, "
                       f"criterion={ss['criterion']}, window={ss['duration']}s")
        s = j["ssdlab"]
        wa = s["write_amplification"]
        out.append(f"  ssdlab       : host writes={_num(s['host_write_bytes'], True, 'B')}, "
                   f"NAND writes={_num(s['nand_write_bytes'], True, 'B')}, "
                   f"WA={'n/a' if wa is None else f'{wa:.2f}'}, erases={s['erases']}")
    groups: Dict[int, List[Tuple[Dict[str, Any], Any]]] = {}
    for j, job in zip(doc["jobs"], run.jobs):
        groups.setdefault(job.plan.groupid, []).append((j, job))
    out.append("")
    for g, members in groups.items():
        out.append(f"Run status group {g} (all jobs):")
        for name in DIRS:
            rows = [j[name] for j, _ in members if j[name]["total_ios"]]
            if not rows:
                continue
            io = sum(r["io_bytes"] for r in rows)
            runt = max(r["runtime"] for r in rows)
            bw = 1000 * io // runt
            out.append(f"  {name.upper():>5}: bw={_num(bw, True, 'B/s')} ({_num(bw, False, 'B/s')}), "
                       f"io={_num(io, True, 'B')} ({_num(io, False, 'B')}), run={runt}-{runt}msec")
    if run.notes:
        out.append("")
        out.append("ssdlab notes:")
        out.extend(f"  - {n}" for n in run.notes)
    return "\n".join(out) + "\n"


# -- log files ---------------------------------------------------------------------------------------


def log_name(prefix: str, kind: str, index: int, per_job: bool) -> str:
    return f"{prefix}_{kind}.{index}.log" if per_job else f"{prefix}_{kind}.log"


def _log_lines(job: "JobResult", kind: str) -> List[str]:
    """Windowed lines of one log kind (iops, bw, lat, clat) for the job."""
    p = job.plan
    s = job.series
    n = len(s)
    interval_ms = job.interval_s * 1000.0
    runtime_ms = job.runtime_s * 1000.0
    spent = _interval_lengths_ms(n, interval_ms, runtime_ms)
    ends = np.minimum(np.round(np.arange(1, n + 1) * interval_ms), round(runtime_ms)).astype(np.int64)
    prio = "0x0000" if p.log_prio else "0"
    tail = f", 0, 0, {prio}" if p.log_offset else f", 0, {prio}"
    cols = []
    for d, name in enumerate(DIRS):
        ios = s[f"{name}_ios"].to_numpy(np.int64)
        if kind == "iops":
            vals = np.floor(ios * 1000.0 / np.maximum(np.floor(spent), 1.0))
        elif kind == "bw":
            by = s[f"{name}_bytes"].to_numpy(np.int64)
            vals = np.floor(by * 1000.0 / np.maximum(np.floor(spent), 1.0) / 1024.0)
        else:
            lat = s[f"{name}_latency_sum_ns"].to_numpy(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                vals = np.floor(np.where(ios > 0, lat / np.maximum(ios, 1), 0.0) + 0.5)
        cols.append((ios, vals.astype(np.int64)))
    # IOPS and bandwidth windows are written when full, so a last window cut short is missing, as
    # in fio's logs; latency logs are flushed at the end of the job, short window included.
    keep = _whole_windows(spent, interval_ms) if kind in ("iops", "bw") else np.ones(n, dtype=bool)
    lines: List[str] = []
    for i in range(n):
        if not keep[i]:
            continue
        for d in range(3):
            ios, vals = cols[d]
            if ios[i]:
                lines.append(f"{ends[i]}, {vals[i]}, {d}{tail}")
    return lines


def _log_kinds(kind: str) -> List[str]:
    return ["iops"] if kind == "iops" else ["bw"] if kind == "bw" else ["lat", "clat", "slat"]


def _log_key(kind: str) -> str:
    return {"iops": "write_iops_log", "bw": "write_bw_log"}.get(kind, "write_lat_log")


def check_log_names(plan: "FioPlan", directory: Union[str, Path]) -> None:
    """Refuses (`SsdlabError`, naming the job and option) a relative log name of `plan` that would
    lead outside `directory` (``write_iops_log=../x``, or through a symbolic link in it), before
    anything runs; absolute names are written where the job file says, as fio does."""
    from ssdlab.paths import contained

    for p in plan.jobs:
        for spec in p.logs:
            for kind in _log_kinds(spec.kind):
                name = log_name(spec.prefix, kind, p.index, p.per_job_logs)
                if not Path(name).is_absolute():
                    contained(Path(directory), name, f"job '{p.name}': {_log_key(spec.kind)}={spec.prefix}")


def write_logs(run: "FioRun", directory: Union[str, Path], contain: bool = False) -> List[Path]:
    """Writes the logs the job file asked for; relative prefixes resolve under `directory` (with
    `contain`, they must stay inside it: `check_log_names`)."""
    written: List[Path] = []
    base = Path(directory)
    if contain:
        check_log_names(run.plan, base)
    for job in run.jobs:
        p = job.plan
        for spec in p.logs:
            kinds = _log_kinds(spec.kind)
            for kind in kinds:
                name = log_name(spec.prefix, kind, p.index, p.per_job_logs)
                path = Path(name) if Path(name).is_absolute() else base / name
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    lines = [] if kind == "slat" else _log_lines(job, "lat" if kind == "clat" else kind)
                    mode = "w" if p.per_job_logs else "a"  # fio appends to shared log names
                    with open(path, mode, encoding="ascii") as f:
                        f.write("".join(line + "\n" for line in lines))
                except OSError as e:
                    raise SsdlabError(f"cannot write fio log {str(path)!r}: {e.strerror or e}") from None
                written.append(path)
    return written


_LOG_LINE = re.compile(r"^\s*(\d+)\s*,\s*(-?\d+)\s*,\s*(\d+)\s*,\s*(\d+)")


def read_log(path: Union[str, Path]) -> pd.DataFrame:
    """A fio log file as a DataFrame ``time_ms, value, direction, bs`` (extra columns dropped)."""
    p = Path(path)
    rows = []
    try:
        text = p.read_text(encoding="ascii", errors="replace")
    except OSError as e:
        raise SsdlabError(f"cannot read fio log {str(p)!r}: {e.strerror or e}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LOG_LINE.match(line)
        if not m:
            raise SsdlabError(f"{p}:{number}: not a fio log line: {line.strip()[:60]!r}")
        rows.append(tuple(int(g) for g in m.groups()))
    return pd.DataFrame(rows, columns=["time_ms", "value", "direction", "bs"]).astype(np.int64)


def per_second(log: pd.DataFrame, seconds: Optional[int] = None, how: str = "sum",
               slack_ms: int = 250) -> np.ndarray:
    """Per-second values from a windowed fio log (``log_avg_msec=1000``).

    A line stamped t ms closes the window ending near t: it belongs to second
    ``ceil((t - slack_ms) / 1000) - 1`` (fio's stamps run a few ms late, and its last window is
    flushed early), or to the second after the previous line of its direction if that one is taken.
    Directions are summed (``how="sum"``: IOPS, bandwidth) or averaged (``"mean"``: latency).
    Seconds without a line -- fio writes none for a window without IO -- are 0 (NaN for "mean")."""
    idx = np.zeros(len(log), dtype=np.int64)
    times = log["time_ms"].to_numpy() if len(log) else np.zeros(0, dtype=np.int64)
    dirs = log["direction"].to_numpy() if len(log) else np.zeros(0, dtype=np.int64)
    last: Dict[int, int] = {}
    for i, (t, d) in enumerate(zip(times, dirs)):
        k = max(int(math.ceil((int(t) - slack_ms) / 1000.0)) - 1, 0)
        k = max(k, last.get(int(d), -1) + 1)
        idx[i] = last[int(d)] = k
    n = seconds if seconds is not None else (int(idx.max()) + 1 if len(idx) else 0)
    keep = idx < n
    out = np.zeros(n, dtype=np.float64)
    np.add.at(out, idx[keep], log["value"].to_numpy()[keep] if len(log) else [])
    if how == "mean":
        counts = np.zeros(n)
        np.add.at(counts, idx[keep], 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, out / np.maximum(counts, 1), np.nan)
    return out.astype(np.int64)


def dumps(doc: Dict[str, Any]) -> str:
    """JSON text as fio prints it (indented), without NaN."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


# -- the result directory ----------------------------------------------------------------------------


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "job"


def per_second_frames(run: "FioRun") -> Tuple[pd.DataFrame, pd.DataFrame]:
    """``iops.csv`` and ``series.csv`` frames: one row per simulated second of each job."""
    iops_rows, series_rows = [], []
    mib = 2.0**20
    for job in run.jobs:
        p = job.plan
        seconds = max(int(math.ceil(job.runtime_s - 1e-9)), 1)
        per = {name: _per_second_dir(job, name, "ios", seconds) for name in DIRS}
        total = per["read"] + per["write"] + per["trim"]
        lat = sum(_per_second_dir(job, n, "latency_sum_ns", seconds) for n in DIRS)
        s = job.series
        host = _per_second_col(job, s["host_units"].to_numpy(np.float64), seconds) * 4096 / mib
        nand = _per_second_col(job, s["nand_units"].to_numpy(np.float64), seconds) * 4096 / mib
        gc = _per_second_col(job, s["gc_units"].to_numpy(np.float64), seconds) * 4096 / mib
        erases = _per_second_col(job, s["erases"].to_numpy(np.float64), seconds)
        with np.errstate(divide="ignore", invalid="ignore"):
            wa = np.where(host > 0, nand / np.where(host > 0, host, 1), np.nan)
            mean_lat = np.where(total > 0, lat / np.where(total > 0, total, 1) / 1000.0, np.nan)
        t = np.arange(seconds)
        iops_rows.append(pd.DataFrame({
            "job": p.index, "name": p.name, "time_s": t, "iops": total.astype(np.int64),
            "read_iops": per["read"].astype(np.int64), "write_iops": per["write"].astype(np.int64),
            "trim_iops": per["trim"].astype(np.int64),
        }))
        series_rows.append(pd.DataFrame({
            "job": p.index, "name": p.name, "time_s": t, "iops": total.astype(np.int64), "host_mib": host,
            "nand_mib": nand, "gc_mib": gc, "erases": erases.astype(np.int64), "write_amplification": wa,
            "mean_latency_us": mean_lat,
        }))
    return pd.concat(iops_rows, ignore_index=True), pd.concat(series_rows, ignore_index=True)


def _per_second_col(job: "JobResult", v: np.ndarray, seconds: int) -> np.ndarray:
    per = round(1.0 / job.interval_s)
    if per >= 1 and abs(per * job.interval_s - 1.0) < 1e-9:
        padded = np.zeros(seconds * per)
        k = min(len(v), len(padded))
        padded[:k] = v[:k]
        return padded.reshape(seconds, per).sum(axis=1)
    # Intervals that do not divide a second: give each second the intervals that start in it.
    starts = (np.arange(len(v)) * job.interval_s).astype(np.int64)
    out = np.zeros(seconds)
    keep = starts < seconds
    np.add.at(out, starts[keep], v[keep])
    return out


def _per_second_dir(job: "JobResult", name: str, what: str, seconds: int) -> np.ndarray:
    return _per_second_col(job, job.series[f"{name}_{what}"].to_numpy(np.float64), seconds)


def job_chart(run: "FioRun", job: "JobResult", iops: pd.DataFrame):
    """IOPS per second of one job (log y), in the consistency charts' style."""
    from ssdlab.sizes import format_size

    p = job.plan
    subtitle = (f"fio job {p.index}: rw={p.fio_rw}, bs={format_size(p.block_bytes)}, QD{p.iodepth} · "
                f"{run.drive}, {format_size(run.user_bytes)} user · seed {run.seed} · ssdlab {_core.__version__}")
    return iops_chart(iops, p.index, p.name, subtitle)


def iops_chart(iops: pd.DataFrame, index: int, name: str, subtitle: str):
    """Job `index`'s IOPS per second from an ``iops.csv`` frame (log y), in the consistency charts' style."""
    from ssdlab.plots import consistency_figures

    frame = iops[iops["job"] == index][["time_s", "iops"]].reset_index(drop=True)
    figs = consistency_figures(frame, title=f"{name}: IOPS per second", subtitle=subtitle, zoom_start_s=0.0)
    return figs["iops_log.png"]


def chart_name(index: int, name: str) -> str:
    return f"job{index}-{_safe(name)}_iops.png"


def summary(run: "FioRun") -> Dict[str, Any]:
    d = run.config.describe()
    jobs = []
    for job in run.jobs:
        p = job.plan
        ph = job.phase
        c = ph["counters"]
        runt = max(job.runtime_s, 1e-9)
        jobs.append({
            "job": p.index, "name": p.name, "groupid": p.groupid, "rw": p.fio_rw, "block_size": p.block_bytes,
            "qd": p.iodepth, "runtime_s": job.runtime_s, "start_s": job.start_s,
            "read_iops": ph["ios"][0] / runt, "write_iops": ph["ios"][1] / runt, "trim_iops": ph["ios"][2] / runt,
            "read_bytes": ph["bytes"][0], "write_bytes": ph["bytes"][1], "trim_bytes": ph["bytes"][2],
            "host_write_bytes": c["host_write_units"] * 4096, "nand_write_bytes": c["nand_write_units"] * 4096,
            "write_amplification": job.write_amplification(),
            "steady_state_at_s": ph.get("steady_state_at_s"),
        })
    return {
        "scenario": "fio",
        "label": f"{Path(run.plan.path).name} on {run.drive}",
        "drive": run.drive,
        "device": None,
        "seed": run.seed,
        "ssdlab_version": _core.__version__,
        "wall_seconds": run.wall_seconds,
        "jobfile": run.plan.path,
        "user_capacity_bytes": d["user_capacity_bytes"],
        "op": d["op"],
        "gc_policy": run.config.ftl.gc_policy,
        "jobs": jobs,
        "notes": list(run.notes),
    }


def save(run: "FioRun", out_dir: Union[str, Path]) -> List[Path]:
    """Writes the result directory: ``fio.json``, ``fio.txt``, ``summary.json``, ``iops.csv``,
    ``series.csv`` and ``job<N>-<name>_iops.png`` per job (logs are written by `write_logs`)."""
    iops, series = per_second_frames(run)
    charts = [(chart_name(job.plan.index, job.plan.name), lambda job=job: job_chart(run, job, iops)) for job in run.jobs]
    return write_result_dir(out_dir, dumps(fio_json(run)), normal_text(run), summary(run), iops, series, charts)


def write_result_dir(out_dir: Union[str, Path], json_text: str, text: str, summary_doc: Dict[str, Any],
                     iops: pd.DataFrame, series: pd.DataFrame, charts: Sequence[Tuple[str, Any]]) -> List[Path]:
    """The result directory's files, for simulated and real (``--device``) runs alike; `charts` are
    (file name, function returning a matplotlib figure)."""
    from ssdlab.results import ResultStage

    with ResultStage(out_dir) as stage:
        names = _write_files(stage.path, json_text, text, summary_doc, iops, series, charts)
        out = stage.commit()
    return [out / n for n in names]


def _write_files(out: Path, json_text: str, text: str, summary_doc: Dict[str, Any], iops: pd.DataFrame,
                 series: pd.DataFrame, charts: Sequence[Tuple[str, Any]]) -> List[str]:
    written = []

    def put(name: str, content: str) -> None:
        path = out / name
        path.write_text(content, encoding="utf-8")
        written.append(path)

    try:
        put("fio.json", json_text)
        put("fio.txt", text)
        put("summary.json", json.dumps(summary_doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        iops.to_csv(out / "iops.csv", index=False)
        series.to_csv(out / "series.csv", index=False, float_format="%.10g")
        written += [out / "iops.csv", out / "series.csv"]
        for name, make in charts:
            path = out / name
            make().savefig(path)
            written.append(path)
    except OSError as e:
        raise SsdlabError(f"cannot write results: {e.strerror or e}") from None
    return [p.name for p in written]
