"""The ``ssdlab fio --out DIR`` result directory, for simulated and real (``--device``) runs alike:
``fio.json``, ``fio.txt``, ssdlab's ``summary.json``, the per-second ``iops.csv`` and ``series.csv``,
and one IOPS chart per job, written as a whole (`ResultStage`). fio's logs are `logfiles`'.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio.jsonout import dumps, fio_json
from ssdlab.fio.textout import normal_text
from ssdlab.fio.windows import DIRS

if TYPE_CHECKING:
    from ssdlab.fio.simrun import FioRun, JobResult


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
        host = _per_second_col(job, s["host_bytes"].to_numpy(np.float64), seconds) / mib
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
            "host_write_bytes": c["host_write_bytes"], "nand_write_bytes": c["nand_write_units"] * 4096,
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
        "effective_spare_factor": run.config.spare(run.seed)["effective_spare_factor"],
        "gc_policy": run.config.ftl.gc_policy,
        "jobs": jobs,
        "notes": list(run.notes),
    }


def save(run: "FioRun", out_dir: Union[str, Path]) -> List[Path]:
    """Writes the result directory: ``fio.json``, ``fio.txt``, ``summary.json``, ``iops.csv``,
    ``series.csv`` and ``job<N>-<name>_iops.png`` per job (logs are written by `logfiles.write_logs`)."""
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
