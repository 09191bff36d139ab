"""Reading fio job files: sections, options, ``include``, ``${VAR}``, and fio's value syntax.

The syntax is fio's (HOWTO, "Job file format"): an ini file whose ``[global]`` sections set
defaults for the job sections *below* them; one option per line, ``name=value`` or a bare
``name`` for flags; lines starting with ``;`` or ``#`` are comments; ``include FILE`` pulls in
options (relative to the including file, nestable, no sections); ``${VAR}`` in a value is replaced
by the environment variable (an unset variable is an error here, where fio would silently
substitute an empty string).

Values follow fio's number rules: sizes take k/m/g/t/p with an optional ``b``; with the default
``kb_base=1024``, ``4k`` is 4096 and -- fio's compatibility quirk -- ``4KiB`` is 4000 (``kb_base=1000``
swaps the two). Times are seconds unless a unit (``us``, ``ms``, ``s``, ``m``, ``h``, ``d``) is given;
``thinktime`` is in microseconds. ``(expr)`` arithmetic and the ``$pagesize``/``$mb_memory``/``$ncpus``
keywords are not supported (they depend on the host).

Every problem is an `SsdlabError` whose message starts with ``FILE:LINE:``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple, Union

from ssdlab.errors import SsdlabError
from ssdlab.inputs import check_path_text, read_text
from ssdlab.limits import MAX_NUMERAL_CHARS, parse_number
from ssdlab.sizes import MAX_SIZE
from ssdlab.fio import options as opts


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
        return self.name == "global"


@dataclass
class JobDef:
    """One job as fio sees it: the options of every ``[global]`` above it, then its own."""

    section: str
    index: int  # 1-based, fio's job number (log names use it)
    where: Location
    global_options: List[RawOption]
    own_options: List[RawOption]

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
                out.append(JobDef(s.name, len(out) + 1, s.where, list(inherited), list(s.options)))
        return out


# ---------------------------------------------------------------------------------------------
# Syntax

_SECTION = re.compile(r"^\[(?P<name>[^\]]*)\]\s*$")
_VAR = re.compile(r"\$\{(?P<name>[^}]*)\}")
_KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")
_MAX_INCLUDE_DEPTH = 16


_CONTROL = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def _control(text: str) -> Optional[str]:
    """The first control character in `text` (a line break of any kind, NUL, a tab, ...), if any.
    A job file's own lines may hold tabs (`_split_lines` reads them as spaces, as fio does); a
    value substituted from the environment may not: fio would keep a tab inside the value (in a
    file name, a log prefix, a number it reads up to the tab) where ssdlab would refuse or read
    it otherwise, and no legitimate value needs one."""
    m = _CONTROL.search(text)
    return m.group() if m else None


def _expand(value: str, where: Location, env: Mapping[str, str]) -> str:
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
        return text

    out = _VAR.sub(sub, value)
    for kw in _KEYWORDS:
        if kw in out:
            raise SsdlabError(f"{where}: fio keyword '{kw}' depends on the host; write the value instead")
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
    return lines


def _lines(text: str, base: Path, shown: str, env: Mapping[str, str], depth: int, in_include: bool):
    """Yields ``(Location, kind, name, value)`` with kind "section" or "option"; includes resolve
    against the directory `base`."""
    for number, line in enumerate(_split_lines(text, shown), start=1):
        where = Location(shown, number)
        stripped = line.strip()
        if not stripped or stripped[0] in ";#":
            continue
        m = _SECTION.match(stripped)
        if m:
            if in_include:
                raise SsdlabError(f"{where}: an included file may not contain [sections]")
            name = m.group("name").strip()
            if not name:
                raise SsdlabError(f"{where}: empty section name '[]'")
            yield where, "section", name, None
            continue
        if re.match(r"include\s", stripped) or stripped == "include":
            target = stripped[len("include"):].strip()
            if not target:
                raise SsdlabError(f"{where}: 'include' needs a file name")
            if depth >= _MAX_INCLUDE_DEPTH:
                raise SsdlabError(f"{where}: includes nested more than {_MAX_INCLUDE_DEPTH} deep (a loop?)")
            inc = Path(target)
            if not inc.is_absolute():
                inc = base / inc
            inc_shown = target if Path(target).is_absolute() else str(Path(shown).parent / target)
            try:
                inc_text = read_text(inc, "included file")
            except SsdlabError as err:
                raise SsdlabError(f"{where}: {err}") from None
            yield from _lines(inc_text, inc.parent, inc_shown, env, depth + 1, True)
            continue
        if "=" in stripped:
            name, value = stripped.split("=", 1)
            name, value = name.strip(), _expand(value.strip(), where, env)
        else:
            name, value = stripped, None
        if not name or not re.fullmatch(r"[A-Za-z0-9_\-]+", name):
            raise SsdlabError(f"{where}: cannot read '{stripped}': expected 'option=value', 'option' or '[section]'")
        yield where, "option", name, value


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
    return _build(_lines(_load(p, shown), p.parent, shown, env, 0, False), shown)


def parse_string(text: str, name: str = "job.fio", env: Optional[Mapping[str, str]] = None,
                 base: Union[str, Path, None] = None) -> JobFile:
    """Parses job-file `text`, reported as `name`; includes resolve under `base` (default: cwd)."""
    if not isinstance(text, str):
        raise SsdlabError(f"{name}: expected the job file's text as a string, got {type(text).__name__}")
    env = os.environ if env is None else env
    return _build(_lines(text, Path(base) if base is not None else Path.cwd(), name, env, 0, False), name)


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
    "us": 1, "usec": 1, "ms": 1000, "msec": 1000, "s": 1_000_000, "sec": 1_000_000,
    "m": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000,
}
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
        raise o.error(f"{o.name}={shown(v)}: unknown time unit '{m.group('unit')}' (use us, ms, s, m, h or d)")
    return _bounded(o, v, num * _TIME_UNITS_US[unit], "microseconds")


def parse_bool(o: RawOption) -> bool:
    if o.value is None or o.value == "":
        return True
    v = o.value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise o.error(f"{o.name}={shown(o.value)}: expected 0 or 1")


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
