"""Read result directories (docs/results.md) into typed runs, and name them.

One job: turn a list of directories into :class:`Run` objects whose data the charts can use,
or fail with one line that names the directory and what is missing. Nothing here knows about
plotly or HTML.
"""

from __future__ import annotations

import errno
import io
import os
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.inputs import DATA_LIMIT, parse_json, read_bytes, read_text
from ssdlab.results import finite_column

if TYPE_CHECKING:  # pandas is imported where a CSV is read (see ssdlab.results)
    import pandas as pd


__all__ = [
    "Run",
    "SsdlabError",
    "expand_run_dirs",
    "load_run",
    "load_runs",
    "spare_label",
]

SUMMARY = "summary.json"

#: scenario name in summary.json -> the run class that reads it (filled by `run_classes`).
SCENARIOS: dict[str, type[Run]] = {}

OTHER_RESULTS = ("ssdlab.fit.report_section",)
"""Modules of result directories that are not a scenario's (``ssdlab fit``'s report directory), each
with ``REPORT_RUNS`` and ``report_section`` as a `Scenario` has ``report_runs`` and
``report_section``; their sections follow the scenarios'."""


def other_results() -> list[tuple[str, tuple[Any, ...], Any]]:
    """(name, run classes, section function) of each module in `OTHER_RESULTS`."""
    import importlib

    out = []
    for name in OTHER_RESULTS:
        module = importlib.import_module(name)
        out.append((name, tuple(module.REPORT_RUNS), module.report_section))
    return out


def spare_label(pct: float | None) -> str:
    """The button label of a spare-area setting, as the review pages print it."""
    if pct is None or pct == 0:
        return "Default"
    return f"{pct:g}% Spare Area"


def num(value: Any) -> float | None:
    """A finite number, or None (null, NaN, missing, or not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass
class Run:
    """One result directory. ``name`` is set by :func:`load_runs` (unique across the report)."""

    path: Path
    summary: dict[str, Any]
    name: str = ""

    #: the ``scenario`` values this class reads, and the report section it belongs to
    scenario_names: ClassVar[tuple[str, ...]] = ()
    kind: ClassVar[str] = ""

    # --- identity -------------------------------------------------------------------------
    @property
    def scenario(self) -> str:
        return str(self.summary["scenario"])

    @property
    def drive(self) -> str:
        return str(self.summary["drive"])

    @property
    def device(self) -> str | None:
        """The real device path, or None for a simulated drive."""
        dev = self.summary.get("device")
        return None if dev in (None, "") else str(dev)

    @property
    def simulated(self) -> bool:
        return self.device is None

    @property
    def spare_area_pct(self) -> float | None:
        return num(self.summary.get("spare_area_pct"))

    def default_name(self) -> str:
        """``label`` from the summary, else the drive plus its spare-area setting."""
        label = self.summary.get("label")
        if isinstance(label, str) and label.strip():
            return label.strip()
        if self.spare_area_pct is None:
            return self.drive
        spare = "default spare area" if not self.spare_area_pct else f"{self.spare_area_pct:g}% spare area"
        return f"{self.drive} · {spare}"

    def figure(self, key: str) -> float | None:
        """A number from the summary (dotted keys reach into objects), or None if absent/null."""
        node: Any = self.summary
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return num(node)

    # --- reading --------------------------------------------------------------------------
    def _read(self) -> None:
        """Read and check the scenario's own files (overridden)."""

    def _csv(self, name: str, columns: Sequence[str], numeric: Sequence[str]) -> pd.DataFrame:
        import pandas as pd

        path = self.path / name
        if not path.is_file():
            raise SsdlabError(f"{self.path}: {self.scenario} result without {name}")
        try:
            frame = pd.read_csv(io.BytesIO(read_bytes(path, "result file", DATA_LIMIT)))
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise SsdlabError(f"{path}: unreadable CSV ({str(exc).strip().splitlines()[0]})") from None
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise SsdlabError(f"{path}: missing column {', '.join(repr(c) for c in missing)}")
        for col in numeric:
            frame[col] = finite_column(frame[col], path, col)
        return frame

    def _require(self, *keys: str) -> None:
        missing = [k for k in keys if k not in self.summary]
        if missing:
            raise SsdlabError(f"{self.path / SUMMARY}: missing {', '.join(repr(k) for k in missing)}")


def run_classes() -> dict[str, type[Run]]:
    """Scenario name in summary.json -> the run class that reads it, from the scenarios' modules
    (``ssdlab.scenarios``, gathered on first use)."""
    if not SCENARIOS:
        from ssdlab.scenarios import all_scenarios

        for entry in all_scenarios():
            for cls in entry.report_runs:
                for name in cls.scenario_names:
                    SCENARIOS[name] = cls
        for _module, classes, _section in other_results():
            for cls in classes:
                for name in cls.scenario_names:
                    SCENARIOS[name] = cls
    return SCENARIOS


def _read_summary(path: Path) -> dict[str, Any]:
    file = path / SUMMARY
    if not os.path.lexists(file):
        raise SsdlabError(f"{path}: not an ssdlab result directory (no {SUMMARY})")
    summary = parse_json(read_text(file, "result file", DATA_LIMIT), str(file))
    if not isinstance(summary, dict):
        raise SsdlabError(f"{file}: not a JSON object")
    return summary


def load_run(path: Path) -> Run:
    """Read one result directory. Raises :class:`SsdlabError` naming the directory on any problem."""
    path = Path(path)
    if not path.is_dir():
        raise SsdlabError(f"{path}: no such result directory")
    summary = _read_summary(path)
    missing = [k for k in ("scenario", "drive") if k not in summary]
    if missing:
        raise SsdlabError(f"{path / SUMMARY}: missing {', '.join(repr(k) for k in missing)}")
    scenario = str(summary["scenario"])
    cls = run_classes().get(scenario)
    if cls is None:
        known = ", ".join(sorted(run_classes()))
        raise SsdlabError(f"{path / SUMMARY}: unknown scenario {scenario!r} (known: {known})")
    run = cls(path=path, summary=summary)
    run._read()
    return run


def _reportable(path: Path) -> bool:
    """Whether a directory found inside a folder of runs is one the report reads."""
    try:
        scenario = parse_json(read_text(path / SUMMARY, "result file", DATA_LIMIT), str(path / SUMMARY)).get("scenario")
    except (SsdlabError, ValueError, AttributeError):
        return True  # let load_run say what is wrong with it
    return scenario in run_classes()


def _resolved(path: Path) -> Path:
    """`path` with its symbolic links followed; a loop of links is a one-line error."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python < 3.13: RuntimeError("Symlink loop ..."); then OSError ELOOP
        if isinstance(exc, OSError) and exc.errno != errno.ELOOP:
            raise SsdlabError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        raise SsdlabError(f"{path}: a loop of symbolic links (it leads back to itself); name the result directory "
                          f"itself") from None


def expand_run_dirs(paths: Iterable[Path]) -> list[Path]:
    """The result directories named, in order, without repeats.

    A directory without ``summary.json`` whose immediate subdirectories have one stands for those
    subdirectories (sorted by name), so a folder of runs can be given as one argument; there,
    results of other kinds (e.g. ``ssdlab fio`` runs) are passed over. A directory named on its
    own must be one the report reads.
    """
    out: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not (path / SUMMARY).exists():
            children = sorted(p for p in path.iterdir() if (p / SUMMARY).is_file())
            if children:
                out.update(dict.fromkeys(c for c in children if _reportable(c)))
                continue
        out[path] = None
    seen: set[Path] = set()
    unique = []
    for path in out:
        key = _resolved(path)
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def load_runs(paths: Iterable[Path]) -> list[Run]:
    """Read every directory (see :func:`expand_run_dirs`) and give each run a unique name.

    Names come from the summaries (``label``, else drive + spare area); a name shared by several
    runs of one section gets the directory's name appended, then its whole path if that is not
    enough. (Runs of different sections may share a name: "mlc-256" torture and used-vs-new runs.)
    """
    dirs = expand_run_dirs(paths)
    if not dirs:
        raise SsdlabError("report: no result directories given")
    runs = [load_run(p) for p in dirs]
    base = [r.default_name() for r in runs]
    names = list(base)
    # names must differ where runs meet: within a section, and between consistency and wa runs
    # (both feed the write-amplification chart)
    group = [("wa" if r.kind == "consistency" else r.kind) for r in runs]
    for suffix in (lambda r: f" ({r.path.name})", lambda r: f" ({r.path})"):
        keys = list(zip(group, names))
        dupes = {k for k in keys if keys.count(k) > 1}
        names = [b + suffix(r) if k in dupes else k[1] for k, b, r in zip(keys, base, runs)]
    for run, name in zip(runs, names):
        run.name = name
    return runs
