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

import difflib
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple, Union

from ssdlab.errors import SsdlabError
from ssdlab.inputs import read_text
from ssdlab.sweep import points as pts
from ssdlab.sweep.points import Point
from ssdlab.sweep.scenarios import BadValue, Scenario, scenario as find_scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

__all__ = ["SweepSpec", "describe", "load_spec"]

_TABLES = ("scenario", "base", "grid", "points")
SpecSource = Union[str, Path, Mapping[str, Any]]


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
        return SsdlabError(f"{self.source}: {message}")

    def key(self, sc: Scenario, table: str, key: Any) -> str:
        if not isinstance(key, str) or sc.option(key) is None:
            hint = _suggest(str(key), sc.keys)
            if isinstance(key, str) and "-" in key and sc.option(key.replace("-", "_")) is not None:
                hint = f" (write it {key.replace('-', '_')}: spec keys use _ for the options' -)"
            raise self.fail(f"{table}: {sc.name} has no option {key!r}{hint}; its options are {', '.join(sc.keys)}")
        return key

    def value(self, sc: Scenario, where: str, key: str, value: Any) -> Any:
        """Checks one value; returns what the run gets (cached: a drive file is read once)."""
        slot = (key, json.dumps(value, sort_keys=True, default=str))
        if slot not in self.cache:
            option = sc.option(key)
            assert option is not None
            try:
                self.cache[slot] = option.convert(value, self.spec_dir)
            except BadValue as err:
                raise self.fail(f"{where} = {_show(value)}: {err}") from None
        return self.cache[slot]


def _show(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (str, list, dict, bool)) else repr(value)


def _read_source(source: SpecSource) -> Tuple[Dict[str, Any], str, Path]:
    if isinstance(source, Mapping):
        return dict(source), "sweep spec", Path.cwd()
    path = Path(source)
    # The hardened reader: a regular file only, no blocking on a FIFO, a size bound.
    text = read_text(path, "sweep spec")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SsdlabError(f"{path}: not valid TOML: {err}") from None
    return data, str(path), path.resolve().parent


def load_spec(source: SpecSource) -> SweepSpec:
    """Reads and checks a spec: a TOML file's path, or the same tables as a dict. Relative file
    names in a spec file (``drive_file``, ``jobfile``) are relative to the spec's directory; in a
    dict, to the current directory."""
    data, name, spec_dir = _read_source(source)
    r = _Reader(name, spec_dir)
    for key in data:
        if key not in _TABLES:
            raise r.fail(f"unknown key {key!r}{_suggest(key, list(_TABLES))}; a spec has scenario = \"...\", "
                         "[base], [grid] and [[points]] (docs/sweeps.md)")
    if "scenario" not in data:
        raise r.fail("no scenario; start the spec with e.g. scenario = \"consistency\"")
    try:
        sc = find_scenario(data["scenario"])
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
            raise r.fail(f"[grid] {key} = {_show(values)}: a grid key takes a list, e.g. {key} = [{_show(values)}]; "
                         "a single value belongs in [base]")
        if not values:
            raise r.fail(f"[grid] {key} is an empty list; give it at least one value, or remove it")
        seen: List[str] = []
        for i, value in enumerate(values):
            r.value(sc, f"[grid] {key}[{i}]", key, value)
            text = json.dumps(value, sort_keys=True)
            if text in seen:
                raise r.fail(f"[grid] {key} lists {_show(value)} twice; give each value once")
            seen.append(text)
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


def describe(spec: SweepSpec) -> str:
    """One line: the scenario and the grid's shape, e.g. ``consistency: drive 2 x spare_area 3 (6 points)``."""
    shape = " x ".join(f"{k} {len(v)}" for k, v in spec.grid.items())
    if spec.entries:
        shape = f"{shape} x {len(spec.entries)} [[points]]" if shape else f"{len(spec.entries)} [[points]]"
    n = len(spec.points)
    return f"{spec.scenario.name}: {shape} ({n} point{'s' if n != 1 else ''})"
