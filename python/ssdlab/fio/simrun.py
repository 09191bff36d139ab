"""Running a fio job file on a simulated drive.

    >>> from ssdlab.fio import run_jobfile
    >>> run = run_jobfile("configs/jobs/consistency.fio", "mlc-256", capacity=2 * 2**30, seed=1)
    >>> run.jobs[-1].iops_per_second()[:3]

The steps are the plan's (`ssdlab.fio.planner`): a secure erase, then every job in file order.
Seeds: ``--seed`` seeds the drive and, through the step index, each job's offsets -- the same rule
as the built-in procedures, so a job file equivalent to ``ssdlab consistency`` gives the same
numbers for the same seed; ``randseed=`` pins one job's offsets.

Features of the core that newer jobs need (fio's random map, trimwrite, steady-state stop) are
probed once per process; a job that needs one the compiled core lacks is refused with a line that
says so, before anything runs.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Union

import numpy as np

from ssdlab import _core
from ssdlab.config import DriveConfig, load_preset
from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio.jobplan import JobPlan
from ssdlab.fio.planner import FioPlan, plan as make_plan
from ssdlab.simulate import Simulator, StepResult

if TYPE_CHECKING:  # only named in annotations: importing this module needs no pandas
    import pandas as pd

__all__ = ["FioRun", "JobResult", "core_features", "run_jobfile", "run_plan"]

# Workload fields and rw values newer cores accept; probed, not assumed.
_PROBED_FIELDS = ("random_map", "steady_state", "verify")
_PROBED_RW = ("trim-write",)
_PROBE_VALUES: Dict[str, Any] = {
    "random_map": True,
    "steady_state": {"metric": "iops", "criterion": "slope", "limit": 1.0, "percent": True, "window_s": 10.0, "ramp_s": 0.0},
    "verify": {},  # a core that knows the field asks for its fields
}


@functools.lru_cache(maxsize=1)
def core_features() -> FrozenSet[str]:
    """The probed features the compiled core supports (``random_map``, ``steady_state``,
    ``trim-write``).

    Each probe hands a tiny drive a workload with the feature and an invalid block size: a core
    that knows the feature fails on the block size (before anything runs), one that does not
    fails on the unknown name.
    """
    sim = None
    base = json.loads(_core.default_config())
    for size in (2 * 2**30, 8 * 2**30, 64 * 2**30):
        try:
            sim = _core.Simulator(_core.with_user_capacity(json.dumps(base), size), 1)
            break
        except _core.SsdlabError:
            continue
    if sim is None:  # pragma: no cover - no small drive possible; assume the oldest core
        return frozenset()
    found = set()
    for name in _PROBED_FIELDS:
        step = {"step": "run", "workload": {name: _PROBE_VALUES[name], "block_bytes": 1}}
        try:
            sim.run_steps(json.dumps([step]))
        except _core.SsdlabError as e:
            if f"unknown field `{name}`" not in str(e):
                found.add(name)
    for rw in _PROBED_RW:
        step = {"step": "run", "workload": {"rw": rw, "block_bytes": 1}}
        try:
            sim.run_steps(json.dumps([step]))
        except _core.SsdlabError as e:
            if "unknown variant" not in str(e):
                found.add(rw)
    return frozenset(found)


def adapt_to_core(plan: FioPlan, features: FrozenSet[str]) -> List[Dict[str, Any]]:
    """The plan's steps for a core with `features`: refuses jobs that need a missing feature and
    drops neutral settings (``random_map: false``) the core would not recognise."""
    for job in plan.jobs:
        for req in job.requirements:
            if req.feature not in features:
                raise SsdlabError(f"{req.where.where}: {req.message}")
    steps = plan.steps()
    for step in steps:
        w = step.get("workload")
        if w is None:
            continue
        if "random_map" not in features and w.get("random_map") is False:
            del w["random_map"]
    return steps


@dataclass
class JobResult:
    """One fio job's measured phase on the simulated drive."""

    plan: JobPlan
    step: StepResult
    start_s: float  # since the first job started (after the initial secure erase)

    @property
    def phase(self) -> Dict[str, Any]:
        assert self.step.phase is not None
        return self.step.phase

    @property
    def series(self) -> pd.DataFrame:
        assert self.step.series is not None
        return self.step.series

    @property
    def interval_s(self) -> float:
        return float(self.step.interval_s or 1.0)

    @property
    def runtime_s(self) -> float:
        return self.step.duration_s

    def iops_per_second(self) -> np.ndarray:
        """Completed IOs in each simulated second of the job (all directions)."""
        s = self.series
        ios = (s["read_ios"] + s["write_ios"] + s["trim_ios"]).to_numpy(np.int64)
        per = round(1.0 / self.interval_s)
        if abs(per * self.interval_s - 1.0) < 1e-9 and per >= 1:
            n = int(np.ceil(len(ios) / per))
            padded = np.zeros(n * per, dtype=np.int64)
            padded[: len(ios)] = ios
            return padded.reshape(n, per).sum(axis=1)
        # Intervals that do not divide a second: rate per interval, rescaled to per second.
        return np.rint(ios / self.interval_s).astype(np.int64)

    def write_amplification(self) -> Optional[float]:
        c = self.phase["counters"]
        host = c.get("host_write_bytes", 0)  # NAND bytes over the host's bytes (a partial unit programs 4 KiB)
        return c["nand_write_units"] * 4096 / host if host else None


@dataclass
class FioRun:
    """A job file run on a simulated drive."""

    plan: FioPlan
    config: DriveConfig
    seed: int
    jobs: List[JobResult]
    wall_seconds: float
    notes: List[str] = field(default_factory=list)
    started_at: float = field(default_factory=time.time)

    @property
    def drive(self) -> str:
        return self.config.name

    @property
    def user_bytes(self) -> int:
        return int(self.plan.user_bytes)


def run_plan(plan: FioPlan, config: DriveConfig, seed: int = 1, progress: Union[bool, Any] = False) -> FioRun:
    """Runs `plan` on a fresh simulated drive of `config`."""
    steps = adapt_to_core(plan, core_features())
    if any(jp.workload.get("verify") is not None for jp in plan.jobs):
        from ssdlab.fio import verify as fio_verify

        fio_verify.check_store_memory(plan.jobs, plan.user_bytes, int(config.describe()["memory_bytes"]),
                                      _core.store_unit_bytes("checksums"), _core.store_extent_bytes(),
                                      _core.available_memory())
    sim = Simulator(config, seed)
    if any(jp.workload.get("verify") is not None for jp in plan.jobs):
        sim.enable_store("checksums")  # fio's verify checks what the drive keeps of each sector written
    if sim.user_bytes != plan.user_bytes:
        raise SsdlabError(f"the plan is for {plan.user_bytes} user bytes but the drive has {sim.user_bytes}")
    started_at = time.time()
    t0 = time.perf_counter()
    results: List[StepResult] = []
    segment: List[Dict[str, Any]] = []
    # exit_what=all can stop jobs that have not started, and a later group's startdelay counts
    # from the first group's start: then each step runs on its own (with the seeds one call would
    # derive), the steps after the one that stopped everything never run, and a delay is what is
    # left of it when its step starts.
    late = _late_delays(plan)
    one_by_one = _pin_seeds_for_exit_all(steps, seed, force=bool(late))
    stopped = False
    for i, step in enumerate(steps + [{"step": "end"}]):
        if stopped:
            if step["step"] != "end":
                results.append(_never_started(step, len(results), results))
            continue
        if one_by_one and step["step"] not in ("iolog", "end"):
            if i in late:
                step = _delay_from_genesis(step, sim.now_s - results[0].end_s)
            results.extend(sim.run_steps([step], progress=progress))
            stopped = _ends_all(results[-1])
        elif step["step"] in ("iolog", "end"):
            if segment:
                results.extend(sim.run_steps(segment, progress=progress))
                segment = []
            if step["step"] == "iolog":
                results.append(_replay_iolog(sim, plan.jobs[step["job"]], len(results)))
        else:
            segment.append(step)
    wall = time.perf_counter() - t0
    first = results[1].start_s if len(results) > 1 else 0.0
    jobs = _job_results(plan, results, first)
    notes = list(plan.notes) + _start_order_notes(plan, results)
    if any(len(g) > 1 for g in plan.together):
        notes.append("jobs that run at the same time share the drive: their WA, NAND writes and erases are the "
                     "drive's over the time they ran together")
    for jp in plan.jobs:
        for n in jp.notes:
            if n not in notes:
                notes.append(n)
    return FioRun(plan, config, seed, jobs, wall, notes, started_at)


_M64 = 2**64 - 1


def _derive_seed(seed: int, index: int) -> int:
    """The core's per-step seed (scenario::derive_seed, SplitMix64)."""
    z = (seed + ((index + 1) * 0x9E37_79B9_7F4A_7C15 & _M64)) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & _M64
    return z ^ (z >> 31)


def _late_delays(plan: FioPlan) -> Set[int]:
    """The indices in ``plan.steps()`` of the steps of the groups after the first that hold a job
    with a start delay. fio counts every job's ``startdelay`` from its own start (backend.c
    run_threads: ``td->o.start_delay > utime_since_genesis()``) and starts a job of a later group
    once its delay is over and the group before has ended: the delay of such a job is what is
    left of it when its group starts (`_delay_from_genesis`)."""
    return {first for first, group in plan.group_steps()[1:]
            if any(plan.jobs[k].start_delay_s > 0 and plan.jobs[k].iolog is None for k in group)}


def _start_order_notes(plan: FioPlan, results: List[StepResult]) -> List[str]:
    """Where fio's own start order would differ from the groups' (backend.c run_threads: each
    look, every 0.1-0.2 s, starts the jobs not started yet in file order, skips one whose delay is
    not over, and stops at a stonewall job while any job runs): a group's stonewall job still
    waiting for its delay when the group before has ended lets the jobs after it start first, and
    a job whose delay outlasts the rest of its group lets the next group start before it. The
    simulator keeps the groups' order; these notes say when fio would not."""
    if not results:
        return []
    genesis = results[0].end_s
    layout = plan.group_steps()
    jobs = plan.jobs
    notes: List[str] = []
    for g, (first, group) in enumerate(layout):
        if first >= len(results) or any(jobs[k].iolog is not None for k in group):
            continue
        ready = results[first].start_s - genesis  # when the group could start, from fio's start
        after = [k for _, later in layout[g + 1:] for k in later]
        lead = group[0]
        if jobs[lead].start_delay_s > ready + 1e-9:  # the first job of the file is no stonewall
            jumps = [k for k in (group[1:] if g > 0 else []) + after if jobs[k].start_delay_s <= ready]
            if jumps:
                notes.append(f"job '{jobs[jumps[0]].name}': fio would start it at {ready:.3g} s, before "
                             f"'{jobs[lead].name}'{' (stonewall)' if g > 0 else ''}, whose startdelay of {jobs[lead].start_delay_s:g} s "
                             f"from fio's start is not over then; the simulator keeps the stonewall order")
        if not after:
            continue
        step = results[first] if len(group) > 1 else results[first + len(jobs[lead].steps) - 1]
        ends = [m.end_s - genesis for m in step.members] if len(group) > 1 else [step.end_s - genesis]
        starts = [max(ready, jobs[k].start_delay_s if g > 0 else ready + jobs[k].start_delay_s) for k in group]
        order = sorted(range(len(group)), key=lambda i: (starts[i], i))
        running = -1.0
        for n, i in enumerate(order):
            if n and starts[i] > running + 1e-9:
                notes.append(f"job '{jobs[after[0]].name}': fio would start it at {running:.3g} s, when the jobs "
                             f"before '{jobs[group[i]].name}' had ended and its startdelay was not over; the "
                             f"simulator starts it after '{jobs[group[i]].name}'")
                break
            running = max(running, ends[i])
    return notes


def _delay_from_genesis(step: Dict[str, Any], since: float) -> Dict[str, Any]:
    """`step` (copied) for a group that starts `since` seconds after the first group did: each
    job's start delay, counted from the first group's start as fio counts it, less `since` (none
    once it is over)."""
    step = dict(step)
    key = "workload" if "workload" in step else "workloads"
    workloads = [step[key]] if key == "workload" else step[key]
    out = []
    for w in workloads:
        w = dict(w)
        left = w.get("start_delay_s", 0.0) - since
        w.pop("start_delay_s", None)
        if left > 0:
            w["start_delay_s"] = left
        out.append(w)
    step[key] = out[0] if key == "workload" else out
    return step


def _pin_seeds_for_exit_all(steps: List[Dict[str, Any]], seed: int, force: bool = False) -> bool:
    """When a job has ``exit_what=all`` (with exitall or exitall_on_error), or `force`, gives every
    workload of `steps` (copied) the seed the core derives from its place in the whole list, so
    running the steps one at a time draws what one call would; returns whether it did."""
    if not force and not any(w.get("exit", {}).get("what") == "all" for st in steps
                             for w in ([st["workload"]] if "workload" in st else st.get("workloads", []))):
        return False
    for i, st in enumerate(steps):
        steps[i] = st = dict(st)  # the plan's own steps stay as they are
        if st["step"] == "run":
            st["workload"] = dict(st["workload"])
            st["workload"].setdefault("seed", _derive_seed(seed, i))
        elif st["step"] == "run_together":
            base = _derive_seed(seed, i)
            st["workloads"] = [dict(w) for w in st["workloads"]]
            for k, w in enumerate(st["workloads"]):
                w.setdefault("seed", _derive_seed(base, k))
    return True


def _ends_all(result: StepResult) -> bool:
    """A job of this step ended with exit_what=all: every job not started yet never runs."""
    return any((r.phase or {}).get("ends_all") for r in (result.members or [result]))


def _never_started(step: Dict[str, Any], index: int, before: List[StepResult]) -> StepResult:
    """The result of a step whose jobs never started (exit_what=all stopped them): no IO, no time,
    shaped as a run's result so fio's report lists the jobs with zeros, as fio does."""
    last = next(r for r in reversed(before) if r.phase is not None)
    at = before[-1].end_s

    def zero(v: Any) -> Any:
        if isinstance(v, bool):
            return False
        if isinstance(v, (int, float)):
            return type(v)(0)
        if isinstance(v, list):
            return [zero(x) for x in v]
        if isinstance(v, dict):
            return {k: zero(x) for k, x in v.items()}
        return v

    def empty(label: str) -> StepResult:
        phase = {k: v for k, v in last.phase.items() if k not in ("error", "ends_all", "terminated_at_ns",
                                                                   "latency_depth", "stats_start_ns")}
        phase = dict(zero(phase), label=label, latency=[None, None, None], start_ns=int(at * 1e9),
                     end_ns=int(at * 1e9), steady_state_at_s=None, never_started=True)
        series = last.series.iloc[:1].copy() if last.series is not None else None
        if series is not None:
            series.loc[:, :] = 0
        return StepResult(index=index, kind="run", label=label, start_s=at, end_s=at, phase=phase,
                          counters=last.counters, free_blocks=last.free_blocks, interval_s=last.interval_s,
                          series=series)

    if step["step"] == "run":
        return empty(step["workload"].get("label", ""))
    if step["step"] == "iolog":
        return empty("")
    if step["step"] == "run_together":
        members = [empty(w.get("label", "")) for w in step["workloads"]]
        groups = [empty("+".join(w.get("label", "") for w in step["workloads"]))
                  for _ in set(step.get("report_as") or [])]
        out = empty("+".join(m.label for m in members))
        out.kind, out.members, out.groups = "run_together", members, groups
        return out
    return StepResult(index=index, kind=step["step"], label="", start_s=at, end_s=at, phase=None,
                      counters=last.counters, free_blocks=last.free_blocks)


def _replay_iolog(sim: Simulator, job: JobPlan, index: int) -> StepResult:
    """An iolog job (read_iolog): the log replayed on the drive as `ssdlab replay` replays a trace,
    open loop at its times, or with replay_no_stall as fast as possible at the job's iodepth."""
    from ssdlab.replay.reader import TraceReader
    from ssdlab.replay.run import place
    from ssdlab.simulate import _series_frame

    assert job.iolog is not None
    mode = ({"mode": "afap", "queue_depth": job.iodepth} if job.iolog_no_stall else {"mode": "trace", "speed": 1.0})
    options = {"label": job.name, "interval_ms": float(job.workload["interval_ms"]), "timing": mode}
    with TraceReader(job.iolog, "iolog") as reader:
        sim._core.replay_start(json.dumps(options))
        try:
            for batch in reader.batches():
                offsets = place(batch, sim.user_bytes, "refuse", 0, reader.shown)
                sim._core.replay_feed(batch.kinds, offsets, batch.lengths, batch.times_ns)
        finally:
            raw, series = sim._core.replay_finish()
    phase = json.loads(raw)["phase"]
    if sum(phase["ios"]) == 0:
        raise SsdlabError(f"job '{job.name}': the iolog {job.iolog!r} holds no read, write or trim")
    interval_s, frame = _series_frame(series)
    return StepResult(index=index, kind="run", label=job.name, start_s=phase["start_ns"] / 1e9,
                      end_s=phase["end_ns"] / 1e9, phase=phase, counters=sim.counters(), free_blocks=0,
                      interval_s=interval_s, series=frame)


def _job_results(plan: FioPlan, results: List[StepResult], first: float) -> List[JobResult]:
    """One result per job as fio reports it: each job (a clone is a job), or with
    group_reporting one per group of jobs that ran together (their IOs summed, their latency
    distributions merged)."""
    indices = plan.measured_step_indices()
    out: List[JobResult] = []
    reported = set()
    for k, jp in enumerate(plan.jobs):
        step = results[indices[k]]
        member = plan.member_index(k)
        if member is None:
            if step.phase is not None and step.phase.get("start_ns", 0) / 1e9 > step.start_s:
                # a delay or ramp within the step: the job's figures start where its phase does
                step = dataclasses.replace(step, start_s=step.phase["start_ns"] / 1e9)
            out.append(JobResult(jp, step, step.start_s - first))
            continue
        if jp.group_reporting:
            group = next(g for g in plan.together if k in g)
            report = plan.report_as(group)[member]
            if (group[0], report) in reported:
                continue
            reported.add((group[0], report))
            count = plan.report_as(group).count(report)
            lead = dataclasses.replace(jp, reported_jobs=count)
            g = step.groups[report]
            out.append(JobResult(lead, g, g.start_s - first))
            continue
        m = step.members[member]
        out.append(JobResult(jp, m, m.start_s - first))
    return out


def drive_config(drive: Union[str, DriveConfig, None] = None, *, capacity: Optional[int] = None,
                 op: Optional[float] = None, gc: Optional[str] = None) -> DriveConfig:
    """A drive config as ``ssdlab consistency`` builds it: preset, then GC policy, OP, capacity."""
    if isinstance(drive, DriveConfig):
        cfg = drive
    else:
        from ssdlab.config import preset_names

        cfg = load_preset(drive if drive is not None else preset_names()[0])
    return cfg.adjusted(gc_policy=gc, op=op, capacity=capacity)


def run_jobfile(
    path: Union[str, Path],
    drive: Union[str, DriveConfig, None] = None,
    *,
    capacity: Optional[int] = None,
    op: Optional[float] = None,
    gc: Optional[str] = None,
    seed: int = 1,
    sequential_jobs: bool = False,
    sections: Optional[Sequence[str]] = None,
    env: Optional[Mapping[str, str]] = None,
    progress: Union[bool, Any] = False,
) -> FioRun:
    """Parses the fio job file at `path` and runs it on a simulated drive (see the module doc)."""
    job_file = jf.parse(path, env=env)
    cfg = drive_config(drive, capacity=capacity, op=op, gc=gc)
    user_bytes = int(cfg.describe()["user_capacity_bytes"])
    p = make_plan(job_file, user_bytes, sequential_jobs=sequential_jobs, sections=list(sections) if sections else None)
    return run_plan(p, cfg, seed, progress)
