"""Where a job's requests go and how large they are: ``rw`` as the core's direction and pattern
(with ``rw_sequencer`` and ``percentage_random``), the request sizes (``bs``, ``bssplit``,
``bsrange``, ``ba``), the region (``offset``, ``size``, ``filesize``) and ``random_distribution``
(zipf, pareto, normal, zoned, zoned_abs).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

from ssdlab.errors import SsdlabError
from ssdlab.limits import MAX_BLOCK_BYTES
from ssdlab.sizes import format_size
from ssdlab.fio.jobfile import RawOption, parse_float, parse_int, parse_size, shown
from ssdlab.fio.jobopts import DIR_INDEX, JobOptions, split_dirs

UNIT = 4096
SECTOR = 512
"""Requests are whole 512-byte sectors at sector-aligned offsets, as a block device takes them; a
request that covers a 4 KiB mapping unit only in part costs the simulated drive a read-modify-write
of that unit (docs/fio.md, "Requests smaller than 4 KiB")."""

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


def rw_mode(j: JobOptions) -> Tuple[str, str, str, str]:
    """fio's ``rw`` as ``(fio rw, ssdlab rw, pattern, directions used)``, with ``rw_sequencer`` and
    ``percentage_random`` checked against it."""
    rw_opt = j.get("rw")
    fio_rw = (rw_opt.value or "").strip() if rw_opt is not None else "read"
    if ":" in fio_rw:  # an offset modifier (rw=write:4k, rw=randread:8): `semantics` reads it
        fio_rw = fio_rw.split(":", 1)[0].strip()
    if fio_rw not in _RW:
        where = rw_opt.error if rw_opt is not None else (lambda m: SsdlabError(f"{j.where()}: {m}"))
        raise where(f"rw={fio_rw}: not supported by the simulator (use one of {', '.join(_RW)})")
    core_rw, pattern, dirs = _RW[fio_rw]
    # rw_sequencer (with an offset modifier): `semantics`
    pr = j.get("percentage_random")
    if pr is not None:  # fio's percentage_random=int[,int][,int], each 0..100
        want = 100 if pattern == "random" else 0
        shares = [None if t is None else parse_int(pr, 0, 100, value=t[:-1] if t.endswith("%") else t)
                  for t in split_dirs(pr)]
        if any(shares[DIR_INDEX[d]] not in (None, want) for d in dirs):
            raise pr.error(f"percentage_random={shown(pr.value or '')}: mixing random and sequential offsets is not "
                           f"supported by the simulator")
    return fio_rw, core_rw, pattern, dirs


_DIR_NAMES = {"r": "reads", "w": "writes", "t": "trims"}
BSSPLIT_MAX = 64  # fio's BSSPLIT_MAX: entries per direction


def _check_unit(o: RawOption, n: int, j: JobOptions, what: Optional[str] = None) -> None:
    if n <= 0 or n % SECTOR:
        hint = ""
        if "ib" in (o.value or "").lower() and j.kb_base == 1024:
            hint = " (with fio's default kb_base=1024, 'KiB' means 1000 bytes; write 4k)"
        subject = f"{o.name}={shown(o.value or '')}: {what}" if what else f"{o.name}={shown(o.value or '')}"
        raise o.error(f"{subject} is {n} bytes; a block device takes whole 512-byte sectors: use a positive "
                      f"multiple of 512{hint}")


def bs_part(j: JobOptions, o: RawOption, text: str) -> int:
    """One direction's ``bs`` value."""
    if "-" in text or ":" in text:
        raise o.error(f"bs={shown(o.value or '')}: for a range of sizes use bsrange=MIN-MAX, for a mix "
                      f"bssplit=SIZE/PCT:...")
    n = parse_size(o, j.kb_base, value=text)
    assert isinstance(n, int)
    return n


def bssplit_part(j: JobOptions, o: RawOption, text: str) -> List[Tuple[int, float]]:
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


def bsrange_part(j: JobOptions, o: RawOption, text: str) -> Tuple[int, int]:
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
    dir_mean: Optional[Dict[str, float]] = None
    """Each used direction's mean size, when the directions have mixes of their own."""


def _direction_sizes(j: JobOptions) -> Dict[str, Tuple[Any, Optional[RawOption], str]]:
    """Each direction's request sizes as fio resolves them, ``d -> (sizes, option, text)`` with
    sizes ``("mix", ((bytes, pct), ...))`` or ``("range", lo, hi)``: a direction's bssplit entry,
    else its bsrange entry, else its ``bs`` (fio's default 4096). An empty entry of a
    ``read,write,trim`` list (``bssplit=4k/50:8k/50,``) is not "as the others" but fio's default,
    so that direction falls back to ``bs``, as in fio (options.c, str_split_parse). Every entry is
    read, also those of directions the job does not use (fio reads them all)."""
    split, rng, bs_opt = j.get("bssplit"), j.get("bsrange"), j.get("bs")
    if split is not None and rng is not None:
        raise rng.error("give bssplit or bsrange, not both")
    parts = {o.key: split_dirs(o) for o in (split, rng, bs_opt) if o is not None}
    out: Dict[str, Tuple[Any, Optional[RawOption], str]] = {}
    cache: Dict[Tuple[str, str], Any] = {}
    for d in "rwt":
        i = DIR_INDEX[d]
        for o in (split, rng, bs_opt):
            if o is None or parts[o.key][i] is None:
                continue
            text = parts[o.key][i] or ""
            key = (o.key, text)
            if key not in cache:
                if o is split:
                    cache[key] = ("mix", tuple(bssplit_part(j, o, text)))
                elif o is rng:
                    lo, hi = bsrange_part(j, o, text)
                    cache[key] = ("range", lo, hi) if hi > lo else ("mix", ((lo, 100.0),))
                else:
                    cache[key] = ("mix", ((bs_part(j, o, text), 100.0),))
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


def request_sizes(j: JobOptions, dirs: str) -> Sizes:
    per_dir = _direction_sizes(j)
    used = {per_dir[d][0] for d in dirs}
    culprit = j.get("bssplit") or j.get("bsrange") or j.get("bs")
    if len(used) > 1 and all(u[0] == "mix" for u in used):
        # A mix per direction (fio's bssplit=READS,WRITES,TRIMS, or bs=R,W): the request draws
        # its direction, then its size from that direction's mix (io_u.c get_next_buflen, with
        # bssplit[ddir]). Offsets align to the smallest size of all.
        per: List[List[Dict[str, Any]]] = [[], [], []]
        means: Dict[str, float] = {}
        for d in dirs:
            desc, o, _ = per_dir[d]
            o = o or RawOption("bs", "4096", j.job.where)
            for n, _ in desc[1]:
                _check_unit(o, n, j, f"size {format_size(n)}" if o.key == "bssplit" else None)
            per[DIR_INDEX[d]] = [{"bytes": n, "pct": p} for n, p in desc[1]]
            means[d] = sum(n * p for n, p in desc[1]) / 100
        every = [m["bytes"] for mix in per for m in mix]
        sizes = Sizes(min(every), max(every), sum(means.values()) / len(means),
                      {"direction_block_sizes": per}, means)
        if sizes.largest > MAX_BLOCK_BYTES:
            assert culprit is not None
            raise culprit.error(f"{culprit.name}={shown(culprit.value or '')}: requests of {format_size(sizes.largest)} "
                                f"are larger than the {format_size(MAX_BLOCK_BYTES)} a drive takes in one command; use "
                                f"smaller sizes")
        return sizes
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
    # ba (blockalign): `semantics`
    return sizes


def _round_down(n: int, unit: int) -> int:
    return n // unit * unit


def region(j: JobOptions, user_bytes: int, sizes: Sizes, who: str,
           plan_notes: List[str], clone: int = 0) -> Tuple[int, int, Union[int, Tuple[str, float], None]]:
    """The job's region of the drive, ``(offset, span, size)``: ``offset`` (a percentage aligned up to
    ``offset_align``), then ``filesize``, else ``size``, else the rest of the drive, rounded down to
    whole blocks; `size` is ``size=`` as read (None without it), which with ``filesize`` is the
    amount of IO instead (`jobplan`)."""
    bs = sizes.bs
    offset = 0
    off_opt = j.get("offset")
    # offset_increment: clone N of numjobs starts N increments further (filesetup.c
    # get_start_offset: offset + subjob_number * increment; a percentage is of the device,
    # pct * size / 100, and like a percentage offset aligns the sum up to offset_align or bs).
    inc_opt = j.get("offset_increment")
    increment, align_up = 0, False
    if inc_opt is not None:
        iv = parse_size(inc_opt, j.kb_base, allow_percent=True)
        if isinstance(iv, tuple):
            increment, align_up = int(iv[1]) * user_bytes // 100, True
        else:
            increment = iv
    if off_opt is not None or increment:
        v = parse_size(off_opt, j.kb_base, allow_percent=True) if off_opt is not None else 0
        if isinstance(v, tuple):
            offset, align_up = int(user_bytes * v[1] / 100), True
        else:
            offset = v
        offset += clone * increment
        if align_up:
            align_opt = j.get("offset_align")
            align = bs
            if align_opt is not None:
                a = parse_size(align_opt, j.kb_base)
                assert isinstance(a, int)
                align = a or bs
            offset = math.ceil(offset / align) * align
        if clone and increment:
            assert inc_opt is not None
            if offset >= user_bytes:
                # fio: "you need to specify valid offset=" (filesetup.c setup_files, err_offset)
                raise inc_opt.error(f"offset_increment={inc_opt.value}: clone {clone} of {who} starts at {offset} bytes "
                                    f"(offset + {clone} x {increment}), at or beyond the end of the drive's {user_bytes} "
                                    f"user bytes; lower it or numjobs, or pass a larger --capacity")
        off_opt = off_opt or inc_opt
        if offset % SECTOR:
            raise off_opt.error(f"offset={off_opt.value} is {offset} bytes; a block device takes whole 512-byte "
                                f"sectors: use a multiple of 512")
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
    return offset, span, size_val


_DISTRIBUTIONS = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs")


def random_distribution(j: JobOptions, o: RawOption, span: int) -> Dict[str, Any]:
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
        if not slash and kind == "zoned_abs":
            raise o.error(f"random_distribution={text}: zone '{entry}' is not ACCESS%/SIZE")
        access = parse_float(RawOption(o.name, a.strip(), o.where))
        if kind == "zoned":
            # fio (options.c zone_split_ddir): a zone without a size ("20/" or "20") shares what the
            # sizes given leave, in whole percent: zoned:50/5:30/15:20/ gives the last zone 80 %
            size = parse_float(RawOption(o.name, b.strip(), o.where)) if b.strip() else None
        else:
            n = parse_size(o, j.kb_base, value=b.strip())
            assert isinstance(n, int)
            size = float(n)
        zones.append({"access_pct": access, "size": size})
    if not zones:
        raise o.error(f"random_distribution={text}: no zones")
    open_ended = [z for z in zones if z["size"] is None]
    if open_ended:
        rest = 100 - sum(z["size"] for z in zones if z["size"] is not None)
        for z in open_ended:
            z["size"] = float(max(rest, 0) // len(open_ended))
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
