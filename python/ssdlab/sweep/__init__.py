"""Sweeps: many drives and settings at once, on Dask, into one table (docs/sweeps.md).

    >>> import ssdlab
    >>> result = ssdlab.sweep("study.toml", "runs/study")            # all cores of this machine
    >>> # (a script doing this needs `if __name__ == "__main__":`, as any multiprocessing program)
    >>> result.table                                                  # = runs/study/results.parquet
    >>> ssdlab.sweep("study.toml", "runs/study", scheduler="tcp://head:8786")   # an existing cluster

A spec names a scenario, a ``[base]`` table of its options and a ``[grid]`` of lists whose cross
product gives the points (and optionally ``[[points]]``). Every point runs as the scenario's command
would run it, on a worker of an embedded `LocalCluster` or of an existing Dask scheduler, and lands
in ``DIR/points/<name>/``; ``DIR/results.parquet`` has one row per point, with the error of a point
that failed; charts and the interactive report come last. Running the same spec into the same
directory again runs only what is missing.

=============  ====================================================================================
module         does
=============  ====================================================================================
`scenarios`    the scenarios and their options; `register` adds one
`spec`         reads and checks a spec; its hash
`points`       the points and their directory names
`execute`      runs points on Dask
`table`        the sweep directory, resuming, ``results.parquet``
`charts`       summary charts and the report
=============  ====================================================================================
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Union

import pandas as pd

from ssdlab.errors import SsdlabError
from ssdlab.sweep.scenarios import SCENARIOS, Scenario, register
from ssdlab.sweep.spec import MAX_POINTS, SpecSource, SweepSpec, describe, load_spec

__all__ = ["MAX_POINTS", "SCENARIOS", "Scenario", "SweepResult", "SweepSpec", "describe", "load_spec", "register",
           "sweep"]


@dataclass
class SweepResult:
    """What `sweep` did: the table (one row per point, as in ``results.parquet``), the directory,
    how many points ran now, were already done, and failed, and the files written."""

    out: Path
    table: pd.DataFrame
    ran: int
    skipped: int
    failed: int
    wall_seconds: float
    workers: int = 0
    charts: List[Path] = field(default_factory=list)
    report: Optional[Path] = None

    def __repr__(self) -> str:
        return (
            f"<SweepResult {str(self.out)!r}: {len(self.table)} points, {self.ran} run now, {self.skipped} done "
            f"before, {self.failed} failed, {self.wall_seconds:.1f} s>"
        )


TABLE_EVERY_S = 5.0
"""While points run, results.parquet is rewritten at most this often (and at the end)."""


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="points", unit="point", leave=True, disable=None)  # none unless a terminal


class _Notify:
    """Calls the caller's `events` callback, if any: ``events(kind, **details)``."""

    def __init__(self, events: Optional[Callable[..., None]]) -> None:
        self.events = events

    def __call__(self, kind: str, **details: Any) -> None:
        if self.events is not None:
            self.events(kind, **details)


def sweep(
    spec: Union[SpecSource, SweepSpec],
    out: Union[str, Path],
    *,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    progress: bool = False,
    events: Optional[Callable[..., None]] = None,
) -> SweepResult:
    """Runs every point of `spec` (a TOML file's path, the same tables as a dict, or a loaded
    `SweepSpec`) not yet finished in `out`, then writes ``results.parquet``, the charts and the
    report there.

    `scheduler`: the address of an existing Dask scheduler (``tcp://host:8786``); None starts a
    `LocalCluster` of `workers` single-threaded worker processes (default: one per core; at most
    `ssdlab.sweep.execute.MAX_WORKERS_PER_CORE` per core).
    `progress`: a bar over the points on stderr (when it is a terminal). `events(kind, **details)` hears ``"start"``
    (points, todo, workers) and ``"point"`` (outcome) as they happen.

    A spec error (including more than `MAX_POINTS` points), an argument of the wrong type, an `out`
    holding another spec's sweep, or a scheduler that does not answer within 10 s raise
    `SsdlabError` before anything is written or run. Stopped (Ctrl-C, SIGTERM, an error) before
    any point finished, a new sweep leaves nothing behind; stopped later, it keeps its finished
    points and resumes from them.
    """
    from ssdlab import __version__
    from ssdlab.sweep import charts
    from ssdlab.sweep import table as tbl
    from ssdlab.sweep.execute import Cluster, Task, check_cluster

    started = time.perf_counter()
    _check_arguments(out, progress, events)
    notify = _Notify(events)
    check_cluster(scheduler, workers)
    loaded = spec if isinstance(spec, SweepSpec) else load_spec(spec)
    out_dir = tbl.check_dir(Path(os.fsdecode(out)).expanduser(), loaded, __version__)
    records: Dict[str, Dict[str, Any]] = tbl.finished(out_dir, loaded)
    skipped = len(records)
    tasks = [Task(loaded.scenario, p.name, p.prepared, p.label, __version__)
             for p in loaded.points if p.name not in records]
    ran = 0
    n_workers = 0
    fresh = not os.path.lexists(out_dir / tbl.MANIFEST)
    made = _missing(out_dir)
    try:
        if tasks:
            with Cluster(scheduler, workers, __version__) as cluster:  # refuses a bad cluster before any write
                tbl.open_dir(out_dir, loaded, __version__)
                n_workers = cluster.workers
                notify("start", points=len(loaded.points), todo=len(tasks), workers=n_workers)
                bar = _bar(len(tasks)) if progress else None
                last_write = time.monotonic()
                try:
                    for outcome in cluster.run(tasks):
                        records[outcome.point] = tbl.save_point(out_dir, loaded, outcome)
                        ran += 1
                        notify("point", outcome=outcome)
                        if bar is not None:
                            bar.update(1)
                        if time.monotonic() - last_write > TABLE_EVERY_S:  # the table follows the run
                            tbl.write_table(out_dir, tbl.build_table(loaded, records))
                            last_write = time.monotonic()
                finally:
                    if bar is not None:
                        bar.close()
                    if records or not fresh:
                        tbl.write_table(out_dir, tbl.build_table(loaded, records))  # also when stopped
        else:
            tbl.open_dir(out_dir, loaded, __version__)
            notify("start", points=len(loaded.points), todo=0, workers=0)
            tbl.write_table(out_dir, tbl.build_table(loaded, records))
    except BaseException:
        if fresh and not records:  # stopped before any point finished: nothing to resume, nothing left
            tbl.discard(out_dir, made)
        raise
    tbl.check_links(out_dir)
    table = tbl.build_table(loaded, records)
    figures = charts.write_charts(out_dir, loaded, table)
    report = charts.write_points_report(out_dir, loaded, table)
    return SweepResult(
        out=out_dir,
        table=table,
        ran=ran,
        skipped=skipped,
        failed=int(table["error"].notna().sum()),
        wall_seconds=time.perf_counter() - started,
        workers=n_workers,
        charts=figures,
        report=report,
    )


def _check_arguments(out: Any, progress: Any, events: Any) -> None:
    """The arguments `load_spec` and `check_cluster` do not check, each refused in one line."""
    if isinstance(out, bytes):
        out = os.fsdecode(out)
    if not isinstance(out, (str, os.PathLike)):
        raise SsdlabError(f"sweep: out must be a directory's path such as 'runs/study', got {type(out).__name__}")
    if not isinstance(progress, bool):
        raise SsdlabError(f"sweep: progress must be True or False, got {type(progress).__name__}")
    if events is not None and not callable(events):
        raise SsdlabError(f"sweep: events must be a function events(kind, **details) or None, got "
                          f"{type(events).__name__}")


def _missing(path: Path) -> List[Path]:
    """`path` and its ancestors that do not exist yet, the deepest first (what a sweep creates)."""
    missing = []
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


class _CallableModule(types.ModuleType):
    """``ssdlab.sweep(...)`` runs a sweep while ``ssdlab.sweep.load_spec`` and friends stay this
    package's names."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)

    def __reduce__(self) -> Any:  # pickled by name, as plain modules are (functions sent to workers use it)
        return importlib.import_module, (self.__name__,)


sys.modules[__name__].__class__ = _CallableModule
