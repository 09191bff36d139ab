"""fio jobs -> ssdlab steps.

`plan(jobfile, user_bytes)` checks every job against what the simulator can honour and returns a
`FioPlan`: the steps to run (a ``secure_erase`` -- the simulated drive starts fresh -- then each
job's steps in file order) and, per job, what the output writers need (name, group, logs,
percentiles, notes).

How fio's notions map onto a workload (crates/ssdlab/src/workload.rs):

========================  =====================================================================
fio                       ssdlab
========================  =====================================================================
rw                        rw read/write/trim/mixed/trim-write + pattern sequential/random
rwmixread / rwmixwrite    read_fraction (the last one written wins, as in fio)
bs                        block_bytes (one size; per-direction sizes must agree)
iodepth                   queue_depth (1 for synchronous engines such as the default psync)
offset / size / filesize  offset_bytes / span_bytes (the region; % of the drive allowed)
io_size, size, loops      byte_limit = (io_size or size or region) x loops
runtime, time_based       duration_s (time_based drops the byte limit)
number_ios                io_limit
thinktime                 think_time_us (fio's thinktime_blocks=1 caps the depth at 1)
rate_iops / rate          rate_iops (one-direction jobs)
buffer_compress_percentage, zero_buffers, refill_buffers    compressibility
randseed                  seed (otherwise derived from --seed and the step index)
norandommap               random_map = false (fio's default random map: true)
ss / ss_dur / ss_ramp     steady_state {metric, criterion, limit, percent, window_s, ramp_s}
startdelay                an idle step before the job
ramp_time                 an unreported run step of that length before the job
log_avg_msec              interval_ms (1000 when unset: the simulator cannot log every IO)
========================  =====================================================================

Jobs separated by ``stonewall`` run one after another; jobs with no ``stonewall`` between them,
and the ``numjobs`` clones of a job, run at the same time on the drive (one ``run_together``
step), as fio runs them. With `sequential_jobs` they run one after another instead, and a note
says so.

random_distribution       distribution (zipf, pareto, normal, zoned, zoned_abs; random offsets)
bssplit / bsrange         block_sizes / block_range (block_bytes is the smallest size)
rate / rate_iops r,w,t    rate_iops_per_direction (mixed jobs)
numjobs, no stonewall     jobs in one run_together step
group_reporting           each group's jobs reported as one
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ssdlab.errors import SsdlabError
from ssdlab import _core
from ssdlab.limits import MAX_BLOCK_BYTES, MAX_INTERVALS, MAX_QUEUE_DEPTH, MAX_SCHEDULED_SECONDS
from ssdlab.sizes import MAX_SIZE, format_size
from ssdlab.fio import options as opts
from ssdlab.fio.jobfile import (
    JobDef,
    JobFile,
    RawOption,
    parse_bool,
    parse_float,
    parse_int,
    parse_size,
    parse_time_us,
    shown,
)

UNIT = 4096
# fio's default percentile list (stat.c); the core reports exactly these.
DEFAULT_PERCENTILES: Tuple[float, ...] = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
)
# Data that compresses completely (zeros) still costs some flash: SandForce SF-2281 drives wrote
# 0.14 bytes of NAND per host byte of 100%-compressible data (review-data.md, section 3).
MOST_COMPRESSIBLE = 0.14
DEFAULT_LOG_MSEC = 1000
MAX_OP_US = float(json.loads(_core.limits())["max_op_us"])
"""The core's longest host think time, in microseconds (one second)."""
MAX_NUMBER_IOS = 2**63 - 1
"""fio's largest number_ios (it reads the value as a signed 64-bit number)."""
MAX_RATE_IOPS = 2**32 - 1
"""fio's largest rate_iops (an unsigned 32-bit number; fio wraps larger ones)."""
MAX_LOG_MSEC = 2**32 - 1
"""fio's largest log_avg_msec (an unsigned 32-bit number of milliseconds)."""
WORK_CAPACITIES = 100
"""The most IO a job file may plan in jobs without ``runtime=``, in drive capacities (docs/fio.md)."""
MAX_JOBS = 4096
"""The most jobs in a job file, numjobs clones included: fio's own (REAL_MAX_JOBS)."""
MAX_TOGETHER = 256
"""The most jobs that run at the same time on the simulated drive (memory: each member of a run
keeps its own statistics, about 1.6 MB, so 4096 of them took 6.6 GB)."""

_RW = {
    # fio rw -> (ssdlab rw, pattern, directions used: "r", "w", "t")
    "read": ("read", "sequential", "r"),
    "write": ("write", "sequential", "w"),
    "trim": ("trim", "sequential", "t"),
    "randread": ("read", "random", "r"),
    "randwrite": ("write", "random", "w"),
    "randtrim": ("trim", "random", "t"),
    "rw": ("mixed", "sequential", "rw"),
    "readwrite": ("mixed", "sequential", "rw"),
    "randrw": ("mixed", "random", "rw"),
    "trimwrite": ("trim-write", "sequential", "tw"),
    "randtrimwrite": ("trim-write", "random", "tw"),
}
_DIR_INDEX = {"r": 0, "w": 1, "t": 2}


@dataclass
class LogSpec:
    kind: str  # "iops", "bw", "lat"
    prefix: str


@dataclass
class Requirement:
    """A core feature a job needs: a Workload field or an rw value."""

    feature: str  # "random_map", "steady_state", "trim-write"
    where: RawOption
    message: str  # what to tell the user when the core lacks it


@dataclass
class JobPlan:
    job: JobDef
    name: str
    index: int
    groupid: int
    description: Optional[str]
    fio_rw: str
    directions: str
    block_bytes: int
    iodepth: int
    workload: Dict[str, Any]  # the measured phase's Workload
    steps: List[Dict[str, Any]]  # this job's steps, the measured run last
    logs: List[LogSpec] = field(default_factory=list)
    log_msec: int = DEFAULT_LOG_MSEC
    log_offset: bool = False
    log_prio: bool = False
    per_job_logs: bool = True
    percentiles: Tuple[float, ...] = DEFAULT_PERCENTILES
    clat_percentiles: bool = True
    lat_percentiles: bool = False
    steady_state: Optional[Dict[str, Any]] = None
    steady_state_text: Optional[str] = None
    requirements: List[Requirement] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    largest_block: int = 0
    clone: int = 0  # which of the job's numjobs clones (0 for the first)
    iolog: Optional[str] = None  # read_iolog: the log replayed instead of the workload
    iolog_no_stall: bool = False
    group_reporting: bool = False
    reported_jobs: int = 1  # with group_reporting: the jobs this report stands for
    planned_bytes: Optional[int] = None  # the IO a job without runtime= moves (None: bounded by time)
    work_option: Optional[RawOption] = None  # the option that sets planned_bytes, for the refusal


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


def options_dict(options: List[RawOption]) -> Dict[str, str]:
    """Options as fio's JSON lists them: canonical name -> value text as written. Flags written
    without a value (``time_based``, ``norandommap``) are left out, as fio leaves them out."""
    return {o.key: o.value for o in options if o.value is not None}


class _Job:
    """Reads one job's effective options, remembering which were used."""

    def __init__(self, job: JobDef):
        self.job = job
        self.opts = job.options
        self.kb_base = 1024
        kb = self.opts.get("kb_base")
        if kb is not None:
            self.kb_base = parse_int(kb)
            if self.kb_base not in (1000, 1024):
                raise kb.error(f"kb_base={kb.value}: must be 1000 or 1024")

    def get(self, name: str) -> Optional[RawOption]:
        return self.opts.get(opts.canonical(name))

    def where(self) -> str:
        return str(self.job.where)


def _check_known(job: JobDef) -> List[str]:
    """Rejects unknown and unsupported options; returns the host-only ones used."""
    host: List[str] = []
    for o in job.global_options + job.own_options:
        s = opts.spec(o.name)
        if s is None:
            raise o.error(f"option '{o.name}' is not supported by the simulator{opts.suggestion(o.name)}")
        if s.type == "set" and o.value is not None and o.value.strip() not in ("", "1", "0"):
            raise o.error(f"option '{o.name}' takes no value (got '{o.value}')")
        if s.kind == opts.HOST and o.key not in host:
            host.append(o.key)
    return host


# fio's bounds of options whose values are checked wherever they are written (options.c minval/maxval,
# and ssdlab's own where the simulator has one); the use of each value is checked in _job_plan. Other
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


def _check_values(j: _Job) -> None:
    """Checks the value of every option written for the job by its type (options.TYPES), also
    of those this job does not use and of those a later line overrides: fio reads them all (a
    device run hands the job file to fio), so none may be a 5000-digit, Unicode or inf numeral."""
    job = j.job
    for o in job.global_options + job.own_options:
        s = opts.spec(o.name)
        if s is None or s.type not in opts.NUMERIC_TYPES and s.type != "lock":
            continue
        t = s.type
        if t == "int":
            lo, hi = _INT_BOUNDS.get(o.key, _INT_DEFAULT_BOUNDS)
            parse_int(o, lo, hi)
        elif t in ("size", "size%"):
            parse_size(o, j.kb_base, allow_percent=t == "size%")
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
            for text in _split_dirs(o):
                if text is None:
                    continue
                if t == "sizes":
                    if o.key == "bs":
                        _bs_part(j, o, text)
                    else:
                        parse_size(o, j.kb_base, value=text)
                elif t == "ints":
                    parse_int(o, 0, MAX_RATE_IOPS, value=text)
                elif t == "pcts":
                    parse_int(o, 0, 100, value=text[:-1] if text.endswith("%") else text)
                elif t == "split":
                    _bssplit_part(j, o, text)
                elif t == "ranges":
                    _bsrange_part(j, o, text)


def _bool(j: _Job, name: str, default: bool) -> bool:
    o = j.get(name)
    return default if o is None else parse_bool(o)


def _is_set(j: _Job, name: str) -> bool:
    o = j.get(name)
    if o is None:
        return False
    if o.value is None or o.value.strip() == "":
        return True
    return parse_bool(o)


def _split_dirs(o: RawOption) -> List[Optional[str]]:
    """fio's ``read,write,trim`` value lists: a value not followed by a comma also applies to the
    directions after it; an empty entry means fio's default."""
    parts = [p.strip() for p in (o.value or "").split(",")]
    if len(parts) > 3:
        raise o.error(f"{o.name}={o.value}: at most three values (read,write,trim)")
    out: List[Optional[str]] = []
    for i in range(3):
        text = parts[i] if i < len(parts) else parts[-1]
        out.append(text or None)
    return out


_DIR_NAMES = {"r": "reads", "w": "writes", "t": "trims"}
BSSPLIT_MAX = 64  # fio's BSSPLIT_MAX: entries per direction


def _check_unit(o: RawOption, n: int, j: _Job, what: Optional[str] = None) -> None:
    if n <= 0 or n % UNIT:
        hint = ""
        if "ib" in (o.value or "").lower() and j.kb_base == 1024:
            hint = " (with fio's default kb_base=1024, 'KiB' means 1000 bytes; write 4k)"
        subject = f"{o.name}={shown(o.value or '')}: {what}" if what else f"{o.name}={shown(o.value or '')}"
        raise o.error(f"{subject} is {n} bytes; the simulator needs a positive multiple of 4096{hint}")


def _bs_part(j: _Job, o: RawOption, text: str) -> int:
    """One direction's ``bs`` value."""
    if "-" in text or ":" in text:
        raise o.error(f"bs={shown(o.value or '')}: for a range of sizes use bsrange=MIN-MAX, for a mix "
                      f"bssplit=SIZE/PCT:...")
    n = parse_size(o, j.kb_base, value=text)
    assert isinstance(n, int)
    return n


def _bssplit_part(j: _Job, o: RawOption, text: str) -> List[Tuple[int, float]]:
    """One direction's bssplit, ``SIZE/PCT`` entries separated by ':', read as fio's
    split_parse_ddir/bssplit_ddir read it: a share is a whole percentage; entries without one
    split what is left equally. Forms fio reads in a way nobody would mean are refused: a 0
    share (fio takes it as blank), an empty entry in the middle (fio stops reading there), more
    than 64 entries (fio drops the rest), shares that do not add up to 100 (fio gives the rest
    to one entry)."""
    entries = text.split(":")
    while entries and not entries[-1].strip():
        entries.pop()  # a trailing ':' ends the list where fio ends it
    shown_v = shown(o.value or "")
    if any(not e.strip() for e in entries):
        raise o.error(f"bssplit={shown_v}: an empty entry ('::'); fio stops reading the list there and ignores "
                      f"the entries after it -- remove it")
    if not entries:
        raise o.error(f"bssplit={shown_v}: no SIZE/PCT entries")
    if len(entries) > BSSPLIT_MAX:
        raise o.error(f"bssplit={shown_v}: {len(entries)} entries; fio reads at most {BSSPLIT_MAX} per direction")
    shares: Dict[int, Optional[float]] = {}
    for entry in entries:
        size_text, _, pct_text = entry.strip().partition("/")
        n = parse_size(o, j.kb_base, value=size_text)
        assert isinstance(n, int)
        pct: Optional[float] = None
        if pct_text.strip():
            t = pct_text.strip()
            if not re.fullmatch(r"[0-9]+", t):
                raise o.error(f"bssplit={shown_v}: share '{shown(t)}' of {size_text.strip()} is not a whole "
                              f"percentage (fio reads whole percentages only)")
            p = parse_int(o, value=t)  # bounded: a 400-digit share is a one-line refusal
            if p == 0:
                raise o.error(f"bssplit={shown_v}: a 0 share for {size_text.strip()}: fio reads it as blank and gives that "
                              f"size an equal part of what is left; leave the share out for that, or drop the size")
            if p > 100:
                raise o.error(f"bssplit={shown_v}: share {t} of {size_text.strip()} is more than 100 %")
            pct = float(p)
        if n in shares:
            raise o.error(f"bssplit={shown_v}: size {size_text.strip()} is listed twice")
        shares[n] = pct
    given = sum(p for p in shares.values() if p is not None)
    missing = [n for n, p in shares.items() if p is None]
    if given > 100 or (not missing and given != 100):
        raise o.error(f"bssplit={shown_v}: the shares add up to {given:g} %, not 100 %")
    rest = (100 - given) / len(missing) if missing else 0.0
    return sorted((n, p if p is not None else rest) for n, p in shares.items())


def _bsrange_part(j: _Job, o: RawOption, text: str) -> Tuple[int, int]:
    lo_text, dash, hi_text = text.partition("-")
    if not dash:
        raise o.error(f"bsrange={shown(o.value or '')}: expected MIN-MAX, e.g. 4k-64k")
    lo, hi = parse_size(o, j.kb_base, value=lo_text), parse_size(o, j.kb_base, value=hi_text)
    assert isinstance(lo, int) and isinstance(hi, int)
    if lo > hi:
        raise o.error(f"bsrange={shown(o.value or '')}: the smallest size is larger than the largest")
    return lo, hi


@dataclass
class Sizes:
    """A job's request sizes: the smallest (`bs`, the alignment of random offsets), the largest,
    the mean (for rate= in bytes), the core's workload fields and fio's ``bs=(R) a-b`` text."""

    bs: int
    largest: int
    mean: float
    fields: Dict[str, Any]


def _direction_sizes(j: _Job) -> Dict[str, Tuple[Any, Optional[RawOption], str]]:
    """Each direction's request sizes as fio resolves them, ``d -> (sizes, option, text)`` with
    sizes ``("mix", ((bytes, pct), ...))`` or ``("range", lo, hi)``: a direction's bssplit entry,
    else its bsrange entry, else its ``bs`` (fio's default 4096). An empty entry of a
    ``read,write,trim`` list (``bssplit=4k/50:8k/50,``) is not "as the others" but fio's default,
    so that direction falls back to ``bs``, as in fio (options.c, str_split_parse). Every entry is
    read, also those of directions the job does not use (fio reads them all)."""
    split, rng, bs_opt = j.get("bssplit"), j.get("bsrange"), j.get("bs")
    if split is not None and rng is not None:
        raise rng.error("give bssplit or bsrange, not both")
    parts = {o.key: _split_dirs(o) for o in (split, rng, bs_opt) if o is not None}
    out: Dict[str, Tuple[Any, Optional[RawOption], str]] = {}
    cache: Dict[Tuple[str, str], Any] = {}
    for d in "rwt":
        i = _DIR_INDEX[d]
        for o in (split, rng, bs_opt):
            if o is None or parts[o.key][i] is None:
                continue
            text = parts[o.key][i] or ""
            key = (o.key, text)
            if key not in cache:
                if o is split:
                    cache[key] = ("mix", tuple(_bssplit_part(j, o, text)))
                elif o is rng:
                    lo, hi = _bsrange_part(j, o, text)
                    cache[key] = ("range", lo, hi) if hi > lo else ("mix", ((lo, 100.0),))
                else:
                    cache[key] = ("mix", ((_bs_part(j, o, text), 100.0),))
            out[d] = (cache[key], o, text)
            break
        else:
            out[d] = (("mix", ((4096, 100.0),)), bs_opt, "4096")  # fio's default bs
    return out


def _describe(d: str, entry: Tuple[Any, Optional[RawOption], str], culprit: RawOption) -> str:
    _, o, text = entry
    if o is culprit:
        return f"{_DIR_NAMES[d]} {shown(text)}"
    source = "bs" if o is not None else "fio's default bs"
    return f"{_DIR_NAMES[d]} {shown(text)} from {source}"


def _sizes(j: _Job, dirs: str) -> Sizes:
    per_dir = _direction_sizes(j)
    used = {per_dir[d][0] for d in dirs}
    culprit = j.get("bssplit") or j.get("bsrange") or j.get("bs")
    if len(used) > 1:
        assert culprit is not None
        which = ", ".join(_describe(d, per_dir[d], culprit) for d in dirs)
        if culprit.key == "bs":
            raise culprit.error(f"bs={shown(culprit.value or '')}: the simulator runs one request size per job; use the "
                                f"same size for every direction this rw uses ({which})")
        empty = any(per_dir[d][1] is not culprit for d in dirs)
        raise culprit.error(f"{culprit.name}={shown(culprit.value or '')}: different values per direction are not "
                            f"supported by the simulator ({which}"
                            f"{'; as in fio, an empty entry leaves a direction at bs' if empty else ''}); give the "
                            f"same sizes for every direction this rw uses")
    sizes_desc, o, text = per_dir[dirs[0]]
    if o is None:
        o = RawOption("bs", "4096", j.job.where)
    if sizes_desc[0] == "range":
        lo, hi = sizes_desc[1], sizes_desc[2]
        _check_unit(o, lo, j, "the smallest size")
        _check_unit(o, hi, j, "the largest size")
        sizes = Sizes(lo, hi, (lo + hi) / 2, {"block_range": [lo, hi]})
    else:
        mix = list(sizes_desc[1])
        for n, _ in mix:
            _check_unit(o, n, j, f"size {format_size(n)}" if o.key == "bssplit" else None)
        if len(mix) == 1:
            sizes = Sizes(mix[0][0], mix[0][0], float(mix[0][0]), {})
        else:
            sizes = Sizes(mix[0][0], mix[-1][0], sum(n * p for n, p in mix) / 100,
                          {"block_sizes": [{"bytes": n, "pct": p} for n, p in mix]})
    if sizes.largest > MAX_BLOCK_BYTES:
        raise o.error(f"{o.name}={shown(o.value or '')}: requests of {format_size(sizes.largest)} are larger than the "
                      f"{format_size(MAX_BLOCK_BYTES)} a drive takes in one command; use smaller sizes")
    ba = j.get("ba")
    if ba is not None:  # fio's ba: per direction; an empty entry is fio's default, the block size
        aligns = [parse_size(ba, j.kb_base, value=t) if t is not None else None for t in _split_dirs(ba)]
        if any(aligns[_DIR_INDEX[d]] not in (None, sizes.bs) for d in dirs):
            raise ba.error(f"ba={shown(ba.value or '')}: alignment other than the (smallest) block size is not "
                           f"supported by the simulator")
    return sizes


_DISTRIBUTIONS = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs")


def _random_distribution(j: _Job, o: RawOption, span: int) -> Dict[str, Any]:
    """fio's random_distribution as the core's `distribution` (docs/fio.md)."""
    text = (o.value or "").strip()
    kind, _, rest = text.partition(":")
    kind = kind.strip()
    if kind not in _DISTRIBUTIONS:
        raise o.error(f"random_distribution={text}: choose one of {', '.join(_DISTRIBUTIONS)}")
    if kind == "random":
        if rest:
            raise o.error(f"random_distribution={text}: 'random' takes no parameter")
        return {"kind": "uniform"}
    if kind in ("zipf", "pareto", "normal"):
        if not rest or ":" in rest:
            raise o.error(f"random_distribution={text}: expected {kind}:VALUE (a center or a second value is not "
                          f"supported by the simulator)")
        v = parse_float(RawOption(o.name, rest.strip(), o.where))
        if kind == "zipf":
            if not (v > 0 and abs(v - 1.0) > 1e-9):
                raise o.error(f"random_distribution={text}: zipf theta must be positive and not 1.0 (as in fio)")
            return {"kind": "zipf", "theta": v}
        if kind == "pareto":
            if not 0 < v < 1:
                raise o.error(f"random_distribution={text}: pareto h must be between 0 and 1 (as in fio)")
            return {"kind": "pareto", "h": v}
        if not 0 <= v <= 100:
            raise o.error(f"random_distribution={text}: normal sigma is a percentage of the region, 0 to 100")
        return {"kind": "normal", "sigma_pct": v}
    zones = []
    entries = [e.strip() for e in rest.split(":") if e.strip()]
    if entries and entries[0] in ("r", "w", "t"):
        raise o.error(f"random_distribution={text}: per-direction zones are not supported by the simulator; give "
                      f"one set of zones")
    for entry in entries:
        a, slash, b = entry.partition("/")
        if not slash:
            raise o.error(f"random_distribution={text}: zone '{entry}' is not ACCESS%/SIZE")
        access = parse_float(RawOption(o.name, a.strip(), o.where))
        if kind == "zoned":
            size = parse_float(RawOption(o.name, b.strip(), o.where))
        else:
            n = parse_size(o, j.kb_base, value=b.strip())
            assert isinstance(n, int)
            size = float(n)
        zones.append({"access_pct": access, "size": size})
    if not zones:
        raise o.error(f"random_distribution={text}: no zones")
    total = sum(z["access_pct"] for z in zones)
    if abs(total - 100) > 1e-6:
        raise o.error(f"random_distribution={text}: the zones' access shares add up to {total:g} %, not 100 %")
    if kind == "zoned":
        size = sum(z["size"] for z in zones)
        if abs(size - 100) > 1e-6:
            raise o.error(f"random_distribution={text}: the zones' sizes add up to {size:g} %, not 100 %")
        return {"kind": "zoned", "zones": zones}
    size = sum(z["size"] for z in zones)
    if size > span:
        raise o.error(f"random_distribution={text}: the zones add up to {int(size)} bytes, more than the job's "
                      f"{span}-byte region")
    return {"kind": "zoned_abs", "zones": zones}


def _engine(j: _Job) -> str:
    o = j.get("ioengine")
    name = (o.value or "").strip() if o is not None else opts.DEFAULT_ENGINE
    if o is not None and name not in opts.BLOCK_ENGINES:
        raise o.error(f"ioengine={name}: not a block-IO engine the simulator can stand in for")
    return name


def _per_dir_value(o: RawOption, dirs: str) -> Optional[str]:
    values = _split_dirs(o)
    used = {values[_DIR_INDEX[d]] for d in dirs}
    if len(used) != 1:
        raise o.error(f"{o.name}={o.value}: different limits per direction are not supported by the simulator")
    return used.pop()


def _seconds(o: RawOption, who: str) -> float:
    """A time option in seconds, at most the core's `MAX_SCHEDULED_SECONDS`."""
    v = parse_time_us(o, 1_000_000) / 1e6
    if v > MAX_SCHEDULED_SECONDS:
        raise o.error(f"{who}: {o.name}={shown(o.value or '')} is {v:g} s, more than the {MAX_SCHEDULED_SECONDS:g} s a "
                      f"simulated drive can be scheduled for")
    return v


def _check_intervals(o: RawOption, who: str, seconds: float, log_msec: int) -> None:
    """A timed phase records one series interval per log window: at most `MAX_INTERVALS`."""
    n = math.ceil(seconds * 1000.0 / log_msec)
    if n > MAX_INTERVALS:
        raise o.error(f"{who}: {o.name}={shown(o.value or '')} at log_avg_msec={log_msec} is {n} series intervals, more "
                      f"than the {MAX_INTERVALS} one phase may record; shorten it or raise log_avg_msec")


def _round_down(n: int, unit: int) -> int:
    return n // unit * unit


def _job_plan(j: _Job, user_bytes: int, groupid: int, notes: List[str]) -> JobPlan:
    job = j.job
    name = job.name
    who = f"job '{name}'"

    # numjobs
    nj = j.get("numjobs")
    iodepth_opt = j.get("iodepth")
    iodepth = parse_int(iodepth_opt, 1, 65536) if iodepth_opt is not None else 1
    if nj is not None:
        parse_int(nj, 1, 4096)  # the clones are made by `plan`
    nf = j.get("nrfiles")
    if nf is not None and parse_int(nf, 1) != 1:
        raise nf.error(f"nrfiles={nf.value}: the simulated drive is one device; use nrfiles=1")

    # rw
    rw_opt = j.get("rw")
    fio_rw = (rw_opt.value or "").strip() if rw_opt is not None else "read"
    if ":" in fio_rw:
        assert rw_opt is not None
        raise rw_opt.error(f"rw={fio_rw}: offset modifiers (':N') are not supported by the simulator")
    if fio_rw not in _RW:
        where = rw_opt.error if rw_opt is not None else (lambda m: SsdlabError(f"{j.where()}: {m}"))
        raise where(f"rw={fio_rw}: not supported by the simulator (use one of {', '.join(_RW)})")
    core_rw, pattern, dirs = _RW[fio_rw]
    seq = j.get("rw_sequencer")
    if seq is not None and (seq.value or "").strip() != "sequential":
        raise seq.error(f"rw_sequencer={seq.value}: only 'sequential' is supported by the simulator")
    rd = j.get("random_distribution")
    pr = j.get("percentage_random")
    if pr is not None:  # fio's percentage_random=int[,int][,int], each 0..100
        want = 100 if pattern == "random" else 0
        shares = [None if t is None else parse_int(pr, 0, 100, value=t[:-1] if t.endswith("%") else t)
                  for t in _split_dirs(pr)]
        if any(shares[_DIR_INDEX[d]] not in (None, want) for d in dirs):
            raise pr.error(f"percentage_random={shown(pr.value or '')}: mixing random and sequential offsets is not "
                           f"supported by the simulator")

    plan_notes: List[str] = []
    requirements: List[Requirement] = []

    # mix
    read_fraction = 0.5
    read_pct = 50
    for o in job.global_options + job.own_options:  # checked for every rw, as fio checks them (0..100)
        if o.key == "rwmixread":
            read_pct = parse_int(o, 0, 100)
        elif o.key == "rwmixwrite":
            read_pct = 100 - parse_int(o, 0, 100)
    if core_rw == "mixed":
        read_fraction = read_pct / 100.0
        if pattern == "sequential":
            plan_notes.append(f"{who}: sequential reads and writes share one cursor (fio keeps one per direction)")

    sizes = _sizes(j, dirs)
    bs = sizes.bs

    # engine and depth
    engine = _engine(j)
    depth = iodepth
    if engine in opts.SYNC_ENGINES and iodepth > 1:
        depth = 1
        plan_notes.append(
            f"{who}: ioengine={engine}{' (the default)' if j.get('ioengine') is None else ''} is synchronous, "
            f"so fio keeps one IO in flight whatever iodepth says; simulated at queue depth 1 "
            f"(use ioengine=libaio or io_uring with direct=1 for iodepth={iodepth})"
        )
    direct = j.get("direct")
    buffered = j.get("buffered")
    is_direct = (direct is not None and parse_bool(direct)) or (buffered is not None and not parse_bool(buffered))
    if not is_direct:
        text = ("direct=0 (fio's default) would go through the page cache on a real host; the simulator "
                "sends every IO to the drive, as with direct=1")
        if text not in notes:
            notes.append(text)

    # region
    offset = 0
    off_opt = j.get("offset")
    if off_opt is not None:
        v = parse_size(off_opt, j.kb_base, allow_percent=True)
        if isinstance(v, tuple):
            align_opt = j.get("offset_align")
            align = bs
            if align_opt is not None:
                a = parse_size(align_opt, j.kb_base)
                assert isinstance(a, int)
                align = a or bs
            offset = math.ceil(int(user_bytes * v[1] / 100) / align) * align
        else:
            offset = v
        if offset % UNIT:
            raise off_opt.error(f"offset={off_opt.value} is {offset} bytes; the simulator needs a multiple of 4096")
        if offset >= user_bytes:
            raise off_opt.error(f"offset={off_opt.value} is at or beyond the end of the drive's {user_bytes} user bytes; lower it or pass a larger --capacity")

    size_opt, filesize_opt = j.get("size"), j.get("filesize")
    size_val = parse_size(size_opt, j.kb_base, allow_percent=True) if size_opt is not None else None
    room = user_bytes - offset
    region_opt: Optional[RawOption] = None
    if filesize_opt is not None:
        if filesize_opt.value and any(c in filesize_opt.value for c in "-:"):
            raise filesize_opt.error(f"filesize={filesize_opt.value}: size ranges are not supported by the simulator")
        fs = parse_size(filesize_opt, j.kb_base)
        assert isinstance(fs, int)
        span, region_opt = fs, filesize_opt
    elif isinstance(size_val, tuple):
        span = min(int(user_bytes * size_val[1] / 100), room)
        span = _round_down(span, bs)
        region_opt = size_opt
    elif size_val is not None:
        span, region_opt = size_val, size_opt
    else:
        span = room
    if span <= 0:
        raise (region_opt.error if region_opt else (lambda m: SsdlabError(f"{j.where()}: {m}")))(
            f"{who}: the region is empty")
    if span > room:
        assert region_opt is not None
        raise region_opt.error(
            f"{region_opt.name}={region_opt.value} ({span} bytes) at offset {offset} runs past the drive's "
            f"{user_bytes} user bytes; lower it or pass a larger --capacity"
        )
    whole = _round_down(span, bs)
    if whole < sizes.largest:
        raise (region_opt.error if region_opt else (lambda m: SsdlabError(f"{j.where()}: {m}")))(
            f"{who}: the region ({span} bytes) is smaller than one block ({sizes.largest} bytes)")
    if whole != span:
        plan_notes.append(f"{who}: region rounded down from {span} to {whole} bytes (whole {bs}-byte blocks)")
        span = whole

    # amount
    io_opt = j.get("io_size")
    if io_opt is not None:
        v = parse_size(io_opt, j.kb_base, allow_percent=True)
        amount = int(span * v[1] / 100) if isinstance(v, tuple) else v
    elif filesize_opt is not None and size_val is not None:
        amount = int(span * size_val[1] / 100) if isinstance(size_val, tuple) else size_val
    else:
        amount = span
    loops_opt = j.get("loops")
    loops = parse_int(loops_opt, 1, 2**32 - 1) if loops_opt is not None else 1
    amount *= loops
    if amount > MAX_SIZE:
        culprit = loops_opt or io_opt or size_opt or filesize_opt
        assert culprit is not None
        raise culprit.error(f"{who}: {amount} bytes of IO (x {loops} loops) is more than the 2**64-1 bytes the "
                            f"simulator counts; lower loops or io_size")
    if amount <= 0:
        culprit = io_opt or loops_opt or size_opt or filesize_opt
        assert culprit is not None
        raise culprit.error(f"{who}: nothing to do (0 bytes of IO)")

    # time
    runtime_opt = j.get("runtime")
    runtime_s = parse_time_us(runtime_opt, 1_000_000) / 1e6 if runtime_opt is not None else None
    if runtime_s == 0:
        runtime_s = None
    if runtime_s is not None and runtime_s > MAX_SCHEDULED_SECONDS:
        assert runtime_opt is not None
        raise runtime_opt.error(f"{who}: runtime of {runtime_s:g} s is more than the {MAX_SCHEDULED_SECONDS:g} s a "
                                f"simulated drive can be scheduled for")
    time_based = _is_set(j, "time_based")
    duration_s: Optional[float] = None
    byte_limit: Optional[int] = amount
    if time_based:
        if runtime_s is None:
            tb = j.get("time_based")
            assert tb is not None
            raise tb.error(f"{who}: time_based needs runtime= (fio would run until stopped)")
        duration_s, byte_limit = runtime_s, None
    elif runtime_s is not None:
        duration_s = runtime_s
    nios_opt = j.get("number_ios")
    io_limit = parse_int(nios_opt, 1, MAX_NUMBER_IOS) if nios_opt is not None else None
    if byte_limit == span and duration_s is None and io_limit is None:
        byte_limit = None  # the core's own rule: no limit at all is one pass over the span
    planned_bytes: Optional[int] = None
    work_option: Optional[RawOption] = None
    if duration_s is None:  # bounded by bytes or IOs only: what it moves, for plan's work bound
        planned_bytes = byte_limit if byte_limit is not None else span
        work_option = loops_opt if loops > 1 else (io_opt or size_opt or filesize_opt)
        if io_limit is not None and io_limit * sizes.largest < planned_bytes:
            planned_bytes, work_option = io_limit * sizes.largest, nios_opt

    # host think time and rate
    think_us = 0.0
    tt = j.get("thinktime")
    if tt is not None:
        think_us = float(parse_time_us(tt, 1))
        if think_us > MAX_OP_US:
            raise tt.error(f"thinktime={shown(tt.value or '')}: {think_us:g} us is more than the simulator's longest host "
                           f"think time, {MAX_OP_US:g} us (one second)")
        tb = j.get("thinktime_blocks")
        if tb is not None and parse_int(tb) != 1:
            raise tb.error(f"thinktime_blocks={shown(tb.value or '')}: only 1 (fio's default) is supported by the "
                           f"simulator")
        if think_us > 0 and depth > 1:
            plan_notes.append(f"{who}: thinktime after every block caps the queue depth at 1, as in fio (thinktime_blocks=1)")
            depth = 1
    rate_iops: Optional[float] = None
    ri, rb = j.get("rate_iops"), j.get("rate")
    if ri is not None and rb is not None:
        raise rb.error("rate and rate_iops are mutually exclusive (as in fio)")
    rate_per_dir: List[Optional[float]] = [None, None, None]
    for o in (ri, rb):
        if o is None:
            continue

        def iops(text: str, o: RawOption = o) -> float:
            fake = RawOption(o.name, text, o.where)
            n = parse_int(fake, 1, MAX_RATE_IOPS) if o is ri else parse_size(fake, j.kb_base)
            assert isinstance(n, int)
            r = float(n) if o is ri else n / sizes.mean
            if r < 1:
                raise o.error(f"{o.name}={shown(o.value or '')}: below one {format_size(bs)} request per second; the simulator's "
                              f"lowest rate is 1 IOPS")
            return r

        if core_rw == "mixed":
            # fio caps each direction on its own: rate=r,w (one value: the same cap for each).
            values = _split_dirs(o)
            for d in dirs:
                text = values[_DIR_INDEX[d]]
                if text is not None and text.strip() not in ("", "0"):
                    rate_per_dir[_DIR_INDEX[d]] = iops(text)
            continue
        text = _per_dir_value(o, dirs[-1] if core_rw == "trim-write" else dirs)
        if text is None:
            continue
        rate_iops = iops(text)
        if o is rb and sizes.largest != sizes.bs:
            plan_notes.append(f"{who}: rate= in bytes becomes {rate_iops:,.1f} IOPS at the size mix's mean request "
                              f"of {sizes.mean:,.0f} bytes")
    rp = j.get("rate_process")
    if rp is not None and (rp.value or "").strip() != "linear":
        raise rp.error(f"rate_process={rp.value}: only 'linear' is supported by the simulator")

    # data content
    compressibility = 1.0
    bcp = j.get("buffer_compress_percentage")
    if _is_set(j, "zero_buffers"):
        compressibility = MOST_COMPRESSIBLE
        plan_notes.append(f"{who}: zero_buffers: all-zero data, compressibility {MOST_COMPRESSIBLE} (SF-2281's measured NAND/host for fully compressible data)")
    elif bcp is not None:
        pct = parse_int(bcp, 0, 100)
        compressibility = max(1.0 - pct / 100.0, MOST_COMPRESSIBLE)
    if compressibility < 1.0 and "w" not in dirs:
        compressibility = 1.0

    # randomness
    seed: Optional[int] = None
    rs = j.get("randseed")
    if rs is not None:
        seed = parse_int(rs, 0, 2**64 - 1)
    rr = j.get("randrepeat")
    if rr is not None and not parse_bool(rr) and rs is None:
        plan_notes.append(f"{who}: randrepeat=0: simulated runs stay repeatable; pass another --seed for other offsets")
    random_map: Optional[bool] = None
    nrm = j.get("norandommap")
    if pattern == "random":
        random_map = not _is_set(j, "norandommap")
        if random_map:
            requirements.append(Requirement(
                "random_map", rw_opt if rw_opt is not None else RawOption("rw", fio_rw, job.where),
                f"{who}: fio's random map (each block once per pass, the default for rw={fio_rw}) needs a "
                f"newer ssdlab core; add norandommap=1 to draw offsets with replacement",
            ))
    elif nrm is not None:
        random_map = None

    # steady state
    ss_dur_opt = j.get("steadystate_duration")
    steady: Optional[Dict[str, Any]] = None
    steady_text: Optional[str] = None
    if ss_dur_opt is not None and parse_time_us(ss_dur_opt, 1_000_000) > 0:
        ss_opt = j.get("steadystate")
        text = (ss_opt.value or "").strip() if ss_opt is not None else "iops_slope:0.01%"
        where = ss_opt if ss_opt is not None else ss_dur_opt
        if ":" not in text:
            raise where.error(f"steadystate={text}: expected CRITERION:LIMIT, e.g. iops:10% or bw_slope:1%")
        crit, limit_text = text.split(":", 1)
        crit = crit.strip()
        mapping = {"iops": ("iops", "deviation"), "iops_slope": ("iops", "slope"),
                   "bw": ("bw", "deviation"), "bw_slope": ("bw", "slope")}
        if crit not in mapping:
            raise where.error(f"steadystate={text}: criterion '{crit}' is not supported by the simulator (use iops, iops_slope, bw or bw_slope)")
        percent = limit_text.strip().endswith("%")
        fake = RawOption(where.name, limit_text.strip().rstrip("%"), where.where)
        limit = parse_float(fake)
        if not (limit >= 0 and math.isfinite(limit)):
            raise where.error(f"steadystate={text}: the limit must be zero or more")
        window_s = _seconds(ss_dur_opt, who)
        ramp_opt = j.get("steadystate_ramp_time")
        ramp_s = _seconds(ramp_opt, who) if ramp_opt is not None else 0.0
        iv = j.get("steadystate_check_interval")
        if iv is not None and parse_time_us(iv, 1_000_000) != 1_000_000:
            raise iv.error(f"ss_interval={iv.value}: only the default 1s check interval is supported by the simulator")
        metric, criterion = mapping[crit]
        steady = {"metric": metric, "criterion": criterion, "limit": limit, "percent": percent,
                  "window_s": window_s, "ramp_s": ramp_s}
        steady_text = f"{crit}:{limit:f}{'%' if percent else ''}"
        requirements.append(Requirement(
            "steady_state", where,
            f"{who}: steady-state detection (ss=, ss_dur=) needs a newer ssdlab core; remove ss_dur to run the job in full",
        ))
        if duration_s is None and byte_limit is not None and byte_limit <= span:
            plan_notes.append(f"{who}: steady-state detection without time_based/runtime or loops may end with the region before steady state (as in fio)")

    if core_rw == "trim-write":
        requirements.append(Requirement(
            "trim-write", rw_opt if rw_opt is not None else RawOption("rw", fio_rw, job.where),
            f"{who}: rw={fio_rw} needs a newer ssdlab core (Workload rw 'trim-write')",
        ))

    # logs
    logs: List[LogSpec] = []
    for kind, key in (("iops", "write_iops_log"), ("bw", "write_bw_log"), ("lat", "write_lat_log")):
        o = j.get(key)
        if o is not None:
            prefix = (o.value or "").strip() or name
            logs.append(LogSpec(kind, prefix))
    lam = j.get("log_avg_msec")
    log_msec = parse_int(lam, 0, MAX_LOG_MSEC) if lam is not None else 0
    if log_msec == 0:
        if logs:
            plan_notes.append(
                f"{who}: the simulator cannot log every IO; logs hold {DEFAULT_LOG_MSEC} ms averages "
                f"(set log_avg_msec to choose the window)"
            )
        log_msec = DEFAULT_LOG_MSEC
    if duration_s is not None:
        assert runtime_opt is not None
        _check_intervals(runtime_opt, who, duration_s, log_msec)
    lwv = j.get("log_window_value")
    if lwv is not None and (lwv.value or "").strip() not in ("avg", "0"):
        raise lwv.error(f"{lwv.name}={lwv.value}: only 'avg' windows are supported by the simulator")
    log_offset = _bool(j, "log_offset", False)
    log_prio = _bool(j, "log_prio", False)
    per_job_logs = _bool(j, "per_job_logs", True)

    # reporting
    percentiles = DEFAULT_PERCENTILES
    pl = j.get("percentile_list")
    if pl is not None:
        wanted = tuple(parse_float(pl, value=x) for x in (pl.value or "").split(":") if x.strip())
        known = set(DEFAULT_PERCENTILES) | {100.0}
        bad = [p for p in wanted if p not in known]
        if bad or not wanted:
            raise pl.error(f"percentile_list={pl.value}: the simulator reports only fio's default percentiles ({':'.join(f'{p:g}' for p in DEFAULT_PERCENTILES)}) and 100")
        percentiles = wanted
    lat_pct = _bool(j, "lat_percentiles", False)
    clat_pct = _bool(j, "clat_percentiles", not lat_pct)
    urr = j.get("unified_rw_reporting")
    if urr is not None and (urr.value or "").strip() not in ("none", "0"):
        raise urr.error(f"unified_rw_reporting={urr.value}: only 'none' is supported by the simulator")

    desc = j.get("description")
    interval_ms = float(log_msec)
    workload: Dict[str, Any] = {
        "label": name,
        "rw": core_rw,
        "pattern": pattern,
        "read_fraction": read_fraction,
        "block_bytes": bs,
        "queue_depth": depth,
        "offset_bytes": offset,
        "span_bytes": span,
        "duration_s": duration_s,
        "io_limit": io_limit,
        "byte_limit": byte_limit,
        "think_time_us": think_us,
        "rate_iops": rate_iops,
        "compressibility": compressibility,
        "interval_ms": interval_ms,
        "seed": seed,
    }
    workload.update(sizes.fields)
    if any(r is not None for r in rate_per_dir):
        workload["rate_iops_per_direction"] = rate_per_dir
    if rd is not None:
        dist = _random_distribution(j, rd, span)
        if dist["kind"] != "uniform":
            if pattern != "random":
                plan_notes.append(f"{who}: random_distribution applies to random offsets; rw={fio_rw} is sequential "
                                  f"(as in fio, it has no effect)")
            else:
                workload["distribution"] = dist
                if random_map:
                    random_map = False
                    requirements[:] = [r for r in requirements if r.feature != "random_map"]
                    plan_notes.append(f"{who}: random_distribution={rd.value} draws offsets with replacement "
                                      f"(fio's random map would stop a skewed distribution from repeating blocks)")
    if sizes.fields and pattern == "random" and random_map:
        random_map = False
        requirements[:] = [r for r in requirements if r.feature != "random_map"]
        plan_notes.append(f"{who}: a size mix draws random offsets with replacement (as with norandommap)")
    if random_map is not None:
        workload["random_map"] = random_map
    if steady is not None:
        workload["steady_state"] = steady

    steps: List[Dict[str, Any]] = []
    sd = j.get("startdelay")
    if sd is not None:
        if sd.value and any(c in sd.value for c in "-:"):
            raise sd.error(f"startdelay={sd.value}: ranges are not supported by the simulator")
        delay = _seconds(sd, who)
        if delay > 0:
            steps.append({"step": "idle", "seconds": delay})
    rt = j.get("ramp_time")
    if rt is not None:
        ramp = _seconds(rt, who)
        _check_intervals(rt, who, ramp, log_msec)
        if ramp > 0:
            warm = dict(workload, label=f"{name} (ramp)", duration_s=ramp, byte_limit=None, io_limit=None)
            warm.pop("steady_state", None)
            steps.append({"step": "run", "workload": warm})
            plan_notes.append(f"{who}: ramp_time runs as its own unreported phase; a sequential job restarts at its first block after it")
    steps.append({"step": "run", "workload": workload})

    return JobPlan(
        job=job, name=name, index=job.index, groupid=groupid,
        description=desc.value if desc is not None else None,
        fio_rw=fio_rw, directions=dirs, block_bytes=bs, largest_block=sizes.largest, iodepth=depth,
        workload=workload, steps=steps, logs=logs, log_msec=log_msec, log_offset=log_offset,
        log_prio=log_prio, per_job_logs=per_job_logs, percentiles=percentiles,
        clat_percentiles=clat_pct, lat_percentiles=lat_pct,
        steady_state=steady, steady_state_text=steady_text, requirements=requirements,
        notes=plan_notes, planned_bytes=planned_bytes, work_option=work_option,
    )


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
        for h in _check_known(job):
            if h not in host_used:
                host_used.append(h)
        j = _Job(job)
        stonewall = i == 0 or _is_set(j, "stonewall")
        if i > 0:
            if _is_set(j, "stonewall") or _is_set(j, "new_group"):
                groupid += 1
            if not stonewall and sequential_jobs:
                notes.append(f"job '{job.name}' runs after '{jobs[i - 1].name}', not at the same time as fio would "
                             f"(--sequential-jobs)")
                stonewall = True
        nj = j.get("numjobs")
        clones = parse_int(nj, 1, 4096) if nj is not None else 1
        first = _job_plan(j, user_bytes, groupid, notes)
        _check_values(j)
        if first.planned_bytes is not None and j.get("read_iolog") is None:
            planned += first.planned_bytes * clones
            if planned > WORK_CAPACITIES * user_bytes:
                _refuse_work(first, clones, planned, user_bytes, j.get("numjobs"))
        log = j.get("read_iolog")
        if log is not None:
            if clones > 1 or not stonewall or (i + 1 < len(jobs) and not _is_set(_Job(jobs[i + 1]), "stonewall")
                                                and not sequential_jobs):
                raise log.error(f"read_iolog={log.value}: an iolog job must run alone (numjobs=1, and stonewall "
                                f"before the next job); the simulator does not replay a log alongside other jobs")
            text = (log.value or "").strip()
            if not text:
                raise log.error("read_iolog needs a file name")
            first.iolog = text if os.path.isabs(text) else os.path.join(os.path.dirname(str(jobfile.path)), text)
            first.iolog_no_stall = _bool(j, "replay_no_stall", False)
            how = (f"as fast as possible at iodepth {first.iodepth}" if first.iolog_no_stall
                   else "at its recorded times, open loop")
            first.notes.append(f"job '{job.name}': replays {text} ({how}); rw, bs and size do not apply")
        first.group_reporting = _is_set(j, "group_reporting")
        _check_job_count(job, j.get("numjobs"), clones, len(plans) + clones,
                         clones + (len(together[-1]) if together and not stonewall else 0))
        members = [first]
        for c in range(1, clones):
            clone = copy.deepcopy(first)
            clone.clone = c
            if clone.workload.get("seed") is not None:
                clone.workload["seed"] = (clone.workload["seed"] + c) % 2**64
            clone.steps = [dict(st, workload=clone.workload) if st.get("workload") is first.workload else
                           copy.deepcopy(st) for st in first.steps]
            members.append(clone)
        if (not stonewall or clones > 1) and any(len(m.steps) > 1 for m in members):
            raise SsdlabError(f"{job.where}: job '{job.name}' runs at the same time as other jobs (no stonewall, or "
                              f"numjobs); startdelay and ramp_time are not supported for jobs that run together -- "
                              f"remove them, or add 'stonewall'")
        if not stonewall and together and any(len(plans[k].steps) > 1 for k in together[-1]):
            raise SsdlabError(f"{job.where}: job '{job.name}' would run at the same time as '{jobs[i - 1].name}', "
                              f"which has startdelay or ramp_time; not supported for jobs that run together")
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
    if host_used:
        notes.append("accepted, no effect on the simulated drive: " + ", ".join(host_used))
    return FioPlan(jobfile.path, user_bytes, plans, notes, options_dict(jobfile.global_options), together)
