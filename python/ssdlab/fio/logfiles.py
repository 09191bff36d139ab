"""fio's log files (``write_iops_log``, ``write_bw_log``, ``write_lat_log``): their names, writing
them for a simulated run, and reading them back (also those the system fio writes on a device).

Logs (HOWTO, "Log File Formats"): one line per window and direction, ``time (ms), value,
direction (0 read, 1 write, 2 trim), block size, [offset,] priority``; windowed lines carry block
size 0 and offset 0, as fio's do. Values: IOPS, KiB/s, or mean latency in ns. Files are named
like fio's: ``<prefix>_iops.<N>.log``, ``_bw``, ``_lat``, ``_clat``, ``_slat`` (N = the job's
number in the file; no ``.N`` with ``per_job_logs=0``). A direction with no IO in a window has no
line, as in fio; `read_log` and `per_second` read these files back, filling such gaps with 0.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Union

import numpy as np
import pandas as pd

from ssdlab.errors import SsdlabError
from ssdlab.fio.windows import DIRS, interval_lengths_ms, whole_windows

if TYPE_CHECKING:
    from ssdlab.fio.planner import FioPlan
    from ssdlab.fio.simrun import FioRun, JobResult


def log_name(prefix: str, kind: str, index: int, per_job: bool) -> str:
    return f"{prefix}_{kind}.{index}.log" if per_job else f"{prefix}_{kind}.log"


def _log_lines(job: "JobResult", kind: str) -> List[str]:
    """Windowed lines of one log kind (iops, bw, lat, clat) for the job."""
    p = job.plan
    s = job.series
    n = len(s)
    interval_ms = job.interval_s * 1000.0
    runtime_ms = job.runtime_s * 1000.0
    spent = interval_lengths_ms(n, interval_ms, runtime_ms)
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
    keep = whole_windows(spent, interval_ms) if kind in ("iops", "bw") else np.ones(n, dtype=bool)
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
