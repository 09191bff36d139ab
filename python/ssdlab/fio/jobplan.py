"""One fio job -> its `JobPlan`: the Workload of its measured phase (crates/ssdlab/src/workload.rs),
the steps before it (``startdelay``, ``ramp_time``), the core features it needs, and what the
output writers need (name, group, logs, percentiles, notes). `planner` makes a job file's plan of
these; where the requests go and how large they are is `access`'s.

How fio's notions map onto a workload:

========================  =====================================================================
fio                       ssdlab
========================  =====================================================================
rw                        rw read/write/trim/mixed/trim-write + pattern sequential/random
rwmixread / rwmixwrite    read_fraction (the last one written wins, as in fio)
bs                        block_bytes (one size; per-direction sizes must agree)
bssplit / bsrange         block_sizes / block_range (block_bytes is the smallest size)
iodepth                   queue_depth (1 for synchronous engines such as the default psync)
offset / size / filesize  offset_bytes / span_bytes (the region; % of the drive allowed)
io_size, size, loops      byte_limit = (io_size or size or region) x loops
runtime, time_based       duration_s (time_based drops the byte limit)
number_ios                io_limit
thinktime                 think_time_us (fio's thinktime_blocks=1 caps the depth at 1)
rate_iops / rate          rate_iops (one-direction jobs)
rate / rate_iops r,w,t    rate_iops_per_direction (mixed jobs)
buffer_compress_percentage, zero_buffers, refill_buffers    compressibility
randseed                  seed (otherwise derived from --seed and the step index)
norandommap               random_map = false (fio's default random map: true)
random_distribution       distribution (zipf, pareto, normal, zoned, zoned_abs; random offsets)
ss / ss_dur / ss_ramp     steady_state {metric, criterion, limit, percent, window_s, ramp_s}
startdelay                start_delay_s (each job starts at its own time; from fio's start,
                          see ``simrun``). A range LOW-HIGH is drawn as fio draws it
                          (``ssdlab.fio.startdelay``)
ramp_time                 ramp_s (the ramp's requests are left out of the job's figures as fio
                          leaves them out, and count towards its size); a job alone with a
                          latency target or verify: an unreported run step before it
log_avg_msec              interval_ms (1000 when unset: the simulator cannot log every IO)
========================  =====================================================================
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ssdlab import _core
from ssdlab.limits import MAX_INTERVALS, MAX_SCHEDULED_SECONDS, MIN_RATE_IOPS
from ssdlab.sizes import MAX_SIZE, format_size
from ssdlab.fio import options as opts
from ssdlab.fio.access import random_distribution, region, request_sizes, rw_mode
from ssdlab.fio.jobfile import JobDef, RawOption, parse_bool, parse_float, parse_int, parse_size, parse_time_us, shown
from ssdlab.fio.jobopts import DIR_INDEX, JobOptions, bool_option, is_set, split_dirs
from ssdlab.fio.validate import MAX_LOG_MSEC, MAX_NUMBER_IOS, MAX_RATE_IOPS
from ssdlab.fio import semantics as fio_semantics
from ssdlab.fio import startdelay as start_delay
from ssdlab.fio import verify as fio_verify

# fio's default percentile list (stat.c); the core reports exactly these.
DEFAULT_PERCENTILES: Tuple[float, ...] = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99,
)
# Data that compresses completely (zeros) still costs some flash: SandForce SF-2281 drives wrote
# 0.14 bytes of NAND per host byte of 100%-compressible data (review-data.md, section 3).
MOST_COMPRESSIBLE = 0.14
DEFAULT_LOG_MSEC = 1000
RAMP_APART = ("latency_target", "verify")
"""Workload settings with which a job alone runs its ramp as its own phase (`set_start`): fio
searches from depth 1 again after the ramp, and reads back what the ramp wrote."""
MAX_OP_US = float(json.loads(_core.limits())["max_op_us"])
"""The core's longest host think time, in microseconds (one second)."""


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
    semantics: Optional[fio_semantics.Semantics] = None  # rate process and floor, latency target, flow, exit...
    work_option: Optional[RawOption] = None  # the option that sets planned_bytes, for the refusal
    start_delay_us: Tuple[int, int] = (0, 0)  # startdelay's low and high ends (fio draws between them)
    start_delay_s: float = 0.0  # the delay drawn for this job (`set_start`)
    ramp_s: float = 0.0  # ramp_time
    warm: Optional[Dict[str, Any]] = None  # its ramp as an unreported workload (a job alone with RAMP_APART)


def set_start(p: JobPlan, thread_number: int, together: bool) -> None:
    """The job's start delay drawn as fio draws it for its `thread_number` (1-based: its place
    among the file's jobs, numjobs clones included), and its steps: one run whose workload starts
    and ramps on its own (the core's ``start_delay_s``, ``ramp_s``: the ramp's requests are left
    out of the job's figures and count towards its size, and a sequential job goes on where its
    ramp ended, as in fio). A job alone whose ramp meets a latency target or verify (which the
    core's ramp does not model) runs its ramp as its own unreported phase first, the delay on
    it. The delay counts from the start of the job's group here; `ssdlab.fio.simrun` counts it
    from the first group's start, as fio does, for the groups after the first."""
    low, high = p.start_delay_us
    delay_us = low
    if high > low:
        j = JobOptions(p.job)
        seed = j.get("randseed")
        gen = j.get("random_generator")
        delay_us = start_delay.draw_us(
            low, high, thread_number,
            randseed=parse_int(seed, 0) if seed is not None else None,
            allrandrepeat=bool_option(j, "allrandrepeat", False),
            use64=gen is not None and (gen.value or "").strip() == "tausworthe64")
    p.start_delay_s = delay_us / 1e6
    w = p.workload
    w.pop("start_delay_s", None)
    w.pop("ramp_s", None)
    if p.warm is not None and not together and any(w.get(k) is not None for k in RAMP_APART):
        warm = dict(p.warm)
        warm.pop("start_delay_s", None)
        if p.start_delay_s > 0:
            warm["start_delay_s"] = p.start_delay_s
        note = (f"job '{p.name}': ramp_time with {' and '.join(k for k in RAMP_APART if w.get(k) is not None)} runs "
                f"as its own unreported phase; a sequential job restarts at its first block after it")
        if note not in p.notes:
            p.notes.append(note)
        p.steps = [{"step": "run", "workload": warm}, {"step": "run", "workload": w}]
        return
    if p.start_delay_s > 0:
        w["start_delay_s"] = p.start_delay_s
    if p.ramp_s > 0:
        w["ramp_s"] = p.ramp_s
        note = (f"job '{p.name}': ramp_time: its first {p.ramp_s:g} s of requests are left out of its figures, "
                f"as fio leaves them out; they count towards its size")
        if note not in p.notes:
            p.notes.append(note)
    p.steps = [{"step": "run", "workload": w}]


def _engine(j: JobOptions) -> str:
    o = j.get("ioengine")
    name = (o.value or "").strip() if o is not None else opts.DEFAULT_ENGINE
    if o is not None and name not in opts.BLOCK_ENGINES:
        raise o.error(f"ioengine={name}: not a block-IO engine the simulator can stand in for")
    return name


def _per_dir_value(o: RawOption, dirs: str) -> Optional[str]:
    values = split_dirs(o)
    used = {values[DIR_INDEX[d]] for d in dirs}
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


def _start_delay(o: RawOption, who: str) -> Tuple[int, int]:
    """startdelay's low and high ends in microseconds, split as fio splits them (one value is
    both ends)."""
    low_text, high_text = start_delay.split_range((o.value or "").strip())
    low, high = (parse_time_us(o, 1_000_000, part) for part in (low_text, high_text))
    for v in (low, high):
        if v / 1e6 > MAX_SCHEDULED_SECONDS:
            raise o.error(f"{who}: {o.name}={shown(o.value or '')} is {v / 1e6:g} s, more than the "
                          f"{MAX_SCHEDULED_SECONDS:g} s a simulated drive can be scheduled for")
    if high < low:
        raise o.error(f"{who}: {o.name}={shown(o.value or '')}: the range's high end is below its low end (fio "
                      f"would draw from a wrapped-around range)")
    return low, high


def _check_intervals(o: RawOption, who: str, seconds: float, log_msec: int) -> None:
    """A timed phase records one series interval per log window: at most `MAX_INTERVALS`."""
    n = math.ceil(seconds * 1000.0 / log_msec)
    if n > MAX_INTERVALS:
        raise o.error(f"{who}: {o.name}={shown(o.value or '')} at log_avg_msec={log_msec} is {n} series intervals, more "
                      f"than the {MAX_INTERVALS} one phase may record; shorten it or raise log_avg_msec")


def job_plan(j: JobOptions, user_bytes: int, groupid: int, notes: List[str], clone: int = 0) -> JobPlan:
    """Job `j` on a drive of `user_bytes` as a `JobPlan` of group `groupid`; notes about the whole
    file (each once) go to `notes`, the job's own to the plan's. `clone`: which of the numjobs
    clones (its region moves with offset_increment)."""
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
    fio_rw, core_rw, pattern, dirs = rw_mode(j)
    rd = j.get("random_distribution")

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

    sizes = request_sizes(j, dirs)
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
    offset, span, size_val = region(j, user_bytes, sizes, who, plan_notes, clone)
    size_opt, filesize_opt = j.get("size"), j.get("filesize")

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
    time_based = is_set(j, "time_based")
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

        def iops(text: str, o: RawOption = o, mean: float = sizes.mean) -> float:
            fake = RawOption(o.name, text, o.where)
            n = parse_int(fake, 1, MAX_RATE_IOPS) if o is ri else parse_size(fake, j.kb_base)
            assert isinstance(n, int)
            # fio (init.c __setup_rate, backend.c usec_for_io): rate= is bytes per second, the
            # k-th request due when the bytes before it are: rate / bs IOPS at one size, rate /
            # the mean size in the long run of a mix; rate_iops= spaces the requests 10^6/iops us.
            r = float(n) if o is ri else n / mean
            if r < MIN_RATE_IOPS:
                raise o.error(f"{o.name}={shown(o.value or '')}: {r:.3g} {format_size(bs)} requests per second; the "
                              f"simulator's lowest rate is {MIN_RATE_IOPS:g} IOPS (one request every 11.6 days)")
            return r

        if core_rw == "mixed":
            # fio caps each direction on its own: rate=r,w (one value: the same cap for each).
            values = split_dirs(o)
            for d in dirs:
                text = values[DIR_INDEX[d]]
                if text is not None and text.strip() not in ("", "0"):
                    rate_per_dir[DIR_INDEX[d]] = iops(text, mean=(sizes.dir_mean or {}).get(d, sizes.mean))
            continue
        text = _per_dir_value(o, dirs[-1] if core_rw == "trim-write" else dirs)
        if text is None:
            continue
        rate_iops = iops(text)
        if o is rb and sizes.largest != sizes.bs:
            plan_notes.append(f"{who}: rate= in bytes becomes {rate_iops:,.1f} IOPS at the size mix's mean request "
                              f"of {sizes.mean:,.0f} bytes")
    # rate_process, rate_min, latency_target, flow, offset modifiers, blockalign, exitall: `semantics`

    # data content
    compressibility = 1.0
    bcp = j.get("buffer_compress_percentage")
    if is_set(j, "zero_buffers"):
        compressibility = MOST_COMPRESSIBLE
        plan_notes.append(f"{who}: zero_buffers: all-zero data, compressibility {MOST_COMPRESSIBLE} (SF-2281's measured NAND/host for fully compressible data)")
    elif bcp is not None:
        pct = parse_int(bcp, 0, 100)
        compressibility = max(1.0 - pct / 100.0, MOST_COMPRESSIBLE)
        mix = sizes.fields.get("block_sizes") or (sizes.fields.get("direction_block_sizes") or [[], []])[1]
        writes = ([(int(m["bytes"]), float(m["pct"])) for m in mix] if mix else
                  [(int(n), 0.5) for n in sizes.fields["block_range"]] if "block_range" in sizes.fields else
                  [(bs, 1.0)])
        chunked = fio_semantics.compressibility(j, pct, writes)  # buffer_compress_chunk spanning units
        if chunked is not None:
            compressibility = chunked
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
        random_map = not is_set(j, "norandommap")
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
    log_offset = bool_option(j, "log_offset", False)
    log_prio = bool_option(j, "log_prio", False)
    per_job_logs = bool_option(j, "per_job_logs", True)

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
    lat_pct = bool_option(j, "lat_percentiles", False)
    clat_pct = bool_option(j, "clat_percentiles", not lat_pct)
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
        dist = random_distribution(j, rd, span)
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
    vspec = fio_verify.spec(j, name=name, core_rw=core_rw, pattern_kind=pattern, dirs=dirs, sizes=sizes, span=span,
                            loops=loops, time_based=time_based, random_map=random_map, notes=plan_notes)
    if vspec is not None:
        workload["verify"] = vspec
        requirements.append(Requirement("verify", j.get("verify") or j.get("verify_pattern") or RawOption(
            "verify", "", job.where), f"{who}: verify needs a newer ssdlab core (its content store)"))
        if planned_bytes is not None and vspec["writes"] and vspec["do_verify"]:
            planned_bytes *= 2  # every block written is read back

    sem = fio_semantics.plan(j, who=who, fio_rw=fio_rw, core_rw=core_rw, pattern=pattern, dirs=dirs, bs=bs,
                             span=span, depth=depth, rate_iops=rate_iops, rate_per_dir=rate_per_dir,
                             time_based=time_based)
    workload.update(sem.fields)
    plan_notes.extend(sem.notes)
    if sem.random_map_off and workload.get("random_map"):
        workload["random_map"] = False
        requirements[:] = [r for r in requirements if r.feature != "random_map"]
        plan_notes.append(f"{who}: blockalign turns fio's random map off (fio: 'Any use of blockalign= turns off "
                          f"randommap'): offsets are drawn with replacement")

    sd = j.get("startdelay")
    delay_us = (0, 0)
    if sd is not None:
        delay_us = _start_delay(sd, who)
    rt = j.get("ramp_time")
    ramp, warm = 0.0, None
    if rt is not None:
        ramp = _seconds(rt, who)
        _check_intervals(rt, who, ramp, log_msec)
        if ramp > 0:
            warm = dict(workload, label=f"{name} (ramp)", duration_s=ramp, byte_limit=None, io_limit=None)
            warm.pop("steady_state", None)
            for key in ("rate_min", "latency_target", "exit"):  # fio checks neither during ramp_time
                warm.pop(key, None)
            if "latency_target" in workload:
                warm["queue_depth"] = 1  # the search's depth while fio ramps (lat_target_init)
    steps: List[Dict[str, Any]] = []  # set_start makes them, once the job's place is known

    return JobPlan(
        job=job, name=name, index=job.index, groupid=groupid,
        description=desc.value if desc is not None else None,
        fio_rw=fio_rw, directions=dirs, block_bytes=bs, largest_block=sizes.largest, iodepth=depth,
        workload=workload, steps=steps, logs=logs, log_msec=log_msec, log_offset=log_offset,
        log_prio=log_prio, per_job_logs=per_job_logs, percentiles=percentiles,
        clat_percentiles=clat_pct, lat_percentiles=lat_pct,
        steady_state=steady, steady_state_text=steady_text, requirements=requirements,
        notes=plan_notes, planned_bytes=planned_bytes, work_option=work_option, semantics=sem,
        start_delay_us=delay_us, ramp_s=ramp, warm=warm,
    )
