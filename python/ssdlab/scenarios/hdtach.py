"""``ssdlab hdtach``: HD Tach's write test, and what it shares with ``ssdlab torture``.

Sequential 128 KiB writes over the user span, MB/s at every 0.5 % of it: a clean pass and,
with --torture-minutes, a pass after a sequential fill and 4 KiB QD32 random writes
(docs/scenarios.md, *hdtach*). ``torture`` (`ssdlab.scenarios.torture`) runs the same passes
around torture, idle time and TRIM, and its results are the same files, so this module holds
what both use:

* hdtach's options, declared once (`OPTIONS`), its steps on the core (`params_of`, `plan`, with
  the pass settings both check: `pass_params`, `check_pass_span`) and its API function (`hdtach`);
* the result of both (`HdtachResult`: hdtach.csv, summary.json) and its chart (`figure`,
  hdtach.png);
* both commands' run on a real device or file through fio (`device_command`), the passes table
  they print (`print_passes`), and hdtach's command (`command`);
* hdtach's sweep entry, and the report's section of both (`HdtachRun`, `chart`, `table`,
  `report_section`: "Performance over time & TRIM");
* and the line that registers hdtach (`SCENARIO`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

import click
import numpy as np

from ssdlab import procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report.charts import PASS_COLOURS, Chart, chart_axis, chart_layout, chart_text, chart_title, nice_ceiling
from ssdlab.report.load import Run, num
from ssdlab.report.page import Section, chart_section
from ssdlab.report.tables import Cell, Table, number_cell
from ssdlab.results import (
    CsvTable,
    TableResult,
    check_output_dir,
    plain,
    procedure_summary,
    subtitle,
)
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import default_out, finish, pct_text, sim_config, simulate
from ssdlab.scenarios.shared import COMPRESSIBILITY, DEVICE, SAMPLE_PCT, SIM, SIM_ONLY, torture_minutes
from ssdlab.sizes import format_size, parse_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["ALL_PASSES", "FILES", "HDTACH_BLOCK_BYTES", "HDTACH_QD", "HDTACH_SAMPLE_PCT", "OPTIONS",
           "POSITION_BUCKETS", "SCENARIO", "HdtachResult", "HdtachRun", "Pass", "hdtach"]

NAME = "hdtach"
FILES = ("hdtach.csv", "summary.json", "hdtach.png")
COLUMNS = ("pass", "position_pct", "mb_s")

HDTACH_BLOCK_BYTES = 128 * 1024
"""Request size of an HD Tach pass (the core's `HdTach::default().block_bytes`)."""
HDTACH_QD = 1
"""Queue depth of an HD Tach pass."""
POSITION_BUCKETS = 200
"""Positions recorded per pass: one per 0.5 % of the span (the core's `hdtach::BUCKETS`)."""
HDTACH_SAMPLE_PCT: float = SAMPLE_PCT.default
"""Percent of each position an HD Tach pass writes (the core's `hdtach::SAMPLE_PCT`)."""

_UNIT = 4096

OPTIONS = (
    torture_minutes(0.0, "Minutes of 4 KiB QD32 random writes (after a sequential fill) before a second pass; 0: "
                    "the clean pass only.", allow_zero=True),
    COMPRESSIBILITY,
    SAMPLE_PCT,
)


# -- steps -----------------------------------------------------------------------------------------


def pass_params(block_size: Any, qd: Any, sample_pct: Any) -> Dict[str, Any]:
    """The core's parameters of an HD Tach pass (hdtach's and torture's)."""
    pct = procedures.number(sample_pct, "sample percentage")
    if not 0 < pct <= 100:
        raise SsdlabError(f"an HD Tach pass writes a percentage of each position in (0, 100], got {sample_pct!r}")
    return {
        "block_bytes": parse_size(block_size, what="pass block size"),
        "queue_depth": procedures.whole(qd, "pass queue depth"),
        "sample_pct": pct,
    }


def check_pass_span(cfg: DriveConfig, block_bytes: int) -> None:
    """Refuses a drive too small for an HD Tach pass: every 0.5 % bucket needs a request."""
    span = cfg.describe()["user_capacity_bytes"] // _UNIT * _UNIT
    if block_bytes and span // block_bytes < POSITION_BUCKETS:
        need = POSITION_BUCKETS * block_bytes
        raise SsdlabError(
            f"the drive's {format_size(span)} user span is too small for an HD Tach pass: its {POSITION_BUCKETS} "
            f"position buckets need at least {format_size(need)} ({POSITION_BUCKETS} requests of "
            f"{format_size(block_bytes)}); use a larger capacity"
        )


def params_of(torture_minutes: Any, compressibility: Any, block_size: Any, qd: Any, sample_pct: Any) -> Dict[str, Any]:
    """The core's parameters (scenario/hdtach.rs)."""
    return {
        "torture_minutes": procedures.number(torture_minutes, "torture minutes"),
        "compressibility": procedures.number(compressibility, "compressibility"),
        **pass_params(block_size, qd, sample_pct),
    }


def plan(p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs (for progress bars): a secure erase and the clean pass; with torture,
    the fill, the torture and a second pass."""
    steps = [{"step": "secure_erase"}, procedures.run_step("hdtach:clean")]
    if p["torture_minutes"] != 0:
        steps += procedures.fill_and_torture(p["torture_minutes"])
        steps.append(procedures.run_step(f"hdtach:after {procedures.minutes_label(p['torture_minutes'])} torture"))
    return steps


# -- the API -------------------------------------------------------------------------------------


def hdtach(
    config: procedures.Config = None,
    *,
    torture_minutes: float = default_of(OPTIONS, "torture_minutes"),
    compressibility: float = default_of(OPTIONS, "compressibility"),
    block_size: Union[int, str] = HDTACH_BLOCK_BYTES,
    qd: int = HDTACH_QD,
    sample_pct: float = default_of(OPTIONS, "sample_pct"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> HdtachResult:
    """HD Tach's write test: secure erase, then one sequential pass over the user span in
    `block_size` requests at queue depth `qd`, recording MB/s at every 0.5 % of the span. Like HD
    Tach, which tests areas spread over the drive, a pass writes the first `sample_pct` percent of
    each 0.5 % position (100: every LBA).

    With `torture_minutes` > 0: then a secure erase, a sequential fill and `torture_minutes` of
    4 KiB QD32 random writes, and a second pass (``after N min torture``). `compressibility` is the
    compressed size of the data written as a fraction of its size (1: incompressible; only a
    compressing drive cares). `progress` and `label` as for `ssdlab.consistency`; the default
    label is ``"<drive> · HD Tach"``.
    """
    cfg = procedures.resolve_config(config)
    params = params_of(torture_minutes, compressibility, block_size, qd, sample_pct)
    seed = procedures.check_seed(seed)
    check_pass_span(cfg, params["block_bytes"])
    steps, core, wall = procedures.execute(NAME, cfg, params, seed, progress)
    if label is None:
        label = f"{cfg.name} · HD Tach"
        if params["torture_minutes"]:
            label += f", clean and after {procedures.minutes_label(params['torture_minutes'])} torture"
        label = procedures.compressed(label, params["compressibility"])
    return HdtachResult.from_run(
        scenario=NAME, label=label, config=cfg, steps=steps, core_summary=core, params=params, seed=seed,
        wall_seconds=wall,
    )


# -- the result (hdtach's and torture's) ------------------------------------------------------------


class HdtachResult(TableResult):
    """An HD Tach-style run: ``hdtach`` (a clean pass, optionally one after torture) or ``torture``
    (performance over time & TRIM) (docs/results.md, section *hdtach and torture*).

    Attributes:
        passes: DataFrame ``pass, position_pct, mb_s``: one row per 0.5 % position bucket of each
            sequential pass, passes in run order; `position_pct` is the bucket's midpoint (0.25,
            0.75, ... 99.75).
        summary: the figures of ``summary.json``; ``summary["passes"]`` lists ``{name, avg_mb_s,
            min_mb_s, pct_of_clean}`` per pass.
        config: the simulated `DriveConfig` (None for a loaded or real-device result).
        steps: the `StepResult` of every step (empty for a loaded result).
    """

    SCENARIOS = ("hdtach", "torture")
    FILES = FILES
    TABLES = (CsvTable("table_frame", "hdtach.csv", COLUMNS, finite=("position_pct", "mb_s"), text=("pass",)),)

    @property
    def passes(self) -> pd.DataFrame:
        """One row per 0.5 % position bucket of each pass."""
        return self.table_frame

    def __repr__(self) -> str:
        rows = "; ".join(
            f"{p['name']} {p['avg_mb_s']:.1f} MB/s ({_pct(p.get('pct_of_clean'))})" for p in self.summary["passes"]
        )
        return f"<HdtachResult {self.label!r}: {rows}>"

    @property
    def table(self) -> pd.DataFrame:
        """One row per pass: ``name, avg_mb_s, min_mb_s, pct_of_clean`` (MB/s are 10^6 bytes/s)."""
        import pandas as pd

        return pd.DataFrame(self.summary["passes"], columns=["name", "avg_mb_s", "min_mb_s", "pct_of_clean"])

    @classmethod
    def from_run(
        cls,
        *,
        scenario: str,
        label: str,
        config: DriveConfig,
        steps: List[StepResult],
        core_summary: Dict[str, Any],
        params: Dict[str, Any],
        seed: int,
        wall_seconds: float,
    ) -> HdtachResult:
        """Assembles the result of a finished run (see `hdtach` and `ssdlab.scenarios.torture`)."""
        import pandas as pd

        frames, table = [], []
        for p in core_summary["passes"]:
            curve = np.asarray(p["curve"], dtype=np.float64)
            n = len(curve)
            frames.append(
                pd.DataFrame(
                    {
                        "pass": p["name"],
                        "position_pct": (np.arange(n, dtype=np.float64) + 0.5) * 100.0 / max(n, 1),
                        "mb_s": curve,
                    }
                )
            )
            table.append({key: p[key] for key in ("name", "avg_mb_s", "min_mb_s", "pct_of_clean")})
        if not frames:
            raise SsdlabError(f"the {scenario} run returned no HD Tach pass")
        passes = pd.concat(frames, ignore_index=True)
        summary = procedure_summary(
            scenario=scenario, label=label, config=config, seed=seed, wall_seconds=wall_seconds, params=params
        )
        summary["passes"] = table
        if "torture_write_amplification" in core_summary:
            summary["torture_write_amplification"] = core_summary["torture_write_amplification"]
        return cls(passes, plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        block, qd = s.get("block_bytes"), s.get("queue_depth")
        how = f"{format_size(int(block))} sequential writes at QD{qd}" if block and qd else "sequential writes"
        pct = s.get("sample_pct")
        where = "over the whole span" if pct is None or pct >= 100 else f"over the first {pct:g}% of each position"
        return subtitle(s, f"{how} {where}")

    def charts(self) -> Dict[str, Figure]:
        """``hdtach.png``: MB/s against position, one line per pass."""
        return {"hdtach.png": figure(self.passes, self.summary["passes"], title=self.label, subtitle=self.subtitle())}


def _pct(value: Any) -> str:
    return "n/a" if value is None else f"{value:.0f}% of clean"


# -- the chart (hdtach.png) -------------------------------------------------------------------------

_PASS_STYLES: tuple = ("-", "-", (0, (6, 3)), (0, (2, 2)), (0, (8, 3, 2, 3)))


def _pass_label(row: Mapping[str, Any], first: bool) -> str:
    text = f"{row['name']}: avg {row['avg_mb_s']:,.1f} MB/s"
    pct = row.get("pct_of_clean")
    if not first and pct is not None:
        text += f" ({pct:.0f}% of clean)"
    return text


def figure(passes: pd.DataFrame, table: Sequence[Mapping[str, Any]], *, title: str, subtitle: str) -> Figure:
    """HD Tach's write graph: MB/s (y, from 0) against position in % of the span (x, 0-100), one
    line per pass of `passes` (columns ``pass, position_pct, mb_s``). The legend shows each pass's
    average and its percentage of the clean pass, from `table` (``summary["passes"]``)."""
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    from ssdlab.plots import PASS_COLOURS as LINE_COLOURS, mb_s_axis, new_figure

    fig, ax = new_figure(title, subtitle)
    stats = {str(row["name"]): row for row in table}
    names = list(dict.fromkeys(passes["pass"].astype(str)))
    for i, name in enumerate(names):
        rows = passes[passes["pass"].astype(str) == name]
        x = rows["position_pct"].to_numpy(np.float64)
        y = rows["mb_s"].to_numpy(np.float64)
        row = stats.get(name, {"name": name, "avg_mb_s": float(np.mean(y)) if len(y) else 0.0})
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        # Later passes go on top, dashed, so that passes back at clean speed do not hide each other.
        style = _PASS_STYLES[min(i, len(_PASS_STYLES) - 1)]
        ax.plot(x, y, color=colour, linewidth=1.6, linestyle=style, label=_pass_label(row, i == 0), zorder=3 + i)
    ax.set_xlim(0, 100)
    ax.xaxis.set_major_locator(MaxNLocator(nbins=10, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}%"))
    ax.set_xlabel("Position (% of the span, in LBA order)")
    ax.set_ylabel("Sequential write (MB/s)")
    mb_s_axis(ax, float(passes["mb_s"].max()) if len(passes) else 1.0)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(2, len(handles)), fontsize=8, frameon=False)
    return fig


# -- the commands (hdtach's, and what torture's shares) ---------------------------------------------


def print_passes(result: Any) -> None:
    """The passes table hdtach and torture print after a run."""
    s = result.summary
    width = max([len("pass")] + [len(p["name"]) for p in s["passes"]])
    click.echo(f"  {'pass'.ljust(width)}  {'avg MB/s':>9}  {'min MB/s':>9}  {'% of clean':>10}")
    for p in s["passes"]:
        click.echo(
            f"  {p['name'].ljust(width)}  {p['avg_mb_s']:>9,.1f}  {p['min_mb_s']:>9,.1f}  "
            f"{pct_text(p['pct_of_clean']):>10}"
        )
    wa = s.get("torture_write_amplification")
    if isinstance(wa, (int, float)) and wa > 0:
        click.echo(f"  torture WA {wa:.2f} (NAND ÷ host writes)")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


def no_device_flags(yes_destroy_data: bool, force_signatures: bool) -> None:
    if yes_destroy_data or force_signatures:
        raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")


def device_command(ctx: click.Context, scenario: str, device: str, capacity: Optional[int], out: Optional[str],
                   report: bool, quiet: bool, yes_destroy_data: bool, force_signatures: bool,
                   what: str, **options: Any) -> None:
    """`hdtach`/`torture --device PATH`: the procedure on a real device or file through fio
    (ssdlab.fio.device), saved like a simulated run."""
    from ssdlab.fio.device import hdtach_on_device, torture_on_device

    sim_only = [name for name in (*SIM_ONLY, "compressibility", "sample_pct")
                if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if sim_only:
        flag = "--" + sim_only[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to simulated drives only; it cannot be combined with --device")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(device).name).strip("-") or "device"
    out_dir = check_output_dir(out if out is not None else default_out(name, scenario), scenario)

    def announce(target: Any) -> None:
        if not quiet:
            size = format_size(target.size_bytes)
            click.echo(f"ssdlab: {device} ({target.name}, {size}): {what}, through fio", err=True)

    run = hdtach_on_device if scenario == "hdtach" else torture_on_device
    minutes = options.get("torture_minutes") or 0
    label = f"{Path(device).name} · " + (
        f"performance over time & TRIM, {minutes:g} min torture" if scenario == "torture"
        else "HD Tach" + (f", clean and after {minutes:g} min torture" if minutes else "")
    )
    measured = run(device, capacity=capacity, yes_destroy_data=yes_destroy_data, force_signatures=force_signatures,
                   out_dir=out_dir, progress=not quiet, on_start=announce, label=label, **options)
    result = HdtachResult(measured.passes, measured.summary)
    path = out_dir  # the device run wrote the result directory atomically
    if not quiet:
        for note in result.summary.get("notes", []):
            click.echo(f"ssdlab: note: {note}", err=True)
    if finish(result, path, report, quiet, FILES, written=False):
        print_passes(result)


def command(ctx: click.Context, torture_minutes: float, compressibility: float, sample_pct: float,
            drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
            gc: Optional[str], seed: int, out: Optional[str], report: bool, quiet: bool, device: Optional[str],
            yes_destroy_data: bool, force_signatures: bool) -> None:
    """HD Tach's write test: sequential 128 KiB writes over the span, MB/s by position.

    Secure erase and a clean pass; with --torture-minutes, then a secure erase, a sequential fill,
    that many minutes of 4 KiB random writes at QD32, and a second pass. Writes hdtach.csv,
    summary.json and hdtach.png (one line per pass) to the result directory.

    With --device, the same passes run on a real block device or file through fio, with the
    safety checks of `ssdlab consistency --device`.
    """
    what = "HD Tach pass" + (f", {torture_minutes:g} min torture, pass" if torture_minutes else "")
    if device is not None:
        device_command(ctx, NAME, device, capacity, out, report, quiet, yes_destroy_data, force_signatures,
                       what, torture_minutes=torture_minutes)
        return
    no_device_flags(yes_destroy_data, force_signatures)
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    options = {"torture_minutes": torture_minutes, "compressibility": compressibility, "sample_pct": sample_pct}
    result, path = simulate(cfg, NAME, options, what, out, quiet,
                            lambda progress: hdtach(cfg, seed=seed, progress=progress, **options), report)
    if finish(result, path, report, quiet, FILES):
        print_passes(result)


# -- the sweep entry -------------------------------------------------------------------------------


def passes_of(s: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The summary's passes (none when it has none)."""
    return list(s.get("passes") or [])


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    passes = passes_of(s)
    for prefix, p in (("clean", passes[0] if passes else None), ("tortured", passes[1] if len(passes) > 1 else None)):
        for key in ("avg_mb_s", "min_mb_s", "pct_of_clean"):
            if prefix == "clean" and key == "pct_of_clean":
                continue
            figures[f"{prefix}_{key}"] = None if p is None else p.get(key)
    return figures


# -- the report section (hdtach and torture runs) ---------------------------------------------------

ALL_PASSES = "All passes"


@dataclass
class Pass:
    """One sequential pass of an HD Tach-style run."""

    name: str
    position_pct: list[float]
    mb_s: list[float]
    avg_mb_s: float
    min_mb_s: float
    pct_of_clean: float | None


@dataclass
class HdtachRun(Run):
    scenario_names = ("hdtach", "torture")
    kind = "hdtach"
    passes: list[Pass] = field(default_factory=list)

    def _read(self) -> None:
        frame = self._csv("hdtach.csv", ("pass", "position_pct", "mb_s"), ("position_pct", "mb_s"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'hdtach.csv'}: no rows")
        frame["pass"] = frame["pass"].astype(str)
        stated = {}
        for item in self.summary.get("passes") or []:
            if isinstance(item, Mapping) and "name" in item:
                stated[str(item["name"])] = item
        clean_avg: float | None = None
        for name in dict.fromkeys(frame["pass"]):  # run order, as in the CSV
            rows = frame[frame["pass"] == name]
            given = stated.get(name, {})
            avg = num(given.get("avg_mb_s"))
            low = num(given.get("min_mb_s"))
            avg = float(rows["mb_s"].mean()) if avg is None else avg
            low = float(rows["mb_s"].min()) if low is None else low
            if clean_avg is None:
                clean_avg = avg
            pct = num(given.get("pct_of_clean"))
            if pct is None and clean_avg:
                pct = 100.0 * avg / clean_avg
            self.passes.append(
                Pass(name, rows["position_pct"].tolist(), rows["mb_s"].tolist(), avg, low, pct)
            )


def chart(runs: Sequence[Run]) -> Chart | None:
    """MB/s against position, one spec per (run, pass), plus every pass of a run overlaid."""
    hruns = [r for r in runs if isinstance(r, HdtachRun)]
    if not hruns:
        return None
    names = [r.drive for r in hruns]
    if len(set(names)) < len(names):
        names = [r.name for r in hruns]
    passes = list(dict.fromkeys(p.name for r in hruns for p in r.passes))
    rows = [("Drive", names), ("Pass", [ALL_PASSES, *passes])]
    top = nice_ceiling(max(max(p.mb_s, default=0.0) for r in hruns for p in r.passes) * 1.05)

    colour = {p: PASS_COLOURS[i % len(PASS_COLOURS)] for i, p in enumerate(passes)}

    def trace(run_pass: Pass, colour: str) -> dict[str, Any]:
        return {
            "type": "scatter",
            "mode": "lines",
            "name": run_pass.name,
            "x": list(run_pass.position_pct),
            "y": list(run_pass.mb_s),
            "line": {"color": colour, "width": 2},
            "hovertemplate": f"{chart_text(run_pass.name)}<br>%{{x:.1f}} % of span: <b>%{{y:.1f}} MB/s</b><extra></extra>",
        }

    specs, keys = [], []
    for d, run in enumerate(hruns):
        overlay = [trace(p, colour[p.name]) for p in run.passes]
        choices = [(0, ALL_PASSES, overlay, f"{len(run.passes)} sequential passes, in run order")]
        for p in run.passes:
            stats = f"avg {p.avg_mb_s:.1f} MB/s, min {p.min_mb_s:.1f} MB/s"
            if p.pct_of_clean is not None and p is not run.passes[0]:
                stats += f", {p.pct_of_clean:.0f}% of clean"
            choices.append((1 + passes.index(p.name), p.name, [trace(p, colour[p.name])], f"{p.name}: {stats}"))
        for index, _, data, sub in choices:
            keys.append((d, index))
            specs.append(
                {
                    "data": data,
                    "layout": chart_layout(
                        chart_title(run.name, sub),
                        chart_axis("Position (% of the tested LBA span)", range=[0, 100], ticksuffix=" %"),
                        chart_axis("Sequential write (MB/s)", range=[0, top]),
                        showlegend=len(data) > 1,
                        hovermode="x unified" if len(data) > 1 else "closest",
                    ),
                }
            )
    return Chart("hdtach", specs, rows, keys)


def table(runs: Sequence[Run]) -> Table | None:
    hruns = [r for r in runs if isinstance(r, HdtachRun)]
    if not hruns:
        return None
    out = Table("summary-hdtach", ["Run", "Pass", "Average MB/s", "Minimum MB/s", "% of clean"])
    for run in hruns:
        for p in run.passes:
            out.rows.append(
                [Cell(run.name), Cell(p.name), number_cell(p.avg_mb_s, ".1f"), number_cell(p.min_mb_s, ".1f"),
                 number_cell(p.pct_of_clean, ".0f")]
            )
    return out


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Performance over time & TRIM" section (hdtach and torture runs)."""
    lede = ("Sequential write speed across the drive, pass by pass: clean, after random-write torture, "
            "after idle time and after TRIM, in the order the procedure ran them.")
    return chart_section("hdtach", "Performance over time & TRIM", lede, chart(runs), table(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM, DEVICE),
    command=command,
    context=True,
    result=HdtachResult,
    files=FILES,
    procedure=(hdtach, params_of, plan),
    sweep=SweepEntry(
        run=api_runner(hdtach),
        figures=_sweep_figures,
        metrics=(("tortured_pct_of_clean", "after torture, % of clean"), ("clean_avg_mb_s", "clean pass, MB/s")),
    ),
    report_runs=(HdtachRun,),
    report_section=report_section,
)
