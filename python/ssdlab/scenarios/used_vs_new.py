"""``ssdlab used-vs-new``: 4 KiB random-write speed clean, used, and used after TRIM, the scenario in
one module.

AnandTech's SSD Anthology method (seed 004, docs/scenarios.md, *used-vs-new*): the random writes on
a secure-erased drive; on a used one (an OS area, the rest filled and deleted without TRIM); and on
the used one after TRIM. This module holds all of it:

* its options, declared once (`OPTIONS`): the command's, the API's defaults, the sweep's keys;
* its steps on the core (`params_of`, `plan`) and its API function (`used_vs_new`);
* its result (`UsedVsNewResult`: tables, summary, save, load) and its chart (`figure`,
  used_vs_new.png);
* its command (`command`: what ``ssdlab used-vs-new`` prints);
* its sweep entry (the figures of ``results.parquet``) and its section of the HTML report
  (`UsedVsNewRun`, `chart`, `table`, `report_section`);
* and the one line that registers it (`SCENARIO`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import click
import numpy as np

from ssdlab import cli_values as cv, procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report.charts import PASS_COLOURS, Chart, chart_axis, chart_layout, chart_text, chart_title, nice_ceiling
from ssdlab.report.load import Run
from ssdlab.report.page import Section, chart_section
from ssdlab.report.tables import Cell, Table, number_cell
from ssdlab.results import CsvTable, TableResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import finish, pct_text, sim_config, simulate
from ssdlab.scenarios.shared import SIM
from ssdlab.sizes import format_size, parse_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["COLUMNS", "FILES", "OPTIONS", "OS_REWRITE_PCT", "SCENARIO", "UsedVsNewResult", "UsedVsNewRun",
           "used_vs_new"]

NAME = "used-vs-new"
FILES = ("used_vs_new.csv", "summary.json", "used_vs_new.png")
COLUMNS = ("state", "mb_s", "iops")

OS_REWRITE_PCT = 100.0
"""Percent of the OS area used vs new rewrites in 4 KiB random writes (the core's
`used_vs_new::OS_REWRITE_PCT`)."""

_UNIT = 4096
_FILL_BLOCK = 128 * 1024  # the core's fill request size (used_vs_new.rs BLOCK)

OPTIONS = (
    Opt("test_span", "Bytes the random writes cover, after the OS area. [default: 8 GB or a quarter of the drive, the "
        "smaller]", type=cv.test_span, metavar="SIZE", kind="size", axis="size",
        range="a multiple of 4096 that fits after the OS area (never rounded)"),
    Opt("duration", "Simulated seconds of random writes in each state.", type=cv.duration, default=180.0,
        show_default="180", metavar="SECONDS", api="duration_s", range="(0, 10^7]"),
    Opt("qd", "Queue depth of the random writes.", type=cv.queue_depth, default=3, show_default=True, metavar="N",
        kind="whole", range="1 … 65536"),
    Opt("os_pct", "Percent of the drive holding the 'OS and applications' (valid, never deleted).",
        type=cv.percent(90.0), default=20.0, show_default="20", metavar="PCT", range="[0, 90)"),
    Opt("os_rewrite_pct", "Percent of the OS area rewritten in 4 KiB random writes after it is written (an install's "
        "small files and updates), at least 0 and below 1000.", type=cv.percent(1000.0), default=OS_REWRITE_PCT,
        show_default="100", metavar="PCT", axis=None, range="[0, 1000)"),
)


# -- steps -----------------------------------------------------------------------------------------


def params_of(test_span: Any, duration_s: Any, qd: Any, os_pct: Any, os_rewrite_pct: Any) -> Dict[str, Any]:
    """The core's parameters (scenario/used_vs_new.rs)."""
    span = 0
    if test_span is not None:
        span = parse_size(test_span, what="test span")
        if span < _UNIT:
            raise SsdlabError(f"the test span must be at least 4 KiB, got {test_span!r}; leave it out for the default")
    return {
        "test_span_bytes": span,
        "duration_s": procedures.number(duration_s, "duration"),
        "queue_depth": procedures.whole(qd, "queue depth"),
        "os_pct": procedures.number(os_pct, "OS area percentage"),
        "os_rewrite_pct": procedures.number(os_rewrite_pct, "OS rewrite percentage"),
    }


def plan(p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs (for progress bars): the clean test; the OS area, its small writes and
    the data deleted without TRIM; the used test; the TRIM and the test again."""
    run = procedures.run_step
    duration = p["duration_s"]
    os_bytes = int(user_bytes * p["os_pct"] / 100.0) // _FILL_BLOCK * _FILL_BLOCK
    steps = [{"step": "secure_erase"}, run("test:clean", duration), {"step": "secure_erase"}]
    if os_bytes > 0:
        steps.append(run("os and applications"))
        if int(os_bytes * p["os_rewrite_pct"] / 100.0) // _UNIT > 0:
            steps.append(run("os and applications: small writes"))
    steps += [
        run("data deleted without TRIM"),
        run("test:used", duration),
        {"step": "trim"},
        run("test:used after TRIM", duration),
    ]
    return steps


# -- the result ------------------------------------------------------------------------------------


class UsedVsNewResult(TableResult):
    """Used vs new: 4 KiB random-write speed on a clean drive, a used one (full of data deleted
    without TRIM) and the used one after TRIM (docs/results.md, section *used-vs-new*).

    Attributes:
        states: DataFrame ``state, mb_s, iops``, rows ``clean``, ``used``, ``used after TRIM``.
        summary: the figures of ``summary.json``; ``summary["states"]`` has the same rows (plus
            each state's write amplification).
        config, steps: as for `HdtachResult`.
    """

    SCENARIOS = ("used-vs-new",)
    FILES = FILES
    TABLES = (CsvTable("table_frame", "used_vs_new.csv", COLUMNS, finite=("mb_s", "iops"), text=("state",)),)

    @property
    def states(self) -> pd.DataFrame:
        """One row per state (``state, mb_s, iops``)."""
        return self.table_frame

    def __repr__(self) -> str:
        rows = ", ".join(f"{r.state} {r.mb_s:.2f} MB/s" for r in self.states.itertuples())
        return f"<UsedVsNewResult {self.label!r}: {rows}>"

    @classmethod
    def from_run(
        cls,
        *,
        label: str,
        config: DriveConfig,
        steps: List[StepResult],
        core_summary: Dict[str, Any],
        params: Dict[str, Any],
        seed: int,
        wall_seconds: float,
    ) -> UsedVsNewResult:
        """Assembles the result of a finished run (see `used_vs_new`)."""
        import pandas as pd

        rows = [
            {"state": r["state"], "mb_s": r["mb_s"], "iops": r["iops"], "write_amplification": r["write_amplification"]}
            for r in core_summary["states"]
        ]
        states = pd.DataFrame(rows, columns=[*COLUMNS, "write_amplification"])
        summary = procedure_summary(
            scenario="used-vs-new",
            label=label,
            config=config,
            seed=seed,
            wall_seconds=wall_seconds,
            params={**params, "test_span_bytes": core_summary["test_span_bytes"]},
        )
        summary["states"] = rows
        return cls(states[list(COLUMNS)], plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        how = (
            f"4 KiB random writes, QD{s['queue_depth']}, {s['duration_s']:g} s over "
            f"{format_size(int(s['test_span_bytes']))} after a {s['os_pct']:g}% OS area"
        )
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        """``used_vs_new.png``: MB/s per state, as bars."""
        return {"used_vs_new.png": figure(self.states, title=self.label, subtitle=self.subtitle())}


# -- the chart (used_vs_new.png) -------------------------------------------------------------------

_STATE_NAMES = {"clean": "Clean drive", "used": "Used drive", "used after TRIM": "Used drive after TRIM"}
_STATE_COLOURS = {"clean": "#059669", "used": "#dc2626", "used after TRIM": "#2563eb"}


def figure(states: pd.DataFrame, *, title: str, subtitle: str) -> Figure:
    """``used_vs_new.png``: horizontal bars of MB/s per state (clean, used, used after TRIM; columns
    ``state, mb_s, iops``), first state on top, each labelled with its MB/s and IOPS, like the
    reviews' tables."""
    from ssdlab.plots import PASS_COLOURS as BAR_COLOURS, bar_figure, mb_s_axis, mb_text

    fig, ax = bar_figure(title, subtitle, len(states))
    names = [str(s) for s in states["state"]]
    mb_s = states["mb_s"].to_numpy(np.float64)
    y = np.arange(len(names))
    colours = [_STATE_COLOURS.get(n, BAR_COLOURS[i % len(BAR_COLOURS)]) for i, n in enumerate(names)]
    ax.barh(y, mb_s, height=0.6, color=colours, zorder=3)
    ax.set_yticks(y, [_STATE_NAMES.get(n, n) for n in names])
    ax.invert_yaxis()
    mb_s_axis(ax, float(mb_s.max(initial=0)) * 1.35, axis="x")  # room for the labels
    clean = mb_s[0] if len(mb_s) and names[0] == "clean" and mb_s[0] > 0 else None
    for yi, value, iops, name in zip(y, mb_s, states["iops"].to_numpy(np.float64), names):
        text = f"{mb_text(value)} MB/s  ({iops:,.0f} IOPS"
        text += f", {100 * value / clean:.0f}% of clean)" if clean is not None and name != "clean" else ")"
        ax.annotate(text, (value, yi), xytext=(5, 0), textcoords="offset points", va="center", fontsize=9,
                    fontweight="bold", color="#333333")
    ax.set_xlabel("4 KiB random write (MB/s, higher is better)")
    return fig


# -- the API -------------------------------------------------------------------------------------


def used_vs_new(
    config: procedures.Config = None,
    *,
    test_span: Union[int, str, None] = default_of(OPTIONS, "test_span"),
    duration_s: float = default_of(OPTIONS, "duration"),
    qd: int = default_of(OPTIONS, "qd"),
    os_pct: float = default_of(OPTIONS, "os_pct"),
    os_rewrite_pct: float = default_of(OPTIONS, "os_rewrite_pct"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> UsedVsNewResult:
    """Used vs new (AnandTech's SSD Anthology method): 4 KiB random writes at queue depth `qd` for
    `duration_s` seconds over `test_span` bytes, in three states of the drive:

    1. clean: secure erase, then the test;
    2. used: secure erase, the first `os_pct` percent written as the "OS and applications" and
       `os_rewrite_pct` percent of it rewritten in 4 KiB random writes (an install's small files
       and updates: "a twist of randomness"), the rest filled and deleted without TRIM (the drive
       still holds it as valid data), the test;
    3. used after TRIM: the deleted space TRIMmed (as a format does), the test again.

    The test covers `test_span` bytes (a size such as ``"8GB"``) right after the OS area; None
    takes 8 GB or a quarter of the drive, whichever is smaller. The default label is
    ``"<drive> · used vs new"``.
    """
    cfg = procedures.resolve_config(config)
    params = params_of(test_span, duration_s, qd, os_pct, os_rewrite_pct)
    seed = procedures.check_seed(seed)
    steps, core, wall = procedures.execute(NAME, cfg, params, seed, progress)
    return UsedVsNewResult.from_run(
        label=label if label is not None else f"{cfg.name} · used vs new",
        config=cfg, steps=steps, core_summary=core, params=params, seed=seed, wall_seconds=wall,
    )


# -- the command -----------------------------------------------------------------------------------


def command(test_span: Optional[int], duration: float, qd: int, os_pct: float, os_rewrite_pct: float,
            drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
            gc: Optional[str], seed: int, out: Optional[str], report: bool, quiet: bool) -> None:
    """Used vs new: 4 KiB random-write speed clean, used, and used after TRIM.

    Clean: secure erase, then the random writes. Used: secure erase, an OS area of --os-pct
    percent, the rest filled and deleted without TRIM, the random writes. Used after TRIM: the
    deleted space TRIMmed, the random writes again. Writes used_vs_new.csv, summary.json and
    used_vs_new.png (bars) to the result directory.
    """
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    options = {"test_span": test_span, "duration_s": duration, "qd": qd, "os_pct": os_pct,
               "os_rewrite_pct": os_rewrite_pct}
    what = f"{duration:g} s of 4 KiB random writes at QD{qd} clean, used, used after TRIM"
    result, path = simulate(cfg, NAME, options, what, out, quiet,
                            lambda progress: used_vs_new(cfg, seed=seed, progress=progress, **options), report)
    if not finish(result, path, report, quiet, FILES):
        return
    states = result.summary["states"]
    width = max([len("state")] + [len(r["state"]) for r in states])
    clean = next((r["mb_s"] for r in states if r["state"] == "clean"), None)
    click.echo(f"  {'state'.ljust(width)}  {'MB/s':>8}  {'IOPS':>9}  {'% of clean':>10}  {'WA':>5}")
    for r in states:
        pct = 100 * r["mb_s"] / clean if clean else None
        click.echo(
            f"  {r['state'].ljust(width)}  {r['mb_s']:>8,.2f}  {r['iops']:>9,.0f}  {pct_text(pct):>10}  "
            f"{r['write_amplification']:>5.2f}"
        )
    click.echo(f"  wall time {result.summary['wall_seconds']:.1f}s")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    states = {r.get("state"): r for r in s.get("states") or []}
    clean = (states.get("clean") or {}).get("mb_s")
    for state, prefix in (("clean", "clean"), ("used", "used"), ("used after TRIM", "trimmed")):
        row = states.get(state) or {}
        figures[f"{prefix}_mb_s"] = row.get("mb_s")
        figures[f"{prefix}_iops"] = row.get("iops")
        figures[f"{prefix}_write_amplification"] = row.get("write_amplification")
        if prefix != "clean":
            mb_s = row.get("mb_s")
            figures[f"{prefix}_pct_of_clean"] = 100.0 * mb_s / clean if clean and mb_s is not None else None
    return figures


# -- the report section ----------------------------------------------------------------------------


@dataclass
class UsedVsNewRun(Run):
    scenario_names = ("used-vs-new", "used_vs_new")
    kind = "used-vs-new"
    states: list[str] = field(default_factory=list)
    mb_s: list[float] = field(default_factory=list)
    iops: list[float] = field(default_factory=list)

    def _read(self) -> None:
        frame = self._csv("used_vs_new.csv", ("state", "mb_s", "iops"), ("mb_s", "iops"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'used_vs_new.csv'}: no rows")
        self.states = frame["state"].astype(str).tolist()
        self.mb_s = frame["mb_s"].tolist()
        self.iops = frame["iops"].tolist()


def chart(runs: Sequence[Run]) -> Chart | None:
    """Grouped bars: MB/s per state (clean, used, used after TRIM) for each run; IOPS in hover."""
    uruns = [r for r in runs if isinstance(r, UsedVsNewRun)]
    if not uruns:
        return None
    states = list(dict.fromkeys(s for r in uruns for s in r.states))
    data = []
    for i, state in enumerate(states):
        xs, ys, iops = [], [], []
        for run in uruns:
            if state in run.states:
                j = run.states.index(state)
                xs.append(run.name)
                ys.append(run.mb_s[j])
                iops.append(run.iops[j])
        data.append(
            {
                "type": "bar",
                "name": state,
                "x": xs,
                "y": ys,
                "customdata": iops,
                "marker": {"color": PASS_COLOURS[i % len(PASS_COLOURS)]},
                "text": [f"{y:.0f}" for y in ys],
                "textposition": "outside",
                "cliponaxis": False,
                "hovertemplate": f"<b>%{{x}}</b>, {chart_text(state)}<br>%{{y:.1f}} MB/s<br>%{{customdata:,.0f}} IOPS<extra></extra>",
            }
        )
    top = max(y for t in data for y in t["y"])
    layout = chart_layout(
        chart_title("Used vs new", "throughput of the drive new, used, and used after TRIM"),
        chart_axis("", automargin=True, showline=True, ticks=""),
        chart_axis("Throughput (MB/s)", range=[0, nice_ceiling(top * 1.15)]),
        barmode="group",
        showlegend=True,
    )
    return Chart("used-vs-new", [{"data": data, "layout": layout}])


def table(runs: Sequence[Run]) -> Table | None:
    uruns = [r for r in runs if isinstance(r, UsedVsNewRun)]
    if not uruns:
        return None
    out = Table("summary-used-vs-new", ["Run", "State", "MB/s", "IOPS"])
    for run in uruns:
        for state, mb_s, iops in zip(run.states, run.mb_s, run.iops):
            out.rows.append([Cell(run.name), Cell(state), number_cell(mb_s, ".1f"), number_cell(iops, ",.0f")])
    return out


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Used vs new" section."""
    return chart_section("used-vs-new", "Used vs new", "Throughput new, used and after TRIM.", chart(runs),
                         table(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=UsedVsNewResult,
    files=FILES,
    procedure=(used_vs_new, params_of, plan),
    sweep=SweepEntry(
        run=api_runner(used_vs_new),
        figures=_sweep_figures,
        metrics=(("used_pct_of_clean", "used, % of clean"), ("used_mb_s", "used, MB/s")),
    ),
    report_runs=(UsedVsNewRun,),
    report_section=report_section,
)
