"""A sweep's directory: what it holds, resuming, and the results table.

    DIR/sweep.json          the spec (canonical form), its hash, the ssdlab version, the point names
    DIR/points/<name>/      one point: the scenario's result files and point.json
    DIR/results.parquet     one row per point, in the spec's order
    DIR/charts/*.png        summary charts; DIR/report.html the interactive report

Every point directory is written atomically (ssdlab.results), with ``point.json`` (the point's
options, figures, wall seconds and error) as its record; the table is built from those records,
so it is always rewritable and a sweep stopped at any moment resumes from the points it finished.
A point that failed is finished too: its error is its result, and running it again would give the
same error.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import pandas as pd

from ssdlab.errors import SsdlabError
from ssdlab.inputs import parse_json, read_text
from ssdlab.paths import contained
from ssdlab.results import _write_atomically, check_output_dir
from ssdlab.sweep.execute import Outcome
from ssdlab.sweep.spec import SweepSpec

__all__ = ["CHARTS", "MANIFEST", "POINTS", "POINT_RECORD", "TABLE", "build_table", "check_dir", "check_links", "discard",
           "finished", "open_dir", "point_dir", "save_point", "write_table"]

MANIFEST = "sweep.json"
POINTS = "points"
POINT_RECORD = "point.json"
TABLE = "results.parquet"
CHARTS = "charts"
RECORD_LIMIT = 16 << 20
"""The largest ``sweep.json`` or ``point.json`` read back (a 10,000-point manifest is about 1 MB;
a point's record a few KB)."""


def _read_json(path: Path, what: str, mend: str) -> Any:
    """A JSON file of the sweep's own, read back bounded (size and nesting): a hand-edited or
    hostile file is one error line (ending in `mend`), never a traceback."""
    try:
        return parse_json(read_text(path, what, RECORD_LIMIT), f"{what} {str(path)!r}")
    except SsdlabError as err:
        raise SsdlabError(f"{err} -- {mend}") from None


def check_links(out: Path) -> None:
    """The sweep's own subdirectories are written into, so one that is a symbolic link (pointing
    anywhere) would take the points or charts outside `out`: refused, not followed."""
    for name in (POINTS, CHARTS):
        if (out / name).is_symlink():
            raise SsdlabError(f"{out / name} is a symbolic link; a sweep writes its {name} only inside its own "
                              f"directory: remove the link, or use a new --out directory")


def point_dir(out: Path, name: str) -> Path:
    """The directory of point `name`: inside ``out/points`` whatever the name (points.py makes names
    safe; this is the check that keeps them so)."""
    return contained(out / POINTS, name, "sweep point")


def check_dir(out: Path, spec: SweepSpec, version: str) -> Path:
    """Checks that `out` is new, empty, or a sweep of this very spec (and ssdlab version), without
    writing anything; refuses anything else."""
    out = check_output_dir(out)
    manifest = out / MANIFEST
    if os.path.lexists(manifest):
        check_links(out)
        recorded = _read_json(manifest, "sweep manifest", "ssdlab did not write it; use a new --out directory")
        if not isinstance(recorded, dict):
            raise SsdlabError(f"{manifest} is not a sweep's manifest; use a new --out directory")
        if recorded.get("spec_hash") != spec.hash:
            raise SsdlabError(
                f"{out} holds a sweep of a different spec (or of changed drive or job files); results of two specs "
                "never share a table: use a new --out directory, or delete this one to start over"
            )
        if recorded.get("ssdlab_version") != version:
            raise SsdlabError(
                f"{out} holds a sweep run by ssdlab {recorded.get('ssdlab_version')}, this is {version}; results of "
                "two versions never share a table: use a new --out directory"
            )
        return out
    if out.exists() and any(out.iterdir()):
        raise SsdlabError(f"{out} exists and is not a sweep directory; use a new --out directory")
    return out


def open_dir(out: Path, spec: SweepSpec, version: str) -> Path:
    """`check_dir`, then records the spec in ``sweep.json`` (once)."""
    out = check_dir(out, spec, version)
    if (out / MANIFEST).is_file():
        return out
    doc = {
        "spec_hash": spec.hash,
        "ssdlab_version": version,
        "source": spec.source,
        "spec": spec.canonical(),
        "points": [p.name for p in spec.points],
    }
    _write_atomically(out, lambda staging: _put_json(staging / MANIFEST, doc))
    return out


def discard(out: Path, made: List[Path]) -> None:
    """Undoes `open_dir` for a sweep stopped before any point finished (there is nothing to resume):
    removes its manifest and table, an empty ``points/``, and the directories in `made` (those the
    sweep created, deepest first) when they are empty. Never raises."""
    for name in (MANIFEST, TABLE):
        with contextlib.suppress(OSError):
            (out / name).unlink()
    for directory in [out / POINTS, *made]:
        try:
            directory.rmdir()
        except OSError:
            if directory != out / POINTS:
                break


def _put_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n",
                    encoding="utf-8")


def _record_path(out: Path, name: str) -> Path:
    return point_dir(out, name) / POINT_RECORD


def finished(out: Path, spec: SweepSpec) -> Dict[str, Dict[str, Any]]:
    """The records of the points of `spec` already finished in `out` (point name -> record)."""
    done: Dict[str, Dict[str, Any]] = {}
    if not (out / MANIFEST).is_file():
        return done  # a new directory: nothing finished
    check_links(out)
    for point in spec.points:
        path = _record_path(out, point.name)
        if not path.is_file():
            continue  # not run, or not finished: it runs (again)
        record = _read_json(path, "sweep point record",
                            f"ssdlab did not write it; delete {path.parent} to run that point again")
        if isinstance(record, dict) and record.get("spec_hash") == spec.hash:
            done[point.name] = record
    return done


def _finite(value: Any) -> Any:
    """NaN and infinities as None: JSON has no place for them."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def save_point(out: Path, spec: SweepSpec, outcome: Outcome) -> Dict[str, Any]:
    """Writes one point's directory atomically (its result files, then point.json); returns the
    record."""
    point = next(p for p in spec.points if p.name == outcome.point)
    record = {
        "point": point.name,
        "spec_hash": spec.hash,
        "values": point.values,
        "options": point.options,
        "figures": {k: _finite(v) for k, v in outcome.figures.items()},
        "wall_seconds": outcome.wall_seconds,
        "error": outcome.error,
    }

    def write(staging: Path) -> None:
        for rel, content in outcome.files.items():
            target = contained(staging, rel, f"point {point.name}: a result file")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        _put_json(staging / POINT_RECORD, record)

    check_links(out)
    target = point_dir(out, point.name)
    if os.path.lexists(target):  # an unfinished earlier attempt (it has no record): replaced whole, never mixed
        if target.is_symlink() or not target.is_dir():
            target.unlink()
        else:
            shutil.rmtree(target)
    _write_atomically(target, write)
    return record


def _column_values(values: List[Any]) -> List[Any]:
    """A grid column mixing strings and numbers (capacity = ["16GiB", 17179869184]) as strings, so
    Parquet can hold it."""
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 and str in kinds:
        return [None if v is None else str(v) for v in values]
    return [json.dumps(v) if isinstance(v, (list, dict)) else v for v in values]


def build_table(spec: SweepSpec, records: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per finished point, in the spec's order: ``point``, the varying keys, the
    scenario's figures, ``wall_seconds``, ``error`` (None for points that ran)."""
    rows = [(p, records[p.name]) for p in spec.points if p.name in records]
    columns: Dict[str, List[Any]] = {"point": [p.name for p, _ in rows]}
    for key in spec.varying:
        columns[key] = _column_values([p.values.get(key) for p, _ in rows])
    figure_keys: List[str] = []
    for _, record in rows:
        figure_keys += [k for k in record.get("figures", {}) if k not in figure_keys and k not in columns]
    whole: List[str] = []  # whole numbers stay whole next to the failed points' nulls
    for key in figure_keys:
        columns[key] = [record.get("figures", {}).get(key) for _, record in rows]
        present = [v for v in columns[key] if v is not None]
        if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
            whole.append(key)
    columns["wall_seconds"] = [record.get("wall_seconds") for _, record in rows]
    columns["error"] = [record.get("error") for _, record in rows]
    table = pd.DataFrame({k: pd.array(v, dtype="Int64") if k in whole else v for k, v in columns.items()})
    table["error"] = table["error"].astype(object)
    return table


def write_table(out: Path, table: pd.DataFrame) -> Path:
    """Writes ``results.parquet`` atomically (a temporary file, then a rename)."""
    path = out / TABLE
    tmp = out / f".{TABLE}.partial-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        table.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise SsdlabError(f"cannot write {path}: {err.strerror or err}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_table(out: Path) -> Optional[pd.DataFrame]:
    path = out / TABLE
    return pd.read_parquet(path) if path.is_file() else None
