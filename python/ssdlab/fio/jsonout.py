"""fio's JSON document (``--output-format=json``) of a simulated run.

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
"""

from __future__ import annotations

import bisect
import datetime
import json
import math
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Tuple

import numpy as np

from ssdlab import _core
from ssdlab.fio.jobopts import options_dict
from ssdlab.fio.joberrors import errno as job_errno
from ssdlab.fio.verify import runtimes_ms as verify_runtimes_ms
from ssdlab.fio.windows import DIRS, interval_lengths_ms, whole_windows

if TYPE_CHECKING:
    from ssdlab.fio.simrun import FioRun, JobResult

_LAT_NS_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_LAT_MS_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000)


def fio_version_string() -> str:
    return f"ssdlab-{_core.__version__}"


# -- per-direction numbers ---------------------------------------------------------------------------


def _window_rates(job: "JobResult", d: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(iops, KiB/s, index) for the whole intervals with IO in direction `d` -- fio's bw/iops samples."""
    s = job.series
    name = DIRS[d]
    ios = s[f"{name}_ios"].to_numpy(np.int64)
    by = s[f"{name}_bytes"].to_numpy(np.int64)
    spent = interval_lengths_ms(len(ios), job.interval_s * 1000.0, job.runtime_s * 1000.0)
    keep = (ios > 0) & whole_windows(spent, job.interval_s * 1000.0)
    since = job.phase.get("stats_start_ns")
    if since is not None:  # latency_target's final window: fio reset its samples there
        keep &= np.arange(len(ios)) * job.interval_s * 1e9 >= since
    idx = np.nonzero(keep)[0]
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
    if job.phase.get("never_started"):
        return 0  # exit_what=all stopped the job before it started (fio reports 0)
    since = job.phase.get("stats_start_ns") or 0  # latency_target: fio's figures of the final window
    return max(int(round((job.runtime_s - since / 1e9) * 1000.0)), 1)


def _ddir(job: "JobResult", d: int) -> Dict[str, Any]:
    ph = job.phase
    ios = int(ph["ios"][d])
    nbytes = int(ph["bytes"][d])
    runt = _runtime_ms(job) if ios else 0
    phases = verify_runtimes_ms(ph)  # a verifying job: reads in its verify phases, writes in its passes
    if phases is not None and d < 2 and ios:
        runt = phases[d] if d == 1 and ph.get("verify", {}).get("phantom_writes") else max(phases[d], 1)
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
        "host_write_bytes": c["host_write_bytes"],
        "nand_write_bytes": c["nand_write_units"] * unit_bytes,
        "gc_write_bytes": c["gc_write_units"] * unit_bytes,
        "erases": c["erases"],
        "write_amplification": job.write_amplification(),
        "steady_state_at_s": job.phase.get("steady_state_at_s"),
        "latency_buckets": "estimated from percentiles",
        "notes": list(job.plan.notes),
        **({"verify": job.phase["verify"]} if job.phase.get("verify") is not None else {}),
    }


def unit_bytes() -> int:
    return 4096


def job_json(job: "JobResult") -> Dict[str, Any]:
    plan = job.plan
    ns, us, ms = _latency_buckets(job)
    out: Dict[str, Any] = {
        "jobname": plan.name,
        "groupid": plan.groupid,
        "error": job_errno(job.phase),
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
    _job_control(out, job)
    if plan.description is not None:
        out["desc"] = plan.description
    ss = _steadystate(job)
    if ss is not None:
        out["steadystate"] = ss
    out["ssdlab"] = _job_ssdlab(job, unit_bytes())
    return out


def _job_control(out: Dict[str, Any], job: "JobResult") -> None:
    """fio's job fields for `ssdlab.fio.semantics`: with continue_on_error (or ignore_error),
    ``total_err`` and ``first_error`` before ``latency_depth``; with latency_target, the depth the
    search ended at, the target in ns and the window in us (as fio stores them)."""
    sem = job.plan.semantics
    if sem is None:
        return
    ph = job.phase
    if sem.continue_on_error:
        tail = {k: out.pop(k) for k in ("latency_depth", "latency_target", "latency_percentile", "latency_window")}
        out["total_err"] = int(ph.get("ignored_errors", 0))
        out["first_error"] = int(ph.get("first_ignored_error") or 0)
        out.update(tail)
    if sem.latency is not None:
        target_ns, window_us, pct = sem.latency
        out["latency_depth"] = int(ph.get("latency_depth") or job.plan.iodepth)
        out["latency_target"] = target_ns
        out["latency_percentile"] = float(pct)
        out["latency_window"] = window_us


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
            "effective_spare_factor": run.config.spare(run.seed)["effective_spare_factor"],
            "gc_policy": run.config.ftl.gc_policy,
            "seed": run.seed,
            "ssdlab_version": _core.__version__,
            "wall_seconds": run.wall_seconds,
            "notes": list(run.notes),
        },
    }


def dumps(doc: Dict[str, Any]) -> str:
    """JSON text as fio prints it (indented), without NaN."""
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
