"""The PTS report: every PTS result directory's report pages as sections of one self-contained
HTML page (``ssdlab pts report DIRS… --out report.html``, and the PTS sections of ``ssdlab
report``), one or several drives side by side, simulated and real.

Per test (one section each, in the registry's order), with one column per run:

* the runs side by side: drive or device, variant, TC × QD, active range, round length, rounds run,
  the steady-state verdict and window, the tracking variables' window averages, the purge;
* the steady-state determination of every tracking variable (PTS's table beside the
  measurement-window plot): average, allowed and measured data excursion (range), allowed and
  measured slope excursion, the least-squares fit, the verdict;
* the set tables (``iops_table.csv`` block size × mix, ``latency_table.csv``, ``throughput_table.csv``,
  XSR's access groups, HIR's wait states, CBW's and DIRTH's TC × QD sweep over the window);
* the spec's plots the result directory holds (its PNG files, inlined);
* what the run deviated from the spec (``summary.json`` ``deviations``: shorter rounds, fewer rounds,
  a fallback purge, ...).

Each test's scenario module names `PtsRun` among its ``report_runs`` and `report_section` as its
``report_section``; a new test gets its report section by doing the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.inputs import DATA_LIMIT, read_bytes
from ssdlab.report.load import Run, load_runs
from ssdlab.report.page import Grid, Image, Notes, Section
from ssdlab.report.tables import Cell, Table, number_cell
from ssdlab.sizes import format_size

__all__ = ["PtsRun", "report_section", "write_pts_report"]

TITLES = {"pts-iops": "PTS IOPS", "pts-throughput": "PTS throughput", "pts-latency": "PTS latency",
          "pts-wsat": "PTS write saturation (WSAT)", "pts-hir": "PTS host idle recovery (HIR)",
          "pts-xsr": "PTS cross-stimulus recovery (XSR)", "pts-cbw": "PTS composite block size workload (CBW)",
          "pts-dirth": "PTS demand intensity / response time histogram (DIRTH)"}
LISTS = {"groups": "Access groups", "wait_states": "Wait states", "window": "TC × QD over the window"}
"""Summary lists of records shown as set tables, for a result without a ``*_table.csv`` of its own
(CBW's and DIRTH's ``window`` is their TC × QD sweep over the measurement window)."""


def _scenario(name: str) -> Any:
    from ssdlab.scenarios import all_scenarios

    return next(s for s in all_scenarios() if s.name == name)


def pts_names() -> List[str]:
    """The PTS tests' scenario names, in the registry's order."""
    from ssdlab.scenarios import all_scenarios

    return [s.name for s in all_scenarios() if s.group == "pts" and PtsRun in s.report_runs]


class PtsRun(Run):
    """A PTS result directory: read (and checked) by its scenario's own result class, so a
    directory that is not complete is a one-line error naming what is missing."""

    kind = "pts"
    result: Any = None

    def _read(self) -> None:
        self.result = _scenario(self.scenario).result.load(self.path)


class _Names:
    """`PtsRun.scenario_names`, read from the registry when the report's run classes are gathered."""

    def __get__(self, obj: Any, owner: Any) -> tuple:
        return tuple(pts_names())


PtsRun.scenario_names = _Names()  # type: ignore[assignment]


# -- what a run shows ----------------------------------------------------------------------------------


def _verdicts(s: Dict[str, Any]) -> List[tuple]:
    """(title, steady-state verdict dict) of a summary: the test's, or one per block size."""
    out = []
    if isinstance(s.get("steady_state"), dict):
        out.append(("preconditioning" if s.get("scenario") == "pts-hir" else "test", s["steady_state"]))
    for bs, sub in (s.get("block_sizes") or {}).items() if isinstance(s.get("block_sizes"), dict) else []:
        if isinstance(sub, dict) and isinstance(sub.get("steady_state"), dict):
            out.append((format_size(int(bs)), sub["steady_state"]))
    return out


def _kind(run: Run) -> str:
    s = run.summary
    if run.simulated:
        return "simulated"
    return {"nbd": "NBD export", "file": "regular file", "block": "block device"}.get(s.get("device_kind"), "device")


def _text(v: Any) -> Cell:
    return Cell("—" if v is None else str(v))


def overview(runs: Sequence[PtsRun], sid: str) -> Table:
    """The runs side by side: one column per run."""
    cols = ["", *[r.name for r in runs]]
    rows: List[List[Cell]] = []

    def row(name: str, cells: Iterable[Cell]) -> None:
        rows.append([Cell(name), *cells])

    row("drive", (_text(r.summary.get("device") or r.drive) for r in runs))
    row("kind", (Cell(_kind(r)) for r in runs))
    row("capacity", (_text(format_size(int(r.summary["user_capacity_bytes"])) if r.summary.get(
        "user_capacity_bytes") else None) for r in runs))
    row("variant", (_text(r.summary.get("spec")) for r in runs))
    row("TC × QD", (_text(f"{r.summary['threads']} × {r.summary['queue_depth']}" if "threads" in r.summary else None)
                    for r in runs))
    row("active range", (_text(f"{r.summary['active_range_pct']:g} %" if "active_range_pct" in r.summary else None)
                         for r in runs))
    if any("round_s" in r.summary for r in runs):
        row("round length", (_text(f"{r.summary['round_s']:g} s" if "round_s" in r.summary else None) for r in runs))
    for label, key in (("purge", "purge"), ("fio", "fio_version"), ("fio engine", "ioengine")):
        if any(r.summary.get(key) for r in runs):
            row(label, (_text(r.summary.get(key)) for r in runs))
    titles = list(dict.fromkeys(t for r in runs for t, _v in _verdicts(r.summary)))
    for title in titles:
        cells, avgs = [], {}
        for r in runs:
            v = dict(_verdicts(r.summary)).get(title)
            if v is None:
                cells.append(Cell("—"))
                continue
            first, last = v["window_rounds"]
            cells.append(Cell(f"{'steady' if v['steady'] else 'NOT steady'}, rounds {first}-{last} of {v['rounds_run']}"))
            for name, w in v["tracking"].items():
                avgs.setdefault(name, {})[r.name] = w.get("average")
        row(f"steady state ({title})" if len(titles) > 1 or title != "test" else "steady state", cells)
        for name, by_run in avgs.items():
            row(f"{name}, window average" + (f" ({title})" if title != "test" else ""),
                (number_cell(by_run.get(r.name), ",.1f") for r in runs))
    wl = [r.summary.get("last_window") for r in runs]
    if any(isinstance(w, dict) for w in wl):
        row("last 5 samples (information)", (Cell(("steady" if w["steady"] else "not steady") +
                                                  f", average {w['average']:,.0f}") if isinstance(w, dict) else
                                             Cell("—") for w in wl))
    if any("recovery" in r.summary for r in runs):
        row("recovery (s)", (number_cell((r.summary.get("recovery") or {}).get("seconds"), ",.0f") for r in runs))
    row("deviations", (number_cell(float(len(r.summary.get("deviations") or [])), ".0f") for r in runs))
    return Table(f"{sid}-overview", cols, rows)


def determination(run: PtsRun, sid: str) -> List[Table]:
    """PTS's steady-state determination of every tracking variable of `run`: one column each."""
    out = []
    for title, v in _verdicts(run.summary):
        ws = list(v["tracking"].items())

        def line(name: str, f: Any) -> List[Cell]:
            return [Cell(name), *(f(w) for _n, w in ws)]

        def fit(w: Dict[str, Any]) -> Cell:
            sign = "−" if (w.get("intercept") or 0) < 0 else "+"
            return Cell(f"{w['slope']:,.2f}·x {sign} {abs(w['intercept']):,.1f}")

        rows = [line("average", lambda w: number_cell(w.get("average"), ",.1f")),
                line("data excursion allowed (20 %)", lambda w: number_cell(w.get("range_limit"), ",.1f")),
                line("data excursion measured", lambda w: number_cell(w.get("range"), ",.1f")),
                line("slope excursion allowed (10 %)", lambda w: number_cell(w.get("excursion_limit"), ",.1f")),
                line("slope excursion measured", lambda w: number_cell(w.get("excursion"), ",.1f")),
                line("least-squares fit", fit),
                line("measurement window", lambda w: Cell(f"rounds {w['first_round']}-{w['last_round']}")),
                line("determination", lambda w: Cell("steady" if w["steady"] else "NOT steady"))]
        out.append(Table(f"{sid}-{_safe(run.name)}-{_safe(title)}-ss",
                         ["steady state" + (f" ({title})" if title != "test" else ""), *(n for n, _w in ws)], rows,
                         notes={n: "slope excursion: |slope| × (5 − 1), the fit line's excursion across the window"
                                for n, _w in ws}))
    return out


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower() or "x"


def _cell(value: Any, column: str) -> Cell:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _text(value)
    if column == "block_bytes":
        return Cell(format_size(int(value)), float(value))
    if value != value:
        return Cell("—")
    return number_cell(float(value), ",.0f" if abs(value) >= 100 or float(value).is_integer() else ",.2f")


def set_tables(run: PtsRun, sid: str) -> List[Table]:
    """The run's set tables: its ``*_table.csv``, and the summary's access groups or wait states."""
    out = []
    table = getattr(run.result, "table", None)
    if table is not None:
        cols = [str(c) for c in table.columns]
        rows = [[_cell(rec[c], c) for c in cols] for rec in table.to_dict("records")]
        out.append(Table(f"{sid}-{_safe(run.name)}-set", ["block size" if c == "block_bytes" else c for c in cols], rows))
    for key, _title in LISTS.items() if table is None else ():
        items = run.summary.get(key)
        if isinstance(items, list) and items and all(isinstance(i, dict) for i in items):
            cols = [c for c in items[0] if not isinstance(items[0][c], (list, dict))]
            out.append(Table(f"{sid}-{_safe(run.name)}-{key}", cols, [[_cell(i.get(c), c) for c in cols] for i in items]))
    return out


def images(run: PtsRun, sid: str) -> List[Image]:
    files = [f for f in _scenario(run.scenario).files if f.endswith(".png")]
    out = []
    for name in files:
        path = run.path / name
        if path.is_file():
            out.append(Image(f"{sid}-{_safe(run.name)}-{_safe(name)}", read_bytes(path, "result file", DATA_LIMIT),
                             f"{run.name}: {name}", name))
    return out


def report_section(runs: Sequence[Run]) -> List[Section]:
    """A section per PTS test among `runs` (the others are not PTS runs and are passed over)."""
    sections = []
    for name in pts_names():
        mine = [r for r in runs if isinstance(r, PtsRun) and r.scenario == name]
        if not mine:
            continue
        sid = name
        heads = [f"{r.name} ({_kind(r)})" for r in mine]
        items: List[Any] = [overview(mine, sid)]
        items.append(Grid(f"{sid}-determination", "Steady-state determination",
                          [(h, determination(r, sid) or [Notes(f"{sid}-{_safe(r.name)}-nodet", "", [],
                                                               "no steady-state rule in this test")])
                           for h, r in zip(heads, mine)]))
        if any(set_tables(r, sid) for r in mine):
            items.append(Grid(f"{sid}-sets", "Set tables (averages over the measurement window)",
                              [(h, set_tables(r, sid)) for h, r in zip(heads, mine)]))
        pngs = [images(r, sid) for r in mine]
        for k in range(max((len(p) for p in pngs), default=0)):
            items.append(Grid(f"{sid}-plot-{k}", "", [(h, [p[k]] if len(p) > k else []) for h, p in zip(heads, pngs)]))
        items.append(Grid(f"{sid}-deviations", "Deviations from the spec",
                          [(h, [Notes(f"{sid}-{_safe(r.name)}-dev", "", list(r.summary.get("deviations") or []),
                                      "none")]) for h, r in zip(heads, mine)]))
        lede = (f"{len(mine)} run{'s' if len(mine) != 1 else ''} side by side (docs/pts.md). Reported figures are the "
                "averages over each run's measurement window; the determination table is PTS's steady-state check "
                "(range ≤ 20 % and fit-line excursion ≤ 10 % of the window average).")
        sections.append(Section(sid, TITLES.get(name, name), lede, items))
    return sections


def write_pts_report(dirs: Sequence[Path], out: Path, title: Optional[str] = None) -> Path:
    """The PTS report over `dirs` (PTS result directories, or folders of them) written to `out`:
    one self-contained HTML file, complete or not at all. A directory that is not a PTS result is a
    one-line `SsdlabError`."""
    from ssdlab.inputs import check_path_text
    from ssdlab.outputs import check_output_file, write_output
    from ssdlab.report import Report

    paths = [Path(check_path_text(d, "pts report: result directory")) for d in dirs]
    out = Path(check_path_text(out, "pts report: output file"))
    if out.is_dir():
        raise SsdlabError(f"pts report: {out} is a directory; give a file name such as {out / 'report.html'}")
    check_output_file(out, "pts report")
    runs = load_runs(paths)
    other = next((r for r in runs if not isinstance(r, PtsRun)), None)
    if other is not None:
        raise SsdlabError(f"{other.path}: a {other.scenario} result, not a PTS one; `ssdlab pts report` takes the "
                          "result directories of `ssdlab pts TEST` (use `ssdlab report` for the others)")
    drives = list(dict.fromkeys(r.summary.get("device") or r.drive for r in runs))
    page_title = title or f"PTS report: {', '.join(drives[:3])}{f' and {len(drives) - 3} more' if len(drives) > 3 else ''}"
    sim = sum(1 for r in runs if r.simulated)
    intro = (f"SNIA PTS 2.0 tests from {len(runs)} result director{'y' if len(runs) == 1 else 'ies'}: "
             f"{sim} simulated, {len(runs) - sim} on real devices or files through fio.")
    report = Report(page_title, intro, report_section(runs), runs=list(runs))
    write_output(out, report.html(), "pts report")
    return out


def command() -> Any:
    """``ssdlab pts report DIRS… --out FILE``."""
    import click

    @click.command("report")
    @click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR...")
    @click.option("--out", "-o", required=True, metavar="FILE", help="The HTML file to write (a directory: "
                  "FILE/report.html).")
    @click.option("--title", metavar="TEXT", help="Page title. [default: PTS report: <runs>]")
    @click.option("--quiet", "-q", is_flag=True, help="Print nothing.")
    def pts_report(run_dirs: Sequence[str], out: str, title: Optional[str], quiet: bool) -> None:
        """The PTS report pages of PTS result directories, as one self-contained HTML file.

        One section per test (ssdlab pts iops, throughput, latency, wsat, hir, xsr), the runs side
        by side (simulated and real): their settings and steady-state verdicts, PTS's steady-state
        determination table per tracking variable, the set tables, the spec's plots and what each
        run deviated from the spec. A directory holding result directories stands for all of them.
        """
        if out.strip() == "":
            raise click.BadParameter("the file name is empty; give one such as report.html", param_hint="'--out'")
        target = Path(out)
        if target.is_dir():
            target = target / "report.html"
        path = write_pts_report([Path(d) for d in run_dirs], target, title)
        if not quiet:
            click.echo(f"Report in {path}")

    return pts_report
