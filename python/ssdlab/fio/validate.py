"""Checks every option a job writes, whether the job uses it or not: that the simulator knows it
(`check_known`: unknown and unsupported options are refused, host-only ones collected for a note)
and that its value is well formed for its type, within fio's bounds (`check_values`).

fio reads every option of a job file (a device run hands the file to fio), so a value is checked
even where a later line overrides it or the job's rw never uses it.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ssdlab.fio import options as opts
from ssdlab.fio.access import bs_part, bsrange_part, bssplit_part
from ssdlab.fio.jobfile import JobDef, parse_float, parse_int, parse_size, parse_time_us, shown
from ssdlab.fio.jobopts import JobOptions, split_dirs

MAX_NUMBER_IOS = 2**63 - 1
"""fio's largest number_ios (it reads the value as a signed 64-bit number)."""
MAX_RATE_IOPS = 2**32 - 1
"""fio's largest rate_iops (an unsigned 32-bit number; fio wraps larger ones)."""
MAX_LOG_MSEC = 2**32 - 1
"""fio's largest log_avg_msec (an unsigned 32-bit number of milliseconds)."""


def check_known(job: JobDef) -> List[str]:
    """Rejects unknown and unsupported options (`options.REFUSED`, with the registry's reason);
    returns the host-only ones used."""
    host: List[str] = []
    for o in job.global_options + job.own_options:
        s = opts.spec(o.name)
        if s is None or s.kind == opts.REFUSED:
            raise o.error(opts.refusal(o.name))
        if s.type == "set" and o.value is not None and o.value.strip() not in ("", "1", "0"):
            raise o.error(f"option '{o.name}' takes no value (got '{o.value}')")
        if s.kind == opts.HOST and o.key not in host:
            host.append(o.key)
    return host


# fio's bounds of options whose values are checked wherever they are written (options.c minval/maxval,
# and ssdlab's own where the simulator has one); the use of each value is checked in jobplan.job_plan. Other
# whole numbers are fio's 32-bit integers (fio wraps larger values around).
_INT_DEFAULT_BOUNDS = (-(2**31), 2**32 - 1)
_INT_BOUNDS: Dict[str, Tuple[Optional[int], Optional[int]]] = {
    "nice": (-20, 19),
    "prio": (0, 7),
    "prioclass": (0, 3),
    "significant_figures": (1, 10),
    "rwmixread": (0, 100),
    "rwmixwrite": (0, 100),
    "buffer_compress_percentage": (0, 100),
    "iodepth": (1, 65536),
    "numjobs": (1, 4096),
    "loops": (1, 2**32 - 1),
    "number_ios": (1, MAX_NUMBER_IOS),
    "nrfiles": (1, 2**32 - 1),
    "log_avg_msec": (0, MAX_LOG_MSEC),
    "randseed": (0, 2**64 - 1),
}
_LOCK_MODES = ("none", "exclusive", "readwrite")


def check_values(j: JobOptions) -> None:
    """Checks the value of every option written for the job by its type (options.TYPES), also
    of those this job does not use and of those a later line overrides: fio reads them all (a
    device run hands the job file to fio), so none may be a 5000-digit, Unicode or inf numeral."""
    job = j.job
    for o in job.global_options + job.own_options:
        s = opts.spec(o.name)
        if s is not None and s.name == "log_max_value" and (o.value is None or o.value.strip() != "0"):
            from ssdlab.fio.jobfile import parse_bool

            if parse_bool(o):
                raise o.error(f"{o.name}={shown(o.value or '')}: logs of window maxima are not simulated; the "
                              f"simulator logs window averages (log_max_value=0)")
        if s is not None and s.name == "mem" and (o.value or "").strip().startswith("cudamalloc"):
            raise o.error(f"{o.name}={shown(o.value or '')}: GPU memory for IO buffers has no meaning on a simulated "
                          f"drive; leave mem at its default")
        if s is None or s.type not in opts.NUMERIC_TYPES and s.type != "lock":
            continue
        t = s.type
        if t == "int":
            lo, hi = _INT_BOUNDS.get(o.key, _INT_DEFAULT_BOUNDS)
            parse_int(o, lo, hi)
        elif t in ("size", "size%"):
            parse_size(o, j.kb_base, allow_percent=t == "size%")
        elif t in ("time_s", "time_us") and s.name == "startdelay":  # LOW-HIGH, as fio splits it
            from ssdlab.fio.startdelay import split_range

            for part in split_range((o.value or "").strip()):
                parse_time_us(o, 1_000_000, part)
        elif t in ("time_s", "time_us"):
            parse_time_us(o, 1_000_000 if t == "time_s" else 1)
        elif t == "lock":
            if (o.value or "").strip() not in _LOCK_MODES:
                raise o.error(f"lockfile={shown(o.value or '')}: expected one of {', '.join(_LOCK_MODES)}")
        elif t == "ss":
            crit, colon, limit = (o.value or "").partition(":")
            if not colon or not crit.strip():
                raise o.error(f"{o.name}={shown(o.value or '')}: expected CRITERION:LIMIT, e.g. iops:10% or bw_slope:1%")
            parse_float(o, value=limit.strip().removesuffix("%"))
        else:
            for text in split_dirs(o):
                if text is None:
                    continue
                if t == "sizes":
                    if o.key == "bs":
                        bs_part(j, o, text)
                    else:
                        parse_size(o, j.kb_base, value=text)
                elif t == "ints":
                    parse_int(o, 0, MAX_RATE_IOPS, value=text)
                elif t == "pcts":
                    parse_int(o, 0, 100, value=text[:-1] if text.endswith("%") else text)
                elif t == "split":
                    bssplit_part(j, o, text)
                elif t == "ranges":
                    bsrange_part(j, o, text)
    # Last, how fio itself reads them: an option fio refuses, or accepts but reads otherwise than it
    # looks (a part it skips with an error, a blank after '='), is refused here too. The job file's
    # last job also answers for the sections after it.
    if job.file is not None:
        extra = []
        if job.index == len(job.file.jobs()):
            tail = job.file.sections[[s.where for s in job.file.sections].index(job.where) + 1:]
            extra = [o for sec in tail for o in sec.options]
        problem = job.file.fio_problem(job.global_options + job.own_options + extra)
        if problem is not None:
            raise problem
