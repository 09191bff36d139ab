"""fio's job semantics beyond ``rw``/``bs``/``size`` that a block device would honour, read the way
fio 3.33 reads them and turned into the core's workload fields (crates/ssdlab/src/workload/:
arrivals.rs, min_rate.rs, latency_target.rs, flow.rs, sequencer.rs, control.rs):

==========================================  ======================================================
fio (3.33 source)                           simulated as
==========================================  ======================================================
rate_process=poisson (backend.c             ``rate_process``: the k-th request of a direction due
usec_for_io)                                at the sum of k exponential gaps of ⌊10⁶/iops⌋ µs, iops
                                            = rate_bps / min_bs as fio computes it
rate_min/ratemin, rate_iops_min,            ``rate_min``: fio's ``__check_min_rate`` -- the job
rate_cycle/ratecycle (backend.c)            fails with EIO (err=5, check_min_rate) below a floor
latency_target, latency_window,             ``latency_target``: fio's search for the deepest queue
latency_percentile, latency_run (io_u.c)    (lat_target_*); reported as ``latency_depth``
flow, flow_id, flow_sleep (flow.c)          ``flow``: jobs of a flow keep their counts in the
                                            ratio of their weights
rw=...:N, rw_sequencer (options.c           ``sequencer``: offsets as fio's get_next_seq_offset;
str_rw_cb, io_u.c)                          a pass that runs out ends the job
blockalign/ba (io_u.c last_block,           ``block_align_bytes`` for random offsets (no random
init.c fixup_options)                       map, as fio)
exitall, exit_what, exitall_on_error        ``exit``: jobs end jobs (`planner` sets them, since
(backend.c, libfio.c)                       exitall is global)
continue_on_error, ignore_error             which simulated errors a job goes on after: the
(td_error.c, options.c)                     latency target's ETIMEDOUT at depth 1
io_submit_mode=offload (rate-submit.c)      the same request stream (no effect; noted)
buffer_compress_chunk (io_u.c               the compressibility each 4 KiB unit sees when a
fill_io_buffer, lib/rand.c)                 chunk spans more than one unit
dedupe_* (io_u.c)                           no effect: the drive keeps no content index (noted)
==========================================  ======================================================

`plan` reads a job's options and returns the fields, notes and what the report needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ssdlab.fio.jobfile import RawOption, parse_bool, parse_float, parse_int, parse_size, parse_time_us, shown
from ssdlab.fio.jobopts import DIR_INDEX, JobOptions, is_set, split_dirs

SECTOR = 512
UNIT = 4096
MOST_COMPRESSIBLE = 0.14  # jobplan.MOST_COMPRESSIBLE: SF-2281's NAND/host for all-zero data
ETIMEDOUT = 110

# fio's error types (td_error.h) and continue_on_error's values (options.c).
ERROR_READ, ERROR_WRITE, ERROR_VERIFY = 1, 2, 4
_CONTINUE = {"none": 0, "0": 0, "read": ERROR_READ, "write": ERROR_WRITE, "io": ERROR_READ | ERROR_WRITE,
             "verify": ERROR_VERIFY, "all": 0xFFFF, "1": 0xFFFF}
# options.c str2error: the names fio knows, errno = index + 1 (ETIMEDOUT is not among them).
_ERRNO_NAMES = ("EPERM ENOENT ESRCH EINTR EIO ENXIO E2BIG ENOEXEC EBADF ECHILD EAGAIN ENOMEM EACCES EFAULT "
                "ENOTBLK EBUSY EEXIST EXDEV ENODEV ENOTDIR EISDIR EINVAL ENFILE EMFILE ENOTTY ETXTBSY EFBIG "
                "ENOSPC ESPIPE EROFS EMLINK EPIPE EDOM ERANGE").split()
# td_error.c: the errors a type continues on when ignore_error lists none for it.
_NON_FATAL = (5, 84)  # EIO, EILSEQ


@dataclass
class Semantics:
    """What `plan` read from one job."""

    fields: Dict[str, Any] = field(default_factory=dict)  # workload fields
    notes: List[str] = field(default_factory=list)
    random_map_off: bool = False  # blockalign turns fio's random map off
    continue_on_error: int = 0  # fio's bitmask: the report then has total_err and first_error
    latency: Optional[Tuple[int, int, float]] = None  # (target ns, window us, percentile) for the report
    exitall: bool = False  # the job sets exitall (global in fio: `planner` gives it to every job)
    exit_what: str = "group"
    exitall_on_error: bool = False
    flow_id: Optional[int] = None  # the flow the job takes part in (weight > 0)


def _atoi(text: str) -> int:
    """C's atoi: blanks, a sign, the digits up to the first other character; 0 when none."""
    t = text.lstrip(" \t\n\v\f\r")
    sign = 1
    if t[:1] in "+-" and t:
        sign = -1 if t[0] == "-" else 1
        t = t[1:]
    digits = ""
    for ch in t:
        if "0" <= ch <= "9":
            digits += ch
        else:
            break
    return sign * int(digits) if digits else 0


def _dir_values(o: RawOption) -> List[Optional[str]]:
    return split_dirs(o)


def _rates(j: JobOptions, name: str, dirs: str, size: bool) -> Optional[List[int]]:
    """A per-direction rate option (``rate_min=r,w,t``) as whole numbers, 0 for a direction not set."""
    o = j.get(name)
    if o is None:
        return None
    out = [0, 0, 0]
    for d, text in zip("rwt", _dir_values(o)):
        if text is None or text.strip() == "":
            continue
        fake = RawOption(o.name, text, o.where)
        v = parse_size(fake, j.kb_base) if size else parse_int(fake, 0, 2**32 - 1)
        assert isinstance(v, int)
        out[DIR_INDEX[d]] = v
    return out


def _continue_on_error(j: JobOptions) -> Tuple[int, List[Optional[List[int]]]]:
    """fio's ``continue_on_error`` bitmask and ``ignore_error`` lists (read, write, verify), read in
    the order the options are written (an ``ignore_error`` list also sets its type's bit; a later
    ``continue_on_error`` sets the whole mask)."""
    mask = 0
    lists: List[Optional[List[int]]] = [None, None, None]
    for o in j.job.global_options + j.job.own_options:
        if o.key == "continue_on_error":
            v = (o.value or "").strip()
            if v not in _CONTINUE:
                raise o.error(f"continue_on_error={shown(v)}: one of {', '.join(_CONTINUE)}")
            mask = _CONTINUE[v]
        elif o.key == "ignore_error":
            parts = (o.value or "").strip().split(",")
            if len(parts) > 3:
                raise o.error(f"ignore_error={shown(o.value or '')}: at most three lists (read,write,verify)")
            for t, part in enumerate(parts):
                errs: List[int] = []
                for name in part.split(":"):
                    if not name:
                        break  # fio stops at an empty entry
                    if name.startswith("E"):
                        n = _ERRNO_NAMES.index(name) + 1 if name in _ERRNO_NAMES else 0
                    else:
                        n = abs(_atoi(name))
                    if not n:
                        raise o.error(f"ignore_error: unknown error {shown(name)}; fio names only {_ERRNO_NAMES[0]}.."
                                      f"{_ERRNO_NAMES[-1]} -- give the number (ETIMEDOUT is 110)")
                    errs.append(n)
                if errs:
                    mask |= 1 << t
                    lists[t] = errs
    return mask, lists


def _ignores(mask: int, lists: List[Optional[List[int]]], etype: int, err: int) -> bool:
    """fio's `td_non_fatal_error`: does a job go on after error `err` of type bit `etype`?"""
    if not mask & (1 << etype):
        return False
    errs = lists[etype] if lists[etype] is not None else list(_NON_FATAL)
    return err in errs


def _seconds_to_ns(o: RawOption) -> int:
    return parse_time_us(o, 1) * 1000


def compressibility(j: JobOptions, pct: int, write_sizes: List[Tuple[int, float]]) -> Optional[float]:
    """The mean compressibility a compressing drive sees per 4 KiB unit when fio fills buffers with
    ``buffer_compress_percentage=pct`` in chunks larger than a unit, or None when every unit sees
    the same mix (then ``1 − pct/100``, `jobplan`'s rule, holds).

    fio (io_u.c ``fill_io_buffer``, lib/rand.c ``__fill_random_buf_percentage``) fills a write's
    buffer in segments of min(smallest write, ``buffer_compress_chunk``): the first
    ⌊segment·(100 − pct)/100⌋ bytes random, the rest zeros. A unit's compressed size is its random
    bytes (at least `MOST_COMPRESSIBLE` of the unit, an all-zero unit's cost), so when a segment
    spans units, some are incompressible and some all zeros, and the mean is higher than
    ``1 − pct/100``. `write_sizes`: each write size and its share of the writes."""
    co = j.get("buffer_compress_chunk")
    chunk = 512
    if co is not None:
        v = parse_size(co, j.kb_base)
        assert isinstance(v, int)
        chunk = v
    smallest = min(n for n, _ in write_sizes)
    segment = min(smallest, chunk) if chunk else smallest
    if segment <= UNIT or pct in (0, 100):
        return None
    total_units = 0.0
    total_cost = 0.0
    for size, share in write_sizes:
        random_at = []  # (start, end) of random bytes in the buffer
        pos = 0
        while pos < size:
            piece = min(segment, size - pos)
            rand = piece * (100 - pct) // 100
            random_at.append((pos, pos + rand))
            pos += piece
        units = size // UNIT
        cost = 0.0
        for u in range(units):
            lo, hi = u * UNIT, (u + 1) * UNIT
            r = sum(max(0, min(hi, b) - max(lo, a)) for a, b in random_at)
            cost += max(r / UNIT, MOST_COMPRESSIBLE)
        total_units += share * units
        total_cost += share * cost
    return round(total_cost / total_units, 9) if total_units else None


def plan(j: JobOptions, *, who: str, fio_rw: str, core_rw: str, pattern: str, dirs: str, bs: int,
         span: int, depth: int, rate_iops: Optional[float], rate_per_dir: List[Optional[float]],
         time_based: bool) -> Semantics:
    """The semantics of job `j` (see the module doc). `bs` is the smallest request size, `span` the
    region's length, `depth` the queue depth simulated, the rates those `jobplan` read."""
    s = Semantics()

    # rate_process (backend.c usec_for_io): iops = rate_bps / min_bs, gaps of 10^6/iops us x -ln u.
    rp = j.get("rate_process")
    process = (rp.value or "").strip() if rp is not None else "linear"
    if process not in ("linear", "poisson"):
        assert rp is not None
        raise rp.error(f"rate_process={shown(process)}: one of linear, poisson")
    if process == "poisson":
        if rate_iops is None and all(r is None for r in rate_per_dir):
            s.notes.append(f"{who}: rate_process=poisson without rate or rate_iops has no effect (as in fio)")
        else:
            s.fields["rate_process"] = "poisson"
            rb = j.get("rate")
            if rb is not None:  # fio's poisson rate in requests: the byte rate over the smallest size
                for d in dirs:
                    text = split_dirs(rb)[DIR_INDEX[d]]
                    if text is None or text.strip() in ("", "0"):
                        continue
                    v = parse_size(RawOption(rb.name, text, rb.where), j.kb_base)
                    assert isinstance(v, int)
                    if v // bs < 1:
                        raise rb.error(f"rate={shown(rb.value or '')}: poisson arrivals need at least one {bs}-byte "
                                       f"request per second (fio divides the byte rate by the smallest size)")
                    if rate_iops is not None:
                        s.fields["rate_iops"] = float(v // bs)
                    else:
                        per = list(rate_per_dir)
                        per[DIR_INDEX[d]] = float(v // bs)
                        s.fields["rate_iops_per_direction"] = per
                        rate_per_dir = per

    # rate_min / rate_iops_min / rate_cycle (backend.c __check_min_rate; init.c fixup_options)
    ratemin = _rates(j, "rate_min", dirs, size=True)
    iopsmin = _rates(j, "rate_iops_min", dirs, size=False)
    if ratemin is not None and iopsmin is not None and any(ratemin) and any(iopsmin):
        o = j.get("rate_iops_min")
        assert o is not None
        raise o.error("rate_min and rate_iops_min are mutually exclusive (fio: 'rate and rate_iops are mutually "
                      "exclusive')")
    if (ratemin and any(ratemin)) or (iopsmin and any(iopsmin)):
        for kind, floor, cap_name in (("rate_min", ratemin, "rate"), ("rate_iops_min", iopsmin, "rate_iops")):
            cap_opt = j.get(cap_name)
            if floor is None or cap_opt is None:
                continue
            caps = _rates(j, cap_name, dirs, size=cap_name == "rate") or [0, 0, 0]
            for d in range(3):
                if caps[d] and caps[d] < floor[d]:
                    o = j.get(kind)
                    assert o is not None
                    raise o.error(f"{kind}={shown(o.value or '')}: fio refuses a floor above the cap "
                                  f"({cap_name}); 'minimum rate exceeds rate, ddir {d}'")
        cycle = 1000
        co = j.get("rate_cycle")
        if co is not None:
            cycle = parse_int(co, 0, 2**32 - 1)
        s.fields["rate_min"] = {"bytes_per_s": ratemin or [0, 0, 0], "iops": iopsmin or [0, 0, 0],
                                "cycle_ms": cycle}

    # io_submit_mode (rate-submit.c)
    sm = j.get("io_submit_mode")
    if sm is not None:
        mode = (sm.value or "").strip()
        if mode not in ("inline", "offload"):
            raise sm.error(f"io_submit_mode={shown(mode)}: one of inline, offload")
        if mode == "offload":
            s.notes.append(f"{who}: io_submit_mode=offload: fio would hand each request to one of iodepth worker "
                           f"threads; the simulated drive sees the same requests at the same times (the simulator's "
                           f"rate cap already issues on schedule, without waiting for the queue to drain)")

    # continue_on_error / ignore_error (td_error.c)
    mask, lists = _continue_on_error(j)
    s.continue_on_error = mask

    # latency_target (io_u.c lat_target_*)
    lt = j.get("latency_target")
    target_ns = _seconds_to_ns(lt) if lt is not None else 0
    if target_ns:
        lw = j.get("latency_window")
        window_us = parse_time_us(lw, 1) if lw is not None else 0
        lp = j.get("latency_percentile")
        pct = 100.0
        if lp is not None:
            pct = parse_float(lp, value=(lp.value or "").split(":")[0])
            if not 0.0 <= pct <= 100.0:
                raise lp.error(f"latency_percentile={shown(lp.value or '')}: must be from 0 to 100")
        run = j.get("latency_run")
        ignored = [_ignores(mask, lists, 0, ETIMEDOUT), _ignores(mask, lists, 1, ETIMEDOUT),
                   _ignores(mask, lists, 1, ETIMEDOUT)]
        s.fields["latency_target"] = {"target_ns": target_ns, "window_ns": window_us * 1000,
                                      "percentile": pct if pct > 0 else 100.0,
                                      "keep_running": bool(run is not None and parse_bool(run)),
                                      "timeout_ignored": ignored}
        s.latency = (target_ns, window_us, pct)
        if depth == 1:
            s.notes.append(f"{who}: latency_target searches depths up to iodepth; this job runs at depth 1")

    # flow (flow.c): weights are unsigned 32-bit in fio 3.33
    fo = j.get("flow")
    if fo is not None:
        raw = parse_int(fo)
        weight = raw % 2**32
        if raw < 0:
            s.notes.append(f"{who}: flow={raw}: fio 3.33 keeps flow weights unsigned, so this is the weight "
                           f"{weight} (a weight of 0..1000 since fio 3.23, when flow stopped being a signed counter)")
        if weight:
            fid = j.get("flow_id")
            sl = j.get("flow_sleep")
            s.flow_id = parse_int(fid) if fid is not None else 0
            s.fields["flow"] = {"id": s.flow_id, "weight": weight,
                                "sleep_us": parse_int(sl, 0, 2**32 - 1) if sl is not None else 0}

    # offset modifiers and rw_sequencer (options.c str_rw_cb; io_u.c get_next_offset)
    rw_opt = j.get("rw")
    raw_rw = (rw_opt.value or "") if rw_opt is not None else ""
    seq = j.get("rw_sequencer")
    identical = False
    if seq is not None:
        v = (seq.value or "").strip()
        if v not in ("sequential", "identical"):
            raise seq.error(f"rw_sequencer={shown(v)}: one of sequential, identical")
        identical = v == "identical"
    if ":" in raw_rw:
        assert rw_opt is not None
        post = raw_rw.split(":", 1)[1].strip(" \t")
        if core_rw in ("mixed", "trim-write"):
            raise rw_opt.error(f"rw={shown(raw_rw)}: offset modifiers on rw={fio_rw} are not supported by the "
                               f"simulator (fio keeps one position per direction; use a one-direction rw)")
        loops_opt, io_opt = j.get("loops"), j.get("io_size")
        loops = parse_int(loops_opt, 1) if loops_opt is not None else 1
        passes = None if (io_opt is not None or time_based) else loops
        if pattern == "random":
            every = _atoi(post) % 2**32
            s.fields["sequencer"] = {"add_bytes": 0, "every": every, "identical": identical, "passes": passes}
        else:
            neg = post.startswith("-")
            text = post[1:] if neg else post
            v = parse_size(RawOption(rw_opt.name, text, rw_opt.where), j.kb_base) if text else 0
            assert isinstance(v, int)
            add = -v if neg else v
            if add % SECTOR:
                raise rw_opt.error(f"rw={shown(raw_rw)}: an offset modifier of {add} bytes; a block device takes "
                                   f"whole 512-byte sectors: use a multiple of 512")
            if add:
                s.fields["sequencer"] = {"add_bytes": add, "every": 1, "identical": False, "passes": passes}
                if passes is not None and add > 0:
                    s.notes.append(f"{who}: rw={raw_rw.strip()}: each pass skips {add} bytes after every request and "
                                   f"ends at the region's end, so the job moves less than size= (as fio)")
    elif identical and pattern == "random":
        s.notes.append(f"{who}: rw_sequencer=identical has no effect without an offset modifier (rw={fio_rw}:N)")

    # blockalign (io_u.c last_block; init.c fixup_options)
    ba = j.get("ba")
    if ba is not None:
        aligns = [parse_size(ba, j.kb_base, value=t) if t is not None else None for t in split_dirs(ba)]
        used = {aligns[DIR_INDEX[d]] for d in dirs} - {None}
        if len(used) > 1:
            raise ba.error(f"ba={shown(ba.value or '')}: different alignments per direction are not supported by "
                           f"the simulator")
        align = used.pop() if used else None
        if align is not None and align != bs:
            if isinstance(align, int) and align % SECTOR:
                raise ba.error(f"ba={shown(ba.value or '')} is {align} bytes; a block device takes whole 512-byte "
                               f"sectors: use a multiple of 512")
            if pattern != "random":
                s.notes.append(f"{who}: blockalign applies to random offsets; rw={fio_rw} is sequential (as in fio, "
                               f"it has no effect)")
            else:
                assert isinstance(align, int)
                if align > span:
                    raise ba.error(f"ba={shown(ba.value or '')}: larger than the job's region ({span} bytes)")
                s.fields["block_align_bytes"] = align
                s.random_map_off = True

    # exitall / exit_what / exitall_on_error (backend.c thread_main; libfio.c fio_terminate_threads)
    s.exitall = is_set(j, "exitall")
    ew = j.get("exit_what")
    if ew is not None:
        v = (ew.value or "").strip()
        if v not in ("group", "stonewall", "all"):
            raise ew.error(f"exit_what={shown(v)}: one of group, stonewall, all")
        s.exit_what = v
    s.exitall_on_error = is_set(j, "exitall_on_error")

    # dedupe (io_u.c): a repeated buffer compresses as the original did
    dp = j.get("dedupe_percentage")
    if dp is not None and parse_int(dp, 0, 100) > 0:
        s.notes.append(f"{who}: dedupe_percentage: the simulated drive compresses each 4 KiB unit on its own and "
                       f"keeps no index of what it stored, so repeated buffers cost what fresh ones do (no effect)")
    return s
