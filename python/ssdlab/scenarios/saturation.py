"""``ssdlab saturation``: write saturation, MB/s against GB written over a whole-drive write, the
scenario in one module.

The reviews' fill test of today's drives (docs/scenarios.md, *saturation*): a secure-erased drive
written once over; on a drive with an SLC cache the speed falls where the cache runs out, and a
write after idle time shows how much of the cache came back. This module holds all of it:

* its options, declared once (`OPTIONS`): the command's, the API's defaults, the sweep's keys
  (``prefill_pct`` is not one: sweeps never took it);
* its steps on the core (`params_of`, `plan`) and its API function (`saturation`);
* its result (`SaturationResult`: curve, summary, save, load) and its chart (`figure`,
  saturation.png);
* its command (`command`: what ``ssdlab saturation`` prints);
* its sweep entry (the figures of ``results.parquet``; ``ssdlab report`` does not read a sweep's
  saturation points) and its section of the HTML report (`SaturationRun`, `chart`, `table`,
  `report_section`);
* and the one line that registers it (`SCENARIO`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

import click
import numpy as np

from ssdlab import cli_values as cv, procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report.charts import (
    AXIS,
    PASS_COLOURS,
    Chart,
    chart_axis,
    chart_layout,
    chart_text,
    chart_title,
    nice_ceiling,
)
from ssdlab.report.load import Run
from ssdlab.report.page import Section, chart_section
from ssdlab.report.tables import Cell, Table, number_cell
from ssdlab.results import CsvTable, TableResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import finish, sim_config, simulate
from ssdlab.scenarios.shared import SIM
from ssdlab.sizes import format_size, parse_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["COLUMNS", "FILES", "OPTIONS", "PATTERNS", "SCENARIO", "SaturationResult", "SaturationRun", "saturation"]

NAME = "saturation"
FILES = ("saturation.csv", "summary.json", "saturation.png")
COLUMNS = ("phase", "gb_written", "mb_s")
PATTERNS = ("sequential", "random")
"""The orders of the write: LBA order, or every block once in random order."""


def _share_pct(value: Any, what: str) -> float:
    """A share of the drive in percent: above 0, at most 100."""
    v = float(value)
    if not (v == v and 0 < v <= 100):  # NaN fails the first test
        raise SsdlabError(f"{what} must be above 0 and at most 100 percent, got {value!r}")
    return v


_SHARE = cv.Checked("pct", _share_pct)


def _prefill_pct(value: Any, what: str) -> float:
    """The prefill's share of the drive in percent: 0 or more, below 100."""
    v = float(value)
    if not (v == v and 0 <= v < 100):
        raise SsdlabError(f"{what} must be at least 0 and below 100 percent, got {value!r}")
    return v


_PREFILL = cv.Checked("pct", _prefill_pct)


class _Pattern(Opt):
    """``--pattern``: a spec's value is one of `PATTERNS`, said as sweeps always said it."""

    def convert(self, value: Any) -> Any:
        if value not in PATTERNS:
            raise SsdlabError('must be "sequential" or "random"')
        return str(value)


OPTIONS = (
    _Pattern("pattern", "Write the drive in LBA order, or every block once in random order.",
             type=click.Choice(list(PATTERNS)), default="sequential", show_default=True, kind="text",
             axis="category", range="sequential / random (every block once)"),
    Opt("block_size", "Request size (a multiple of 512 B).", type=cv.block_size, default="128KiB", show_default=True,
        metavar="SIZE", kind="size", axis="size", range="512 B … 32 MiB, a multiple of 512 B"),
    Opt("qd", "Queue depth.", type=cv.queue_depth, default=32, show_default=True, metavar="N", kind="whole",
        range="1 … 65536"),
    Opt("fill_pct", "Percent of the drive the first write covers.", type=_SHARE, default=100.0, show_default="100",
        metavar="PCT", range="(0, 100]; at most what the prefill leaves"),
    Opt("prefill_pct", "Fill this percent of the drive first (unmeasured, then a day idle); the measured write covers "
        "the rest. A dynamic SLC cache is smaller on a fuller drive.", type=_PREFILL, default=0.0, show_default="0",
        metavar="PCT", axis=None, range="[0, 100)"),
    Opt("idle_minutes", "Idle time after the write, then a second write to show the cache's recovery (0: neither).",
        type=cv.minutes(True), default=0.0, show_default="0", metavar="MINUTES", range="0 … 166,666 (10^7 s)"),
    Opt("after_idle_pct", "Size of the write after idle, percent of the drive (from its start).", type=_SHARE,
        default=10.0, show_default="10", metavar="PCT", range="(0, 100]"),
)


# -- steps -----------------------------------------------------------------------------------------


def params_of(
    pattern: Any, block_size: Any, qd: Any, fill_pct: Any, idle_minutes: Any, after_idle_pct: Any, points: Any,
    prefill_pct: Any = 0.0,
) -> Dict[str, Any]:
    """The core's parameters (scenario/saturation.rs)."""
    if pattern not in PATTERNS:
        raise SsdlabError(f"the saturation pattern must be sequential or random, got {pattern!r}")
    return {
        "pattern": pattern,
        "block_bytes": parse_size(block_size, what="block size"),
        "queue_depth": procedures.whole(qd, "queue depth"),
        "fill_pct": procedures.number(fill_pct, "fill percentage"),
        "prefill_pct": procedures.number(prefill_pct, "prefill percentage"),
        "idle_minutes": procedures.number(idle_minutes, "idle minutes"),
        "after_idle_pct": procedures.number(after_idle_pct, "after-idle percentage"),
        "points": procedures.whole(points, "points"),
    }


def plan(p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs (for progress bars): a secure erase, the prefill and a day idle when
    there is one, the write, and the idle time and the write after it when asked."""
    run = procedures.run_step
    steps: List[Dict[str, Any]] = [{"step": "secure_erase"}]
    if p.get("prefill_pct", 0) > 0 and int(user_bytes * p["prefill_pct"] / 100) >= p["block_bytes"]:
        # a day of idle time after the prefill (scenario/saturation.rs: PREFILL_IDLE_S)
        steps += [run("saturation:prefill"), {"step": "idle", "seconds": 86_400.0}]
    steps.append(run("saturation:write"))
    if p["idle_minutes"] > 0:
        steps += [{"step": "idle", "seconds": p["idle_minutes"] * 60.0}, run("saturation:after idle")]
    return steps


# -- the result ------------------------------------------------------------------------------------


class SaturationResult(TableResult):
    """Write saturation: a whole-drive write of a secure-erased drive, MB/s against GB written, and
    optionally a write after idle time (docs/results.md, section *saturation*).

    Attributes:
        curve: DataFrame ``phase, gb_written, mb_s``: one row per point of each write (``write``,
            then ``after idle``); `gb_written` is the GB (10^9 bytes) written in that write at the
            end of the point, `mb_s` the speed over the point.
        summary: the figures of ``summary.json``: ``cache_gb`` (GB written before the speed first
            fell below half the initial speed; None if it never did), ``mb_s_in_cache``,
            ``mb_s_after_cache``, ``mb_s_after_idle``, ``recovered_gb``, ``user_capacity_bytes``, ...
        config, steps: as for `HdtachResult`.
    """

    SCENARIOS = ("saturation",)
    FILES = FILES
    TABLES = (CsvTable("table_frame", "saturation.csv", COLUMNS, finite=("gb_written", "mb_s"), text=("phase",)),)

    @property
    def curve(self) -> pd.DataFrame:
        """The points of each write (``phase, gb_written, mb_s``)."""
        return self.table_frame

    def __repr__(self) -> str:
        s = self.summary
        cache = "no cliff" if s["cache_gb"] is None else f"cache {s['cache_gb']:.1f} GB"
        return f"<SaturationResult {self.label!r}: {cache}, {s['mb_s_in_cache']:.0f} MB/s in cache>"

    @property
    def cache_gb(self) -> Optional[float]:
        """GB written before the speed first fell below half the initial speed (None: never)."""
        v = self.summary["cache_gb"]
        return None if v is None else float(v)

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
    ) -> SaturationResult:
        """Assembles the result of a finished run (see `saturation`)."""
        import pandas as pd

        frames = []
        for phase, key in (("write", "curve"), ("after idle", "after_idle_curve")):
            points = core_summary[key]
            if points:
                frames.append(
                    pd.DataFrame(
                        {
                            "phase": phase,
                            "gb_written": [float(p["gb_written"]) for p in points],
                            "mb_s": [float(p["mb_s"]) for p in points],
                        }
                    )
                )
        if not frames:
            raise SsdlabError("the saturation run returned no curve")
        curve = pd.concat(frames, ignore_index=True)
        summary = procedure_summary(
            scenario="saturation", label=label, config=config, seed=seed, wall_seconds=wall_seconds, params=params
        )
        cache = config.ftl.slc_cache
        summary["cell"] = config.geometry.cell
        summary["slc_cache"] = None if cache is None else cache.model_dump()
        for key in (
            "written_gb",
            "cache_gb",
            "mb_s_initial",
            "mb_s_in_cache",
            "mb_s_after_cache",
            "mb_s_average",
            "mb_s_after_idle",
            "recovered_gb",
            "write_amplification",
            "slc_written_gb",
            "folded_gb",
        ):
            summary[key] = core_summary[key]
        summary["user_capacity_bytes"] = core_summary["user_capacity_bytes"]
        return cls(curve, plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        what = "sequential" if s.get("pattern", "sequential") == "sequential" else "random"
        how = f"{format_size(int(s['block_bytes']))} {what} writes at QD{s['queue_depth']} over "
        prefill = s.get("prefill_pct") or 0
        if prefill:
            how += f"the {100 - prefill:g}% left after a {prefill:g}% prefill" if s.get("fill_pct", 100) >= 100 - prefill \
                else f"{s['fill_pct']:g}% of the drive after a {prefill:g}% prefill"
        else:
            how += "the whole drive" if s.get("fill_pct", 100) >= 100 else f"{s['fill_pct']:g}% of the drive"
        if s.get("idle_minutes"):
            how += f", {s['idle_minutes']:g} min idle, then {s['after_idle_pct']:g}% again"
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        """``saturation.png``: MB/s against GB written, the cliff and the write after idle."""
        return {"saturation.png": figure(self.curve, self.summary, title=self.label, subtitle=self.subtitle())}


# -- the chart (saturation.png) --------------------------------------------------------------------

COLOURS = {"write": "#2563eb", "after idle": "#d97706"}
"""The chart's colour of each write."""


def figure(curve: pd.DataFrame, summary: Mapping[str, Any], *, title: str, subtitle: str) -> Figure:
    """``saturation.png``, the reviews' write-saturation chart: MB/s (y, from 0) against GB written
    (x) over the whole-drive write, with the cache's end marked and the averages before and after it;
    the write after idle, if any, as a second line from 0 GB (how much of the fast phase came back)."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import mb_s_axis, mb_text, new_figure, thousands

    fig, ax = new_figure(title, subtitle)
    cache = summary.get("cache_gb")
    for phase, colour in COLOURS.items():
        rows = curve[curve["phase"].astype(str) == phase]
        if rows.empty:
            continue
        x = np.concatenate([[0.0], rows["gb_written"].to_numpy(np.float64)])
        y = rows["mb_s"].to_numpy(np.float64)
        y = np.concatenate([y[:1], y])
        if phase == "write":
            label = f"whole-drive write: avg {mb_text(float(summary['mb_s_average']))} MB/s"
        else:
            after = summary.get("mb_s_after_idle")
            label = f"after {summary.get('idle_minutes', 0):g} min idle"
            if after is not None:
                label += f": avg {mb_text(float(after))} MB/s, {float(summary.get('recovered_gb') or 0):,.1f} GB fast"
        ax.step(x, y, where="pre", color=colour, linewidth=1.6, label=label, zorder=3 if phase == "write" else 4)
    if cache is not None:
        ax.axvline(float(cache), color="#64748b", linewidth=1.0, linestyle=(0, (4, 3)), zorder=2)
        ax.annotate(
            f"cache full after {float(cache):,.1f} GB\n{mb_text(float(summary['mb_s_in_cache']))} → "
            f"{mb_text(float(summary['mb_s_after_cache'] or 0))} MB/s",
            xy=(float(cache), float(summary["mb_s_in_cache"])),
            xytext=(8, -4),
            textcoords="offset points",
            fontsize=8,
            color="#334155",
            va="top",
        )
    ax.set_xlim(0, float(summary["written_gb"]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 10 else f"{v:g}"))
    ax.set_xlabel("Data written (GB)")
    ax.set_ylabel("Write speed (MB/s)")
    mb_s_axis(ax, float(curve["mb_s"].max()) if len(curve) else 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(2, len(handles)), fontsize=8, frameon=False)
    return fig


# -- the API -------------------------------------------------------------------------------------


def saturation(
    config: procedures.Config = None,
    *,
    pattern: str = default_of(OPTIONS, "pattern"),
    block_size: Union[int, str] = default_of(OPTIONS, "block_size"),
    qd: int = default_of(OPTIONS, "qd"),
    fill_pct: float = default_of(OPTIONS, "fill_pct"),
    idle_minutes: float = default_of(OPTIONS, "idle_minutes"),
    after_idle_pct: float = default_of(OPTIONS, "after_idle_pct"),
    points: int = 200,
    prefill_pct: float = default_of(OPTIONS, "prefill_pct"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> SaturationResult:
    """Write saturation, the reviews' whole-drive write: secure erase, then `fill_pct` percent of the
    drive (default all of it) written once in `block_size` requests at queue depth `qd`, in order
    (`pattern` ``"sequential"``, AnandTech's 128 KiB QD32) or every block once in random order
    (``"random"``), recording MB/s against GB written in `points` points. On a drive with an SLC
    cache the speed falls off a cliff where the cache runs out: ``cache_gb`` is the GB written before
    it first fell below half the initial speed.

    With `prefill_pct` > 0 the drive first gets that much data (sequential, not measured) and a day
    of idle time, as a drive holding old data has; the measured write covers at most the rest of the
    drive, from where the prefill ends, and a dynamic cache is smaller on the fuller drive.

    With `idle_minutes` > 0: then that much idle time (the drive folds its cache) and a second
    sequential write of `after_idle_pct` percent of the drive from its start, showing how much of
    the fast phase came back (``mb_s_after_idle``, ``recovered_gb``). The default label is
    ``"<drive> · write saturation"`` (``", P % full"`` after it with a prefill).
    """
    cfg = procedures.resolve_config(config)
    params = params_of(pattern, block_size, qd, fill_pct, idle_minutes, after_idle_pct, points, prefill_pct)
    seed = procedures.check_seed(seed)
    steps, core, wall = procedures.execute(NAME, cfg, params, seed, progress)
    if label is None:
        full = params["prefill_pct"]
        label = f"{cfg.name} · write saturation" + (f", {full:g} % full" if full > 0 else "")
    return SaturationResult.from_run(
        label=label,
        config=cfg, steps=steps, core_summary=core, params=params, seed=seed, wall_seconds=wall,
    )


# -- the command -----------------------------------------------------------------------------------


def command(pattern: str, block_size: int, qd: int, fill_pct: float, prefill_pct: float, idle_minutes: float,
            after_idle_pct: float, drive: Optional[str], drive_file: Optional[str], capacity: Optional[int],
            op: Optional[float], gc: Optional[str], seed: int, out: Optional[str], report: bool,
            quiet: bool) -> None:
    """Write saturation: MB/s against GB written over a whole-drive write (the reviews' fill test).

    Secure erase, then the whole drive (or --fill-pct of it) written once at QD --qd; on a drive
    with an SLC cache the speed falls where the cache runs out. With --idle-minutes: that much idle
    time, then a write of --after-idle-pct percent of the drive from its start, showing how much of
    the cache came back. Writes saturation.csv (phase, gb_written, mb_s), summary.json (cache_gb,
    mb_s_in_cache, mb_s_after_cache, mb_s_after_idle, user_capacity_bytes, ...) and saturation.png.
    """
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    options = {"pattern": pattern, "block_size": block_size, "qd": qd, "fill_pct": fill_pct,
               "prefill_pct": prefill_pct, "idle_minutes": idle_minutes, "after_idle_pct": after_idle_pct}
    what = f"{format_size(block_size)} {pattern} writes at QD{qd} over "
    if prefill_pct > 0:
        what = f"{prefill_pct:g}% prefilled, then " + what + f"{min(fill_pct, 100 - prefill_pct):g}% more"
    else:
        what += "the whole drive" if fill_pct >= 100 else f"{fill_pct:g}% of it"
    if idle_minutes > 0:
        what += f", {idle_minutes:g} min idle, {after_idle_pct:g}% again"
    result, path = simulate(cfg, NAME, options, what, out, quiet,
                            lambda progress: saturation(cfg, seed=seed, progress=progress, **options), report)
    if not finish(result, path, report, quiet, FILES):
        return
    s = result.summary
    if s["cache_gb"] is None:
        click.echo(f"  no cliff: {s['mb_s_average']:,.0f} MB/s over {s['written_gb']:,.1f} GB "
                   "(the speed never fell below half its start)")
    else:
        click.echo(f"  fast for {s['cache_gb']:,.1f} GB at {s['mb_s_in_cache']:,.0f} MB/s, then "
                   f"{s['mb_s_after_cache']:,.0f} MB/s (average {s['mb_s_average']:,.0f} MB/s over "
                   f"{s['written_gb']:,.1f} GB)")
    if s["mb_s_after_idle"] is not None:
        click.echo(f"  after {s['idle_minutes']:g} min idle: {s['recovered_gb']:,.1f} GB fast again, "
                   f"{s['mb_s_after_idle']:,.0f} MB/s on average")
    click.echo(f"  WA {s['write_amplification']:.3f} (folded {s['folded_gb']:,.1f} GB)   "
               f"wall time {s['wall_seconds']:.1f}s")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("cache_gb", "mb_s_in_cache", "mb_s_after_cache", "mb_s_average", "mb_s_after_idle", "recovered_gb",
                "write_amplification", "folded_gb"):
        figures[key] = s.get(key)
    return figures


# -- the report section ----------------------------------------------------------------------------


@dataclass
class SaturationRun(Run):
    """A write-saturation run: MB/s against GB written, per phase (``write``, ``after idle``)."""

    scenario_names = ("saturation",)
    kind = "saturation"
    phases: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)

    def _read(self) -> None:
        self._require("cache_gb", "mb_s_in_cache", "mb_s_average", "written_gb")
        frame = self._csv("saturation.csv", ("phase", "gb_written", "mb_s"), ("gb_written", "mb_s"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'saturation.csv'}: no rows")
        frame["phase"] = frame["phase"].astype(str)
        for name in dict.fromkeys(frame["phase"]):  # run order, as in the CSV
            rows = frame[frame["phase"] == name]
            self.phases[name] = (rows["gb_written"].tolist(), rows["mb_s"].tolist())


def chart(runs: Sequence[Run]) -> Chart | None:
    """MB/s against GB written, one spec per run (a button each), like the reviews' whole-drive
    write: the first write, the write after idle if there was one, and a dashed line where the
    speed first fell below half its start (the cache ran out)."""
    sruns = [r for r in runs if isinstance(r, SaturationRun)]
    if not sruns:
        return None
    names = [r.drive for r in sruns]
    if len(set(names)) < len(names):
        names = [r.name for r in sruns]
    top = nice_ceiling(max(max(ys, default=0.0) for r in sruns for _, ys in r.phases.values()) * 1.1)
    specs = []
    for run in sruns:
        data = []
        for i, (phase, (xs, ys)) in enumerate(run.phases.items()):
            label = {"write": "whole-drive write", "after idle": "after idle"}.get(phase, phase)
            if phase == "after idle" and run.figure("idle_minutes"):
                label = f"after {run.figure('idle_minutes'):g} min idle"
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": label,
                    "x": list(xs),
                    "y": list(ys),
                    "line": {"color": PASS_COLOURS[(i + 2) % len(PASS_COLOURS)], "width": 2, "shape": "hv"},
                    "hovertemplate": f"{chart_text(label)}<br>%{{x:,.1f}} GB written: <b>%{{y:,.0f}} MB/s</b><extra></extra>",
                }
            )
        cache = run.figure("cache_gb")
        average = run.figure("mb_s_average") or 0.0
        if cache is None:
            sub = f"no cliff: {average:,.0f} MB/s on average over {run.figure('written_gb') or 0:,.1f} GB"
        else:
            after = run.figure("mb_s_after_cache")
            sub = (
                f"fast for {cache:,.1f} GB at {run.figure('mb_s_in_cache') or 0:,.0f} MB/s, then "
                f"{after or 0:,.0f} MB/s; average {average:,.0f} MB/s"
            )
        prefill = run.figure("prefill_pct")
        if prefill:
            sub += f" (after a {prefill:g}% prefill)"
        shapes = []
        if cache is not None:
            shapes.append(
                {
                    "type": "line",
                    "x0": cache,
                    "x1": cache,
                    "y0": 0,
                    "y1": 1,
                    "yref": "paper",
                    "line": {"color": AXIS, "dash": "dash", "width": 1.5},
                }
            )
        specs.append(
            {
                "data": data,
                "layout": chart_layout(
                    chart_title(run.name, sub),
                    chart_axis("Data written (GB)", rangemode="tozero"),
                    chart_axis("Write speed (MB/s)", range=[0, top]),
                    showlegend=len(data) > 1,
                    hovermode="closest",
                    shapes=shapes,
                ),
            }
        )
    rows = [("Drive", names)] if len(sruns) > 1 else []
    keys = [(i,) for i in range(len(sruns))] if rows else []
    return Chart("saturation", specs, rows, keys)


def table(runs: Sequence[Run]) -> Table | None:
    sruns = [r for r in runs if isinstance(r, SaturationRun)]
    if not sruns:
        return None
    out = Table(
        "summary-saturation",
        ["Run", "Cache GB", "In cache MB/s", "After cache MB/s", "Average MB/s", "After idle MB/s", "WA"],
        notes={
            "Cache GB": "GB written before the speed first fell below half its start",
            "Average MB/s": "the whole first write (TechPowerUp's average to fill)",
            "WA": "NAND writes ÷ host writes over the first write (folded data is written twice)",
        },
    )
    for run in sruns:
        out.rows.append(
            [
                Cell(run.name),
                number_cell(run.figure("cache_gb"), ",.1f"),
                number_cell(run.figure("mb_s_in_cache"), ",.0f"),
                number_cell(run.figure("mb_s_after_cache"), ",.0f"),
                number_cell(run.figure("mb_s_average"), ",.0f"),
                number_cell(run.figure("mb_s_after_idle"), ",.0f"),
                number_cell(run.figure("write_amplification"), ".3f"),
            ]
        )
    return out


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Write saturation" section."""
    lede = (
        "The whole-drive write of today's reviews: a secure-erased drive written once over, MB/s against GB "
        "written. On a drive with an SLC cache the speed falls where the cache runs out (dashed line); a write "
        "after idle time shows how much of the cache came back."
    )
    return chart_section("saturation", "Write saturation", lede, chart(runs), table(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=SaturationResult,
    files=FILES,
    procedure=(saturation, params_of, plan),
    sweep=SweepEntry(
        run=api_runner(saturation),
        figures=_sweep_figures,
        metrics=(("cache_gb", "SLC cache, GB"), ("mb_s_after_cache", "MB/s after the cache")),
        reportable=False,
    ),
    report_runs=(SaturationRun,),
    report_section=report_section,
)
