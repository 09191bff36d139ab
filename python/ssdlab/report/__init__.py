"""An interactive HTML report over result directories, like the review pages.

``ssdlab report RUN_DIR... -o report.html`` and the ``--report`` flag of the scenario commands call
:func:`write_report`. The page is one self-contained file (plotly.js inline, no network) with a
section per test found among the runs:

* **Summary**: a table of the consistency figures (clean IOPS, steady mean/min, WA, steady WA,
  latency percentiles);
* **Performance consistency**: IOPS per second on three views (whole run log scale, steady-state
  zoom log scale, zoom linear scale), each with a row of drive buttons and a row of spare-area
  buttons ("Default", "25% Spare Area");
* **Performance over time & TRIM**: HD Tach-style MB/s against position, buttons per drive and pass;
* **Write amplification**: worst-case WA bars across runs (measured and speed-ratio estimate);
* **Used vs new**: MB/s bars per state.

The package splits the work one job per module: ``load`` (directories -> runs, errors),
``charts`` (plotly specs and button grouping), ``tables`` (summary figures), ``page`` (HTML) and
``assets`` (style sheet and script).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .charts import Chart
from .load import Run, SsdlabError, load_runs
from .page import Section, render
from .tables import Table

__all__ = ["Report", "build_report", "load_runs", "write_report"]


@dataclass
class Report:
    title: str
    intro: str
    sections: list[Section] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)

    def charts(self) -> dict[str, Chart]:
        return {i.id: i for s in self.sections for i in s.items if isinstance(i, Chart)}

    def tables(self) -> dict[str, Table]:
        return {i.id: i for s in self.sections for i in s.items if isinstance(i, Table)}

    def html(self, *, plotly: str | None = None) -> str:
        return render(self.title, self.intro, self.sections, _footer(), plotly=plotly)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ssdlab")
    except Exception:  # not installed as a distribution (e.g. a source checkout)
        return "dev"


def _footer() -> str:
    return (
        f"Made by ssdlab {_version()} from the result directories named in the summary table. "
        "Hover a chart for exact values; drag to zoom, double-click to reset; "
        "the buttons under a chart switch the data shown."
    )


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _default_title(runs: Sequence[Run]) -> str:
    drives = list(dict.fromkeys(r.drive for r in runs))
    shown = drives if len(drives) <= 3 else drives[:3] + [f"{len(drives) - 3} more"]
    return f"SSD report: {_and(shown)}"


def _intro(runs: Sequence[Run]) -> str:
    kinds: dict[str, int] = {}
    for run in runs:
        kinds[run.scenario] = kinds.get(run.scenario, 0) + 1
    sim = sorted({r.drive for r in runs if r.simulated})
    real = sorted({r.device for r in runs if r.device})
    what = _and([_plural(n, f"{k} run") for k, n in kinds.items()])
    who = []
    if sim:
        who.append(_plural(len(sim), "simulated drive"))
    if real:
        who.append(f"{_plural(len(real), 'real device')} ({', '.join(real)})")
    dirs = _plural(len(runs), "result directory", "result directories")
    return f"Built from {dirs}: {what}, on {_and(who)}."


SECTION_ORDER = ("consistency", "hdtach", "wa", "used-vs-new", "saturation")
"""The order of the report's sections, by the scenario that gives them."""

def build_report(runs: Sequence[Run], title: str | None = None) -> Report:
    """Assemble the sections from loaded runs (see :func:`load_runs`): each scenario's, in
    `SECTION_ORDER`, then those of any other registered scenario, then those of the results that
    are not a scenario's (`ssdlab.report.load.OTHER_RESULTS`: the fit)."""
    from ssdlab.scenarios import all_scenarios

    from .load import other_results

    report = Report(title or _default_title(runs), _intro(runs), runs=list(runs))
    modules = {s.name: s.report_section for s in all_scenarios() if s.report_section is not None}
    order = list(SECTION_ORDER) + [name for name in modules if name not in SECTION_ORDER]
    for name in order:
        sections = modules.get(name)
        if sections is not None:
            report.sections.extend(sections(runs))
    for _name, _classes, section in other_results():
        report.sections.extend(section(runs))
    return report


def write_report(run_dirs: Iterable[Path], out: Path, title: str | None = None) -> Path:
    """Write the interactive report over ``run_dirs`` to ``out`` (an .html file) and return its path.

    Raises :class:`ssdlab.errors.SsdlabError` naming the directory when one is not a readable
    result directory (docs/results.md). `run_dirs` may be one path (a string or Path) or several.
    The file is written whole (through a temporary file and a rename) or not at all.
    """
    from ssdlab.inputs import check_path_text
    from ssdlab.outputs import check_output_file, write_output

    if isinstance(run_dirs, (str, bytes, os.PathLike)):
        run_dirs = [Path(check_path_text(run_dirs, "report: result directory"))]
    elif not isinstance(run_dirs, Iterable):
        raise SsdlabError(f"report: expected result directories, got {type(run_dirs).__name__}")
    else:
        run_dirs = [Path(check_path_text(d, "report: result directory")) for d in run_dirs]
    if title is not None and not isinstance(title, str):
        raise SsdlabError(f"report: the title must be text, got {type(title).__name__}")
    out = Path(check_path_text(out, "report: output file"))
    if out.is_dir():
        raise SsdlabError(f"report: {out} is a directory; give a file name such as {out / 'report.html'}")
    check_output_file(out, "report")  # the output-path policy (ssdlab.outputs), before the runs are read
    runs = load_runs(run_dirs)
    page = build_report(runs, title).html()
    write_output(out, page, "report")  # missing parents are created, and removed again if it fails
    return out


# re-exported for callers that check types
__all__ += ["SsdlabError"]
