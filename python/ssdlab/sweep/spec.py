"""Reading and checking a sweep spec (docs/sweeps.md).

    scenario = "consistency"
    [base]                      # options of every point
    capacity = "16GiB"
    [grid]                      # lists whose cross product gives the points
    spare_area = [0, 25]
    gc = ["greedy", "fifo"]
    [[points]]                  # optional explicit combinations, each times the grid
    drive = "mlc-256"

Keys are the command's option names with ``_`` for ``-`` (``spare_area`` is ``--spare-area``).
Every mistake is one `SsdlabError` line naming the file, the table and the key and saying how to
mend it, raised before anything runs. What only a run can tell (a spare area of 100 %, a capacity
the drive cannot be built at) is left to the point, which then fails alone.

The spec's hash covers its meaning, not its layout: the scenario, the tables (``[base]`` keys in
any order; the grid's keys and lists in their order, since they name and order the points), and
the contents of the drive and job files it names. Comments and spacing do not change it.
"""

from __future__ import annotations

import datetime
import difflib
import hashlib
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple, Union

from ssdlab.errors import SsdlabError, shorten_numerals
from ssdlab.inputs import parse_toml, read_text
from ssdlab.sweep import points as pts
from ssdlab.sweep.points import Point
from ssdlab.sweep.scenarios import SCENARIOS, BadValue, Scenario, scenario as find_scenario

__all__ = ["MAX_POINTS", "SweepSpec", "describe", "load_spec"]

_TABLES = ("scenario", "base", "grid", "points")
SpecSource = Union[str, Path, Mapping[str, Any]]

MAX_POINTS = 10_000
"""The most points one spec may have (the grid's lists' lengths multiplied, times the
``[[points]]`` entries): checked before a single value is converted, so a 1000 x 1000 grid is one
error line, not hours of work and a huge ``sweep.json``. Split a larger study into several specs."""
MAX_VALUE_DEPTH = 8
"""The deepest nesting of lists and tables in one spec value (the spec's own values nest at most 2
deep: a grid list of ``then`` lists)."""
MAX_WHOLE = 2**64
"""Whole numbers in a spec lie strictly between -2**64 and 2**64 (a seed is below 2**64; sizes are
bytes)."""


@dataclass(frozen=True)
class SweepSpec:
    """A checked spec and its points (see the module doc)."""

    scenario: Scenario
    base: Dict[str, Any]
    grid: Dict[str, List[Any]]
    entries: List[Dict[str, Any]]
    points: List[Point]
    varying: List[str]
    source: str
    hash: str

    def canonical(self) -> Dict[str, Any]:
        """The spec as plain data (what sweep.json records)."""
        return _canonical(self.scenario.name, self.base, self.grid, self.entries)


def _canonical(name: str, base: Mapping[str, Any], grid: Mapping[str, List[Any]],
               entries: List[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "scenario": name,
        "base": dict(sorted(base.items())),
        "grid": [[k, v] for k, v in grid.items()],
        "points": [dict(sorted(e.items())) for e in entries],
    }


def _suggest(word: str, choices: List[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


class _Reader:
    def __init__(self, source: str, spec_dir: Path) -> None:
        self.source = source
        self.spec_dir = spec_dir
        self.cache: Dict[Tuple[str, str], Any] = {}

    def fail(self, message: str) -> SsdlabError:
        # a value the checks quote back (also inside a message from the CLI's checks) is shortened here,
        # so the Python API's message is as short as the CLI's error line
        return SsdlabError(shorten_numerals(f"{self.source}: {message}"))

    def key(self, sc: Scenario, table: str, key: Any) -> str:
        if not isinstance(key, str) or sc.option(key) is None:
            hint = _suggest(key, sc.keys) if isinstance(key, str) and len(key) <= 100 else ""
            if isinstance(key, str) and "-" in key and sc.option(key.replace("-", "_")) is not None:
                hint = f" (write it {key.replace('-', '_')}: spec keys use _ for the options' -)"
            raise self.fail(f"{table}: {sc.name} has no option {_key_text(key)}{hint}; its options are "
                            f"{', '.join(sc.keys)}")
        return key

    def plain(self, where: str, value: Any) -> None:
        """Refuses what is no spec value before anything else looks at it: whole numbers beyond
        64 bits (a TOML file may hold 400 digits; 5000 would not even print), lists and tables
        nested more than `MAX_VALUE_DEPTH` deep, table keys that are not strings, and (in a dict
        spec) objects that TOML cannot write."""
        stack = [(value, 0)]
        while stack:
            v, depth = stack.pop()
            if isinstance(v, (bool, float, str, datetime.date, datetime.time)):
                continue
            if isinstance(v, int):
                if not -MAX_WHOLE < v < MAX_WHOLE:
                    raise self.fail(f"{where}: {_show(v)} is beyond 64 bits; give a whole number between "
                                    f"-2**64 and 2**64")
                continue
            if isinstance(v, (list, dict)):
                if depth >= MAX_VALUE_DEPTH:
                    raise self.fail(f"{where}: nests lists or tables more than {MAX_VALUE_DEPTH} deep; a spec value "
                                    "is a number, a string, a boolean or a short list of them")
                if isinstance(v, dict):
                    for k, item in v.items():
                        if not isinstance(k, str):
                            raise self.fail(f"{where}: the table key {_show(k)} is not a string")
                        stack.append((item, depth + 1))
                else:
                    stack.extend((item, depth + 1) for item in v)
                continue
            raise self.fail(f"{where}: a {type(v).__name__} is not a spec value; use numbers, strings, booleans, "
                            "lists and tables (as TOML has them)")

    def value(self, sc: Scenario, where: str, key: str, value: Any) -> Any:
        """Checks one value; returns what the run gets (cached: a drive file is read once)."""
        self.plain(where, value)
        slot = (key, json.dumps(value, sort_keys=True, default=str))
        if slot not in self.cache:
            option = sc.option(key)
            assert option is not None
            try:
                self.cache[slot] = option.convert(value, self.spec_dir)
            except BadValue as err:
                raise self.fail(f"{where} = {_show(value)}: {err}") from None
        return self.cache[slot]


_SHOWN_CHARS = 80


def _digits(n: int) -> int:
    """The decimal digits of `n` (exactly, for any size: `str` refuses beyond 4300 digits)."""
    n = abs(n)
    d = int(math.log10(n)) + 1 if n else 1
    if n >= 10**d:
        d += 1
    elif d > 1 and n < 10 ** (d - 1):
        d -= 1
    return d


def _show(value: Any) -> str:
    """A value as a message shows it: one line, at most about 80 characters, and never an
    exception (an int of 5000 digits has no decimal text in Python 3.11)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -10**40 < value < 10**40:
        return f"a number of {_digits(value)} digits"
    try:
        text = json.dumps(value) if isinstance(value, (str, list, dict, bool)) else repr(value)
    except (TypeError, ValueError, RecursionError):
        text = f"a {type(value).__name__}"
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS - 3]}..."


def _key_text(key: Any) -> str:
    if isinstance(key, str):
        return repr(key) if len(key) <= 60 else repr(f"{key[:57]}...")
    return _show(key)


def _read_source(source: Any) -> Tuple[Dict[str, Any], str, Path]:
    if isinstance(source, Mapping):
        return dict(source), "sweep spec", Path.cwd()
    if isinstance(source, bytes):
        source = os.fsdecode(source)
    if not isinstance(source, (str, os.PathLike)):
        raise SsdlabError(f"sweep spec: expected a TOML file's path, a dict of the spec's tables or a SweepSpec "
                          f"(ssdlab.sweep.load_spec), got {type(source).__name__}")
    # The hardened reader: a regular file only, no blocking on a FIFO, a size bound.
    text = read_text(source, "sweep spec")
    path = Path(source)
    data = parse_toml(text, str(path))
    return data, str(path), path.resolve().parent


def load_spec(source: SpecSource) -> SweepSpec:
    """Reads and checks a spec: a TOML file's path, or the same tables as a dict. Relative file
    names in a spec file (``drive_file``, ``jobfile``) are relative to the spec's directory; in a
    dict, to the current directory."""
    data, name, spec_dir = _read_source(source)
    r = _Reader(name, spec_dir)
    for key in data:
        if key not in _TABLES:
            hint = _suggest(key, list(_TABLES)) if isinstance(key, str) and len(key) <= 100 else ""
            raise r.fail(f"unknown key {_key_text(key)}{hint}; a spec has scenario = \"...\", "
                         "[base], [grid] and [[points]] (docs/sweeps.md)")
    if "scenario" not in data:
        raise r.fail("no scenario; start the spec with e.g. scenario = \"consistency\"")
    name = data["scenario"]
    if not isinstance(name, str) or len(name) > 60:
        raise r.fail(f"scenario = {_show(name)}: not a scenario; choose one of {', '.join(SCENARIOS)}")
    try:
        sc = find_scenario(name)
    except SsdlabError as err:
        raise r.fail(str(err)) from None
    base = data.get("base", {})
    grid = data.get("grid", {})
    entries = data.get("points", [])
    if not isinstance(base, dict):
        raise r.fail("base must be a table: write [base] and key = value lines under it")
    if not isinstance(grid, dict):
        raise r.fail("grid must be a table: write [grid] and key = [value, ...] lines under it")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise r.fail("points must be an array of tables: write [[points]] before each point's key = value lines")

    for key, value in base.items():
        r.value(sc, f"[base] {r.key(sc, '[base]', key)}", key, value)
    for key, values in grid.items():
        r.key(sc, "[grid]", key)
        if key in base:
            raise r.fail(f"{key} is in both [base] and [grid]; keep it in one of them")
        if not isinstance(values, list):
            r.plain(f"[grid] {key}", values)
            raise r.fail(f"[grid] {key} = {_show(values)}: a grid key takes a list, e.g. {key} = [{_show(values)}]; "
                         "a single value belongs in [base]")
        if not values:
            raise r.fail(f"[grid] {key} is an empty list; give it at least one value, or remove it")
    _check_size(r, grid, entries)
    for key, values in grid.items():
        seen: set = set()
        for i, value in enumerate(values):
            r.value(sc, f"[grid] {key}[{i}]", key, value)
            text = json.dumps(value, sort_keys=True, default=str)
            if text in seen:
                raise r.fail(f"[grid] {key} lists {_show(value)} twice; give each value once")
            seen.add(text)
    for n, entry in enumerate(entries, 1):
        if not entry:
            raise r.fail(f"[[points]] number {n} is empty; give it at least one key = value, or remove it")
        for key, value in entry.items():
            r.key(sc, f"[[points]] number {n}", key)
            if key in grid:
                raise r.fail(f"{key} is in both [grid] and [[points]] number {n}; keep it in one of them")
            r.value(sc, f"[[points]] number {n}: {key}", key, value)
    if not grid and not entries:
        raise r.fail("nothing to sweep: add a [grid] table of lists (e.g. spare_area = [0, 25]) or [[points]]")

    varying = pts.varying_keys(grid, entries)
    all_options = pts.expand(base, grid, entries)
    all_values = [{k: o[k] for k in varying if k in o} for o in all_options]
    names = pts.name_points(all_values, all_options)
    points: List[Point] = []
    content: List[Any] = []
    for point_name, values, options in zip(names, all_values, all_options):
        missing = [k for k in sc.required if k not in options]
        if missing:
            raise r.fail(f"the {sc.name} scenario needs {missing[0]}; add it to [base] (or to [grid])")
        converted = {k: r.value(sc, k, k, v) for k, v in options.items()}
        try:
            prepared = sc.prepare(converted)
        except SsdlabError as err:
            raise r.fail(f"point {point_name}: {err}") from None
        content.append(sc.content(prepared))
        points.append(Point(point_name, values, options, prepared, pts.label(values, sc.label_keys)))
    canonical = _canonical(sc.name, base, grid, entries)
    digest = hashlib.sha256(
        json.dumps({"spec": canonical, "content": content}, sort_keys=True, default=str).encode()
    ).hexdigest()
    return SweepSpec(sc, dict(base), dict(grid), list(entries), points, varying, name, digest)


def _check_size(r: _Reader, grid: Mapping[str, List[Any]], entries: List[Dict[str, Any]]) -> None:
    """Refuses a spec of more than `MAX_POINTS` points, from the lists' lengths alone (the grid is
    never built to count it)."""
    total = math.prod(len(v) for v in grid.values()) * max(1, len(entries))
    if total <= MAX_POINTS:
        return
    shape = " x ".join(f"{k} {len(v)}" for k, v in grid.items())
    if entries:
        shape = f"{shape} x {len(entries)} [[points]]" if shape else f"{len(entries)} [[points]]"
    count = f"{total:,}" if total < 10**15 else f"about 10^{_digits(total) - 1}"
    raise r.fail(f"{shape} makes {count} points, more than the {MAX_POINTS:,} one sweep may have; split the study "
                 "into several specs (each into its own --out), or give fewer values")


def describe(spec: SweepSpec) -> str:
    """One line: the scenario and the grid's shape, e.g. ``consistency: drive 2 x spare_area 3 (6 points)``."""
    shape = " x ".join(f"{k} {len(v)}" for k, v in spec.grid.items())
    if spec.entries:
        shape = f"{shape} x {len(spec.entries)} [[points]]" if shape else f"{len(spec.entries)} [[points]]"
    n = len(spec.points)
    return f"{spec.scenario.name}: {shape} ({n} point{'s' if n != 1 else ''})"
