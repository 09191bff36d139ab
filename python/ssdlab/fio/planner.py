"""A job file -> its `FioPlan` (`plan`): every job checked (`validate`) and planned (`jobplan`), the
``numjobs`` clones made, the jobs grouped by ``stonewall``, the limits on jobs and on planned work
enforced, and the steps for the core: a ``secure_erase`` -- the simulated drive starts fresh -- then
each job's steps in file order.

Jobs separated by ``stonewall`` run one after another; jobs with no ``stonewall`` between them,
and the ``numjobs`` clones of a job, run at the same time on the drive (one ``run_together``
step), as fio runs them. With `sequential_jobs` they run one after another instead, and a note
says so. With ``group_reporting``, each group's jobs are reported as one.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.limits import MAX_QUEUE_DEPTH
from ssdlab.sizes import format_size
from ssdlab.fio.jobfile import JobDef, JobFile, RawOption, parse_int, shown
from ssdlab.fio.jobopts import JobOptions, bool_option, is_set, options_dict
from ssdlab.fio.jobplan import JobPlan, job_plan, set_start
from ssdlab.fio import verify as fio_verify
from ssdlab.fio.validate import check_known, check_values

WORK_CAPACITIES = 100
"""The most IO a job file may plan in jobs without ``runtime=``, in drive capacities (docs/fio.md)."""
MAX_JOBS = 4096
"""The most jobs in a job file, numjobs clones included: fio's own (REAL_MAX_JOBS)."""
MAX_TOGETHER = 256
"""The most jobs that run at the same time on the simulated drive (memory: each member of a run
keeps its own statistics, about 1.6 MB, so 4096 of them took 6.6 GB)."""


@dataclass
class FioPlan:
    path: str
    user_bytes: int
    jobs: List[JobPlan]
    notes: List[str]
    global_options: Dict[str, str]

    together: List[List[int]] = field(default_factory=list)
    """The jobs (indices into `jobs`) that run at the same time, in file order: a job file's jobs
    between two stonewalls, and a job's numjobs clones. Empty: each job alone."""

    def _groups(self) -> List[List[int]]:
        return self.together or [[i] for i in range(len(self.jobs))]

    def steps(self) -> List[Dict[str, Any]]:
        """Every step: a secure erase (a fresh drive), then each job's steps; jobs that run at
        the same time share one ``run_together`` step."""
        out: List[Dict[str, Any]] = [{"step": "secure_erase"}]
        for group in self._groups():
            if len(group) == 1 and self.jobs[group[0]].iolog is not None:
                out.append({"step": "iolog", "job": group[0]})  # run_plan replays it (ssdlab.replay)
            elif len(group) == 1:
                out.extend(self.jobs[group[0]].steps)
            else:
                out.append({"step": "run_together", "workloads": [self.jobs[i].workload for i in group],
                            "report_as": self.report_as(group)})
        return out

    def report_as(self, group: List[int]) -> List[int]:
        """Reporting groups within a group of jobs that run together, as fio's group_reporting
        makes them: the jobs that set it are reported as one, each other job alone."""
        keys = [-1 if self.jobs[i].group_reporting else i for i in group]  # -1: the shared report
        seen: Dict[int, int] = {}
        return [seen.setdefault(key, len(seen)) for key in keys]

    def group_steps(self) -> List[Tuple[int, List[int]]]:
        """Each group of jobs that run at the same time, in file order, with the index in `steps()`
        of its first step."""
        out = []
        i = 1
        for group in self._groups():
            out.append((i, group))
            i += 1 if len(group) > 1 or self.jobs[group[0]].iolog is not None else len(self.jobs[group[0]].steps)
        return out

    def measured_step_indices(self) -> List[int]:
        """Index in `steps()` of each job's measured run step (shared by jobs that run together)."""
        out = [0] * len(self.jobs)
        i = 1
        for group in self._groups():
            if len(group) == 1:
                i += 1 if self.jobs[group[0]].iolog is not None else len(self.jobs[group[0]].steps)
                out[group[0]] = i - 1
            else:
                for k in group:
                    out[k] = i
                i += 1
        return out

    def member_index(self, job: int) -> Optional[int]:
        """The job's place in its ``run_together`` step, or None when it runs alone."""
        for group in self._groups():
            if job in group and len(group) > 1:
                return group.index(job)
        return None


def _check_job_count(job: JobDef, numjobs: Optional[RawOption], clones: int, total: int, together: int) -> None:
    """At most `MAX_JOBS` jobs in a file (fio's own limit), at most `MAX_TOGETHER` at the same time."""
    o = numjobs if numjobs is not None and clones > 1 else None
    where = o.error if o is not None else (lambda m: SsdlabError(f"{job.where}: {m}"))
    if total > MAX_JOBS:
        raise where(f"job '{job.name}' makes {total} jobs in the file (numjobs clones included); fio runs at most "
                    f"{MAX_JOBS} -- lower numjobs or split the file")
    if together > MAX_TOGETHER:
        raise where(f"job '{job.name}' makes {together} jobs run at the same time (numjobs clones, and jobs without "
                    f"stonewall between them); the simulator runs at most {MAX_TOGETHER} together (each keeps its "
                    f"own statistics in memory, about 1.6 MB) -- lower numjobs or add 'stonewall'")


def _refuse_work(p: JobPlan, clones: int, planned: int, user_bytes: int, numjobs: Optional[RawOption]) -> None:
    """The job file's byte- or IO-limited jobs plan more than `WORK_CAPACITIES` drive capacities of IO."""
    bound = WORK_CAPACITIES * user_bytes
    per = p.planned_bytes or 0
    before = planned - per * clones
    o = p.work_option
    if clones > 1 and numjobs is not None and before + per <= bound:
        o = numjobs  # one clone would fit: the clones are what crosses the bound
    where = o.error if o is not None else (lambda m: SsdlabError(f"{p.job.where}: {m}"))
    what = f"{o.name}={shown(o.value or '')}: " if o is not None else ""
    amount = f"{format_size(per)} of IO"
    if clones > 1:
        amount += f" in each of {clones} clones (numjobs), {format_size(per * clones)} in all"
    if before:
        amount += f", {format_size(planned)} with the jobs before it"
    raise where(f"{what}job '{p.name}' plans {amount}: more than the {format_size(bound)} ({WORK_CAPACITIES} x the "
                f"drive's {format_size(user_bytes)}) ssdlab simulates for jobs without runtime=; lower loops, "
                f"io_size, number_ios or numjobs, or add runtime= to bound the job by time")


def plan(jobfile: JobFile, user_bytes: int, sequential_jobs: bool = False,
         sections: Optional[List[str]] = None) -> FioPlan:
    """Checks every job of `jobfile` against a drive of `user_bytes` and returns the plan."""
    jobs = jobfile.jobs()
    if sections:
        missing = [s for s in sections if s not in {j.section for j in jobs}]
        if missing:
            raise SsdlabError(f"{jobfile.path}: no job section named '{missing[0]}'")
        jobs = [j for j in jobs if j.section in sections]
    notes: List[str] = []
    host_used: List[str] = []
    plans: List[JobPlan] = []
    together: List[List[int]] = []
    groupid = 0
    planned = 0  # bytes planned by the jobs without runtime=, clones included
    for i, job in enumerate(jobs):
        for h in check_known(job):
            if h not in host_used:
                host_used.append(h)
        j = JobOptions(job)
        stonewall = i == 0 or is_set(j, "stonewall")
        if i > 0:
            if is_set(j, "stonewall") or is_set(j, "new_group"):
                groupid += 1
            if not stonewall and sequential_jobs:
                notes.append(f"job '{job.name}' runs after '{jobs[i - 1].name}', not at the same time as fio would "
                             f"(--sequential-jobs)")
                stonewall = True
        wf = j.get("wait_for")
        if wf is not None and not stonewall:
            # fio's wait_for: the job starts when the named job (all its clones) has ended. Simulated
            # when that is the job just before, running alone: then it is a stonewall that keeps the
            # reporting group (fio's examples/waitfor.fio).
            wanted = (wf.value or "").strip()
            before = jobs[i - 1] if i > 0 else None
            if before is None or wanted != before.name or any(plans[k].index != before.index for k in together[-1]):
                if wanted not in {other.name for other in jobs[:i]}:
                    raise wf.error(f"wait_for={shown(wanted)}: no job before it is named so (fio: 'wait_for={wanted} job "
                                   f"not found')")
                raise wf.error(f"wait_for={shown(wanted)}: the simulator starts a job after the job just before it, "
                               f"when that one runs alone; use stonewall, or put the job right after '{wanted}'")
            stonewall = True
        nj = j.get("numjobs")
        clones = parse_int(nj, 1, 4096) if nj is not None else 1
        first = job_plan(j, user_bytes, groupid, notes)
        check_values(j)
        if first.planned_bytes is not None and j.get("read_iolog") is None:
            planned += first.planned_bytes * clones
            if planned > WORK_CAPACITIES * user_bytes:
                _refuse_work(first, clones, planned, user_bytes, j.get("numjobs"))
        log = j.get("read_iolog")
        if log is not None:
            if clones > 1 or not stonewall or (i + 1 < len(jobs) and not is_set(JobOptions(jobs[i + 1]), "stonewall")
                                                and not sequential_jobs):
                raise log.error(f"read_iolog={log.value}: an iolog job must run alone (numjobs=1, and stonewall "
                                f"before the next job); the simulator does not replay a log alongside other jobs")
            text = (log.value or "").strip()
            if not text:
                raise log.error("read_iolog needs a file name")
            first.iolog = text if os.path.isabs(text) else os.path.join(os.path.dirname(str(jobfile.path)), text)
            first.iolog_no_stall = bool_option(j, "replay_no_stall", False)
            how = (f"as fast as possible at iodepth {first.iodepth}" if first.iolog_no_stall
                   else "at its recorded times, open loop")
            first.notes.append(f"job '{job.name}': replays {text} ({how}); rw, bs and size do not apply")
            for key, value in (("startdelay", first.start_delay_us[1]), ("ramp_time", first.ramp_s)):
                if value:
                    first.notes.append(f"job '{job.name}': {key} is not simulated for an iolog job: the log "
                                       f"starts when the job before it ends, and every request of it is reported")
        first.group_reporting = is_set(j, "group_reporting")
        _check_job_count(job, j.get("numjobs"), clones, len(plans) + clones,
                         clones + (len(together[-1]) if together and not stonewall else 0))
        members = [first]
        for c in range(1, clones):
            if j.get("offset_increment") is not None:  # each clone its own region
                clone = job_plan(j, user_bytes, groupid, [], clone=c)
                clone.group_reporting = first.group_reporting
            else:
                # the job's definition (and through it the whole parsed file) is read-only and
                # shared: copying it per clone made a file of many numjobs jobs quadratic
                clone = copy.deepcopy(first, {id(first.job): first.job, id(first.work_option): first.work_option})
            clone.clone = c
            if clone.workload.get("seed") is not None:
                clone.workload["seed"] = (clone.workload["seed"] + c) % 2**64
            members.append(clone)
        indices = list(range(len(plans), len(plans) + len(members)))
        if stonewall or not together:
            together.append(indices)
        else:
            together[-1].extend(indices)
        plans.extend(members)
        in_flight = sum(plans[k].iodepth for k in together[-1])
        if in_flight > MAX_QUEUE_DEPTH:
            o = j.get("iodepth") or j.get("numjobs")
            where = o.error if o is not None else (lambda m: SsdlabError(f"{job.where}: {m}"))
            raise where(f"job '{job.name}': the jobs that run at the same time would keep {in_flight} requests in "
                        f"flight (their iodepths summed, numjobs clones included); the simulated drive takes at most "
                        f"{MAX_QUEUE_DEPTH} -- lower iodepth or numjobs, or add 'stonewall'")
    for group in together:
        for k in group:  # fio numbers its jobs from 1 in file order, each clone right after its job
            set_start(plans[k], k + 1, len(group) > 1)
        if len(group) > 1:
            _check_together_ramp(plans, group)
        locked = [lf for lf in (plans[k].job.get("lockfile") for k in group)
                  if lf is not None and (lf.value or "").strip() != "none"]
        if len(group) > 1 and locked:
            lf = locked[0]
            raise lf.error(f"lockfile={shown(lf.value or '')}: fio would serialize the IO of the jobs that run at the same "
                           f"time on the one file; the simulator runs them without a lock -- remove lockfile, or add "
                           f"'stonewall' (and numjobs=1) so the job runs alone")
        intervals = {plans[k].workload["interval_ms"] for k in group}
        if len(intervals) > 1:
            raise SsdlabError(f"{plans[group[0]].job.where}: jobs that run at the same time must log at the same "
                              f"log_avg_msec; set one value for all of them")
    _job_control(plans, together, notes)
    if host_used:
        notes.append("accepted, no effect on the simulated drive: " + ", ".join(host_used))
    fio_verify.assign(plans, notes)  # writer numbers and file names, clones included
    return FioPlan(jobfile.path, user_bytes, plans, notes, options_dict(jobfile.global_options), together)


def _check_together_ramp(plans: List[JobPlan], group: List[int]) -> None:
    """A ramp on a job that runs with others is the core's (``ramp_s``): its requests are left out
    of the job's figures as fio leaves them out (`set_start` notes it). Refused where the ramp would change more than
    the figures: a latency target (fio searches from depth 1 again after the ramp) and verify
    (what the ramp wrote is read back)."""
    for k in group:
        p = plans[k]
        if p.ramp_s <= 0:
            continue
        rt = JobOptions(p.job).get("ramp_time")
        assert rt is not None
        for key, what in (("latency_target", "latency_target"), ("verify", "verify")):
            if p.workload.get(key) is not None:
                raise rt.error(f"job '{p.name}': ramp_time with {what} on a job that runs at the same time as other jobs "
                               f"is not simulated -- remove ramp_time, or add 'stonewall' (and numjobs=1) so the job "
                               f"runs alone")


def _job_control(plans: List[JobPlan], together: List[List[int]], notes: List[str]) -> None:
    """What reaches across jobs (`ssdlab.fio.semantics`): ``exitall`` is global in fio (a job that
    sets it makes every job's end terminate the jobs its ``exit_what`` names), so every job gets its
    exit rules here; the jobs of a flow must run at the same time (fio counts every job's weight from
    the start, so a flow whose other jobs run before or after would hold a job back for good)."""
    exitall = next((p for p in plans if p.semantics is not None and p.semantics.exitall), None)
    on_error = any(p.semantics is not None and p.semantics.exitall_on_error for p in plans)
    for p in plans:  # every job, so a job's group can be found (exit_what=group)
        sem = p.semantics
        if sem is None or not (exitall is not None or on_error):
            continue
        p.workload["exit"] = {"what": sem.exit_what, "on_end": exitall is not None,
                              "on_error": sem.exitall_on_error, "group": p.groupid}
    if exitall is not None and any(p.semantics is not None and p.semantics.exit_what == "all" for p in plans):
        notes.append("exitall with exit_what=all: the first job to end stops every job, also those of later "
                     "groups, which then never start (reported with no IO, as fio reports them)")
    flows: Dict[int, set] = {}
    for g, group in enumerate(together or [[i] for i in range(len(plans))]):
        for k in group:
            sem = plans[k].semantics
            if sem is not None and sem.flow_id is not None:
                flows.setdefault(sem.flow_id, set()).add(g)
    for fid, groups in flows.items():
        members = [p for p in plans if p.semantics is not None and p.semantics.flow_id == fid]
        if len(groups) > 1 or len(members) < 2:
            o = members[0].job.get("flow")
            assert o is not None
            if len(members) < 2:
                notes.append(f"job '{members[0].name}': flow with no other job in flow_id {fid} has no effect")
                continue
            raise o.error(f"flow: the jobs of flow_id {fid} do not all run at the same time (stonewall or "
                          f"--sequential-jobs between them); fio counts every job's weight from the start, so a job "
                          f"would be held back until the others run -- put them in one group or drop flow")
