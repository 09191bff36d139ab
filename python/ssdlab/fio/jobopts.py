"""Reading one fio job's options: its effective options (its own over the global ones) through
`JobOptions` (with ``kb_base``), flags, fio's ``read,write,trim`` value lists, and the options as
fio's JSON lists them.

The other modules of the translation read a job through these: `validate` checks every written
value, `access`, `jobplan` and `planner` give the values their meaning.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ssdlab.fio import options as opts
from ssdlab.fio.jobfile import JobDef, RawOption, parse_bool, parse_int

DIR_INDEX = {"r": 0, "w": 1, "t": 2}


def options_dict(options: List[RawOption]) -> Dict[str, str]:
    """Options as fio's JSON lists them: canonical name -> value text as written. Flags written
    without a value (``time_based``, ``norandommap``) are left out, as fio leaves them out."""
    return {o.key: o.value for o in options if o.value is not None}


class JobOptions:
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

    def fio_value(self, name: str) -> Any:
        """Option `name`'s value as fio 3.33 reads it (`ssdlab.fio.fioread`), None when the job does
        not set it: the value of the line that wins (the job's own over its globals', the last one
        written). Sizes in bytes and times in microseconds as ints; per-direction options as a tuple
        (read, write, trim) with None where fio keeps its default (``rate_min=,1m`` is
        ``(None, 1048576, 1048576)``); fio's 32-bit whole numbers as a C int (``flow=-2`` is -2, the
        weight 4294967294); a percentage ``("%", N)``; a choice as the choice matched (``rw=read:8k``
        is "read", the text after ':' is in the option's ``value``); booleans as bool; float lists
        as a tuple (``latency_percentile=99.5`` is ``(99.5,)``); ``random_distribution`` as
        ``{"kind", "value", "center"}`` or ``{"kind", "zones": [read, write, trim]}`` with zones
        ``(access %, size % or bytes)`` as fio fills them (``zoned:50/5:30/15:20/``: the last 80 %);
        ``steadystate`` as ``(criterion, limit, percent)``; bssplit as per-direction tuples of
        (bytes, percent)."""
        o = self.get(name)
        if o is None or self.job.file is None:
            return None
        return self.job.file.fio_value(o)


def bool_option(j: JobOptions, name: str, default: bool) -> bool:
    o = j.get(name)
    return default if o is None else parse_bool(o)


def is_set(j: JobOptions, name: str) -> bool:
    o = j.get(name)
    if o is None:
        return False
    if o.value is None or o.value.strip() == "":
        return True
    return parse_bool(o)


def split_dirs(o: RawOption) -> List[Optional[str]]:
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
