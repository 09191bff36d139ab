"""A spec's points: the cross product of its ``[grid]`` lists, times its ``[[points]]`` entries,
each over the ``[base]`` options, with a stable, readable directory name.

A point's name lists its varying keys in the spec's order, ``key=value`` joined by commas
(``drive=mlc-256,spare_area=25,gc=fifo``); file options show the file's stem. A name longer than
`MAX_NAME` characters, or one two points would share, ends in ``~`` and 8 hex digits of a hash of
the point's options, so names are unique and the same for the same spec on every machine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

__all__ = ["MAX_NAME", "Point", "expand", "point_name"]

MAX_NAME = 150
_FILE_KEYS = ("drive_file", "jobfile")


@dataclass(frozen=True)
class Point:
    """One run of a sweep.

    `values`: the varying keys' values as the spec wrote them (the table's first columns);
    `options`: every option of the point as written (base, grid and entry merged); `prepared`:
    the options as the scenario runs them (see `ssdlab.sweep.scenarios`); `label`: what the
    point's result label adds to the scenario's own (the varying keys that label does not name).
    """

    name: str
    values: Dict[str, Any]
    options: Dict[str, Any]
    prepared: Dict[str, Any]
    label: str


def _text(key: str, value: Any) -> str:
    """A value as it appears in a point's name and label."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str) and key in _FILE_KEYS:
        return Path(value).stem
    if isinstance(value, list):
        return "+".join(_text(key, v) for v in value)
    if isinstance(value, dict):
        return "+".join(f"{k}-{_text(key, v)}" for k, v in value.items())
    return str(value)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-.") or "_"


def _digest(options: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:8]


def point_name(values: Mapping[str, Any]) -> str:
    """The directory name of a point whose varying keys have `values` (before collisions)."""
    name = ",".join(f"{_safe(key)}={_safe(_text(key, value))}" for key, value in values.items())
    if len(name) > MAX_NAME:
        name = f"{name[: MAX_NAME - 9]}~{_digest(dict(values))}"
    return name


def expand(base: Mapping[str, Any], grid: Mapping[str, Sequence[Any]],
           entries: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    """The points' options as written, in order: for each combination of the grid's lists (the
    first key varying slowest), each ``[[points]]`` entry (or none), over `base`."""
    keys = list(grid)
    combos = [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
    out = []
    for combo in combos:
        for entry in entries or [{}]:
            out.append({**base, **combo, **entry})
    return out


def varying_keys(grid: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> List[str]:
    """The keys that vary between points: the grid's, then the entries' in order of appearance."""
    keys = list(grid)
    for entry in entries:
        keys += [k for k in entry if k not in keys]
    return keys


def name_points(all_values: Sequence[Dict[str, Any]], all_options: Sequence[Dict[str, Any]]) -> List[str]:
    """Unique names: a name two points would share gets the hash of each one's options."""
    names = [point_name(v) for v in all_values]
    counts: Dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [
        f"{n[: MAX_NAME - 9]}~{_digest(o)}" if counts[n] > 1 else n for n, o in zip(names, all_options)
    ]


def label(values: Mapping[str, Any], label_keys: Any) -> str:
    return ", ".join(f"{k} {_text(k, v)}" for k, v in values.items() if k not in label_keys)
