"""Reading fio job files: sections, options, ``include``, ``${VAR}``, fio's keywords, and fio's value syntax.

The syntax is fio 3.33's (HOWTO, "Job file format"; init.c ``__parse_jobs_ini``), read the way fio
reads it: an ini file whose ``[global]`` sections (any section whose name starts with "global")
set defaults for the job sections *below* them; one option per line, ``name=value`` or a bare
``name`` for flags; a ``;`` or ``#`` starts a comment anywhere on a line, also after a value
(``numjobs=4 ; four jobs``: fio cuts every line at its first ``;`` or ``#``, even inside a value);
blanks at either end of a line and before the ``=`` are dropped, but those after it are part of the
value, as in fio; ``include FILE`` pulls in options (fio looks for FILE in the current directory
first, then next to the including file; nestable; no sections); ``${VAR}`` in a value is replaced
by the environment variable (an unset variable is an error here, where fio would silently
substitute an empty string); fio's keywords ``$pagesize``, ``$mb_memory`` and ``$ncpus`` are this
host's values, and a value holding one is computed as fio computes it (with bc: whole numbers,
``+ - * / % ^`` and parentheses).

Values follow fio's number rules: sizes take k/m/g/t/p with an optional ``b``; with the default
``kb_base=1024``, ``4k`` is 4096 and -- fio's compatibility quirk -- ``4KiB`` is 4000 (``kb_base=1000``
swaps the two). Times are seconds unless a unit (``us``, ``ms``, ``s``, ``m``, ``h``, ``d``) is given;
``thinktime`` is in microseconds. ``(expr)`` arithmetic is refused, as the tested fio (built without
it) refuses it. How fio reads every option (acceptance, values) is `ssdlab.fio.fioread`'s; the
readers below (`parse_size`, `parse_time_us`, ...) read the values the simulator uses and refuse
those fio would read otherwise than they look (``1.5g`` is 1 byte to fio, ``10sec`` 10 microseconds).

Every problem is an `SsdlabError` whose message starts with ``FILE:LINE:``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from ssdlab.errors import SsdlabError
from ssdlab.inputs import check_path_text, read_text
from ssdlab.limits import MAX_NUMERAL_CHARS, parse_number
from ssdlab.sizes import MAX_SIZE
from ssdlab.fio import options as opts

if TYPE_CHECKING:  # pragma: no cover
    from ssdlab.fio.fioread import FileReading


@dataclass(frozen=True)
class Location:
    """Where an option or section was written."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class RawOption:
    """One ``name[=value]`` line, after ``${VAR}`` expansion."""

    name: str  # as written
    value: Optional[str]
    where: Location

    @property
    def key(self) -> str:
        """The canonical option name (aliases resolved)."""
        return opts.canonical(self.name)

    def text(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value}"

    def error(self, message: str) -> SsdlabError:
        return SsdlabError(f"{self.where}: {message}")


@dataclass
class Section:
    name: str
    where: Location
    options: List[RawOption] = field(default_factory=list)

    @property
    def is_global(self) -> bool:
        """fio takes every section whose name starts with "global" as a global one."""
        return self.name.startswith("global")


@dataclass
class JobDef:
    """One job as fio sees it: the options of every ``[global]`` above it, then its own."""

    section: str
    index: int  # 1-based, fio's job number (log names use it)
    where: Location
    global_options: List[RawOption]
    own_options: List[RawOption]
    file: Optional["JobFile"] = field(default=None, repr=False, compare=False)  # the file it came from

    @property
    def options(self) -> Dict[str, RawOption]:
        """Effective options by canonical name; the last one written wins."""
        merged: Dict[str, RawOption] = {}
        for o in self.global_options + self.own_options:
            merged[o.key] = o
        return merged

    def get(self, name: str) -> Optional[RawOption]:
        return self.options.get(opts.canonical(name))

    @property
    def name(self) -> str:
        """The job's name: its ``name=`` option if any, else the section name."""
        o = self.get("name")
        return o.value if o is not None and o.value else self.section


@dataclass
class JobFile:
    path: str
    sections: List[Section]
    _reading: Optional["FileReading"] = field(default=None, repr=False, compare=False)

    @property
    def global_options(self) -> List[RawOption]:
        """Options of every ``[global]`` section (fio's JSON ``global options``)."""
        return [o for s in self.sections if s.is_global for o in s.options]

    def jobs(self) -> List[JobDef]:
        out: List[JobDef] = []
        inherited: List[RawOption] = []
        for s in self.sections:
            if s.is_global:
                inherited = inherited + s.options
            else:
                out.append(JobDef(s.name, len(out) + 1, s.where, list(inherited), list(s.options), self))
        return out

    @property
    def reading(self) -> "FileReading":
        """How fio 3.33 reads the file's options (`ssdlab.fio.fioread`): accepted or not, typed values."""
        if self._reading is None:
            from ssdlab.fio import fioread

            self._reading = fioread.read_sections([(s.name, s.where, s.options) for s in self.sections])
        return self._reading

    def fio_value(self, o: RawOption) -> Any:
        """Option `o`'s value as fio 3.33 reads it (`fioread.Reading.typed`), None if fio did not read it."""
        for sec in self.reading.sections:
            for r in sec.readings:
                if r.where is o:
                    return r.typed
        return None

    def fio_problem(self, options: Optional[List[RawOption]] = None) -> Optional[SsdlabError]:
        """The first of `options` (default: all) that fio refuses, or accepts but reads otherwise than
        it looks (`fioread.Reading.trap`), as a one-line error naming the file, line and option."""
        wanted = None if options is None else {id(o) for o in options}
        for sec in self.reading.sections:
            for r in sec.readings:
                if wanted is not None and id(r.where) not in wanted:
                    continue
                o: RawOption = r.where
                if not r.ok:
                    if r.spec is None:
                        return o.error(_unknown(o))
                    return o.error(f"{shown(o.text(), 60)}: fio {opts.FIO_VERSION} refuses it: {r.errors[-1]}")
                if r.trap is not None:
                    return o.error(r.trap)
        return None


# ---------------------------------------------------------------------------------------------
# Syntax

_VAR = re.compile(r"\$\{(?P<name>[^}]*)\}")
_KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")
_MAX_INCLUDE_DEPTH = 16
_LINE_MAX = 8191
"""fio reads a line in pieces of at most 8191 bytes (init.c: fgets into OPT_LEN_MAX = 8192)."""
_NAME_MAX = 254
"""The longest section name fio keeps whole (init.c: ``sscanf(p, "[%255[^\n]]")``, less the ']')."""
_BLANKS = " \t\r\v\f"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def _control(text: str) -> Optional[str]:
    """The first control character in `text` (a line break of any kind, NUL, a tab, ...), if any.
    A job file's own lines may hold tabs (fio reads them as blanks); a value substituted from the
    environment may not: fio would keep a tab inside the value (in a file name, a log prefix, a
    number it reads up to the tab) where ssdlab would refuse or read it otherwise, and no
    legitimate value needs one."""
    m = _CONTROL.search(text)
    return m.group() if m else None


def strip_line(line: str) -> str:
    """fio's cleaning of a job-file line (parse.c ``strip_blank_front``, ``strip_blank_end``): blanks
    dropped at the start, the line cut at its first ``;`` and at its first ``#`` (wherever they are:
    ``runtime=3600 # max`` is ``runtime=3600``, ``description=a;b`` is ``description=a``), then blanks
    dropped at the end."""
    line = line.lstrip(_BLANKS + "\n")
    for mark in ";#":
        cut = line.find(mark)
        if cut >= 0:
            line = line[:cut]
    return line.rstrip(_BLANKS + "\n")


def host_keywords() -> Dict[str, int]:
    """fio's keywords and this host's values (options.c ``fio_keywords_init``): the page size, the
    physical memory in MiB and the configured CPUs."""
    page = os.sysconf("SC_PAGE_SIZE")
    return {"$pagesize": page, "$mb_memory": os.sysconf("SC_PHYS_PAGES") * page // 2**20,
            "$ncpus": os.sysconf("SC_NPROCESSORS_CONF")}


def _bc(expr: str, where: Location, text: str) -> str:
    """What ``echo EXPR | bc`` prints, for the whole-number arithmetic fio hands to bc after it has
    replaced a keyword (options.c ``bc_calc``); anything else bc would not compute is refused."""
    tokens = re.findall(r"\s*([0-9]+|[-+*/%^()])", expr)
    if "".join(tokens) != re.sub(r"\s+", "", expr) or not tokens:
        raise SsdlabError(f"{where}: {shown(text)}: fio hands '{shown(expr)}' to bc after replacing the keyword, "
                          f"and ssdlab computes only whole numbers with + - * / % ^ and parentheses; write the value")
    pos = 0

    def peek() -> Optional[str]:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def fail() -> SsdlabError:
        return SsdlabError(f"{where}: {shown(text)}: bc cannot compute '{shown(expr)}' (fio would drop the option); "
                           f"write the value")

    def atom() -> int:
        t = take() if peek() is not None else None
        if t == "(":
            v = add()
            if peek() != ")":
                raise fail()
            take()
            return v
        if t == "-":
            return -power()
        if t is not None and t.isdigit():
            if len(t) > 40:
                raise fail()
            return int(t)
        raise fail()

    def power() -> int:
        base = atom()
        if peek() == "^":
            take()
            exp = unary_power()
            if exp < 0 or exp > 256 or abs(base) > 2**64:
                raise fail()
            return base ** exp
        return base

    def unary_power() -> int:
        if peek() == "-":
            take()
            return -unary_power()
        return power()

    def mul() -> int:
        v = power()
        while peek() in ("*", "/", "%"):
            op = take()
            r = power()
            if op == "*":
                v *= r
            else:
                if r == 0:
                    raise fail()
                q = abs(v) // abs(r) * (1 if (v >= 0) == (r >= 0) else -1)  # bc truncates toward zero
                v = q if op == "/" else v - q * r
        return v

    def add() -> int:
        v = mul()
        while peek() in ("+", "-"):
            op = take()
            v = v + mul() if op == "+" else v - mul()
        return v

    value = add()
    if peek() is not None or len(str(value)) > 68:  # bc would print more than one line
        raise fail()
    return str(value)


def _keywords(name: str, value: str, where: Location, keywords: Mapping[str, int]) -> str:
    """fio's keyword replacement and bc arithmetic (options.c ``fio_keyword_replace``) on the option
    ``name=value``; the new value."""
    if not any(k in value for k in _KEYWORDS):
        return value
    out = value
    for k in _KEYWORDS:
        out = out.replace(k, str(keywords[k]))
    whole = f"{name}={out}"
    if any(c in whole for c in "+-*/") and "'" not in whole and len(whole) < 128 and len(out) <= 100:
        return _bc(out, where, f"{name}={value}")
    return out


def _expand(value: str, where: Location, env: Mapping[str, str], name: str = "",
            keywords: Optional[Mapping[str, int]] = None) -> str:
    def sub(m: "re.Match[str]") -> str:
        var = m.group("name")
        if not var or var not in env:
            raise SsdlabError(
                f"{where}: environment variable '{var}' is not set (fio would substitute an empty "
                f"string); export it or write the value"
            )
        text = env[var]
        if not isinstance(text, str):
            raise SsdlabError(f"{where}: environment variable '{var}' is not text")
        bad = _control(text)
        if bad is not None:
            # A value may never add lines (and so options, such as a second filename=) to the job.
            raise SsdlabError(
                f"{where}: environment variable '{var}' holds a control character ({bad!r}); a value "
                f"substituted into a job file must be one line of text without tabs or other control characters"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SsdlabError(f"{where}: environment variable '{var}' is not valid UTF-8 text") from None
        if "${" in text:  # fio would expand it again when it reads the job file
            raise SsdlabError(f"{where}: environment variable '{var}' holds '${{'; a substituted value may not "
                              f"name another variable")
        if ";" in text or "#" in text:
            # fio keeps them (it cuts comments before substituting), but the job file a device run
            # hands to fio holds the value, where fio would cut it.
            raise SsdlabError(f"{where}: environment variable '{var}' holds ';' or '#', which start a comment in a "
                              f"job file; a substituted value may not hold them")
        return text

    out = _VAR.sub(sub, value)
    if any(k in out for k in _KEYWORDS):
        out = _keywords(name, out, where, keywords if keywords is not None else host_keywords())
    return out


def _load(path: Path, shown: str) -> str:
    return read_text(path, "job file")


def _split_lines(text: str, shown: str) -> List[str]:
    """fio's lines: split at newlines only (CR LF accepted); any other control character is an
    error, so what ssdlab parses is exactly what fio reads."""
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            line = line[:-1]
            lines[number - 1] = line
        bad = _control(line.replace("\t", " "))
        if bad is not None:
            raise SsdlabError(f"{shown}:{number}: the line holds a control character ({bad!r}); job files are "
                              f"plain text, one option per line")
        if len(line.encode("utf-8")) > _LINE_MAX:
            raise SsdlabError(f"{shown}:{number}: the line is longer than the {_LINE_MAX} bytes fio reads as one "
                              f"line (it would read the rest as another line)")
    return lines


def _include_path(target: str, including: Path, base: Optional[Path]) -> Path:
    """Where fio finds an included file (init.c): `target` as it is (relative to the current
    directory) when it exists, else next to the including file."""
    inc = Path(target)
    if inc.is_absolute():
        return inc
    if base is not None:  # parse_string: includes resolve under its base
        return base / inc
    if os.path.lexists(target):
        return inc
    return including.parent / inc


def _lines(text: str, including: Path, base: Optional[Path], shown: str, env: Mapping[str, str], depth: int,
           in_include: bool):
    """Yields ``(Location, kind, name, value)`` with kind "section" or "option"."""
    keywords: Optional[Dict[str, int]] = None
    for number, line in enumerate(_split_lines(text, shown), start=1):
        where = Location(shown, number)
        stripped = strip_line(line)
        if not stripped:
            continue
        if stripped.startswith("["):
            if in_include:
                raise SsdlabError(f"{where}: an included file may not contain [sections]")
            if len(stripped) < 2 or not stripped.endswith("]") or "]" in stripped[1:-1]:
                raise SsdlabError(f"{where}: cannot read '{shown_text(stripped)}': a section line is [NAME] (fio "
                                  f"would take the name as all but its last character)")
            name = stripped[1:-1]
            if not name.strip():
                raise SsdlabError(f"{where}: empty section name '{stripped}'")
            if len(name) > _NAME_MAX:
                raise SsdlabError(f"{where}: a section name of {len(name)} characters; fio keeps at most {_NAME_MAX}")
            yield where, "section", name, None
            continue
        if stripped.startswith("include"):
            if stripped[7:8] not in (" ", "\t") or not stripped[8:]:
                raise SsdlabError(f"{where}: cannot read '{shown_text(stripped)}': fio takes every line that "
                                  f"starts with 'include' as 'include FILE'")
            target = stripped[8:]
            if target[:1] in (" ", "\t"):
                raise SsdlabError(f"{where}: include '{shown_text(target)}': fio looks for a file whose name starts "
                                  f"with the blanks after the first one; write one blank after 'include'")
            if depth >= _MAX_INCLUDE_DEPTH:
                raise SsdlabError(f"{where}: includes nested more than {_MAX_INCLUDE_DEPTH} deep (a loop?)")
            inc = _include_path(target, including, base)
            inc_shown = str(inc) if base is None else str(Path(shown).parent / target)
            if base is None and not Path(target).is_absolute() and inc == Path(target):
                inc_shown = target
            try:
                inc_text = read_text(inc, "included file")
            except SsdlabError as err:
                raise SsdlabError(f"{where}: {err}") from None
            yield from _lines(inc_text, inc, None if base is None else inc.parent, inc_shown, env, depth + 1, True)
            continue
        if "=" in stripped:
            name, value = stripped.split("=", 1)
            name = name.rstrip(_BLANKS)
        else:
            name, value = stripped, None
        if not name or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
            raise SsdlabError(f"{where}: cannot read '{shown_text(stripped)}': expected 'option=value', 'option' or "
                              f"'[section]'")
        if value is not None and ("${" in value or "$" in value):
            if keywords is None and any(k in value for k in _KEYWORDS):
                keywords = host_keywords()
            value = _expand(value, where, env, name, keywords)
            if len(f"{name}={value}".encode("utf-8")) > _LINE_MAX:
                raise SsdlabError(f"{where}: '{name}' is longer than the {_LINE_MAX} bytes fio takes after "
                                  f"substituting ${{VAR}}")
        yield where, "option", name, value


def shown_text(text: str) -> str:
    return shown(text, 60)


def _unknown(o: RawOption) -> str:
    """Why option `o`, which fio did not find, is refused."""
    s = opts.spec(o.name)
    if s is not None and s.engines:
        return (f"option '{o.name}' belongs to ioengine={', '.join(s.engines)}; fio {opts.FIO_VERSION} refuses it "
                f"with this job's ioengine")
    if s is not None and s.newer:
        return f"option '{o.name}' is not known to fio {opts.FIO_VERSION}"
    return f"option '{o.name}' is not supported by the simulator{opts.suggestion(o.name)}"


def _build(lines, shown: str) -> JobFile:
    sections: List[Section] = []
    for where, kind, name, value in lines:
        if kind == "section":
            sections.append(Section(name, where))
        else:
            if not sections:
                raise SsdlabError(f"{where}: option '{name}' comes before any [section]")
            sections[-1].options.append(RawOption(name, value, where))
    jf = JobFile(shown, sections)
    if not jf.jobs():
        raise SsdlabError(f"{shown}: no job sections (only [global]); add a [job] section")
    return jf


def parse(path: Union[str, Path], env: Optional[Mapping[str, str]] = None) -> JobFile:
    """Parses the job file at `path` (``${VAR}`` from `env`, default ``os.environ``)."""
    env = os.environ if env is None else env
    shown = check_path_text(path, "job file")
    p = Path(shown)
    return _build(_lines(_load(p, shown), p, None, shown, env, 0, False), shown)


def parse_string(text: str, name: str = "job.fio", env: Optional[Mapping[str, str]] = None,
                 base: Union[str, Path, None] = None) -> JobFile:
    """Parses job-file `text`, reported as `name`; includes resolve under `base` (default: cwd)."""
    if not isinstance(text, str):
        raise SsdlabError(f"{name}: expected the job file's text as a string, got {type(text).__name__}")
    env = os.environ if env is None else env
    root = Path(base) if base is not None else Path.cwd()
    return _build(_lines(text, root / name, root, name, env, 0, False), name)


# ---------------------------------------------------------------------------------------------
# Values
#
# Every numeral in a job file goes through `_numeral`: ASCII digits only (no full-width or other
# Unicode digits, which Python's int() would take), at most `MAX_NUMERAL_CHARS` characters (so a
# 5000-digit value is one line, not Python's ValueError, and no product overflows a float), no
# inf/nan; and every size or time is at most 2**64-1 (fio's own counters are 64-bit). The option
# and the line are named in every refusal.

_SIZE = re.compile(r"(?P<num>0[xX][0-9a-fA-F]+|[0-9]+)(?P<unit>[A-Za-z%]*)")
_FRACTION = re.compile(r"[0-9]+\.[0-9]*[A-Za-z%]*")
_TIME = re.compile(r"(?P<num>[0-9]+)(?P<unit>[A-Za-z]*)")
_HEX = re.compile(r"(?P<sign>[+-]?)0[xX](?P<digits>[0-9a-fA-F]+)")
_TIME_UNITS_US = {
    "us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 1_000_000,
    "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000,
}
"""The time units fio knows (parse.c ``get_mult_time``: "us..." and "ms..." by their start, "s", "m",
"h", "d" exactly). Any other word after a number multiplies it by one microsecond: fio reads
``10sec`` and ``5min`` as 10 and 5 microseconds, so they are refused."""
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
MAX_VALUE = MAX_SIZE
"""The largest size (bytes) or time (microseconds) a job file may give: 2**64-1, fio's counters."""


def shown(text: str, limit: int = 40) -> str:
    """`text` for an error message: whole when short, else its start and its length."""
    return text if len(text) <= limit else f"{text[:16]}...({len(text)} characters)"


def _need_value(o: RawOption) -> str:
    if o.value is None or o.value == "":
        raise o.error(f"option '{o.name}' needs a value")
    v = o.value
    if v.startswith("("):
        raise o.error(f"{o.name}={shown(v)}: arithmetic expressions are not supported; write the value")
    return v


def _numeral(o: RawOption, text: str, integer: bool = True) -> Union[int, float]:
    """`text` as a bounded ASCII numeral (`ssdlab.limits.parse_number`); integers may also be fio's
    hexadecimal ``0x...``. Errors name the option and its line."""
    t = text.strip()
    what = f"{o.where}: {o.name}"
    if integer:
        m = _HEX.fullmatch(t)
        if m is not None:
            if len(t) > MAX_NUMERAL_CHARS:
                parse_number(t, what, integer=True)  # raises: too long
            n = int(m.group("digits"), 16)
            return -n if m.group("sign") == "-" else n
    return parse_number(t, what, integer=integer)


def _bounded(o: RawOption, v: str, n: int, unit: str) -> int:
    if n > MAX_VALUE:
        raise o.error(f"{o.name}={shown(v)}: more than 2**64-1 {unit} (fio's largest value)")
    return n


def parse_size(o: RawOption, kb_base: int = 1024, allow_percent: bool = False,
               value: Optional[str] = None) -> Union[int, Tuple[str, float]]:
    """A byte count, or ``("%", percent)`` when `allow_percent` and the value ends in ``%``."""
    v = value if value is not None else _need_value(o)
    v = v.strip()
    if _FRACTION.fullmatch(v):
        if allow_percent and v.endswith("%"):
            pct = float(_numeral(o, v[:-1], integer=False))
            if not 0 < pct <= 100:
                raise o.error(f"{o.name}={shown(v)}: a percentage must be above 0 and at most 100")
            return ("%", pct)
        whole = v.split('.')[0]
        raise o.error(f"{o.name}={shown(v)}: fio reads only whole numbers here (it would take '{shown(v)}' as "
                      f"{shown(whole)} byte{'s' if whole != '1' else ''}); write a whole number in a smaller unit")
    m = _SIZE.fullmatch(v)
    if not m:
        raise o.error(f"{o.name}={shown(v)}: not a size (examples: 4096, 4k, 128KiB, 1m, 10g)")
    num = int(_numeral(o, m.group("num")))
    unit = m.group("unit").lower()
    if unit and m.group("num")[:2].lower() == "0x":
        raise o.error(f"{o.name}={shown(v)}: fio reads no unit after a hexadecimal number (it takes '{shown(v)}' "
                      f"as {num} bytes); write the size in decimal with its unit")
    if unit == "%":
        if not allow_percent:
            raise o.error(f"{o.name}={shown(v)}: a percentage is not allowed here")
        if not 0 < num <= 100:
            raise o.error(f"{o.name}={shown(v)}: a percentage must be between 1 and 100")
        return ("%", float(num))
    if unit in ("", "b"):
        return _bounded(o, v, num, "bytes")
    iec = unit.endswith("ib") and len(unit) == 3
    head = unit[0]
    if head not in _POWERS or (not iec and unit not in (head, head + "b", head + "i")):
        raise o.error(f"{o.name}={shown(v)}: unknown size unit '{m.group('unit')}' (use k, m, g, t, p, optionally with b)")
    # fio's compatibility rule: with kb_base=1024, k/kb are binary and KiB is decimal; 1000 swaps.
    base = kb_base
    if iec:
        base = 1000 if kb_base == 1024 else 1024
    return _bounded(o, v, num * base ** _POWERS[head], "bytes")


def parse_time_us(o: RawOption, default_unit_us: int, value: Optional[str] = None) -> int:
    """A time in microseconds; a bare number is in `default_unit_us` units."""
    v = (value if value is not None else _need_value(o)).strip()
    m = _TIME.fullmatch(v)
    if not m:
        raise o.error(f"{o.name}={shown(v)}: not a time (examples: 60, 30s, 500ms, 10m, 1h)")
    num = int(_numeral(o, m.group("num")))
    unit = m.group("unit").lower()
    if unit == "":
        return _bounded(o, v, num * default_unit_us, "microseconds")
    if unit not in _TIME_UNITS_US:
        fio_us = num * (1 if unit.startswith("us") else 1000 if unit.startswith("ms") else 1)
        raise o.error(f"{o.name}={shown(v)}: unknown time unit '{m.group('unit')}' (fio would read it as "
                      f"{fio_us} microseconds; use us, ms, s, m, h or d)")
    return _bounded(o, v, num * _TIME_UNITS_US[unit], "microseconds")


def parse_bool(o: RawOption) -> bool:
    """A flag or boolean: a bare flag (or an empty value) is true; else 0 or 1, which fio reads as a
    number (``sscanf("%u")``: also ``0x1``, ``01``); fio refuses ``true``, ``yes``, ``on``."""
    if o.value is None or o.value == "":
        return True
    v = o.value.strip()
    if re.fullmatch(r"\+?(0[xX])?0*[01]", v):
        return v.endswith("1")
    raise o.error(f"{o.name}={shown(o.value)}: expected 0 or 1 (fio reads booleans as numbers)")


def parse_int(o: RawOption, minimum: Optional[int] = None, maximum: Optional[int] = None,
              value: Optional[str] = None) -> int:
    """A whole number (decimal or ``0x`` hexadecimal), within [`minimum`, `maximum`] when given."""
    v = (value if value is not None else _need_value(o)).strip()
    n = int(_numeral(o, v))
    if minimum is not None and n < minimum:
        raise o.error(f"{o.name}={shown(v)}: must be at least {minimum}")
    if maximum is not None and n > maximum:
        raise o.error(f"{o.name}={shown(v)}: must be at most {maximum}")
    return n


def parse_float(o: RawOption, value: Optional[str] = None) -> float:
    """A finite number (ASCII decimal, optional point and exponent)."""
    v = (value if value is not None else _need_value(o)).strip()
    return float(_numeral(o, v, integer=False))
