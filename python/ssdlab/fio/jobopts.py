"""Reading one fio job's options: its effective options (its own over the global ones) through
`JobOptions` (with ``kb_base``), flags, fio's ``read,write,trim`` value lists, and the options as
fio's JSON lists them.

The other modules of the translation read a job through these: `validate` checks every written
value, `access`, `jobplan` and `planner` give the values their meaning.
"""

from __future__ import annotations

from typing import Dict, List, Optional

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
