"""The PTS tests on a real device, a regular file or an NBD export, through the system fio.

`DeviceDrive` stands in for `ssdlab.simulate.Simulator` in the PTS tests: it takes the same
steps (the core's step dicts: ``secure_erase``, ``run``, ``run_together``, ``idle``, ``trim``)
and returns the same `StepResult` records (``phase`` with IOs, bytes, the latency of reads,
writes and both together, and a ``series`` per interval), so each test's rounds, steady-state rule
and result are the simulated run's own code. A test module needs three lines to run on a device:
its API function takes ``device=`` (``sim = device or Simulator(...)``), returns
``annotate(result, sim)``, and its command is wrapped by `with_device`.

How a step runs (docs/pts.md, *On a device*):

* consecutive workload steps are one generated fio job file (one fio run per round of a test),
  one job per step with ``stonewall`` between them, fio's per-job JSON (``json+``);
* a ``run_together`` step of TC identical workloads is one job with ``numjobs=TC`` and
  ``iodepth=QD`` (each thread its own queue), different workloads are jobs run side by side;
* R/W mix as ``rw=randrw`` / ``rw=rw`` with ``rwmixread``, block size ``bs`` (512 B too), the
  active range ``size`` from offset 0, a duration as ``time_based``/``runtime`` in whole ms, a
  byte limit as ``io_size`` (fio wraps a sequential job at the end of its range, as the core does);
  each thread's seed is fio's ``randseed``;
* the response times are fio's total latency (``lat_percentiles=1``): IO-weighted means, the
  largest, and the 99.999th percentile of reads and writes merged from fio's latency bins (json+;
  fio keeps 64 bins per power of two, so a percentile is within ~1.6 % of the exact value; below
  100,000 IOs the percentile's rank is the largest IO's, and fio's exact maximum is reported);
* a series (WSAT's seconds, HIR's slices, XSR's samples) from fio's IOPS, bandwidth and latency
  logs with ``log_avg_msec`` = the interval; fio writes no window for a job's last fraction of an
  interval, so the counts are scaled to the job's totals and the rest spread over the intervals
  after the last logged one;
* ``secure_erase`` is PTS's purge: ``blkdiscard`` of the device (``nvme format --ses=1`` on a whole
  NVMe namespace where discard fails); on a file, holes punched over it (``fallocate``; the
  fallback when that fails is truncating it to 0 and back); on an NBD export, a TRIM of the whole
  export (fio's ``rw=trim``). A device that can neither be discarded nor formatted is tested from
  its current state, listed as a deviation;
* ``idle`` sleeps; the time counted (``now_s``) is fio's job runtimes plus the idle time, not
  fio's start-up between runs.

The result directory is the simulated one (same CSV columns, ``summary.json`` keys), with
``device`` set, the write amplification unknown (empty), fio's files in ``fio/``, and the
deviations of the device run added to the test's own (`annotate`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import click

from ssdlab.errors import SsdlabError
from ssdlab.scenarios.shared import DEVICE as SHARED_DEVICE
from ssdlab.sizes import format_size

__all__ = ["DEVICE_OPTIONS", "DeviceConfig", "DeviceDrive", "annotate", "is_nbd_uri", "open_device", "with_device"]

NBD_SCHEMES = ("nbd://", "nbd+unix://", "nbds://", "nbds+unix://")
SIM_ONLY = ("drive", "drive_file", "op", "gc")
"""The simulated drive's options, which have no meaning with --device (the seed stays: fio's randseed)."""
TRIM_BLOCK = 16 * 1024 * 1024
KINDS = ("secure_erase", "run", "run_together", "idle", "trim")
"""The core's step kinds a device runs."""


def is_nbd_uri(path: str) -> bool:
    return str(path).startswith(NBD_SCHEMES)


class _Ftl:
    gc_mode = None
    gc_policy = None


class DeviceConfig:
    """What a PTS result reads of its drive's config, for a device: its name and user capacity.
    The layout is one 4 KiB unit per block (no NAND counters: the write amplification is unknown)."""

    ftl = _Ftl()

    def __init__(self, name: str, user_bytes: int) -> None:
        self.name = name
        self.user_bytes = user_bytes

    def describe(self) -> Dict[str, Any]:
        return {"user_capacity_bytes": self.user_bytes, "physical_capacity_bytes": self.user_bytes, "op": None,
                "dies": 1, "blocks_per_die": max(self.user_bytes // 4096, 1), "units_per_block": 1}

    def spare(self, seed: Optional[int] = None) -> Dict[str, Any]:
        """A device's spare area is its own: unknown here, as its op."""
        return {"op": None, "effective_spare_factor": None}


@dataclass
class _Target:
    """Where fio runs: a checked file or block device (`ssdlab.fio.safety.Target`) or an NBD URI."""

    path: str
    size_bytes: int
    name: str
    checked: Any = None  # the safety Target of a file or block device
    uri: Optional[str] = None

    @property
    def kind(self) -> str:
        if self.uri is not None:
            return "nbd"
        return "file" if self.checked.is_file else "block"


@dataclass
class DeviceDrive:
    """A real device, file or NBD export that runs the core's steps through fio (module doc)."""

    target: _Target
    engine: str
    direct: bool
    workdir: Path
    say: Optional[Callable[[str], None]] = None
    notes: List[str] = field(default_factory=list)
    purges: List[str] = field(default_factory=list)
    fio_runs: int = 0
    fio_version: Optional[str] = None
    gaps: List[Tuple[float, int]] = field(default_factory=list)
    """Per fio run: its wall time less its jobs' runtimes, and its jobs (fio's start-up between them)."""
    _now: float = 0.0

    @property
    def user_bytes(self) -> int:
        return self.target.size_bytes

    @property
    def now_s(self) -> float:
        """Seconds measured so far: fio's job runtimes and the idle time."""
        return self._now

    @property
    def config(self) -> DeviceConfig:
        return DeviceConfig(self.target.name, self.target.size_bytes)

    @property
    def path(self) -> str:
        return self.target.path

    # -- steps ------------------------------------------------------------------------------------

    def run_steps(self, steps: Sequence[Dict[str, Any]], progress: Any = None) -> List[Any]:
        """Runs the core's `steps` on the device; one `StepResult` per step (module doc)."""
        kinds = [step.get("step") if isinstance(step, dict) else None for step in steps]
        bad = next((i for i, k in enumerate(kinds) if k not in KINDS), None)
        if bad is not None:  # before anything is written
            raise SsdlabError(f"step {bad + 1} ({kinds[bad]!r}) cannot run on a device")
        out: List[Any] = []
        batch: List[Tuple[int, Dict[str, Any]]] = []
        for i, (step, kind) in enumerate(zip(steps, kinds)):
            if kind in ("run", "run_together"):
                batch.append((i, step))
                continue
            out += self._run_batch(batch)
            batch = []
            if kind == "secure_erase":
                out.append(self._plain(i, kind, "purge", self._purge()))
            elif kind == "idle":
                seconds = float(step["seconds"])
                time.sleep(seconds)
                out.append(self._plain(i, kind, f"idle {seconds:g} s", seconds))
            else:
                out.append(self._plain(i, kind, "trim", self._trim()))
        out += self._run_batch(batch)
        return out

    def _plain(self, index: int, kind: str, label: str, seconds: float) -> Any:
        from ssdlab.simulate import StepResult

        start = self._now
        self._now += seconds
        return StepResult(index=index, kind=kind, label=label, start_s=start, end_s=self._now, phase=None,
                          counters={}, free_blocks=0)

    def _purge(self) -> float:
        """PTS's purge (module doc); its time is not test time (0 s on the clock)."""
        if self.say is not None:
            self.say("purge")
        if self.target.uri is not None:
            self._fio([_trim_job(self.target.size_bytes)], "purge: TRIM of the whole NBD export")
            self.purges.append("TRIM of the whole NBD export (fio rw=trim)")
        else:
            from ssdlab.fio.session import secure_erase

            method, notes = secure_erase(self.target.checked)
            self.notes += notes
            self.purges.append(method)
        return 0.0

    def _trim(self) -> float:
        if self.target.uri is not None:
            self._fio([_trim_job(self.target.size_bytes)], "TRIM of the whole NBD export")
        else:
            from ssdlab.fio.session import trim_range

            trim_range(self.target.checked)
        return 0.0

    def _run_batch(self, batch: Sequence[Tuple[int, Dict[str, Any]]]) -> List[Any]:
        if not batch:
            return []
        jobs: List[Tuple[str, Dict[str, Any], int]] = []  # (job name, options, step position)
        logged: Dict[str, float] = {}
        for k, (_i, step) in enumerate(batch):
            workloads = [step["workload"]] if step["step"] == "run" else list(step["workloads"])
            groups = _groups(workloads)
            for g, (w, n) in enumerate(groups):
                name = f"s{k}w{g}"
                opts = _job_options(w, n, self.target.size_bytes)
                if g == 0 and k > 0:
                    opts = {"stonewall": True, "new_group": True, **opts}
                interval = w.get("interval_ms")
                if interval is not None and _needs_log(w, float(interval)):
                    ms = max(int(round(float(interval))), 1)
                    opts.update({"log_avg_msec": ms, "write_iops_log": name, "write_bw_log": name,
                                 "write_lat_log": name})
                    logged[name] = ms / 1000.0
                jobs.append((name, opts, k))
        labels = [_first(step).get("label", "") for _i, step in batch]
        wall = time.perf_counter()
        out = self._fio([(n, o) for n, o, _k in jobs], f"PTS steps: {labels[0]} … {labels[-1]}")
        wall = time.perf_counter() - wall
        rows = out.doc.get("jobs", [])
        results = []
        for k, (i, step) in enumerate(batch):
            names = [n for n, _o, kk in jobs if kk == k]
            mine = [r for r in rows if r.get("jobname") in names]
            if not mine:
                raise SsdlabError(f"fio's output has no job for step {i + 1}")
            results.append(self._step_result(i, step, mine, {n: logged[n] for n in names if n in logged},
                                             out.workdir))
        self.gaps.append((max(wall - sum(r.duration_s for r in results), 0.0), len(results)))
        return results

    def _fio(self, jobs: Sequence[Tuple[str, Dict[str, Any]]], comment: str) -> Any:
        from ssdlab.fio import runner

        self.fio_runs += 1
        sub = self.workdir / f"{self.fio_runs:03d}-{jobs[0][0]}"
        glob: Dict[str, Any] = {"ioengine": self.engine, "thread": True, "lat_percentiles": 1,
                                "group_reporting": False}
        if self.target.uri is not None:
            glob["uri"] = self.target.uri
        else:
            glob["filename"] = str(Path(self.target.path).resolve())
            glob["direct"] = 1 if self.direct else 0
        specs = [runner.FioJobSpec(n, o) for n, o in jobs]
        if self.say is not None:
            self.say(f"fio run {self.fio_runs}: {comment} ({len(jobs)} job{'s' if len(jobs) != 1 else ''})")
        out = runner.run(glob, specs, sub, comment=comment, output_format="json+", status=False)
        self.fio_version = out.doc.get("fio version", self.fio_version)
        return out

    def _step_result(self, index: int, step: Dict[str, Any], rows: List[Dict[str, Any]],
                     logged: Dict[str, float], workdir: Path) -> Any:
        from ssdlab.simulate import StepResult

        seconds = max(float(r.get("job_runtime", 0)) for r in rows) / 1000.0
        ios = [sum(int(r[d]["total_ios"]) for r in rows) for d in ("read", "write", "trim")]
        moved = [sum(int(r[d]["io_bytes"]) for r in rows) for d in ("read", "write", "trim")]
        lat = [_latency([r[d] for r in rows]) for d in ("read", "write")]
        both = _latency([r[d] for r in rows for d in ("read", "write")])
        first = _first(step)
        phase = {"label": first.get("label", ""), "ios": ios, "bytes": moved, "latency": [lat[0], lat[1], None],
                 "latency_rw": both, "counters": {"host_write_bytes": 0, "nand_write_units": 0},
                 "start_ns": int(self._now * 1e9), "end_ns": int((self._now + seconds) * 1e9)}
        if any(w.get("latency_histogram") for w in _workloads(step)):
            phase["latency_histogram"] = buckets([r[d] for r in rows for d in ("read", "write")])
        interval = first.get("interval_ms")
        interval_s = float(interval) / 1000.0 if interval is not None else max(seconds, 1e-9)
        series = _series(rows, logged, workdir, seconds, interval_s, ios, moved)
        start = self._now
        self._now += seconds
        return StepResult(index=index, kind=step["step"], label=phase["label"], start_s=start, end_s=self._now,
                          phase=phase, counters={}, free_blocks=0, interval_s=interval_s, series=series)


def _workloads(step: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [step["workload"]] if step["step"] == "run" else list(step["workloads"] or [])


def _first(step: Dict[str, Any]) -> Dict[str, Any]:
    """A workload step's (first) workload."""
    return dict(step["workload"]) if step["step"] == "run" else dict((step["workloads"] or [{}])[0])


# -- fio jobs ------------------------------------------------------------------------------------------


def _groups(workloads: Sequence[Dict[str, Any]]) -> List[Tuple[Dict[str, Any], int]]:
    """Workloads that differ only in label and seed as one (workload, numjobs); others side by side."""
    out: List[Tuple[Dict[str, Any], int]] = []
    for w in workloads:
        key = {k: v for k, v in w.items() if k not in ("label", "seed")}
        if out and {k: v for k, v in out[-1][0].items() if k not in ("label", "seed")} == key:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((w, 1))
    return out


def _needs_log(w: Dict[str, Any], interval_ms: float) -> bool:
    """A series finer than the job: a byte-limited job, or an interval shorter than its duration."""
    duration = w.get("duration_s")
    return w.get("byte_limit") is not None or duration is None or interval_ms < float(duration) * 1000.0 - 0.5


def _job_options(w: Dict[str, Any], numjobs: int, device_bytes: int) -> Dict[str, Any]:
    from ssdlab.fio.session import fio_time

    rw, pattern = w.get("rw", "write"), w.get("pattern", "random")
    names = {("read", "random"): "randread", ("write", "random"): "randwrite", ("mixed", "random"): "randrw",
             ("read", "sequential"): "read", ("write", "sequential"): "write", ("mixed", "sequential"): "rw"}
    if (rw, pattern) not in names:
        raise SsdlabError(f"a {rw} {pattern} workload cannot run on a device")
    span = int(w.get("span_bytes") or device_bytes)
    bs = int(w.get("block_bytes", 4096))
    opts: Dict[str, Any] = {"rw": names[(rw, pattern)], "bs": bs, "iodepth": int(w.get("queue_depth", 1)),
                            "size": span // bs * bs}
    if rw == "mixed":
        opts["rwmixread"] = int(round(100 * float(w.get("read_fraction", 0.5))))
    sizes = w.get("block_sizes")
    if sizes:  # CBW's size mix: fio's bssplit, offsets aligned to its smallest size (as the core's)
        opts["bssplit"] = ":".join(f"{int(b['bytes'])}/{float(b['pct']):g}" for b in sizes)
        opts["blockalign"] = min(int(b["bytes"]) for b in sizes)
    dist = w.get("distribution")
    if dist:
        if dist.get("kind") != "zoned":
            raise SsdlabError(f"a {dist.get('kind')} access distribution cannot run on a device")
        opts["random_distribution"] = "zoned:" + ":".join(
            f"{float(z['access_pct']):g}/{float(z['size']):g}" for z in dist["zones"])
    if pattern == "random":
        opts.update({"norandommap": True, "randrepeat": 0, "random_generator": "tausworthe64"})
    if numjobs > 1:
        opts["numjobs"] = numjobs
    if w.get("seed") is not None:
        opts["randseed"] = int(w["seed"]) % 2**63
    duration, limit = w.get("duration_s"), w.get("byte_limit")
    if limit is not None:
        opts["io_size"] = int(limit)
        if duration is not None:
            opts["runtime"] = fio_time(float(duration))
    elif duration is not None:
        opts.update({"time_based": True, "runtime": fio_time(float(duration))})
    else:
        opts["io_size"] = opts["size"]
    return opts


def _trim_job(size: int) -> Tuple[str, Dict[str, Any]]:
    return ("purge", {"rw": "trim", "bs": TRIM_BLOCK, "iodepth": 1, "size": size // 4096 * 4096})


def _latency(parts: Sequence[Dict[str, Any]]) -> Optional[Dict[str, float]]:
    """fio's total latency of `parts` (per-job, per-direction JSON) as one distribution: the mean
    weighted by IOs, the largest, and the 99.999th percentile from the merged json+ bins."""
    parts = [p for p in parts if int(p.get("total_ios", 0)) > 0 and p.get("lat_ns", {}).get("N")]
    if not parts:
        return None
    n = sum(int(p["lat_ns"]["N"]) for p in parts)
    mean = sum(float(p["lat_ns"]["mean"]) * int(p["lat_ns"]["N"]) for p in parts) / n
    bins: Dict[int, int] = {}
    for p in parts:
        for k, v in (p["lat_ns"].get("bins") or {}).items():
            bins[int(k)] = bins.get(int(k), 0) + int(v)
    top = float(max(float(p["lat_ns"]["max"]) for p in parts))
    # a bin's key is its middle (fio's plat_idx_to_val), within half a bin of the values in it; where
    # the rank is the largest IO's (fewer than 100,000 IOs) the exact maximum is the percentile
    rank = max(int(math.ceil(0.99999 * n)), 1)
    tail = top if rank >= n or not bins else min(_percentile(bins, 99.999), top)
    return {"mean_ns": mean, "max_ns": top, "p99_999_ns": tail, "count": n}


def bin_bounds(key: int) -> Tuple[int, int]:
    """The values (ns) one of fio's json+ latency bins holds, from its key. fio keeps 64 bins per
    power of two (``FIO_IO_U_PLAT_BITS`` 6): below 128 ns a bin is one value, the key itself; above,
    a bin of value v is 2^(⌊log2 v⌋ − 6) wide and its key is its middle (stat.c
    ``plat_idx_to_val``: base + (k + 0.5) × width)."""
    if key < 128:
        return key, key
    width = 1 << (key.bit_length() - 1 - 6)
    low = key - width // 2
    return low, low + width - 1


def buckets(parts: Sequence[Dict[str, Any]]) -> List[List[int]]:
    """The response times of `parts` (per-job, per-direction JSON) as the core's histogram buckets
    ``[lowest ns, highest ns, count]`` (`ssdlab.pts.histogram`): fio's json+ total-latency bins
    added over the parts, each bin's range from `bin_bounds`. fio's bins are 1/64 of a power of two
    wide (within ~1.6 %), coarser than the simulator's 1/1024."""
    bins: Dict[int, int] = {}
    for p in parts:
        if int(p.get("total_ios", 0)) <= 0:
            continue
        for k, v in ((p.get("lat_ns") or {}).get("bins") or {}).items():
            bins[int(k)] = bins.get(int(k), 0) + int(v)
    return [[*bin_bounds(k), bins[k]] for k in sorted(bins) if bins[k] > 0]


def _percentile(bins: Dict[int, int], pct: float) -> float:
    total = sum(bins.values())
    rank = max(int(math.ceil(pct / 100.0 * total)), 1)
    seen = 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= rank:
            return float(value)
    return float(max(bins))


def _windows(path: Path, window_s: float, n: int) -> Dict[int, Any]:
    """A windowed fio log as arrays by direction (0 read, 1 write), one value per interval."""
    import numpy as np

    from ssdlab.fio.logfiles import read_log

    out = {d: np.zeros(n) for d in (0, 1)}
    if not path.is_file():
        return out
    log = read_log(path)
    for t, v, d in zip(log["time_ms"], log["value"], log["direction"]):
        if int(d) in out:  # a window ends at t: interval round(t / window) - 1
            out[int(d)][min(max(int(round(float(t) / 1000.0 / window_s)) - 1, 0), n - 1)] += float(v)
    return out


def _series(rows: List[Dict[str, Any]], logged: Dict[str, float], workdir: Path, seconds: float,
            interval_s: float, ios: List[int], moved: List[int]) -> Any:
    """The step's series, one row per interval: from fio's windowed logs (each thread's own:
    ``PREFIX_iops.K.log``, ``_bw``, ``_lat``) when the job logged them, else one row of totals."""
    import numpy as np
    import pandas as pd

    n = max(int(math.ceil(seconds / interval_s - 1e-9)), 1)
    names = ("read", "write")
    cols = {f"{d}_{c}": np.zeros(n) for d in names for c in ("ios", "bytes", "latency_sum_ns")}
    if not logged:
        for d, name in enumerate(names):
            cols[f"{name}_ios"][0] = ios[d]
            cols[f"{name}_bytes"][0] = moved[d]
            lat = _latency([r[name] for r in rows])
            cols[f"{name}_latency_sum_ns"][0] = lat["mean_ns"] * lat["count"] if lat else 0.0
    else:
        for prefix, window in logged.items():
            for iops_log in sorted(workdir.glob(f"{prefix}_iops.*.log")):
                k = iops_log.name.split(".")[-2]
                count = _windows(iops_log, window, n)
                bw = _windows(workdir / f"{prefix}_bw.{k}.log", window, n)
                mean = _windows(workdir / f"{prefix}_lat.{k}.log", window, n)
                for d, name in enumerate(names):
                    cols[f"{name}_ios"] += count[d] * window  # IOPS x the window
                    cols[f"{name}_bytes"] += bw[d] * 1024.0 * window  # KiB/s x the window
                    cols[f"{name}_latency_sum_ns"] += mean[d] * count[d] * window  # mean x IOs
        covered = np.minimum(seconds - np.arange(n) * interval_s, interval_s).clip(min=0.0)
        for d, name in enumerate(names):
            # fio's windowed values are rates over windows a little longer than asked for, and it logs
            # no window for the last part of a job (its last interval and the drain after it): the
            # counts are made to add up to the job's totals, scaled down where they exceed them, the
            # rest spread over the intervals after the last logged one by their length
            seen = np.nonzero(cols[f"{name}_ios"])[0]
            first = min(int(seen[-1]) + 1 if len(seen) else 0, n - 1)
            weights = covered[first:] / covered[first:].sum() if covered[first:].sum() > 0 else None
            for col, total in ((f"{name}_ios", ios[d]), (f"{name}_bytes", moved[d])):
                c = cols[col]
                c[:] = np.round(c)
                if c.sum() > total:
                    c[:] = np.floor(c * total / c.sum())
                rest = total - c.sum()
                if weights is not None and len(weights) > 1:
                    share = np.floor(rest * weights)
                    share[0] += rest - share.sum()
                    c[first:] += share
                else:
                    c[first] += rest
            lat = _latency([r[name] for r in rows])  # an interval fio logged no latency for: the job's mean
            empty = (cols[f"{name}_latency_sum_ns"] == 0) & (cols[f"{name}_ios"] > 0)
            if lat is not None:
                cols[f"{name}_latency_sum_ns"][empty] = cols[f"{name}_ios"][empty] * lat["mean_ns"]
    frame = pd.DataFrame({"time_s": np.arange(n, dtype=np.float64) * interval_s, **cols})
    for c in ("read_ios", "write_ios"):
        frame[c] = frame[c].astype(np.int64)
    frame["host_bytes"] = frame["write_bytes"]
    frame["nand_units"] = np.nan
    return frame


# -- opening a device ----------------------------------------------------------------------------------


def _nbd_size(uri: str) -> int:
    exe = shutil.which("nbdinfo")
    if exe is None:
        raise SsdlabError("an NBD --device needs nbdinfo (libnbd-bin) to read the export's size")
    r = subprocess.run([exe, "--size", uri], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise SsdlabError(f"cannot open the NBD export {uri}: {why}")
    return int(r.stdout.strip())


@contextlib.contextmanager
def open_device(path: str, *, capacity: Optional[int], yes_destroy_data: bool, force_signatures: bool,
                out_dir: Optional[Path], depth: int, say: Optional[Callable[[str], None]] = None
                ) -> Iterator[Tuple[DeviceDrive, Any]]:
    """The checked device (`ssdlab.fio.safety`'s refusals and confirmations, docs/safety.md) as a
    `DeviceDrive`, and the staged result directory (`ssdlab.results.ResultStage`, None without
    `out_dir`): a failed or interrupted run leaves neither a result nor a file it created."""
    from ssdlab.fio import runner
    from ssdlab.fio.session import device_run, open_session
    from ssdlab.results import ResultStage, check_output_dir

    if is_nbd_uri(path):
        runner.fio_path()
        if capacity is not None:
            raise SsdlabError("--capacity cannot size an NBD export; the export's size is the drive's")
        if out_dir is not None:
            check_output_dir(out_dir)
        size = _nbd_size(path)
        if not yes_destroy_data:
            raise SsdlabError(f"{path} is an NBD export of {format_size(size)}: the test overwrites all of it; "
                              "pass --yes-destroy-data to confirm")
        stage = ResultStage(out_dir) if out_dir is not None else None
        try:
            workdir = _workdir(stage)
            yield DeviceDrive(_Target(path, size, "nbd", uri=path), "nbd", False, workdir, say), stage
        finally:
            if stage is not None and not stage.done:
                stage.discard()
        return
    with device_run(path, capacity=capacity, yes_destroy_data=yes_destroy_data, force_signatures=force_signatures,
                    out_dir=out_dir) as (target, stage):
        s = open_session(target, stage, False, None, depth=depth)
        drive = DeviceDrive(_Target(str(target.path), target.size_bytes, target.name or target.path.name,
                                    checked=target), s.io.engine, s.io.direct, s.workdir, say, notes=list(s.notes))
        yield drive, stage


def _workdir(stage: Any) -> Path:
    if stage is not None:
        d = stage.path / "fio"
    else:
        import tempfile

        d = Path(tempfile.mkdtemp(prefix="ssdlab-fio-"))
    d.mkdir(parents=True, exist_ok=True)
    return d


# -- the result -----------------------------------------------------------------------------------------


def annotate(result: Any, drive: Any) -> Any:
    """`result` of a PTS test run on `drive`: for a `DeviceDrive`, the summary names the device,
    its purge, fio, and the deviations a device run adds (module doc); a simulated run's result is
    returned as it is."""
    if not isinstance(drive, DeviceDrive):
        return result
    from ssdlab.results import plain

    s = dict(result.summary)
    s["device"] = drive.path
    s["device_kind"] = drive.target.kind
    s["drive"] = drive.target.name
    s["purge"] = "; ".join(drive.purges) if drive.purges else None
    s["fio_version"] = drive.fio_version
    s["ioengine"] = drive.engine
    s["direct"] = drive.direct
    s["fio_runs"] = drive.fio_runs
    steps = sum(n for _g, n in drive.gaps)
    s["fio_gap_s"] = sum(g for g, _n in drive.gaps) / steps if steps else None
    s["notes"] = list(drive.notes)
    if "write_amplification" in s:
        s["write_amplification"] = None
    own = [d for d in s.get("deviations", []) if "simulated" not in d]
    s["deviations"] = device_deviations(drive) + own
    result.summary = plain(s)
    for frame in ("rounds", "precondition"):
        table = getattr(result, frame, None)
        if table is not None and "write_amplification" in table:
            table["write_amplification"] = float("nan")
    return result


def device_deviations(drive: DeviceDrive) -> List[str]:
    """What a device run does differently from PTS, beyond the test's own parameters."""
    out = []
    for how in drive.purges:
        if how.startswith("punched holes") or how == "truncate":
            out.append(f"purge: {how} on a regular file (the fallback for a file: no drive to sanitize)")
        elif how.startswith("blkdiscard"):
            out.append("purge: blkdiscard (a TRIM of the tested range), not a secure erase or sanitize")
        elif how.startswith("TRIM"):
            out.append(f"purge: {how}, not a secure erase")
        elif how == "none":
            out.append("purge: none possible (no discard, no format): the test starts from the device's state")
    out.append("write cache: left as the device has it (ssdlab does not set WCE/WCD)")
    steps = sum(n for _g, n in drive.gaps)
    if steps > 1:
        gap = sum(g for g, _n in drive.gaps) / steps
        out.append(f"fio starts each step's job after the one before it with {gap:.2f} s between them on average "
                   "(its start-up, wall time less runtimes): the device idles between points")
    if drive.target.kind == "file":
        out.append(f"a regular file{'' if drive.direct else ' through the page cache (no O_DIRECT)'}, not a drive")
    return out


# -- the command -----------------------------------------------------------------------------------------


def _given(ctx: click.Context, name: str) -> bool:
    return ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)


def with_device(command: Callable[..., None], api: Callable[..., Any], options: Sequence[Any], name: str,
                files: Sequence[str], depth: Callable[[Dict[str, Any]], int] = lambda kw: 32
                ) -> Callable[..., None]:
    """`command` (a PTS test's click body) with ``--device PATH``: without it the command runs as
    it is; with it the test's API function `api` runs on a `DeviceDrive` and the result directory
    (with fio's files in ``fio/``) is written atomically. `depth(kwargs)` is the deepest queue the
    test keeps (chooses fio's engine)."""

    @functools.wraps(command)
    def body(**kw: Any) -> None:
        device = kw.pop("device", None)
        yes, force = kw.pop("yes_destroy_data", False), kw.pop("force_signatures", False)
        if device is None:
            if yes or force:
                raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")
            command(**kw)
            return
        ctx = click.get_current_context()
        given = [o for o in SIM_ONLY if o in kw and _given(ctx, o)]
        if given:
            raise click.UsageError(f"--{given[0].replace('_', '-')} applies to simulated drives only; it cannot be "
                                   "combined with --device")
        run_on_device(api, options, name, files, kw, device=device, yes=yes, force=force, depth=depth(kw))

    body.__doc__ = (command.__doc__ or "").rstrip() + "\n\n" + DEVICE_HELP
    return body


DEVICE_HELP = """    With --device PATH the same steps run through fio on a real block device, a regular file
    (--capacity sizes a new one) or an NBD export (nbd+unix:///?socket=... or nbd://host:port/):
    the purge is blkdiscard (nvme format where discard fails), holes punched in a file, or a TRIM
    of the export; each round is one generated fio job file (docs/pts.md, "On a device"). It
    refuses mounted or in-use devices and needs --yes-destroy-data to overwrite anything."""
"""The paragraph `with_device` adds to a PTS command's help."""

DEVICE_OPTIONS = (replace(SHARED_DEVICE[0], help="Run on a real block device, a regular file or an NBD export "
                           "(an nbd+unix:// or nbd:// URI) through fio instead of a simulated drive. DESTRUCTIVE."),
                  *SHARED_DEVICE[1:])
"""The shared --device options (`ssdlab.scenarios.shared.DEVICE`), --device's help naming NBD exports."""


def run_on_device(api: Callable[..., Any], options: Sequence[Any], name: str, files: Sequence[str],
                  kw: Dict[str, Any], *, device: str, yes: bool, force: bool, depth: int) -> Any:
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import default_out

    quiet = bool(kw.get("quiet"))
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(device).name if not is_nbd_uri(device) else "nbd").strip("-")
    out = kw.get("out")
    out_dir = check_output_dir(out if out is not None else default_out(safe or "device", name), name)
    api_kwargs = {o.api_name: kw[o.key] for o in options if o.key in kw}
    header: List[str] = []

    def say(line: str) -> None:  # the header once the test's checks passed: before the first fio run
        if quiet:
            return
        if header:
            click.echo(header.pop(), err=True)
        click.echo(f"  {line}", err=True)

    started = time.perf_counter()
    with open_device(device, capacity=kw.get("capacity"), yes_destroy_data=yes, force_signatures=force,
                     out_dir=out_dir, depth=depth, say=say) as (drive, stage):
        header.append(f"ssdlab: {device} ({drive.target.kind}, {format_size(drive.user_bytes)}): {name} through fio "
                      f"({drive.engine}{', O_DIRECT' if drive.direct else ''})")
        result = api(None, device=drive, seed=kw.get("seed", 1), **api_kwargs)
        result.save(stage.path)
        path = stage.commit()
    if quiet:
        return result
    s = result.summary
    click.echo(f"Results in {path}{os.sep}: {', '.join(files)} (fio's files in fio{os.sep})")
    click.echo(f"  {s['label']}")
    ss = s.get("steady_state")
    if isinstance(ss, dict):
        first, last = ss["window_rounds"]
        click.echo(f"  {'steady' if ss['steady'] else 'NOT steady'} in rounds {first}-{last} ({ss['rounds_run']} run)")
        for key, w in ss["tracking"].items():
            click.echo(f"  {key:>20}: {w['average']:>12,.1f}, range {w['range_pct']:.1f} % (≤ 20), "
                       f"excursion {w['excursion_pct']:.1f} % (≤ 10)")
    for d in s.get("deviations", []):
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {time.perf_counter() - started:.1f}s ({drive.fio_runs} fio runs)")
    return result
