"""Running a fio job file on a real device or regular file through the system fio
(``ssdlab fio JOBFILE --device PATH``).

The job file goes through the same parser and the same checks as a simulated run
(`ssdlab.fio.planner.plan`), so a job file that runs on one runs on the other and every refusal is
the same line. Then, after `ssdlab.fio.safety.check_target` (nothing is written to a mounted, in-use
or signed device, or an existing file, unless the flags say so):

* the target is erased like the simulated drive starts fresh (`session.secure_erase`: blkdiscard,
  hole punching for a file);
* fio runs the job file's sections as written (after ``include`` and ``${VAR}`` expansion), with
  ``filename=PATH`` in a leading ``[global]`` and every ``filename``/``directory``/``filename_format``
  line dropped, so each job keeps its own options but uses PATH;
* as in the simulator, a job without ``log_avg_msec`` (or with 0) logs 1000 ms windows; a job
  without its own IOPS, bandwidth or latency log gets one under the private prefix
  ``ssdlab-job<N>``, kept in the ``fio/`` subdirectory; per-second IOPS, MiB written and mean
  latency come from these windows (fio often writes no window for the last second: that second
  is the job's total minus the logged ones);
* with ``--sequential-jobs``, jobs without ``stonewall`` get one, so fio runs them one after
  another as the simulator does.

The result: fio's own JSON and normal report, the logs the job file asked for (named as fio names
them, with the job's number in the file), and with an output directory the same files as a
simulated run (`ssdlab.fio.resultdir.write_result_dir`), ``device`` = PATH and ``seed`` null.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio import jsonout, logfiles, resultdir, runner, smart
from ssdlab.fio.session import secure_erase, smart_writes
from ssdlab.fio.jobplan import JobPlan
from ssdlab.fio.planner import FioPlan, plan as make_plan
from ssdlab.fio.safety import Target
from ssdlab.fio.windows import DIRS
from ssdlab.sizes import format_size, parse_size

__all__ = ["DeviceFioRun", "run_jobfile_on_device", "PRIVATE_PREFIX"]

PRIVATE_PREFIX = "ssdlab-job"
_DROPPED = ("filename", "directory", "filename_format")
MIB = 2.0**20
PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class DeviceFioRun:
    """A job file run through the system fio on a device or file."""

    plan: FioPlan
    target: Target
    doc: Dict[str, Any]  # fio's own JSON
    text: str  # fio's own normal report
    iops: pd.DataFrame  # iops.csv
    series: pd.DataFrame  # series.csv
    summary: Dict[str, Any]
    workdir: Path
    notes: List[str] = field(default_factory=list)
    log_files: List[Path] = field(default_factory=list)  # the job file's logs, where they were copied

    def json_text(self) -> str:
        return jsonout.dumps(self.doc)

    def chart_subtitle(self, p: JobPlan) -> str:
        return (f"fio job {p.index}: rw={p.fio_rw}, bs={format_size(p.block_bytes)}, QD{p.iodepth} · device "
                f"{self.target.path} ({format_size(self.target.size_bytes)}) · {self.doc.get('fio version', 'fio')} · "
                f"ssdlab {_core.__version__}")

    def save(self, out_dir: PathLike) -> List[Path]:
        charts = [(resultdir.chart_name(p.index, p.name),
                   lambda p=p: resultdir.iops_chart(self.iops, p.index, p.name, self.chart_subtitle(p)))
                  for p in self.plan.jobs]
        return resultdir.write_result_dir(out_dir, self.json_text(), self.text, self.summary, self.iops, self.series,
                                       charts)

    def copy_logs(self, directory: PathLike) -> List[Path]:
        """Copies the logs the job file asked for (relative prefixes) from fio's directory to
        `directory`, under the names the simulator gives them."""
        written: List[Path] = []
        base = Path(directory)
        for k, p in enumerate(self.plan.jobs, start=1):
            for spec in p.logs:
                kinds = [spec.kind] if spec.kind in ("iops", "bw") else ["lat", "clat", "slat"]
                for kind in kinds:
                    src = Path(logfiles.log_name(spec.prefix, kind, k, p.per_job_logs))
                    if src.is_absolute():
                        if src.exists():
                            written.append(src)
                        continue
                    src = self.workdir / src
                    if not src.exists():
                        continue
                    dst = base / logfiles.log_name(spec.prefix, kind, p.index, p.per_job_logs)
                    if dst in written:
                        continue
                    try:
                        dst.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(src, dst)
                    except OSError as e:
                        raise SsdlabError(f"cannot write fio log {str(dst)!r}: {e.strerror or e}") from None
                    written.append(dst)
        return written


def _line(o: jf.RawOption) -> str:
    return o.text()


def job_file_text(parsed: jf.JobFile, plan: FioPlan, target: Target, capacity_cap: Optional[int],
                  notes: List[str]) -> Tuple[str, Dict[int, Dict[str, str]]]:
    """fio's job file for the device run, and per plan job (by its index) the log prefixes to read
    (``iops``, ``bw``, ``lat``)."""
    wanted = {p.index: p for p in plan.jobs}
    out = [f"; ssdlab fio --device {target.path}: {plan.path}, with filename= set to the device",
           "[global]", f"filename={target.path.resolve()}"]
    if capacity_cap is not None:
        out.append(f"size={capacity_cap}")
    out.append("")
    prefixes: Dict[int, Dict[str, str]] = {}
    job_number = 0
    first = True
    for section in parsed.sections:
        if not section.is_global:
            job_number += 1
            p = wanted.get(job_number)
            if p is None:
                continue
        kept = [o for o in section.options if o.key not in _DROPPED]
        out.append(f"[{section.name}]")
        out.extend(_line(o) for o in kept)
        if section.is_global:
            out.append("")
            continue
        job = p.job
        extra: List[str] = []
        if not first and job.get("stonewall") is None:
            extra.append("stonewall")
            notes.append(f"job '{p.name}': stonewall added, so fio runs it after the previous job (--sequential-jobs)")
        first = False
        lam = job.get("log_avg_msec")
        if lam is None or jf.parse_int(lam, 0) == 0:
            extra.append(f"log_avg_msec={p.log_msec}")
            if p.logs:
                notes.append(f"job '{p.name}': log_avg_msec={p.log_msec} as in a simulated run (fio alone would log every IO)")
        have = {s.kind: s.prefix for s in p.logs}
        mine = f"{PRIVATE_PREFIX}{p.index}"
        for kind, key in (("iops", "write_iops_log"), ("bw", "write_bw_log"), ("lat", "write_lat_log")):
            if kind not in have:
                extra.append(f"{key}={mine}")
                have[kind] = mine
        prefixes[p.index] = have
        out.extend(extra)
        out.append("")
    return "\n".join(out), prefixes


_DELETING = ("unlink", "unlink_each_loop")


def refuse_deleting_options(parsed: jf.JobFile, sections: Optional[Sequence[str]] = None) -> None:
    """Refuses ``unlink=1`` and ``unlink_each_loop=1`` in the jobs a device run would run: fio would
    delete the target file after the job (or after each loop). ``--yes-destroy-data`` confirms
    overwriting the target, not deleting it (on a block device fio ignores both; they are refused
    there too, so a job file is accepted or refused whatever the target). Called before anything
    is created or written."""
    for job in parsed.jobs():
        if sections and job.section not in sections:
            continue
        for name in _DELETING:
            o = job.get(name)
            if o is not None and jf.parse_bool(o):
                raise o.error(f"{o.name}={o.value or 1}: fio would delete the target file after "
                              f"{'each loop of ' if name == 'unlink_each_loop' else ''}job '{job.name}'; a device run "
                              f"overwrites the target but never deletes it -- remove {o.name} (or set it to 0)")


def _only_target(text: str, target: Target) -> None:
    """The last check before fio runs: the job file fio will read, parsed as fio reads it, names
    the target and nothing else (one ``filename``, no ``directory``/``filename_format``), so no
    value in the user's job file can send a write elsewhere."""
    parsed = jf.parse_string(text, name="fio/job.fio", env={})
    refuse_deleting_options(parsed)
    found = [o for s in parsed.sections for o in s.options if o.key in _DROPPED]
    if [(o.key, o.value) for o in found] != [("filename", str(target.path.resolve()))]:
        raise SsdlabError(f"refusing to run fio: its job file would name {', '.join(o.text() for o in found)} "
                          f"besides the target {target.path} -- nothing was written")


def _bucket(log: pd.DataFrame, seconds: int, window_ms: int, how: str) -> np.ndarray:
    """Per-second values of a windowed log: sums of value x window (IOPS -> IOs, KiB/s -> KiB) or,
    with ``how="mean"``, means. 1000 ms windows use `logfiles.per_second`'s assignment."""
    if window_ms == 1000:
        return logfiles.per_second(log, seconds, how=how).astype(np.float64)
    idx = np.clip((log["time_ms"].to_numpy() - 1) // 1000, 0, max(seconds - 1, 0)) if len(log) else np.zeros(0, int)
    vals = log["value"].to_numpy(np.float64) if len(log) else np.zeros(0)
    out = np.zeros(seconds)
    if how == "mean":
        counts = np.zeros(seconds)
        np.add.at(out, idx, vals)
        np.add.at(counts, idx, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(counts > 0, out / np.maximum(counts, 1), np.nan)
    np.add.at(out, idx, vals * window_ms / 1000.0)
    return out


def _read(workdir: Path, prefix: str, kind: str, k: int, per_job: bool) -> pd.DataFrame:
    path = Path(logfiles.log_name(prefix, kind, k, per_job))
    path = path if path.is_absolute() else workdir / path
    if not path.exists():
        return pd.DataFrame({"time_ms": [], "value": [], "direction": [], "bs": []}, dtype=np.int64)
    return logfiles.read_log(path)


def _frames(plan: FioPlan, doc: Dict[str, Any], workdir: Path, prefixes: Dict[int, Dict[str, str]],
            notes: List[str]) -> Tuple[pd.DataFrame, pd.DataFrame]:
    iops_rows, series_rows = [], []
    fio_jobs = doc.get("jobs", [])
    for k, p in enumerate(plan.jobs, start=1):
        fj = fio_jobs[k - 1]
        seconds = max(int(math.ceil(int(fj.get("job_runtime", 0)) / 1000.0)), 1)
        pre = prefixes[p.index]
        iops_log = _read(workdir, pre["iops"], "iops", k, p.per_job_logs)
        bw_log = _read(workdir, pre["bw"], "bw", k, p.per_job_logs)
        lat_log = _read(workdir, pre["lat"], "lat", k, p.per_job_logs)
        per: Dict[str, np.ndarray] = {}
        filled = False
        for d, name in enumerate(DIRS):
            v = np.rint(_bucket(iops_log[iops_log["direction"] == d], seconds, p.log_msec, "sum"))
            total = int(fj[name]["total_ios"])
            if total > v.sum() and v[-1] == 0:
                v[-1] = total - v.sum()
                filled = True
            per[name] = v.astype(np.int64)
        if filled:
            notes.append(f"job '{p.name}': fio logged no window for the last second; its IOPS are the job's total "
                         f"minus the logged seconds")
        host = _bucket(bw_log[bw_log["direction"] == 1], seconds, p.log_msec, "sum") / 1024.0
        written = int(fj["write"]["io_bytes"]) / MIB
        if written > host.sum() and host[-1] == 0:
            host[-1] = written - host[:-1].sum()
        lat = _bucket(lat_log, seconds, p.log_msec, "mean") / 1000.0
        total = per["read"] + per["write"] + per["trim"]
        t = np.arange(seconds)
        nan = np.full(seconds, np.nan)
        iops_rows.append(pd.DataFrame({"job": p.index, "name": p.name, "time_s": t, "iops": total,
                                       "read_iops": per["read"], "write_iops": per["write"],
                                       "trim_iops": per["trim"]}))
        series_rows.append(pd.DataFrame({"job": p.index, "name": p.name, "time_s": t, "iops": total,
                                         "host_mib": host, "nand_mib": nan, "gc_mib": nan, "erases": nan,
                                         "write_amplification": nan, "mean_latency_us": lat}))
    return pd.concat(iops_rows, ignore_index=True), pd.concat(series_rows, ignore_index=True)


def _summary(plan: FioPlan, target: Target, doc: Dict[str, Any], wa: Dict[str, Any], notes: List[str],
             wall: float, erase: str) -> Dict[str, Any]:
    jobs = []
    start = 0.0
    for k, p in enumerate(plan.jobs, start=1):
        fj = doc["jobs"][k - 1]
        runt = int(fj.get("job_runtime", 0)) / 1000.0
        jobs.append({
            "job": p.index, "name": p.name, "groupid": p.groupid, "rw": p.fio_rw, "block_size": p.block_bytes,
            "qd": p.iodepth, "runtime_s": runt, "start_s": start,
            "read_iops": float(fj["read"]["iops"]), "write_iops": float(fj["write"]["iops"]),
            "trim_iops": float(fj["trim"]["iops"]),
            "read_bytes": int(fj["read"]["io_bytes"]), "write_bytes": int(fj["write"]["io_bytes"]),
            "trim_bytes": int(fj["trim"]["io_bytes"]),
            "host_write_bytes": int(fj["write"]["io_bytes"]), "nand_write_bytes": None,
            "write_amplification": None, "steady_state_at_s": None,
        })
        start += runt
    return {
        "scenario": "fio",
        "label": f"{Path(plan.path).name} on {target.name or target.path.name}",
        "drive": target.name or target.path.name,
        "device": str(target.path),
        "seed": None,
        "ssdlab_version": _core.__version__,
        "wall_seconds": wall,
        "jobfile": plan.path,
        "user_capacity_bytes": target.size_bytes,
        "op": None,
        "effective_spare_factor": None,
        "gc_policy": None,
        "jobs": jobs,
        "erase_method": erase,
        "fio_version": doc.get("fio version"),
        "smart_host_write_bytes": wa["host_write_bytes"],
        "smart_nand_write_bytes": wa["nand_write_bytes"],
        "smart_source": wa["smart_source"],
        "write_amplification": wa["write_amplification"],
        "notes": list(notes),
    }


def run_jobfile_on_device(
    path: PathLike,
    jobfile: PathLike,
    *,
    capacity: Optional[int] = None,
    yes_destroy_data: bool = False,
    force_signatures: bool = False,
    sequential_jobs: bool = False,
    sections: Optional[Sequence[str]] = None,
    env: Optional[Mapping[str, str]] = None,
    out_dir: Optional[PathLike] = None,
    progress: bool = False,
    on_start: Optional[Callable[[Target], None]] = None,
    finish: Optional[Callable[["DeviceFioRun"], None]] = None,
) -> DeviceFioRun:
    """Runs the fio job file on the device or file at `path` (see the module doc). With `out_dir`,
    the result directory (fio's own files in ``out_dir/fio``, the job file's relative logs) is
    written there atomically once the run succeeded (after `finish(run)`, e.g. writing the report);
    a failed or interrupted run leaves nothing there, nor a file it created."""
    from ssdlab.fio.session import device_run

    runner.fio_path()
    parsed = jf.parse(jobfile, env=env)
    secs = list(sections) if sections else None
    refuse_deleting_options(parsed, secs)
    if capacity is not None:  # refuse the job file before touching the target
        make_plan(parsed, parse_size(capacity, what="capacity"), sequential_jobs=sequential_jobs, sections=secs)
    with device_run(path, capacity=capacity, yes_destroy_data=yes_destroy_data, force_signatures=force_signatures,
                    out_dir=out_dir) as (target, stage):
        plan = make_plan(parsed, target.size_bytes, sequential_jobs=sequential_jobs, sections=secs)
        run = _run(parsed, plan, target, capacity, stage.path if stage is not None else None, progress, on_start)
        if stage is not None:
            run.save(stage.path)
            run.log_files = [stage.target / p.relative_to(stage.path) if stage.path in p.parents else p
                             for p in run.copy_logs(stage.path)]
        if finish is not None:
            finish(run)
        if stage is not None:
            stage.commit()
            run.workdir = stage.target / "fio"
        return run


def _run(parsed: jf.JobFile, plan: FioPlan, target: Target, capacity: Optional[int], staged: Optional[Path],
         progress: bool, on_start: Optional[Callable[[Target], None]]) -> DeviceFioRun:
    if on_start is not None:
        on_start(target)
    started = time.perf_counter()
    # fio writes the job file's relative logs in its own directory: they must stay in it
    logfiles.check_log_names(plan, staged / "fio" if staged is not None else Path(tempfile.gettempdir()) / "ssdlab-fio")
    workdir = staged / "fio" if staged is not None else Path(tempfile.mkdtemp(prefix="ssdlab-fio-"))
    workdir.mkdir(parents=True, exist_ok=True)
    notes = list(target.notes)
    before = smart_writes(target)
    erase, erase_notes = secure_erase(target)
    notes += erase_notes
    notes.append(f"started from an erased {'file' if target.is_file else 'device'} ({erase}), as a simulated drive starts fresh")
    cap = parse_size(capacity, what="capacity") if capacity is not None and not target.is_file else None
    text, prefixes = job_file_text(parsed, plan, target, cap, notes)
    _only_target(text, target)
    specs = [runner.FioJobSpec(p.name, {}, planned_bytes=p.workload.get("byte_limit"),
                               planned_seconds=p.workload.get("duration_s")) for p in plan.jobs]
    result = runner.run({}, specs, workdir, progress=progress, normal=True, text=text)
    wa = smart.write_amplification(before, smart_writes(target))
    iops, series = _frames(plan, result.doc, workdir, prefixes, notes)
    summary = _summary(plan, target, result.doc, wa, notes, time.perf_counter() - started, erase)
    return DeviceFioRun(plan, target, result.doc, result.text, iops, series, summary, workdir, notes)
