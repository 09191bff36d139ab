"""``ssdlab wa``: estimated worst-case write amplification, the scenario in one module.

Secure erase, a sequential fill, then 4 KiB QD32 random writes; the true write amplification
(NAND writes ÷ host writes) next to the estimate the reviews made from speeds alone (clean MB/s ÷
worst MB/s). Seed 000 (docs/scenarios.md, *wa*). This module holds all of it:

* its options, declared once (`OPTIONS`): the command's, the API's defaults, the sweep's keys;
* its steps on the core (`params_of`, `plan`) and its API function (`worst_case_wa`);
* its result (`WorstCaseWaResult`: tables, summary, save, load) and its chart (`figure`, wa.png);
* its command (`command`: what ``ssdlab wa`` prints);
* its sweep entry (the figures of ``results.parquet``) and its section of the HTML report
  (`WaRun`, `entries`, `chart`, `table`, `report_section`), which also shows the consistency runs'
  steady-state WA next to the wa runs';
* and the one line that registers it (`SCENARIO`).
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import click
import numpy as np

from ssdlab import procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report.charts import Chart, chart_axis, chart_layout, chart_title, nice_ceiling
from ssdlab.report.load import Run
from ssdlab.report.page import Section, chart_section
from ssdlab.report.tables import Cell, Table, number_cell
from ssdlab.results import MIB, CsvTable, TableResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import finish, sim_config, simulate
from ssdlab.scenarios.consistency_report import ConsistencyRun
from ssdlab.scenarios.shared import COMPRESSIBILITY, SIM, torture_minutes

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["FILES", "OPTIONS", "SCENARIO", "WaRun", "WorstCaseWaResult", "worst_case_wa"]

NAME = "wa"
FILES = ("wa.csv", "summary.json", "wa.png")
COLUMNS = ("time_s", "mb_s", "host_mib", "nand_mib", "write_amplification")

OPTIONS = (
    torture_minutes(20.0, "Minutes of 4 KiB QD32 random writes after the sequential fill."),
    COMPRESSIBILITY,
)


# -- steps -----------------------------------------------------------------------------------------


def params_of(torture_minutes: Any, compressibility: Any) -> Dict[str, Any]:
    """The core's parameters (scenario/wa.rs)."""
    return {
        "torture_minutes": procedures.number(torture_minutes, "torture minutes"),
        "compressibility": procedures.number(compressibility, "compressibility"),
    }


def plan(p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs (for progress bars): a secure erase, the fill, the torture."""
    return procedures.fill_and_torture(p["torture_minutes"])


# -- the result ------------------------------------------------------------------------------------


class WorstCaseWaResult(TableResult):
    """Estimated worst-case write amplification: the true NAND/host ratio over a torture next to the
    speed-ratio estimate (clean MB/s ÷ worst MB/s) (docs/results.md, section *wa*).

    Attributes:
        series: DataFrame ``time_s, mb_s, host_mib, nand_mib, write_amplification``: one row per
            simulated second of the torture (``mb_s`` the host's write speed, 10^6 bytes/s;
            ``write_amplification`` NaN in seconds without host writes).
        summary: the figures of ``summary.json`` (``write_amplification``, ``speed_ratio_estimate``,
            ``clean_mb_s``, ``worst_mb_s``, ``compressibility``, ...).
        config, steps: as for `HdtachResult`.
    """

    SCENARIOS = ("wa",)
    FILES = FILES
    TABLES = (CsvTable("table_frame", "wa.csv", COLUMNS, finite=("time_s", "mb_s", "host_mib")),)

    @property
    def series(self) -> pd.DataFrame:
        """One row per simulated second of the torture."""
        return self.table_frame

    def __repr__(self) -> str:
        s = self.summary
        est = s["speed_ratio_estimate"]
        return (
            f"<WorstCaseWaResult {self.label!r}: WA {s['write_amplification']:.2f}, speed-ratio estimate "
            f"{'n/a' if est is None else f'{est:.2f}'}>"
        )

    @property
    def write_amplification(self) -> float:
        """NAND writes ÷ host writes over the torture."""
        return float(self.summary["write_amplification"])

    @property
    def speed_ratio_estimate(self) -> Optional[float]:
        """Clean MB/s ÷ worst MB/s (None if the drive wrote nothing at the end)."""
        est = self.summary["speed_ratio_estimate"]
        return None if est is None else float(est)

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
    ) -> WorstCaseWaResult:
        """Assembles the result of a finished run (see `worst_case_wa`)."""
        import pandas as pd

        summary = procedure_summary(
            scenario="wa", label=label, config=config, seed=seed, wall_seconds=wall_seconds, params=params
        )
        runs = [s for s in steps if s.series is not None]
        if not runs or runs[-1].series is None:
            raise SsdlabError("the wa run returned no torture phase")
        raw = runs[-1].series.reindex(range(math.ceil(float(params["torture_minutes"]) * 60.0)), fill_value=0)
        layout = config.describe()
        unit_bytes = layout["physical_capacity_bytes"] // (
            layout["dies"] * layout["blocks_per_die"] * layout["units_per_block"]
        )
        host = raw["host_bytes"].to_numpy(np.float64) / 4096  # host data in units' worth (WA: NAND over host bytes)
        nand = raw["nand_units"].to_numpy(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            wa = np.where(host > 0, nand / np.where(host > 0, host, 1), np.nan)
        series = pd.DataFrame(
            {
                "time_s": np.arange(len(raw), dtype=np.int64),
                "mb_s": raw["write_bytes"].to_numpy(np.float64) / 1e6,
                "host_mib": host * unit_bytes / MIB,
                "nand_mib": nand * unit_bytes / MIB,
                "write_amplification": wa,
            }
        )
        summary["compression"] = config.ftl.compression
        summary["write_amplification"] = core_summary["write_amplification"]
        # The core measures it over the window of `worst_mb_s`; 0 means no host writes there.
        summary["steady_write_amplification"] = core_summary["steady_write_amplification"] or None
        for key in ("speed_ratio_estimate", "clean_mb_s", "worst_mb_s"):
            summary[key] = core_summary[key]
        return cls(series, plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        c = s["compressibility"]
        data = "incompressible data" if c >= 1 else f"data compressible to {100 * c:g}%"
        how = f"sequential fill, then {s['torture_minutes']:g} min of 4 KiB random writes at QD32, {data}"
        return subtitle(s, how)

    def note(self) -> Optional[str]:
        """A sentence on why the estimate disagrees with the true WA of the same window (the last
        fifth of the torture), when they differ by more than 20 %; None when they agree."""
        s = self.summary
        est = s["speed_ratio_estimate"]
        wa = s.get("steady_write_amplification") or s["write_amplification"]
        if est is None:
            return "No host writes completed in the last fifth of the torture, so there is no speed-ratio estimate."
        if not wa or 1 / 1.2 <= est / wa <= 1.2:
            return None
        if s.get("compression") and s["compressibility"] < 1:
            return (
                f"The drive compresses data as it writes it: NAND receives {wa:.2f}× the host's bytes, but the "
                f"write speed barely changes (ratio {est:.2f}×), so the speed ratio cannot see the saving."
            )
        if est > wa:
            return (
                f"The speed ratio overstates the WA of the same window by {100 * (est / wa - 1):.0f}%: the "
                "worst-case speed also pays for GC's page reads and block erases, not only for its extra writes."
            )
        return (
            f"The speed ratio understates the WA of the same window by {100 * (1 - est / wa):.0f}%: part of "
            "the GC work did not slow the host's writes (background GC or buffering)."
        )

    def charts(self) -> Dict[str, Figure]:
        """``wa.png``: the true WA and the speed-ratio estimate as two bars."""
        s = self.summary
        return {
            "wa.png": figure(
                write_amplification=float(s["write_amplification"]),
                steady_write_amplification=s.get("steady_write_amplification"),
                speed_ratio_estimate=self.speed_ratio_estimate,
                clean_mb_s=float(s["clean_mb_s"]),
                worst_mb_s=float(s["worst_mb_s"]),
                title=self.label,
                subtitle=self.subtitle(),
                note=self.note(),
            )
        }



# -- the chart (wa.png) -----------------------------------------------------------------------------


def figure(
    *,
    write_amplification: float,
    steady_write_amplification: Optional[float] = None,
    speed_ratio_estimate: Optional[float],
    clean_mb_s: float,
    worst_mb_s: float,
    title: str,
    subtitle: str,
    note: Optional[str] = None,
) -> Figure:
    """``wa.png``: two horizontal bars: the true write amplification over the torture (NAND ÷
    host writes; its label adds `steady_write_amplification`, the last fifth's, when given) and
    the speed-ratio estimate (clean MB/s ÷ worst MB/s), with a dotted line at 1 (no
    amplification) and `note` under the chart when the two disagree."""
    from ssdlab.plots import bar_figure, mb_s_axis, mb_text

    fig, ax = bar_figure(title, subtitle, 2)
    if note:
        fig.set_figheight(fig.get_figheight() + 0.45)
    labels = [
        "True WA\n(NAND ÷ host writes)",
        f"Speed-ratio estimate\n(clean {mb_text(clean_mb_s)} ÷ worst {mb_text(worst_mb_s)} MB/s)",
    ]
    values = [write_amplification, speed_ratio_estimate if speed_ratio_estimate is not None else 0.0]
    ax.barh([0, 1], values, height=0.55, color=["#2563eb", "#f59e0b"], zorder=3)
    ax.set_yticks([0, 1], labels)
    ax.invert_yaxis()
    mb_s_axis(ax, max(max(values), 1.0) * (1.6 if steady_write_amplification is not None else 1.12), axis="x")
    ax.axvline(1.0, color="#777777", linestyle=":", linewidth=1.2, zorder=2)
    for yi, value in zip((0, 1), (write_amplification, speed_ratio_estimate)):
        text = f"{value:.2f}×" if value is not None else "n/a"
        if yi == 0 and steady_write_amplification is not None:
            text += f"   ({steady_write_amplification:.2f}× over the last fifth, the estimate's window)"
        ax.annotate(text, (value or 0.0, yi), xytext=(5, 0), textcoords="offset points", va="center",
                    fontsize=10, fontweight="bold", color="#333333",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
    ax.set_xlabel("Write amplification (×, lower is better; dotted: 1× = no amplification)")
    if note:  # supxlabel: the one figure text that constrained layout makes room for
        fig.supxlabel(textwrap.fill(note, 125), fontsize=9, color="#7a4b00", x=0.5, ha="center",
                      bbox={"boxstyle": "round,pad=0.4", "facecolor": "#fff7e6", "edgecolor": "#f0c36d"})
    return fig


# -- the API -------------------------------------------------------------------------------------


def worst_case_wa(
    config: procedures.Config = None,
    *,
    torture_minutes: float = default_of(OPTIONS, "torture_minutes"),
    compressibility: float = default_of(OPTIONS, "compressibility"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> WorstCaseWaResult:
    """Estimated worst-case write amplification: secure erase, a sequential fill, then
    `torture_minutes` of 4 KiB QD32 random writes, all of data with `compressibility`.

    Reports the true write amplification over the torture (NAND writes ÷ host writes) next to the
    estimate reviewers could make from speeds alone: clean MB/s (the first 10 s of the torture) ÷
    worst MB/s (its last fifth). On a compressing drive with compressible data the true WA falls
    below 1 while the speed ratio does not. The default label is ``"<drive> · worst-case WA"``.
    """
    cfg = procedures.resolve_config(config)
    params = params_of(torture_minutes, compressibility)
    seed = procedures.check_seed(seed)
    steps, core, wall = procedures.execute(NAME, cfg, params, seed, progress)
    return WorstCaseWaResult.from_run(
        label=label if label is not None else procedures.compressed(f"{cfg.name} · worst-case WA", params["compressibility"]),
        config=cfg, steps=steps, core_summary=core, params=params, seed=seed, wall_seconds=wall,
    )


# -- the command -----------------------------------------------------------------------------------


def command(torture_minutes: float, compressibility: float, drive: Optional[str], drive_file: Optional[str],
           capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, out: Optional[str],
           report: bool, quiet: bool) -> None:
    """Estimated worst-case write amplification: true NAND/host ratio vs the speed-ratio estimate.

    Secure erase, a sequential fill, then --torture-minutes of 4 KiB random writes at QD32. The
    true WA (NAND writes ÷ host writes) is set next to the estimate from speeds alone (clean MB/s
    in the first 10 s ÷ worst MB/s in the last fifth). Writes summary.json and wa.png.
    """
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    options = {"torture_minutes": torture_minutes, "compressibility": compressibility}
    what = f"fill, {torture_minutes:g} min torture"
    if compressibility != 1:
        what += f", data compressible to {compressibility:g}"
    result, path = simulate(cfg, NAME, options, what, out, quiet,
                            lambda progress: worst_case_wa(cfg, seed=seed, progress=progress, **options), report)
    if not finish(result, path, report, quiet, FILES):
        return
    s = result.summary
    steady = s.get("steady_write_amplification")
    est = s["speed_ratio_estimate"]
    click.echo(
        f"  true WA (NAND ÷ host)   {s['write_amplification']:>7.2f}"
        + (f"   ({steady:.2f} over the last fifth)" if steady is not None else "")
    )
    click.echo(
        f"  speed-ratio estimate    {('%.2f' % est) if est is not None else 'n/a':>7}   "
        f"(clean {s['clean_mb_s']:,.1f} MB/s ÷ worst {s['worst_mb_s']:,.1f} MB/s)"
    )
    note = result.note()
    if note:
        click.echo(f"  note: {note}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("write_amplification", "steady_write_amplification", "speed_ratio_estimate", "clean_mb_s",
                "worst_mb_s"):
        figures[key] = s.get(key)
    return figures


# -- the report section ----------------------------------------------------------------------------


@dataclass
class WaRun(Run):
    scenario_names = ("wa",)
    kind = "wa"

    def _read(self) -> None:
        self._require("write_amplification", "speed_ratio_estimate")


def entries(runs: Sequence[Run]) -> list[tuple[str, float | None, float | None, str]]:
    """(run name, measured WA, speed-ratio estimate, where the measurement comes from), best first.

    Measured is NAND writes ÷ host writes: a ``wa`` run's ``write_amplification``, or a consistency
    run's ``steady_write_amplification`` (4 KiB random writes to a full drive: the worst case).
    The estimate is a ``wa`` run's ``speed_ratio_estimate`` (clean MB/s ÷ worst MB/s, as the
    reviews estimate it). Runs with neither (e.g. real devices without NAND counters) are left out.
    """
    out = []
    for run in runs:
        if isinstance(run, WaRun):
            out.append((run.name, run.figure("write_amplification"), run.figure("speed_ratio_estimate"), "wa run"))
        elif isinstance(run, ConsistencyRun):
            measured = run.figure("steady_write_amplification")
            source = f"consistency run, steady state from t = {run.zoom_start_s:g} s"
            if measured is None or measured == 0:
                measured = run.figure("write_amplification")
                source = "consistency run, whole random-write phase"
            if measured:
                out.append((run.name, measured, None, source))
    out = [e for e in out if e[1] is not None or e[2] is not None]
    out.sort(key=lambda e: e[1] if e[1] is not None else e[2])  # type: ignore[arg-type, return-value]
    return out


def chart(runs: Sequence[Run]) -> Chart | None:
    """Horizontal bars, lowest (best) at the top, like the reviews' worst-case WA chart."""
    rows = entries(runs)
    if not rows:
        return None
    names = [e[0] for e in rows]
    data = []
    for col, name, colour in (
        (1, "Measured: NAND writes ÷ host writes", "#2563eb"),
        (2, "Estimated: clean MB/s ÷ worst-case MB/s", "#f59e0b"),
    ):
        xs = [e[col] for e in rows]
        if all(x is None for x in xs):
            continue
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": names,
                "x": xs,
                "marker": {"color": colour},
                "text": [f"{x:.2f}×" if x is not None else "" for x in xs],
                "textposition": "outside",
                "cliponaxis": False,
                "customdata": [e[3] for e in rows],
                "hovertemplate": f"<b>%{{y}}</b><br>{name}: %{{x:.3f}}×<br>%{{customdata}}<extra></extra>",
            }
        )
    top = max(x for t in data for x in t["x"] if x is not None)
    layout = chart_layout(
        chart_title("Estimated worst-case write amplification", "lower is better"),
        chart_axis("Write amplification (×)", range=[0, nice_ceiling(top * 1.15)], rangemode="tozero"),
        chart_axis("", autorange="reversed", automargin=True, showline=False, ticks=""),
        barmode="group",
        bargap=0.25,
        height=max(260, 120 + 34 * len(names) * len(data)),
        showlegend=True,
        hovermode="closest",
    )
    return Chart("wa", [{"data": data, "layout": layout}])


def table(runs: Sequence[Run]) -> Table | None:
    rows = entries(runs)
    if not rows:
        return None
    by_name = {r.name: r for r in runs}
    out = Table(
        "summary-wa",
        ["Run", "Measured WA", "Estimated WA", "Clean MB/s", "Worst MB/s", "Source"],
        notes={"Measured WA": "NAND writes ÷ host writes", "Estimated WA": "clean MB/s ÷ worst-case MB/s"},
    )
    for name, measured, estimated, source in rows:
        run = by_name[name]
        wa = isinstance(run, WaRun)
        out.rows.append(
            [
                Cell(name),
                number_cell(measured, ".2f"),
                number_cell(estimated, ".2f"),
                number_cell(run.figure("clean_mb_s") if wa else None, ".1f"),
                number_cell(run.figure("worst_mb_s") if wa else None, ".1f"),
                Cell(source),
            ]
        )
    return out



def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Write amplification" section (wa runs and consistency runs' steady WA)."""
    lede = (
        "Write amplification under the worst case (4 KiB random writes to a full drive): measured as NAND "
        "writes per host write, and estimated the reviews' way as clean speed over worst-case speed."
    )
    return chart_section("wa", "Write amplification", lede, chart(runs), table(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=WorstCaseWaResult,
    files=FILES,
    procedure=(worst_case_wa, params_of, plan),
    sweep=SweepEntry(
        run=api_runner(worst_case_wa),
        figures=_sweep_figures,
        metrics=(("steady_write_amplification", "WA, last fifth of the torture"),
                 ("speed_ratio_estimate", "speed-ratio estimate")),
    ),
    report_runs=(WaRun,),
    report_section=report_section,
)
