"""fio's ``verify`` on a simulated drive: a job's verify options -> the core's ``VerifySpec``
(crates/ssdlab/src/workload/verify.rs, which checks each block as fio does), and what a run that
verifies needs and reports.

The simulated drive keeps a 64-bit checksum per 512-byte sector written (its content store,
crates/ssdlab/src/store.rs) when any job of the file verifies; the checksum stands in for fio's
algorithm, so every verify type fio accepts is accepted and behaves alike, except the checks fio
makes per type: ``meta`` checks headers only, ``pattern`` the pattern only (no header), ``null``
nothing, and a header written with one checksum type fails a check with another, as in fio.

What follows fio 3.33 (file:line at tag fio-3.33):

* ``verify`` values and the type each stands for (options.c 3012-3103): exactly fio's names, case
  sensitive; anything else is refused as fio refuses it. ``verify_pattern`` without ``verify``
  makes the type ``VERIFY_PATTERN`` (options.c 1534-1555, `str_verify_pattern_cb`): headers and
  the pattern checked.
* ``verify_interval`` (init.c 818-842): for mixed block sizes it defaults to the smallest write
  size; it is lowered to the smallest write (or read) size, and when it does not divide the
  smallest and largest write sizes it becomes their gcd. The simulator checks whole 512-byte
  sectors, so an interval that ends up below or not a multiple of 512 is refused.
* What a pass writes and when the job stops (backend.c `do_io` 956-975, `keep_running`
  1506-1546, io_bytes_exceeded): see `pass_fields`.
* Which header fields are checked (verify.c 826-853, 919-924): numberio for jobs that write one
  block size, not time-based, not verify_only; the seed for jobs that read and write, without
  verify_backlog and without a pattern.
* A time-based writing job never reaches its verify phase (fio 3.33 says so and writes until its
  runtime; init.c 808-816); its writes still carry verify headers for a later job to check.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from ssdlab.errors import SsdlabError
from ssdlab.fio.jobfile import RawOption, parse_bool, parse_size, shown
from ssdlab.fio.jobopts import JobOptions, is_set

# fio's verify types (verify.h) by name, as options.c lists them.
TYPES: Dict[str, int] = {
    "0": 0, "md5": 2, "crc64": 3, "crc32": 4, "crc32c-intel": 5, "crc32c": 5, "crc16": 7, "crc7": 8,
    "sha1": 16, "sha256": 9, "sha512": 10, "sha3-224": 11, "sha3-256": 12, "sha3-384": 13,
    "sha3-512": 14, "xxhash": 15, "meta": 1, "pattern": 18, "null": 19,
}
VERIFY_NONE, VERIFY_HDR_ONLY, VERIFY_PATTERN, VERIFY_PATTERN_NO_HDR = 0, 1, 17, 18
# The checksum each type keeps after fio's 40-byte header (verify.c `__hdr_size`).
_CHECKSUM_BYTES = {0: 0, 1: 0, 2: 16, 3: 8, 4: 4, 5: 4, 7: 2, 8: 1, 9: 64, 10: 128, 11: 28, 12: 32, 13: 48,
                   14: 64, 15: 4, 16: 20, 17: 0, 19: 0}
HEADER_BYTES = 40
EILSEQ = 84
MAX_PATTERN = 512
MAX_WRITERS = 4095
SECTOR = 512


def header_bytes(code: int) -> int:
    """fio's header size for verify type `code` (verify.c `__hdr_size`)."""
    return 0 if code == VERIFY_PATTERN_NO_HDR else HEADER_BYTES + _CHECKSUM_BYTES[code]


def parse_pattern(o: RawOption) -> bytes:
    """``verify_pattern`` as fio reads it (lib/pattern.c `parse_and_fill_pattern`): hex numbers
    (``0xdeadbeef``: bytes in the order written), decimal numbers (little-endian, as few bytes as
    the value needs, 0 as one zero byte) and quoted strings, one after another, at most 512 bytes.
    ``%o`` (the block offset pasted in) and ``'file'`` are refused."""
    text = o.value or ""
    if not text:
        raise o.error("verify_pattern needs a value")
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            raise o.error(f"verify_pattern={shown(text)}: format specifiers (%o) are not supported by the "
                          f"simulator; give the pattern's bytes")
        if c == "'":
            raise o.error(f"verify_pattern={shown(text)}: a pattern read from a file is not supported by the "
                          f"simulator; give the pattern's bytes")
        if c == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise o.error(f"verify_pattern={shown(text)}: the string has no closing quote (fio refuses it)")
            out += text[i + 1:end].encode("utf-8")
            i = end + 1
        elif text[i:i + 2].lower() == "0x" and i + 2 < len(text) and text[i + 2] in "0123456789abcdefABCDEF":
            j = i + 2
            while j < len(text) and text[j] in "0123456789abcdefABCDEF":
                j += 1
            digits = text[i + 2:j]
            # "0xff0x14": the 0 of the next 0x is not a digit of this number (lib/pattern.c).
            if j < len(text) and text[j - 1] == "0" and text[j] in "xX" and len(digits) > 1:
                digits, j = digits[:-1], j - 1
            if len(digits) % 2:
                digits = "0" + digits
            out += bytes.fromhex(digits)
            i = j
        else:
            j = i + (1 if text[i] in "+-" else 0)
            while j < len(text) and text[j].isdigit() and text[j].isascii():
                j += 1
            if j == i or not text[i:j].lstrip("+-"):
                raise o.error(f"verify_pattern={shown(text)}: not a number, \"string\" or 0x hex at "
                              f"'{shown(text[i:], 12)}' (fio refuses it)")
            v = int(text[i:j])
            if not -2**31 <= v <= 2**31 - 1:
                raise o.error(f"verify_pattern={shown(text)}: {text[i:j]} is out of fio's 32-bit range")
            v &= 0xFFFFFFFF
            if v == 0:
                out.append(0)
            while v:
                out.append(v & 0xFF)
                v >>= 8
            i = j
        if len(out) > MAX_PATTERN:
            raise o.error(f"verify_pattern={shown(text)}: longer than fio's {MAX_PATTERN} bytes")
    return bytes(out)


def _count(j: JobOptions, o: RawOption, lo: int) -> int:
    """An fio int option's value: a number, with fio's size suffixes (``4k``), at least `lo` and
    below 2**32 (fio's FIO_OPT_INT)."""
    v = parse_size(o, j.kb_base)
    assert isinstance(v, int)
    if not lo <= v < 2**32:
        raise o.error(f"{o.name}={shown(o.value or '')}: must be from {lo} to {2**32 - 1}")
    return v


def _type(j: JobOptions) -> tuple:
    """(type code, the option that set it or None, pattern bytes)."""
    v = j.get("verify")
    vp = j.get("verify_pattern")
    pattern = parse_pattern(vp) if vp is not None else b""
    if v is None:
        return (VERIFY_PATTERN if pattern else VERIFY_NONE), vp, pattern
    name = (v.value or "").strip()
    if name not in TYPES:
        raise v.error(f"verify={shown(name)}: not one of fio's verify types ({', '.join(TYPES)})")
    code = TYPES[name]
    if code == VERIFY_PATTERN_NO_HDR and not pattern:
        raise v.error("verify=pattern needs verify_pattern (fio 3.33 aborts on an assertion without one)")
    return code, v, pattern


def _interval(j: JobOptions, sizes: Any) -> int:
    """verify_interval after fio's adjustments (init.c 818-842); 0: a header per block."""
    o = j.get("verify_interval")
    given = _count(j, o, 80) if o is not None else 0
    lo, hi = sizes.bs, sizes.largest
    iv = given
    if hi != lo and not iv:
        iv = lo
    if iv > lo:
        iv = lo
    if iv and (lo % iv or hi % iv):
        iv = math.gcd(lo, hi)
    if iv and iv % SECTOR:
        where = o if o is not None else None
        msg = (f"verify_interval={iv} bytes (fio's interval for this job's block sizes): the simulator checks "
               f"whole 512-byte sectors; use a multiple of 512")
        raise where.error(msg) if where is not None else SsdlabError(f"{j.where()}: {msg}")
    return iv


def _io_size(j: JobOptions, span: int) -> Optional[int]:
    o = j.get("io_size")
    if o is None:
        return None
    v = parse_size(o, j.kb_base, allow_percent=True)
    return int(span * v[1] / 100) if isinstance(v, tuple) else int(v)


def spec(j: JobOptions, *, name: str, core_rw: str, pattern_kind: str, dirs: str, sizes: Any, span: int,
         loops: int, time_based: bool, random_map: Optional[bool], notes: List[str]) -> Optional[Dict[str, Any]]:
    """The core's ``verify`` field for job `j`, or None when the job does not verify.

    `writer` and `file` are filled in by `assign` once the job file's jobs (clones included) are
    known."""
    code, where, pattern = _type(j)
    verify_opts = [k for k in ("do_verify", "verify_only", "verify_backlog", "verify_backlog_batch",
                               "verify_fatal", "verify_interval") if j.get(k) is not None]
    if code == VERIFY_NONE:
        for k in verify_opts:
            o = j.get(k)
            assert o is not None
            if k in ("verify_only",) and is_set(j, k):
                raise o.error("verify_only needs verify= (fio would run the job without verifying)")
        return None
    writes = "w" in dirs
    reads = "r" in dirs
    mixed = core_rw == "mixed"
    do_verify = parse_bool(j.get("do_verify")) if j.get("do_verify") is not None else True  # type: ignore[arg-type]
    only = is_set(j, "verify_only")
    if only and time_based:
        o = j.get("verify_only")
        assert o is not None
        raise o.error("verify_only does not go with time_based (fio does not support it)")
    bl = j.get("verify_backlog")
    backlog = 0
    if bl is not None:
        v = parse_size(bl, j.kb_base)
        assert isinstance(v, int)
        backlog = v
    bb = j.get("verify_backlog_batch")
    batch = _count(j, bb, 0) if bb is not None else 0
    fatal = bool(j.get("verify_fatal") is not None and parse_bool(j.get("verify_fatal")))  # type: ignore[arg-type]
    interval = _interval(j, sizes)
    who = f"job '{name}'"
    if writes and do_verify and time_based:
        notes.append(f"{who}: fio: verification read phase will never start because write phase uses all of "
                     f"runtime (as fio 3.33: the job writes verify headers until its runtime)")
        do_verify = False if not backlog else do_verify
    # Numbers as fio's do_io and keep_running use them.
    io_size = _io_size(j, span)
    norandommap = pattern_kind == "random" and not random_map
    size_bytes = span
    total = max(size_bytes, io_size or 0) if (writes and pattern_kind == "random" and norandommap) else size_bytes
    cap = (io_size or size_bytes) * max(loops, 1)
    out: Dict[str, Any] = {
        "type_code": code,
        "header_bytes": header_bytes(code),
        "pattern": list(pattern),
        "interval": interval,
        "writes": writes,
        "do_verify": bool(do_verify),
        "only": bool(only) and writes,
        "backlog": backlog if writes else 0,
        "backlog_batch": batch,
        "fatal": fatal,
        "check_numberio": writes and sizes.bs == sizes.largest and not time_based and not only,
        "check_seed": mixed and not backlog and not pattern,
        "sorted": not (pattern_kind == "random" and random_map),
        "pass_counts_reads": mixed,
        "pass_bytes": 0 if time_based else min(total, cap),
        "loops": max(loops, 1),
        "limit_bytes": io_size or 0,
        "issue_cap_bytes": 0 if time_based else cap,  # fio's io_issue_bytes_exceeded, over all loops
        "max_block": sizes.largest,
        "check_reads": reads and not writes,
        "writer": 0,
        "file": "",
        "ignore_errors": _ignored(j),
    }
    if not writes and not reads:
        notes.append(f"{who}: verify on a job that only trims checks nothing (as in fio)")
    return out


def _ignored(j: JobOptions) -> bool:
    """fio's `td_non_fatal_error` for a failed verify (td_error.c: EILSEQ is a verify error):
    ``continue_on_error`` covers verify and ``ignore_error``'s verify list (default EIO, EILSEQ)
    holds EILSEQ. Read as `ssdlab.fio.semantics` reads the two options."""
    if j.get("continue_on_error") is None and j.get("ignore_error") is None:
        return False
    from ssdlab.fio import semantics

    mask, lists = semantics._continue_on_error(j)  # the one reading of the two options
    return semantics._ignores(mask, lists, 2, EILSEQ)


def assign(jobs: List[Any], notes: List[str]) -> bool:
    """Gives every verifying job of a planned job file (`JobPlan`s, clones included) its writer
    number and fio's file name (the job's ``filename``, else ``jobname.clone.0``); returns whether
    any job verifies (the drive then needs its content store)."""
    writers = 0
    for jp in jobs:
        v = jp.workload.get("verify")
        if v is None:
            continue
        writers += 1
        if writers > MAX_WRITERS:
            raise SsdlabError(f"{jp.job.where}: more than {MAX_WRITERS} jobs verify; the simulator tells at most "
                              f"{MAX_WRITERS} writers apart")
        v["writer"] = writers
        fn = jp.job.options.get("filename")
        name = (fn.value or "").strip() if fn is not None and fn.value else ""
        v["file"] = name.split(":")[0] if name else f"{jp.name}.{jp.clone}.0"
        if jp.clone == 1 and v["writes"] and v["do_verify"]:
            text = ("fio: multiple writers may overwrite blocks that belong to other jobs. This can cause "
                    "verification failures.")
            if text not in notes:
                notes.append(text)
    return writers > 0


def runtimes_ms(phase: Dict[str, Any]) -> Optional[tuple]:
    """fio's per-direction runtimes of a verifying job (read: its verify phases, write: its write
    passes), in ms; None for a job that does not verify in phases."""
    v = phase.get("verify")
    if not v or (not v.get("verify_ns") and not v.get("phantom_writes") and not v.get("write_ns")):
        return None
    return (int(round(v["verify_ns"] / 1e6)), int(round(v["write_ns"] / 1e6)))


UNIT = 4096


def store_units_bound(jobs: List[Any], user_bytes: int) -> Optional[Dict[str, Any]]:
    """At most how many 4 KiB units the content store will hold for the verifying jobs that write,
    when every one of them writes sequentially (None otherwise, or with none): each job's planned
    writes (``issue_cap_bytes``, fio's io_size x loops), at most the share of its region it
    touches (``bs`` of every ``bs`` + skip with an offset modifier such as ``rw=write:112k``); and
    all of them together at most that share of the union of their regions (jobs whose regions
    overlap write the same places). A sequential pass writes distinct blocks, so for jobs that
    write less than a pass the bound is what they hold."""
    writers = [p for p in jobs if (p.workload.get("verify") or {}).get("writes")]
    if not writers or any(p.workload.get("pattern") != "sequential" for p in writers):
        return None
    total = 0
    spans = []
    most_share = 0.0
    per_unit = []  # (units, writes per unit: block sizes' share of a unit, writes with a pattern)
    for p in writers:
        w, v = p.workload, p.workload["verify"]
        offset = int(w.get("offset_bytes", 0))
        span = int(w.get("span_bytes") or user_bytes - offset)
        block = int(v.get("max_block") or w.get("block_bytes", UNIT))
        seq = w.get("sequencer") or {}
        skip = int(seq.get("add_bytes", 0)) if int(seq.get("every", 1)) == 1 else 0
        share = block / (block + skip) if skip > 0 else 1.0
        aligned = offset % UNIT == 0 and block % UNIT == 0 and (block + skip) % UNIT == 0
        spread = 1.0 if aligned else (block + UNIT) / block  # a request that straddles units touches one more
        planned = int(v.get("issue_cap_bytes") or span)
        units_w = math.ceil(min(planned, span * share) * spread / UNIT)
        total += units_w
        per_unit.append((units_w, UNIT / block, bool(v.get("pattern"))))
        spans.append((offset, offset + span))
        most_share = max(most_share, share * spread)
    union = 0
    end = -1
    for a, b in sorted(spans):
        if a > end:
            union += b - a
            end = b
        elif b > end:
            union += b - end
            end = b
    units = min(total, math.ceil(union * most_share / UNIT))
    return {"units": units, "union_bytes": union, "writers": len(writers), "first": writers[0],
            "per_unit": per_unit}


def store_peak_bytes(bound: Dict[str, Any], unit_bytes: int, extent_bytes: int) -> int:
    """The most memory a checksum store holding what `bound` (`store_units_bound`) says takes: a
    write without a verify pattern is one extent (`ssdlab._core.store_extent_bytes`) whatever its
    length, so a unit costs an extent over the writes a unit holds (a 16 KiB block: a quarter of
    one); a write with a pattern lists its sums, a unit costing `ssdlab._core.store_unit_bytes`.
    The extents' B-tree grows node by node: its peak is its size. At most each writer's units at
    its cost, and at most the union's units at the dearest writer's cost."""
    costs = [(units, unit_bytes if listed else extent_bytes * writes)
             for units, writes, listed in bound["per_unit"]]
    per_writer = sum(units * cost for units, cost in costs)
    dearest = max(cost for _, cost in costs)
    return math.ceil(min(per_writer, bound["units"] * dearest))


def check_store_memory(jobs: List[Any], user_bytes: int, table_bytes: int, unit_bytes: int,
                       extent_bytes: int, available: Optional[int]) -> None:
    """Refuses, before anything runs, a job file whose verifying jobs' content store would not fit
    in memory next to the drive's mapping tables (`store_units_bound`, `store_peak_bytes`): the
    run would otherwise stop partway, or be killed, when the store grows past what is left."""
    bound = store_units_bound(jobs, user_bytes)
    if bound is None or available is None:
        return
    store = store_peak_bytes(bound, unit_bytes, extent_bytes)
    if table_bytes + store <= available / 10 * 9:
        return
    from ssdlab.sizes import format_size

    p = bound["first"]
    who = f"job '{p.name}'" + (f" and the {bound['writers'] - 1} other verifying jobs" if bound["writers"] > 1 else "")
    raise SsdlabError(
        f"{p.job.where}: {who} would leave up to {bound['units'] / 1e6:.1f} million 4 KiB units of verify content "
        f"across {format_size(bound['union_bytes'])} of the drive; the content store for them takes up to about "
        f"{format_size(store)}, and the drive's mapping tables {format_size(table_bytes)}: "
        f"more than the {format_size(available)} this process can allocate -- simulate a smaller drive "
        f"(--capacity), write less, or run on a machine with more memory")
