"""Jobs that end in error, reported as fio 3.33 reports them: the job's ``error`` (errno) in the
JSON, ``err=N (file:..., func=..., error=...)`` on the normal output's job line, the job's own lines
and fio's ``fio: pid=..., err=...`` line on stderr, and an exit status that counts the jobs in
error (backend.c 2138: ``exit_value++`` per job with ``td->error``).

A job's error comes from the core (the phase's ``error``: ``errno``, ``func``, ``at``,
``message``), whatever ended it (a verify failure, a rate floor, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:  # pragma: no cover
    from ssdlab.fio.simrun import FioRun

# strerror() of the errnos fio reports for simulated jobs (glibc's texts).
STRERROR = {
    5: "Input/output error",
    84: "Invalid or incomplete multibyte or wide character",
    110: "Connection timed out",
}


def job_error(phase: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The job's error (``errno``, ``func``, ``at``, ``message``) from its phase, if it ended in one."""
    e = phase.get("error")
    return e if isinstance(e, dict) else None


def errno(phase: Dict[str, Any]) -> int:
    """fio's JSON ``error`` of a job: its errno, 0 without an error."""
    e = job_error(phase)
    return int(e["errno"]) if e is not None else 0


def _strerror(n: int) -> str:
    return STRERROR.get(n, f"errno {n}")


def err_text(phase: Dict[str, Any]) -> str:
    """fio's ``err=`` field of the normal output's job line (``err= 0`` without an error)."""
    e = job_error(phase)
    if e is None:
        return "err= 0"
    n = int(e["errno"])
    return f"err={n} ({e['at']}, func={e['func']}, error={_strerror(n)})"


def error_lines(phase: Dict[str, Any]) -> List[str]:
    """What fio prints to stderr for a job: its failed verifies' lines (also those
    ``continue_on_error`` let go), its error's own lines, then, if it ended in error,
    ``fio: pid=0, err=N/file:..., func=..., error=...`` (pid 0: a simulated job has none)."""
    v = phase.get("verify") or {}
    lines = [str(ln) for ln in v.get("messages", [])]
    e = job_error(phase)
    if e is None:
        return lines
    if not (lines and e.get("func") == "io_u_sync_complete"):  # a verify error's lines are those above
        lines += [ln for ln in str(e.get("message", "")).split("\n") if ln]
    n = int(e["errno"])
    lines.append(f"fio: pid=0, err={n}/{e['at']}, func={e['func']}, error={_strerror(n)}")
    return lines


def run_errors(run: "FioRun") -> List[str]:
    """Every job's stderr lines (`error_lines`), in the order the jobs ended."""
    jobs = sorted(run.jobs, key=lambda j: (j.start_s + j.runtime_s, j.plan.index))
    return [ln for j in jobs for ln in error_lines(j.phase)]


def exit_status(run: "FioRun") -> int:
    """fio's exit status: the number of jobs that ended in error (at most 255)."""
    return min(sum(1 for j in run.jobs if job_error(j.phase) is not None), 255)
