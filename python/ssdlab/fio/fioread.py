"""fio 3.33's reading of a job file's options, done the way fio does it, so that ssdlab accepts what
fio accepts, refuses what fio refuses and reads every value as fio reads it.

The steps are fio's own (the file and function names are fio 3.33's):

* every section's options are sorted by priority (parse.c ``sort_options``: ``kb_base`` first,
  ``filename`` last) and parsed one by one; a ``[global]`` section's options go to the defaults
  the job sections below it copy; a section with an option fio refuses is dropped and fio reads no
  further section (init.c ``__parse_jobs_ini``);
* an option is found by its name or alias (options.h ``o_match``, case-sensitive); an option the
  main table lacks is looked up in the job's ioengine's options (options.c ``fio_options_parse``);
* a value is split into its parts (parse.c ``handle_option``: at ``,``, else ``:``, else ``-`` for
  numbers; at ``,`` for size ranges; at ``:`` for float lists) and each part is read by its type
  (``__handle_option``): sizes and numbers by ``str_to_decimal`` (``strtoll``, hexadecimal when the
  text holds ``0x`` anywhere, a unit suffix after the digits that may be any word starting with
  k/m/g/t/p, ``%``), times by ``get_mult_time`` (us, ms, s, m, h, d; any other word multiplies by
  one microsecond), booleans by ``sscanf("%u")``, choices by exact match of the text up to the first
  ``,`` (else ``:``), float lists by ``sscanf("%lf")``; then the option's bounds and callback
  (``random_distribution``, ``bssplit``, ``steadystate``, ``io_size``, ...). fio accepts an option
  when *any* of its parts was read: ``iodepth=-1`` is two parts, ``-1`` (refused: below 1) and
  ``1`` (read, but not stored), so fio prints an error and runs with iodepth 1.

`read_sections` (``JobFile.reading``) gives every option's `Reading`: accepted or not, fio's messages,
the typed value (``JobOptions.fio_value``), and what ``fio --showcmd`` and ``fio --debug=parse``
print for it (tests/test_fio_parity.py compares these with the installed fio's). What fio does in
``--parse-only`` mode is what is emulated: the checks fio makes only when it runs a job (``rw``
offset modifiers, ``ignore_error``, CPU lists, files and directories) are left to the planner.
`Reading.trap` says where fio accepted a value but read it otherwise than it looks (``bs= 4k`` is 4
bytes, ``thinktime_spin=51h`` wraps at 32 bits) or printed an error, or silently skipped a part,
and went on; ssdlab refuses those (``JobFile.fio_problem``).

Why one module of this length (~950 lines): it is one piece of fio, parse.c's ``handle_option`` with
the options.c callbacks it calls, and the order of its steps is fio's; split, each half would need
the other's state to read one option. The C number readers it uses are `ssdlab.fio.cnumbers`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ssdlab.fio import options as opts
from ssdlab.fio.options import OptionSpec
from ssdlab.fio.cnumbers import (
    SPACE as _SPACE,
    U64,
    UINT_MAX,
    ZONE_BASE_VAL,
    c_lstrip,
    s32,
    s64,
    strtoul,
    strtoul_end,
    atoi,
    is_percent,
    is_zone,
    percent_of,
    scan_float,
    str_to_decimal,
)

BSSPLIT_MAX = 64
ZONESPLIT_MAX = 256
FIO_DEF_ZIPF = 1.1
FIO_DEF_PARETO = 0.2

LOADABLE_ENGINES = frozenset(
    "cpuio mmap sync psync vsync pvsync pvsync2 null net netsplice ftruncate filecreate filestat filedelete exec "
    "posixaio falloc e4defrag splice gfapi gfapi_async mtd sg io_uring io_uring_cmd nbd libaio rdma rados rbd "
    "pmemblk dev-dax libpmem".split()
)
"""The engines the tested fio 3.33 build (Debian's) can load (``fio --enghelp``). fio checks the
name only when a job has an option the main table lacks (an engine option)."""

_TYPE_NAMES = {
    "str": "OPT_STR", "str_ull": "OPT_STR_ULL", "str_multi": "OPT_STR_MULTI", "str_val": "OPT_STR_VAL",
    "str_val_time": "OPT_STR_VAL_TIME", "str_store": "OPT_STR_STORE", "range": "OPT_RANGE", "int": "OPT_INT",
    "ull": "OPT_ULL", "bool": "OPT_BOOL", "float_list": "OPT_FLOAT_LIST", "str_set": "OPT_STR_SET",
    "str_val_zone": "OPT_STR_VAL_ZONE", "deprecated": "OPT_DEPRECATED", "soft_deprecated": "OPT_SOFT_DEPRECATED",
}


# -- one option --------------------------------------------------------------------------------------

@dataclass
class Reading:
    """How fio read one option line."""

    name: str  # as written
    value: Optional[str]  # as fio sees it (after ${VAR} and keywords), None for a bare flag
    spec: Optional[OptionSpec]
    ok: bool = False
    errors: List[str] = field(default_factory=list)  # what fio printed; fatal when not ok
    skipped: List[str] = field(default_factory=list)  # parts fio could not read and skipped silently
    blanks: List[str] = field(default_factory=list)  # parts a leading blank made fio read otherwise
    wrapped: List[Tuple[str, int]] = field(default_factory=list)  # parts fio cut to 32 bits, as read
    trap: Optional[str] = None  # accepted by fio, but not as the text reads (ssdlab refuses)
    typed: Any = None  # the value as fio stores it (see `_Handler`)
    debug: List[str] = field(default_factory=list)  # fio --debug=parse's lines for it
    where: Any = None  # the RawOption it came from
    engine_option: bool = False

    @property
    def key(self) -> str:
        return self.spec.name if self.spec is not None else self.name


class _Handler:
    """parse.c ``handle_option`` and ``__handle_option`` for one option, with its typed value.

    Typed values: numbers and sizes (bytes), times (microseconds) as ints; per-direction ones as a
    tuple (read, write, trim), None where not set; a ``N%`` size ``("%", N)``, a ``Nz`` size
    ``("z", N)``; booleans as bool; choices as the choice matched; float lists as a tuple; size
    ranges as ((lo, hi), ...) per direction; bssplit as per-direction lists of (bytes, percent);
    random_distribution as a dict; steadystate as (criterion, limit, percent)."""

    def __init__(self, spec: OptionSpec, kb_base: int, r: Reading, state: Dict[str, Any]):
        self.o = spec
        self.kb = kb_base
        self.r = r
        self.state = state  # the section's stored values, by canonical name (a copy of the globals')

    # -- messages
    def err(self, msg: str) -> int:
        """A part fio refuses with a message."""
        self.r.errors.append(msg)
        return 1

    def skip(self, part: str) -> int:
        """A part fio fails to read without a message (an empty part is fio's way of leaving a
        direction at its default: ``rate_iops=,300``)."""
        self.r.skipped.append(part)
        return 1

    # -- the split into parts
    def handle(self, ptr: Optional[str]) -> int:
        o = self.o
        self.r.debug.append(f"handle_option={o.name}, ptr={_c(ptr)}")
        ret, done = 1, 0
        part = ptr
        while True:
            nxt: Optional[int] = None
            if part is not None and o.fio not in ("str_store", "str", "str_ull", "float_list"):
                nxt = _find(part, ",")
                if nxt is not None and nxt == len(part) - 1:
                    part = part[:-1]  # a trailing ',': this part without it, then an empty part
                    nxt = len(part)
                    tail = ""
                else:
                    tail = part[nxt + 1:] if nxt is not None else ""
                if o.fio not in ("str_multi", "range") and nxt is None:
                    for sep in ":-":
                        nxt = _find(part, sep)
                        if nxt is not None:
                            tail = part[nxt + 1:]
                            break
            elif part is not None and o.fio == "float_list":
                nxt = _find(part, ":")
                tail = part[nxt + 1:] if nxt is not None else ""
            this = part  # fio passes the whole rest of the value; each type reads its own part of it
            sub = self.one(this, first=done == 0, more=nxt is not None, curr=done)
            if ret:
                ret = sub  # fio accepts the option when any part is read
            if nxt is None:
                break
            part = tail
            done += 1
        return ret

    # -- one part
    def one(self, ptr: Optional[str], first: bool, more: bool, curr: int) -> int:
        o = self.o
        self.r.debug.append(f"__handle_option={o.name}, type={_TYPE_NAMES[o.fio]}, ptr={_c(ptr)}")
        if ptr is None and o.fio not in ("str_set", "str"):
            return self.err(f"Option {o.name} requires an argument")
        t = o.fio
        if t in ("str", "str_ull", "str_multi"):
            ret = self.choice(ptr)
        elif t in ("str_val_time", "ull", "int", "str_val", "str_val_zone"):
            ret = self.number(ptr or "", first, more, curr)
        elif t == "float_list":
            ret = self.floats(ptr or "", first, curr)
        elif t == "str_store":
            ret = self.store(ptr or "")
        elif t == "range":
            ret = self.range_(ptr or "", first, more, curr)
        elif t in ("bool", "str_set"):
            ret = self.boolean(ptr, first, more)
        elif t == "deprecated":
            self.r.errors.append(f"Option {o.name} is deprecated")
            ret = 1
        elif t == "soft_deprecated":
            self.r.errors.append(f"Option {o.name} is deprecated")
            ret = 0
        else:  # pragma: no cover - the table holds only these types
            ret = self.err(f"Bad option type {t}")
        return ret

    def choice(self, ptr: Optional[str]) -> int:
        o = self.o
        if not o.choices:
            return self.callback(ptr)
        if ptr is None:
            return self.err(f"{o.name}: needs one of {', '.join(o.choices)}")
        for ival in sorted(o.choices, key=len, reverse=True):
            if _str_match(ival, ptr):
                self.state[o.name] = ival
                return self.callback(ptr)
        return self.err(f"{o.name}: '{_shown(ptr)}' is not one of {', '.join(o.choices)}")

    def number(self, ptr: str, first: bool, more: bool, curr: int) -> int:
        o = self.o
        if ptr.endswith("z"):
            if o.fio != "str_val_zone":
                return self.err(f"{o.name}: 'z' suffix isn't applicable")
            n, end, over = strtoul_end(ptr, 10)
            if over or end == 0 or ptr[end:end + 1] != "z":
                return self.err(f"{o.name}: unexpected zone value '{ptr}'")
            return self.store_number(ZONE_BASE_VAL + n % 2**32, first, more, curr)
        tmp = ptr[:127]
        cut = _find(tmp, ",")
        if cut is not None:
            tmp = tmp[:cut]
        is_time = o.time
        v = str_to_decimal(tmp, kilo=not is_time, kb_base=self.kb, is_seconds=o.seconds)
        if v is None:
            self.r.debug.append("  ret=1, out=?")
            return self.skip(tmp)
        if tmp[:1] in (" ", "\t") and str_to_decimal(c_lstrip(tmp), not is_time, self.kb, o.seconds) != v:
            self.r.blanks.append(tmp)
        ull = v % U64
        self.r.debug.append(f"  ret=0, out={ull}")
        if o.fio == "int" and not -(2**31) <= v <= UINT_MAX:
            self.r.wrapped.append((tmp, s32(ull)))
        if o.pow2 and (ull == 0 or ull & (ull - 1)):
            return self.err(f"{o.name}: must be a power-of-2")
        is_uint = o.fio == "int"
        maxval = o.hi if o.hi is not None else (UINT_MAX if o.fio == "int" else U64 - 1 if o.fio == "ull" else 0)
        minval = o.lo or 0
        if _too_large(ull, maxval, is_uint):
            return self.err(f"{o.name}: max value out of range: {ull} ({maxval} max)")
        if _too_small(ull, minval, is_uint):
            return self.err(f"{o.name}: min value out of range: {s64(ull)} ({minval} min)")
        return self.store_number(ull, first, more, curr)

    def store_number(self, ull: int, first: bool, more: bool, curr: int) -> int:
        o = self.o
        if o.cb:
            return self.callback_number(ull)
        value = s32(ull) if o.fio == "int" else ull
        if o.slots == 1:
            if first:
                self.state[o.name] = value
            return 0
        cur = list(self.state.get(o.name) or (None,) * o.slots)
        if o.fio in ("int", "ull"):
            if first:
                cur[0] = value
            if curr == 1 and o.slots > 1:
                cur[1] = value
            if curr == 2 and o.slots > 2:
                cur[2] = value
            if not more:
                if curr < 1 and o.slots > 1:
                    cur[1] = value
                if curr < 2 and o.slots > 2:
                    cur[2] = value
        else:  # str_val with a second slot: a low-high pair
            if first:
                cur[0] = value
            if not more:
                cur[1] = value
        self.state[o.name] = tuple(cur)
        return 0

    def callback_number(self, ull: int) -> int:
        o = self.o
        cb = o.cb
        if cb in ("percent", "zone"):
            if cb == "percent" and is_percent(ull):
                self.state[o.name] = ("%", percent_of(ull))
            elif is_zone(ull):
                self.state[o.name] = ("z", ull - ZONE_BASE_VAL)
            else:
                self.state[o.name] = ull
            return 0
        if cb == "io_size":
            if ZONE_BASE_VAL + UINT_MAX < ull:
                pct = percent_of(ull)
                if pct > 100:
                    return self.err("fio: io_size values greater than 100% aren't supported")
                self.state[o.name] = ("%", pct)
            elif is_zone(ull):
                self.state[o.name] = ("z", ull - ZONE_BASE_VAL)
            else:
                self.state[o.name] = ull
            return 0
        if cb == "rwmix":
            self.state[o.name] = s32(ull) if o.fio == "int" else ull
            return 0
        # cpumask (dryrun), sqthread_poll_cpu: stored
        self.state[o.name] = s32(ull) if o.fio == "int" else ull
        return 0

    def floats(self, ptr: str, first: bool, curr: int) -> int:
        o = self.o
        cur = list(self.state.get(o.name) or ())
        if first:
            cur = []
        maxlen = o.maxlen or 20
        if curr >= maxlen:
            return self.err(f"the list exceeding max length {maxlen}")
        uf = scan_float(ptr)
        if uf is None:
            return self.err(f"not a floating point value: {ptr}")
        if o.fp is not None and (o.fp[0] or o.fp[1]):
            if uf > o.fp[1]:
                return self.err(f"value out of range: {uf:f} (range max: {o.fp[1]:f})")
            if uf < o.fp[0]:
                return self.err(f"value out of range: {uf:f} (range min: {o.fp[0]:f})")
        while len(cur) <= curr:
            cur.append(0.0)
        cur[curr] = uf
        self.state[o.name] = tuple(cur)
        self.r.debug.append(f"  out={_cfloat(uf)}")
        return 0

    def store(self, ptr: str) -> int:
        o = self.o
        if not ptr:
            return self.skip(ptr)
        if o.maxlen and len(ptr.encode("utf-8")) > o.maxlen - 1:
            self.state[o.name] = ptr
            return self.err(f"value exceeds max length of {o.maxlen}")
        self.state[o.name] = ptr
        if o.cb == "ioengine":
            for ival in sorted(o.choices, key=len, reverse=True):
                if _str_match(ival, ptr):
                    colon = ptr.find(":")
                    if colon >= 0:
                        self.state[o.name] = ptr[:colon]
                        if ival == "external":
                            path = c_lstrip(ptr[colon + 1:]).rstrip(_SPACE)
                            try:
                                ok = stat.S_ISREG(os.stat(path).st_mode)
                            except (OSError, ValueError):
                                ok = False
                            if not ok:
                                return self.err(f'fio: invalid external ioengine path "{path}"')
                    break
            return 0
        return self.callback(ptr)

    def range_(self, ptr: str, first: bool, more: bool, curr: int) -> int:
        o = self.o
        tmp = ptr[:127]
        cut = _find(tmp, ",")
        if cut is not None:
            tmp = tmp[:cut]
        sep = _find(tmp, "-")
        if sep is None:
            sep = _find(tmp, ":")
            if sep is None:
                return self.skip(tmp)
        lo = str_to_decimal(tmp[:sep], True, self.kb)
        hi = str_to_decimal(tmp[sep + 1:], True, self.kb)
        if lo is None or hi is None:
            return self.skip(tmp)
        for t in (tmp[:sep], tmp[sep + 1:]):
            if t[:1] in (" ", "\t") and str_to_decimal(c_lstrip(t), True, self.kb) != str_to_decimal(t, True, self.kb):
                self.r.blanks.append(t)
        if lo > hi:
            lo, hi = hi, lo
        pair = (lo % U64, hi % U64)
        cur = list(self.state.get(o.name) or (None, None, None))
        if first:
            cur[0] = pair
        if curr == 1:
            cur[1] = pair
        if curr == 2:
            cur[2] = pair
        if not more:
            if curr < 1:
                cur[1] = pair
            if curr < 2:
                cur[2] = pair
        self.state[o.name] = tuple(cur)
        return 0

    def boolean(self, ptr: Optional[str], first: bool, more: bool) -> int:
        o = self.o
        if ptr is None:
            if o.fio == "bool":
                self.r.debug.append("  ret=1, out=0")
                return self.err(f"{o.name}: needs a value")
            il = 1
        else:
            if not ptr:
                self.r.debug.append("  ret=1, out=0")
                return self.skip(ptr)
            u = strtoul(ptr, 16 if ("0x" in ptr or "0X" in ptr) else 10)
            if u is None:
                self.r.debug.append("  ret=1, out=0")
                return self.skip(ptr)
            il = s32(u % 2**32)
        self.r.debug.append(f"  ret=0, out={il}")
        maxval = 1 if o.fio == "bool" else (o.hi or 0)
        if maxval and il > maxval:
            return self.err(f"max value out of range: {il} ({maxval} max)")
        if o.lo and il < o.lo:
            return self.err(f"min value out of range: {il} ({o.lo} min)")
        if o.neg:
            il = int(not il)
        if first:
            self.state[o.name] = bool(il)
        return 0

    # -- the callbacks fio runs in --parse-only mode
    def callback(self, ptr: Optional[str]) -> int:
        o = self.o
        cb = o.cb
        if cb == "distribution":
            return self.distribution(ptr or "")
        if cb == "bssplit":
            return self.bssplit(ptr or "")
        if cb == "steadystate":
            return self.steadystate(ptr or "")
        if cb == "fst":
            return self.file_service(ptr or "")
        if cb == "log":
            self.state[o.name] = ptr
            return 0
        if o.fio == "str" and not o.choices:
            self.state[o.name] = ptr
        return 0

    def distribution(self, text: str) -> int:
        kind = self.state.get("random_distribution")
        dist: Dict[str, Any] = {"kind": kind}
        self.state["random_distribution"] = kind
        if kind in ("zoned", "zoned_abs"):
            ret, zones = self.zoned(text, kind == "zoned_abs")
            if ret == 0:
                dist["zones"] = zones
                self.state["random_distribution_value"] = dist
            return ret
        if kind not in ("zipf", "pareto", "normal"):
            self.state["random_distribution_value"] = dist
            return 0
        read = self._distribution_value(kind, text, "fio: random postfix parsing failed",
                                        "fio: zipf theta must different than 1.0", ("normal",))
        if isinstance(read, int):
            return read
        val, center = read
        dist["value"] = val
        dist["center"] = None if center == -1 else center
        self.state["random_distribution_value"] = dist
        return 0

    def zoned(self, text: str, absolute: bool) -> Tuple[int, Any]:
        pre = "zoned_abs:" if absolute else "zoned:"
        s = _strip(text)
        if not s.startswith(pre):
            self.err(f"fio: mismatch in zoned input <{s}>")
            return 1, None
        zones: List[Optional[List[List[int]]]] = [None, None, None]

        def ddir(d: int, part: str) -> int:
            split = self._split_ddir(part, absolute, ZONESPLIT_MAX)
            if split is None:
                return 1
            if not split:
                return 0
            entries = []
            for v1, v2 in split:
                access = v1 % 256
                size = v2 % U64 if absolute else v2 % 256
                entries.append([access, size])
            zones[d] = entries  # fio keeps the count even when the check below fails
            perc = sum(a for a, _ in entries if a != 255)
            perc_missing = sum(1 for a, _ in entries if a == 255)
            sperc = 0 if absolute else sum(s_ for _, s_ in entries if s_ != 255)
            sperc_missing = 0 if absolute else sum(1 for _, s_ in entries if s_ == 255)
            if perc > 100 or sperc > 100:
                zones[d] = []
                return self.err("fio: zone_split percentages add to more than 100%")
            if perc < 100:
                zones[d] = []
                return self.err(f"fio: access percentage don't add up to 100 for zoned random distribution "
                                f"(got={perc})")
            if perc_missing:
                if perc_missing == 1 and len(entries) == 1:
                    perc = 100
                for e in entries:
                    if e[0] == 255:
                        e[0] = ((100 - perc) // perc_missing) % 256
            if sperc_missing:
                if sperc_missing == 1 and len(entries) == 1:
                    sperc = 100
                for e in entries:
                    if e[1] == 255:
                        e[1] = ((100 - sperc) % 2**32 // sperc_missing) % 256
            return 0

        ret = _split_directions(s[len(pre):], ddir)
        for d in range(3):
            nr = len(zones[d] or [])
            self.r.debug.append(f"zone ddir {d} (nr={nr}): ")
            for j, (a, b) in enumerate(zones[d] or []):
                self.r.debug.append(f"\t{j}: {a}/{b}")
        return ret, [tuple(tuple(e) for e in z) if z else () for z in zones]

    def _split_ddir(self, text: str, absolute: bool, max_splits: int) -> Optional[List[Tuple[int, int]]]:
        """options.c ``split_parse_ddir``: ``SIZE[/PCT]:...`` entries, None on an error."""
        out: List[Tuple[int, int]] = []
        for token in text.split(":"):
            if not token:
                break
            size_text, slash, perc_text = token.partition("/")
            if slash:
                if absolute:
                    v = str_to_decimal(perc_text, True, self.kb)
                    if v is None:
                        self.err("fio: split conversion failed")
                        return None
                    perc = v % U64
                else:
                    p = atoi(perc_text) % U64
                    perc = 100 if p > 100 else (2**32 - 1 if p == 0 else p)
            else:
                perc = 0 if absolute else 2**32 - 1
            val = str_to_decimal(size_text, True, self.kb)
            if val is None:
                self.err("fio: split conversion failed")
                return None
            out.append((val % U64, perc))
            if len(out) == max_splits:
                self.r.errors.append(f"fio: hit max of {len(out)} split entries")
                break
        return out

    def bssplit(self, text: str) -> int:
        s = _strip(text)
        mixes: List[Optional[Tuple[Tuple[int, int], ...]]] = [None, None, None]

        def ddir(d: int, part: str) -> int:
            split = self._split_ddir(part, False, BSSPLIT_MAX)
            if split is None:
                return 1
            if not split:
                return 0
            percs = [p % 2**32 for _, p in split]
            perc = sum(p for p in percs if p != 2**32 - 1) % 2**32
            missing = sum(1 for p in percs if p == 2**32 - 1)
            if perc > 100 and missing > 1:
                return self.err("fio: bssplit percentages add to more than 100%")
            if missing:
                if missing == 1 and len(split) == 1:
                    perc = 100
                fill = ((100 - perc) % 2**32) // missing
                percs = [fill if p == 2**32 - 1 else p for p in percs]
            entries = sorted(zip((v for v, _ in split), percs), key=lambda e: s32(e[1]))
            mixes[d] = tuple(entries)
            return 0

        ret = _split_directions(s, ddir)
        if ret == 0:
            self.state["bssplit"] = tuple(mixes)
        return ret

    def steadystate(self, text: str) -> int:
        crit = self.state.get("steadystate")
        nr = _postfix(text)
        if nr is None:
            return self.err("fio: steadystate threshold must be specified in addition to criterion")
        pct = nr.find("%")
        if pct >= 0:
            num = _strip(nr[:pct])
            val = scan_float(num)
            if val is None:
                return self.err("fio: could not parse steadystate threshold percentage")
            self.state["steadystate_value"] = (crit, val, True)
            return 0
        if crit in ("iops", "iops_slope"):
            val = scan_float(nr)
            if val is None:
                return self.err("fio: steadystate IOPS threshold postfix parsing failed")
            self.state["steadystate_value"] = (crit, val, False)
            return 0
        ll = str_to_decimal(nr, True, self.kb)
        if ll is None:
            return self.err("fio: steadystate BW threshold postfix parsing failed")
        self.state["steadystate_value"] = (crit, float(ll), False)
        return 0

    def file_service(self, text: str) -> int:
        kind = str(self.state.get("file_service_type"))
        if kind in ("random", "roundrobin", "sequential"):
            return 0
        read = self._distribution_value(kind, text, "fio: file service type random postfix parsing failed",
                                        "fio: zipf theta must be different than 1.0", ("normal", "gauss"))
        return read if isinstance(read, int) else 0

    def _distribution_value(self, kind: str, text: str, postfix_error: str, zipf_error: str,
                            normal: Tuple[str, ...]) -> Any:
        """options.c ``str_random_distribution_cb`` / ``str_fst_cb``'s shared part: the ``:value[:center]``
        postfix and its range checks, ``(value, center)`` (-1: none); fio's error status on a refusal.
        The two callbacks word the zipf error differently in fio, and so here."""
        val = {"zipf": FIO_DEF_ZIPF, "pareto": FIO_DEF_PARETO}.get(kind, 0.0)
        center = -1.0
        nr = _postfix(text)
        if nr is not None:
            parsed = _split_parse_distr(nr)
            if parsed is None:
                return self.err(postfix_error)
            val, c = parsed
            if c is not None:
                center = c
        if center != -1 and (center < 0.0 or center > 1.0):
            return self.err("fio: distribution center out of range (0 <= center <= 1.0)")
        if kind == "zipf" and val == 1.0:
            return self.err(zipf_error)
        if kind == "pareto" and (val <= 0.0 or val >= 1.0):
            return self.err("fio: pareto input out of range (0 < input < 1.0)")
        if kind in normal and (val < 0.0 or val >= 100.0):
            return self.err("fio: normal deviation out of range (0 <= input < 100.0)")
        return val, center


def _split_directions(s: str, fn) -> int:
    """options.c ``str_split_parse``: ``read,write,trim`` parts, in fio's order (trim, write, read
    with commas; write, trim, read without), the last part given also standing for those after it."""
    first = s.find(",")
    if first >= 0:
        second = s.find(",", first + 1)
        if second >= 0:
            ret = fn(2, s[second + 1:])
            write = s[first + 1:second] if ret == 0 else s[first + 1:]
        else:
            ret = fn(2, s[first + 1:])
            write = s[first + 1:]
        if ret == 0:
            ret = fn(1, write)
        if ret == 0:
            ret = fn(0, s[:first])
        return ret
    ret = fn(1, s)
    if ret == 0:
        ret = fn(2, s)
    if ret == 0:
        ret = fn(0, s)
    return ret


def _split_parse_distr(nr: str) -> Optional[Tuple[float, Optional[float]]]:
    head, colon, tail = nr.partition(":")
    center = None
    if colon:
        center = scan_float(tail)
        if center is None:
            return None
    val = scan_float(head)
    if val is None:
        return None
    return val, center


def _too_large(val: int, maxval: int, is_uint: bool) -> bool:
    if not maxval:
        return False
    if is_uint:
        if s32(val) < 0:
            return s32(val) > s32(maxval)
        return (val % 2**32) > maxval
    return val > maxval


def _too_small(val: int, minval: int, is_uint: bool) -> bool:
    if not minval:
        return False
    if is_uint:
        return s32(val) < minval
    return val < minval % U64


def _find(s: str, ch: str) -> Optional[int]:
    i = s.find(ch)
    return None if i < 0 else i


def _str_match(ival: str, ptr: str) -> bool:
    """parse.c: ``strncmp(ival, ptr, max(strlen(ival), opt_len(ptr))) == 0`` -- the text up to its
    first ',' (else ':') is exactly the choice."""
    cut = ptr.find(",")
    if cut < 0:
        cut = ptr.find(":")
    token_len = len(ptr) if cut < 0 else cut
    n = max(len(ival), token_len)
    return (ival + "\0")[:n] == (ptr + "\0")[:n] if n <= len(ival) + 1 else False


def _postfix(text: str) -> Optional[str]:
    """options.c ``get_opt_postfix``: the text after the first ':', stripped; None without one."""
    i = text.find(":")
    if i < 0:
        return None
    return _strip(text[i + 1:])


def _strip(s: str) -> str:
    """parse.c ``strip_blank_front`` and ``strip_blank_end`` (which also cuts at ';' and '#')."""
    s = c_lstrip(s)
    for ch in ";#":
        i = s.find(ch)
        if i >= 0:
            s = s[:i]
    return s.rstrip(_SPACE + "".join(chr(c) for c in range(32)) + "\x7f")


def _c(ptr: Optional[str]) -> str:
    return "(null)" if ptr is None else ptr


def _cfloat(v: float) -> str:
    if v != v:
        return "-nan" if str(v).startswith("-") else "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return f"{v:f}"


def _shown(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else f"{text[:16]}...({len(text)} characters)"


# -- a job file ---------------------------------------------------------------------------------------

@dataclass
class SectionReading:
    name: str
    is_global: bool
    readings: List[Reading]
    ok: bool
    engine: str
    values: Dict[str, Any]  # the stored values after the section (a job's include its globals')
    where: Any = None
    listed: List[Reading] = field(default_factory=list)  # what fio --showcmd prints for it, in order
    order: List[Reading] = field(default_factory=list)  # the readings in fio's order (engine defaults too)


@dataclass
class FileReading:
    sections: List[SectionReading]
    complete: bool  # every section read (fio stops at the first section it drops)

    def showcmd(self) -> str:
        """What ``fio --showcmd FILE`` prints on stdout."""
        return _showcmd(self)

    def debug(self) -> List[str]:
        """The lines ``fio --debug=parse --parse-only FILE`` prints for the options' values."""
        return [line for s in self.sections for r in s.order for line in r.debug]


def _sort_key(pair: Tuple[int, Reading]) -> Tuple[int, int]:
    i, r = pair
    prio = r.spec.prio if (r.spec is not None and not r.engine_option) else 0
    return (-prio, i)


_ENGINE_TABLES = {"pvsync2": "pvsync2", "libaio": "libaio", "io_uring": "io_uring", "io_uring_cmd": "io_uring"}
"""The engines with options, by the option table they share (io_uring_cmd shares io_uring's)."""


def _engine_defaults(engine: str) -> List[Reading]:
    """fio fills an engine's option defaults when it loads the engine (init.c ``ioengine_load``):
    each is read like a written option (it shows in ``--debug=parse``)."""
    out = []
    for s in opts.OPTIONS.values():
        if engine in s.engines and s.default:
            r = Reading(s.name, s.default, s)
            _Handler(s, 1024, r, {}).handle(s.default)
            out.append(r)
    return out


def read_sections(sections: Sequence[Tuple[str, Any, Sequence[Any]]]) -> FileReading:
    """Reads `sections` -- ``(name, where, options)`` with options that have ``.name`` and
    ``.value`` (`jobfile.RawOption`) -- as fio 3.33 does."""
    out: List[SectionReading] = []
    defaults: Dict[str, Any] = {}
    default_list: List[Reading] = []
    global_engine: Optional[str] = None  # the engine fio loaded for the [global] defaults, if any
    for name, where, options in sections:
        is_global = name.startswith("global")
        state = dict(defaults)
        readings = [Reading(o.name, o.value, _main_spec(o.name), where=o) for o in options]
        ok = True
        unknown: List[Reading] = []
        order = [r for _, r in sorted(enumerate(readings), key=_sort_key)]
        parsed: List[Reading] = []
        for r in order:
            if r.spec is None:
                unknown.append(r)
                continue
            ok &= _read(r, r.spec, _kb_base(state), state)
            parsed.append(r)
        engine = str(state.get("ioengine") or opts.DEFAULT_ENGINE)
        if unknown:
            loadable = engine in LOADABLE_ENGINES
            if not loadable:
                ok = False
            table = _ENGINE_TABLES.get(engine)
            if loadable and table is not None:
                inherited = not is_global and global_engine is not None and _ENGINE_TABLES.get(global_engine) == table
                if not inherited and not (is_global and global_engine == engine):
                    parsed.extend(_engine_defaults(engine))
                if is_global:
                    global_engine = engine
            for r in unknown:
                s = opts.spec(r.name)
                if loadable and s is not None and engine in s.engines:
                    r.spec, r.engine_option = s, True
                    ok &= _read(r, s, 1024, state)  # fio reads engine options with kb_base 1024
                    parsed.append(r)
                    continue
                ok = False
                if not loadable:
                    r.errors.append(f"fio: engine {engine} not loadable")
                r.errors.append(f"Bad option <{r.name if r.value is None else r.name + '=' + r.value}>")
        sec = SectionReading(name, is_global, readings, ok, engine, state, where, order=parsed)
        out.append(sec)
        if not ok:
            return FileReading(out, False)
        listed = [r for r in parsed if r.ok and r.where is not None]
        if is_global:
            defaults = state
            default_list = default_list + listed
            sec.listed = list(default_list)
        else:
            sec.listed = listed
    return FileReading(out, True)


def _read(r: Reading, spec: OptionSpec, kb_base: int, state: Dict[str, Any]) -> bool:
    """Reads option `r` into `state`; whether fio accepts it. Sets the reading's typed value and,
    for an accepted value fio reads otherwise than it looks, its trap."""
    if _Handler(spec, kb_base, r, state).handle(r.value) != 0:
        if not r.errors:
            parts = [p for p in r.skipped if p.strip()]
            r.errors.append(f"cannot read '{_shown(parts[0])}'" if parts else "needs a value")
        return False
    r.ok = True
    r.typed = typed_value(spec, state)
    r.trap = _trap(r, spec, kb_base, state)
    return True


def typed_value(spec: OptionSpec, state: Dict[str, Any]) -> Any:
    """Option `spec`'s value as fio stores it, from a section's `state`."""
    if spec.cb == "distribution":
        return state.get("random_distribution_value")
    if spec.cb == "steadystate":
        return state.get("steadystate_value")
    return state.get(spec.name)


def _main_spec(name: str) -> Optional[OptionSpec]:
    """The main-table (and profile) option fio finds under `name`; engine options are looked up
    after the section's main options (with the engine they set)."""
    s = opts.spec(name)
    if s is None or s.engines or s.newer or s.absent:
        return None
    if name != s.name and name != s.alias:  # pragma: no cover - spec() resolves only these
        return None
    return s


def _kb_base(state: Dict[str, Any]) -> int:
    kb = state.get("kb_base")
    return int(kb) if kb in ("1000", "1024") else 1024


def _showcmd(f: FileReading) -> str:
    if not f.sections:
        return "\n"
    out = ["fio "]
    for s in f.sections:
        if not s.is_global:
            out.append(f"--name={s.name} ")
        if not s.ok:
            break
        for r in s.order:  # what fio prints on stdout while it reads the section
            if r.spec is not None and r.spec.fio == "soft_deprecated":
                out.append(f"Option {r.spec.name} is deprecated\n")
        for r in s.listed:
            delim = '"' if r.key == "description" else ""
            if r.value is None:
                out.append(f"--{r.key} ")
            else:
                out.append(f"--{r.key}={delim}{r.value}{delim} ")
    return "".join(out) + "\n"


# -- values fio reads otherwise than they look -------------------------------------------------------

_NUMERIC = ("int", "ull", "str_val", "str_val_time", "str_val_zone", "range")


def _trap(r: Reading, spec: OptionSpec, kb_base: int, state: Dict[str, Any]) -> Optional[str]:
    """Why ssdlab refuses a value fio accepted: a part fio could not read (fio prints an error and
    goes on without it), or a blank after '=' that changes the reading (fio keeps it: ``bs= 4k`` is 4
    bytes, ``filename= x`` names ' x')."""
    if r.errors and spec.fio != "soft_deprecated":
        return (f"{r.name}={_shown(r.value or '')}: fio complains ({r.errors[0]}) but goes on without that part; "
                f"write a value fio reads whole")
    junk = [p for p in r.skipped if p.strip()]
    if junk:
        return (f"{r.name}={_shown(r.value or '')}: fio cannot read the part '{_shown(junk[0])}' and silently goes "
                f"on without it; write a value fio reads whole")
    if r.blanks:
        return (f"{r.name}={_shown(r.value or '')}: fio reads the part '{_shown(r.blanks[0])}' otherwise than it "
                f"looks (' 4k' is 4 bytes to fio: it stops at the blank); remove the blank")
    if r.wrapped:
        text, kept = r.wrapped[0]
        return (f"{r.name}={_shown(r.value or '')}: fio keeps '{_shown(text)}' in a 32-bit number, which makes it "
                f"{kept}; write a smaller value")
    v = r.value
    if v is None or v[:1] not in (" ", "\t"):
        return None
    if spec.fio in ("str_store", "str") and not spec.choices:
        changed = True
    else:
        scratch = Reading(r.name, c_lstrip(v), spec)
        again = dict(state)
        changed = _Handler(spec, kb_base, scratch, again).handle(scratch.value) != 0 or \
            typed_value(spec, again) != r.typed
    if not changed:
        return None
    return (f"'{r.name}={_shown(v)}' has a blank after '=': fio keeps it in the value and reads the value "
            f"otherwise (' 4k' as 4 bytes); remove the blank")
