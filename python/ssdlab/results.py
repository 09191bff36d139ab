"""Result directories (docs/results.md): what the scenarios' results share (`ProcedureResult`, the
summary's common keys, reading a saved result back) and safe, atomic saving. The results themselves
live in their scenario modules (`ssdlab.scenarios`: `HdtachResult` in ``hdtach``, `ConsistencyResult`
in ``consistency_result``, ...); their old names here still resolve.

A result is saved by writing every file into a hidden staging directory next to the target and
moving the files in only when all of them are written, so a failure (a full disk, Ctrl-C, a bad
chart) never leaves a half-written result behind.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence, TypeVar, Union

import numpy as np

from ssdlab import _core, moved
from ssdlab.errors import SsdlabError
from ssdlab.inputs import DATA_LIMIT, check_path_text, parse_json, read_bytes, read_text
from ssdlab.sizes import format_size

# pandas (with pyarrow, ~0.3 s to import) is imported where a frame is made, so the CLI reaches the
# simulation without it; ssdlab.preload imports it while the core runs.
if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.config import DriveConfig
    from ssdlab.simulate import StepResult

_T = TypeVar("_T", bound="ProcedureResult")

__all__ = [
    "ResultStage",
    "check_output_dir",
    "write_file_atomically",
]

PathLike = Union[str, "os.PathLike[str]"]


MIB = 2**20


# -- output directories ----------------------------------------------------------------------------


def _probe(directory: Path) -> None:
    """Creates and removes a directory in `directory`: the one honest test of writability."""
    probe = directory / f".ssdlab-probe-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(probe)
    os.rmdir(probe)


def check_name_lengths(path: Path, what: str) -> None:
    """Refuses (`SsdlabError`) a path the file system cannot hold: a name longer than its
    NAME_MAX (255 bytes on most) or a whole path longer than PATH_MAX (4096), which would fail
    with ENAMETOOLONG ("File name too long") at the first call that touches it."""
    existing = path.parent
    while True:
        try:
            if existing.is_dir():
                break
        except OSError:
            pass
        if existing == existing.parent:
            break
        existing = existing.parent
    try:
        name_max = os.pathconf(existing, "PC_NAME_MAX")
        path_max = os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > name_max:
            shown = part if len(part) <= 24 else f"{part[:16]}..."
            raise SsdlabError(f"{what} {shown!r}: the name is {size} bytes, too long for the file system (at most "
                              f"{name_max} bytes per name: ENAMETOOLONG); choose a shorter name")
    size = len(os.fsencode(str(path.absolute())))
    if size >= path_max:
        raise SsdlabError(f"{what}: the path is {size} bytes, too long for the file system (at most {path_max - 1} "
                          f"bytes: ENAMETOOLONG); choose a shorter path")


def check_output_dir(out_dir: PathLike, scenario: Optional[str] = None) -> Path:
    """Checks that results can be written to `out_dir` (without creating it) and returns it.

    Refuses, with `SsdlabError`, what is not a path (None, a number), an empty name, a name that is
    not UTF-8, a path that exists and is not a directory, a path under a file, and a place where
    nothing can be created; with `scenario`, also a directory that holds another scenario's result
    (`check_result_dir`). Call it before a long simulation.
    """
    if out_dir is None or not isinstance(out_dir, (str, bytes, os.PathLike)):
        raise SsdlabError(f"output directory: expected a path, got {type(out_dir).__name__}")
    raw = os.fsdecode(os.fspath(out_dir))
    if raw.strip() == "":
        raise SsdlabError("the output directory name is empty; give a directory such as runs/my-test")
    check_path_text(raw, "output directory")
    path = Path(raw).expanduser()
    check_name_lengths(path, "output directory")
    if path.exists() and not path.is_dir():
        raise SsdlabError(f"output directory {str(path)!r} exists and is not a directory; choose another name")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise SsdlabError(
            f"cannot create output directory {str(path)!r}: {str(existing)!r} is a file, not a directory"
        )
    for where in {existing, path.parent if path.parent.exists() else existing}:
        try:
            _probe(where)
        except OSError as err:
            raise SsdlabError(
                f"cannot write results to {str(path)!r}: {str(where)!r} is not writable "
                f"({err.strerror or err}); choose another output directory"
            ) from None
    if scenario is not None:
        check_result_dir(path, scenario)
    return path


def _summary_scenario(directory: Path) -> Optional[str]:
    """The ``scenario`` of the result in `directory` (its summary.json), None when it has no
    summary.json; `SsdlabError` when summary.json is there but is not an ssdlab result's."""
    path = directory / "summary.json"
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None  # nothing to read (a directory there is refused by the commit, a link replaced)
    except OSError:
        return None
    try:
        doc = parse_json(read_text(path, "result file", DATA_LIMIT), f"{str(path)!r}")
    except (OSError, SsdlabError):
        doc = None
    scenario = doc.get("scenario") if isinstance(doc, dict) else None
    if not isinstance(scenario, str) or not scenario:
        raise SsdlabError(f"cannot write results to {str(directory)!r}: its summary.json is not an ssdlab result's "
                          f"(no scenario); remove it or choose another output directory -- nothing was written")
    return scenario


_KIND = {"torture": "hdtach"}  # scenarios whose results have the same files (HdtachResult): one kind


def check_result_dir(out_dir: Path, scenario: str) -> None:
    """Refuses (`SsdlabError`) an existing `out_dir` that holds the result of another scenario
    than `scenario` (its summary.json), so two runs' files never mix in one directory; a result of
    the same scenario (hdtach and torture count as one: the same files) is replaced. Called by
    `check_output_dir` before a run and by `ResultStage.commit` before anything moves."""
    try:
        if not out_dir.is_dir():
            return
    except OSError:
        return
    held = _summary_scenario(out_dir)
    if held is not None and _KIND.get(held, held) != _KIND.get(scenario, scenario):
        raise SsdlabError(
            f"cannot write the {scenario} result to {str(out_dir)!r}: it holds the result of another scenario "
            f"({held}, per its summary.json); choose another output directory, or remove that result first "
            f"-- nothing was written"
        )


_FIO_CHART = re.compile(r"^job\d+-.+_iops\.png$")


def result_file_names() -> frozenset:
    """The names of the files ssdlab's result directories hold: what a result may remove from an
    earlier result of the same scenario (besides fio's job charts). A device run's ``fio``
    directory is not among them: it holds the raw measurements (fio's own JSON and logs), which
    saving the same result again (``result.save(dir)`` after the run wrote `dir`) must keep."""
    from ssdlab.scenarios import all_scenarios

    modules = [name for entry in all_scenarios() for name in entry.files]
    return frozenset((*modules, "report.html", "fio.json", "fio.txt"))


def _stale_files(target: Path, staged: Path, names: set) -> List[Path]:
    """The files of the earlier result in `target` that the staged result replaces but does not
    write again (a report.html, another job's chart): only ssdlab's own result file names, only
    when both are results of the same scenario (checked here, before anything moves)."""
    if "summary.json" not in names:
        return []
    scenario = _summary_scenario(staged)
    if scenario is None:
        return []
    check_result_dir(target, scenario)
    if _summary_scenario(target) is None:
        return []
    known = result_file_names()
    stale = []
    for entry in sorted(os.listdir(target)):
        if entry in names or not (entry in known or _FIO_CHART.match(entry)):
            continue
        stale.append(target / entry)
    return stale


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Holds SIGINT and SIGTERM for the block and delivers them after it (to the handlers that
    were in place), in the main thread; elsewhere it does nothing. The Python-level handlers are
    swapped, not the thread's signal mask: a signal sent to the process may arrive in any of its
    threads (the preload thread, the core's), but its Python handler always runs in the main one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: List[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    before = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            handler = before[sig]
            if callable(handler):
                handler(sig, None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(sig)


class ResultStage:
    """A result directory written all at once: files go into a hidden staging directory next to
    the target (`path`); `commit()` moves them in, `discard()` (or leaving the ``with`` block by an
    exception, Ctrl-C or SIGTERM) removes the staging directory and any parent it created, so
    nothing half-written is ever left behind.

    In an existing directory, a result of another scenario (its summary.json says which) is
    refused; a result of the same scenario is replaced: files of the same names, and the earlier
    result's files this one does not write (only ssdlab's result file names, such as a stale
    report.html). Other files are left alone; a name that is a directory where the result has a
    file (or the other way round) is refused before anything moves. A symbolic link in the
    directory where a result file goes is replaced by the file, never written through.
    """

    def __init__(self, target: PathLike) -> None:
        self.target = check_output_dir(target)
        self._made: List[Path] = []
        missing = []
        parent = self.target.parent
        while not parent.exists():
            missing.append(parent)
            parent = parent.parent
        try:
            for d in reversed(missing):
                os.mkdir(d)
                self._made.append(d)
            # A short name of its own (not the target's plus a suffix), so any name the file system
            # accepts as --out works (a 255-byte final component included); next to where a
            # symbolic link --out leads, so the files move in by rename on the same file system.
            near = Path(os.path.realpath(self.target)).parent if self.target.is_symlink() else self.target.parent
            from ssdlab.outputs import temp_name  # imported when a result is saved, not with the CLI

            self.path = near / temp_name("stage")
            os.mkdir(self.path)
        except OSError as err:
            self._remove_parents()
            raise SsdlabError(f"cannot create output directory {str(self.target)!r}: {err.strerror or err}") from None
        self.done = False

    def __enter__(self) -> "ResultStage":
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if not self.done:
            self.discard()

    def _remove_parents(self) -> None:
        from ssdlab.outputs import remove_made_dirs

        remove_made_dirs(self._made)
        self._made = []

    def discard(self) -> None:
        """Removes the staging directory and the parents this stage created."""
        shutil.rmtree(self.path, ignore_errors=True)
        self._remove_parents()
        self.done = True

    def commit(self) -> Path:
        """Moves the staged files into the target; returns the target. Ctrl-C and SIGTERM are held
        while the files move (and delivered right after), so a signal leaves the complete result
        or, before the commit, none -- never a directory that is half the old result and half the
        new one."""
        with _signals_held():
            return self._commit()

    def _commit(self) -> Path:
        target = self.target
        try:
            if not target.exists():
                os.rename(self.path, target)
            else:
                items = sorted(self.path.iterdir())
                for item in items:
                    there = target / item.name
                    if os.path.lexists(there) and (there.is_dir() and not there.is_symlink()) != item.is_dir():
                        kind = "a directory" if there.is_dir() else "a file"
                        raise SsdlabError(
                            f"cannot write results to {str(target)!r}: {str(there)!r} is {kind} where the result "
                            f"has {'a directory' if item.is_dir() else 'a file'}; remove it or choose another "
                            f"output directory -- nothing was written"
                        )
                stale = _stale_files(target, self.path, {item.name for item in items})
                old = self.path / f".replaced-{secrets.token_hex(4)}"
                os.mkdir(old)
                for there in stale:  # a previous result's files this one does not write
                    os.rename(there, old / there.name)
                for item in items:
                    there = target / item.name
                    if item.is_dir() and there.is_dir():
                        os.rename(there, old / item.name)
                    os.replace(item, there)
                shutil.rmtree(self.path, ignore_errors=True)
        except OSError as err:
            self.discard()
            raise SsdlabError(f"cannot write results to {str(target)!r}: {err.strerror or err}") from None
        except BaseException:
            self.discard()
            raise
        self.done = True
        self._made = []
        return target


def _write_atomically(target: PathLike, write: Any) -> Path:
    """Runs ``write(staging_dir)`` and moves what it wrote into `target` only if it succeeds."""
    with ResultStage(target) as stage:
        try:
            write(stage.path)
        except OSError as err:
            raise SsdlabError(f"cannot write results to {str(stage.target)!r}: {err.strerror or err}") from None
        return stage.commit()


def write_file_atomically(path: PathLike, text: str, what: str = "output file") -> Path:
    """Writes `text` to the output `path` by the output-path policy (`ssdlab.outputs`): a new
    path or a regular file through a temporary file in the same directory and a rename (complete
    or untouched); a character device or FIFO in place, never replaced; a socket, block device or
    directory refused. Returns `path`."""
    from ssdlab.outputs import write_output

    shown = check_path_text(path, what)
    write_output(shown, text, what)
    return Path(shown)


# -- what the results share ------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """`value` with NumPy scalars turned into Python ones (for JSON)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# -- the procedures: hdtach / torture, used-vs-new, wa ------------------------------------------------


def procedure_summary(
    *,
    scenario: str,
    label: str,
    config: DriveConfig,
    seed: int,
    wall_seconds: float,
    params: Dict[str, Any],
) -> Dict[str, Any]:
    """The keys every simulated procedure's summary starts with (docs/results.md): the common keys,
    the drive's layout and GC settings, then the procedure's parameters as the core ran them."""
    layout = config.describe()
    return {
        "scenario": scenario,
        "label": label,
        "drive": config.name,
        "device": None,
        "seed": seed,
        "ssdlab_version": _core.__version__,
        "wall_seconds": wall_seconds,
        "user_capacity_bytes": layout["user_capacity_bytes"],
        "op": layout["op"],
        "effective_spare_factor": config.spare(seed)["effective_spare_factor"],
        "gc_mode": config.ftl.gc_mode,
        "gc_policy": config.ftl.gc_policy,
        **params,
    }


def read_summary(d: Path, scenarios: tuple[str, ...]) -> Dict[str, Any]:
    try:
        text = read_text(d / "summary.json", "result file", DATA_LIMIT)
    except (OSError, SsdlabError) as err:
        raise SsdlabError(f"cannot read a {scenarios[0]} result from {str(d)!r}: {err}") from None
    summary: Any = parse_json(text, str(d / "summary.json"))  # nesting bounded: no RecursionError
    if not isinstance(summary, dict) or summary.get("scenario") not in scenarios:
        got = summary.get("scenario") if isinstance(summary, dict) else None
        raise SsdlabError(f"{str(d)!r} holds a {got!r} result, not a {' or '.join(scenarios)} one")
    return summary


def read_csv(d: Path, name: str, columns: tuple[str, ...], finite: Sequence[str] = ()) -> pd.DataFrame:
    """The CSV file `name` of result directory `d`, with exactly `columns`; the `finite` ones must
    hold finite numbers (`finite_column`)."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(read_bytes(d / name, "result file", DATA_LIMIT)))
    except (OSError, ValueError) as err:
        raise SsdlabError(f"cannot read {name} from {str(d)!r}: {err}") from None
    if tuple(frame.columns) != columns:
        raise SsdlabError(f"{str(d / name)!r} has columns {', '.join(frame.columns)}; expected {', '.join(columns)}")
    for column in finite:
        frame[column] = finite_column(frame[column], d / name, column)
    return frame


def finite_column(column: pd.Series, path: PathLike, name: str) -> pd.Series:
    """`column` of the CSV file `path` as finite numbers, or a one-line `SsdlabError` naming the
    file, the column and the line of the first value that is not one (text, NaN, an infinity, or a
    numeral beyond a double's range such as 1e400 or 5000 digits)."""
    import pandas as pd

    values = pd.to_numeric(column, errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype="float64", na_value=np.nan))
    if bad.any():
        i = int(bad.nonzero()[0][0])
        shown = str(column.iloc[i])
        shown = shown if len(shown) <= 24 else f"{shown[:12]}... ({len(shown)} characters)"
        raise SsdlabError(f"{path}: column {name!r} has a non-number on line {i + 2}: {shown!r} is not a finite "
                          f"number")
    return values


def subtitle(s: Dict[str, Any], how: str) -> str:
    """A chart subtitle: what the procedure did (`how`), then the drive's layout and seed or the
    real device; on two lines when one would not fit the chart's width."""
    size = format_size(int(s["user_capacity_bytes"]))
    if s.get("device"):
        drive = f"{size} tested · device {s['device']} · ssdlab {s['ssdlab_version']}"
    else:
        drive = (
            f"{size} user, {100 * s['op']:.1f}% OP, {s['gc_policy']} {s['gc_mode']} GC · seed {s['seed']} · "
            f"ssdlab {s['ssdlab_version']}"
        )
    return f"{how} · {drive}" if len(how) + len(drive) <= 115 else f"{how}\n{drive}"


def write_summary(directory: Path, summary: Dict[str, Any]) -> None:
    """Writes `summary` as `directory`/summary.json (indented, UTF-8, no NaN)."""
    text = json.dumps(plain(summary), indent=2, ensure_ascii=False, allow_nan=False)
    (directory / "summary.json").write_text(text + "\n", encoding="utf-8")


@dataclass(frozen=True)
class CsvTable:
    """One CSV file of a result: the attribute that holds its frame, the file's name, its columns,
    those that must be finite numbers and those read back as text."""

    attr: str
    file: str
    columns: Sequence[str]
    finite: Sequence[str] = ()
    text: Sequence[str] = ()

    def read(self, d: Path) -> pd.DataFrame:
        frame = read_csv(d, self.file, self.columns, finite=self.finite)
        for name in self.text:
            frame[name] = frame[name].astype(str)
        return frame


class ProcedureResult:
    """What the procedure results share: the summary, the run's config and steps, saving, and
    loading back the CSV files named in `TABLES` (the constructor takes their frames in that order,
    then the summary)."""

    SCENARIOS: tuple[str, ...] = ()
    FILES: tuple[str, ...] = ()
    TABLES: tuple[CsvTable, ...] = ()

    def __init__(
        self,
        summary: Dict[str, Any],
        *,
        config: Optional[DriveConfig] = None,
        steps: Optional[List[StepResult]] = None,
    ) -> None:
        self.summary = summary
        self.config = config
        self.steps = list(steps or [])

    @property
    def label(self) -> str:
        return str(self.summary["label"])

    def subtitle(self) -> str:  # pragma: no cover - every result overrides it
        raise NotImplementedError

    def charts(self) -> Dict[str, Figure]:  # pragma: no cover - every result overrides it
        raise NotImplementedError

    @classmethod
    def load(cls: type[_T], directory: PathLike) -> _T:
        """Reads a saved result directory back (without its config and steps)."""
        d = Path(directory)
        summary = read_summary(d, cls.SCENARIOS)
        return cls(*(t.read(d) for t in cls.TABLES), summary)

    def _write_frames(self, staging: Path) -> None:
        """Writes the result's CSV files, `TABLES`."""
        for t in self.TABLES:
            getattr(self, t.attr).to_csv(staging / t.file, index=False, float_format="%.10g")

    def save(self, out_dir: PathLike) -> Path:
        """Writes the result directory (docs/results.md) atomically; returns its path.

        Existing files of the same names in `out_dir` are replaced; other files are left alone.
        """

        def write(staging: Path) -> None:
            self._write_frames(staging)
            write_summary(staging, self.summary)
            for name, fig in self.charts().items():
                fig.savefig(staging / name)

        return _write_atomically(out_dir, write)


class TableResult(ProcedureResult):
    """A procedure result whose data is one table (its one `TABLES` entry keeps it in
    `table_frame`); a subclass keeps its public name for it (``curve``, ``series``, ``passes``,
    ``states``) as a property."""

    def __init__(
        self,
        table: pd.DataFrame,
        summary: Dict[str, Any],
        *,
        config: Optional[DriveConfig] = None,
        steps: Optional[List[StepResult]] = None,
    ) -> None:
        self.table_frame = table
        super().__init__(summary, config=config, steps=steps)


_MOVED = {
    "WorstCaseWaResult": "ssdlab.scenarios.wa:WorstCaseWaResult",
    "HdtachResult": "ssdlab.scenarios.hdtach:HdtachResult",
    "HDTACH_COLUMNS": "ssdlab.scenarios.hdtach:COLUMNS",
    "HDTACH_FILES": "ssdlab.scenarios.hdtach:FILES",
    "UsedVsNewResult": "ssdlab.scenarios.used_vs_new:UsedVsNewResult",
    "USED_VS_NEW_COLUMNS": "ssdlab.scenarios.used_vs_new:COLUMNS",
    "USED_VS_NEW_FILES": "ssdlab.scenarios.used_vs_new:FILES",
    "SaturationResult": "ssdlab.scenarios.saturation:SaturationResult",
    "SATURATION_COLUMNS": "ssdlab.scenarios.saturation:COLUMNS",
    "SATURATION_FILES": "ssdlab.scenarios.saturation:FILES",
    "ConsistencyResult": "ssdlab.scenarios.consistency_result:ConsistencyResult",
    "CONSISTENCY_FILES": "ssdlab.scenarios.consistency_result:CONSISTENCY_FILES",
    "CHART_FILES": "ssdlab.scenarios.consistency_result:CHART_FILES",
    "IOPS_COLUMNS": "ssdlab.scenarios.consistency_result:IOPS_COLUMNS",
    "SERIES_COLUMNS": "ssdlab.scenarios.consistency_result:SERIES_COLUMNS",
    "SUMMARY_KEYS": "ssdlab.scenarios.consistency_result:SUMMARY_KEYS",
    "LATENCY_KEYS": "ssdlab.scenarios.consistency_result:LATENCY_KEYS",
    "burst_seconds": "ssdlab.scenarios.consistency_result:burst_seconds",
}
"""The result classes, their columns and files, now in their scenario modules (the device runs,
ssdlab.fio.device, still import the consistency and hdtach ones from here)."""


def __getattr__(name: str) -> Any:
    """The names in `_MOVED` resolve to their scenario modules."""
    return moved.resolve(__name__, name, _MOVED)
