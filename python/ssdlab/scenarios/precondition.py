"""``ssdlab precondition``: SNIA PTS's purge and workload-independent preconditioning (WIPC), the
scenario in one module.

PTS 2.0 (docs/scenarios.md, *precondition*) starts every test
from a known state: a purge (secure erase, NVMe format or sanitize; on a simulated drive the core's
secure erase) and then the WIPC: the active range written twice over in 128 KiB sequential writes.
The active range is 75 % of the LBAs for the client variant (PTS-C) and 100 % for the enterprise
one (PTS-E). The PTS tests run their own rounds after it; this scenario runs and records it alone,
so a user can see what preconditioning does to a drive (an SLC cache running out in the first
pass, GC starting in the second) and so the PTS modules share its steps (`steps`).

This module holds its options (declared once), its steps and API function (`precondition`), its
result (`PreconditionResult`: ``precondition.csv``, ``summary.json``, ``precondition.png``), its
command, its sweep entry and its section of the HTML report.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import click

from ssdlab import cli_values as cv, limits, procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report.charts import PALETTE, Chart, chart_axis, chart_layout, chart_title
from ssdlab.report.load import Run
from ssdlab.report.page import Section, chart_section
from ssdlab.results import CsvTable, TableResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import Progress, default_out, finish, header, save, sim_config
from ssdlab.scenarios.shared import SIM
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["COLUMNS", "FILES", "OPTIONS", "SCENARIO", "PreconditionResult", "PreconditionRun", "precondition",
           "steps"]

NAME = "precondition"
FILES = ("precondition.csv", "summary.json", "precondition.png")
COLUMNS = ("pass", "time_s", "mb_s", "write_amplification")
ACTIVE_RANGE_PCT = {"client": 75.0, "enterprise": 100.0}
"""PTS's active range by variant, in percent of the LBAs (PTS-C 75 %, PTS-E 100 %)."""
MAX_PASSES = 16


def _active_range(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if not 0 < v <= 100:
        raise SsdlabError(f"{what} must be above 0 and at most 100 percent, got {value!r}")
    return v


def _passes(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PASSES:
        raise SsdlabError(f"{what} must be a whole number from 1 to {MAX_PASSES}, got {value!r}")
    return value


OPTIONS = (
    Opt("variant", "PTS variant: client (PTS-C) preconditions 75 % of the LBAs, enterprise (PTS-E) all of them.",
        type=click.Choice(tuple(ACTIVE_RANGE_PCT)), default="enterprise", show_default=True, kind="text",
        axis="category", range="client / enterprise"),
    Opt("active_range", "Percent of the LBAs preconditioned, from LBA 0, in (0, 100]. [default: the variant's]",
        type=cv.Checked("pct", _active_range), metavar="PCT", range="(0, 100]"),
    Opt("passes", "Sequential passes over the active range (PTS's WIPC writes it twice).",
        type=cv.Checked("n", _passes, base=int), default=2, show_default=True, metavar="N", kind="whole",
        range=f"1 … {MAX_PASSES}"),
    Opt("block_size", "Sequential write request size.", type=cv.block_size, default="128KiB", show_default=True,
        metavar="SIZE", api="block_size", kind="size", axis="size", range="512 B … 32 MiB, a multiple of 512 B"),
    Opt("qd", "Queue depth of the writes.", type=cv.queue_depth, default=32, show_default=True, metavar="N",
        kind="whole", range="1 … 65536"),
)


# -- steps -----------------------------------------------------------------------------------------


def active_bytes(user_bytes: int, active_range_pct: float, block_bytes: int) -> int:
    """The active range in bytes: `active_range_pct` of the user space from LBA 0, whole requests."""
    span = int(user_bytes * active_range_pct / 100.0) // block_bytes * block_bytes
    if span < block_bytes:
        raise SsdlabError(f"an active range of {active_range_pct:g} % of {format_size(user_bytes)} holds no "
                          f"{format_size(block_bytes)} request; raise --active-range or lower --block-size")
    return span


def steps(span_bytes: int, passes: int, block_bytes: int, qd: int) -> List[Dict[str, Any]]:
    """PTS's purge and WIPC as the core's steps: a secure erase, then `passes` sequential writes of
    the first `span_bytes` (the PTS modules run these before their own rounds)."""
    return [{"step": "secure_erase"}] + [
        {"step": "run", "workload": {"label": f"WIPC pass {i}", "rw": "write", "pattern": "sequential",
                                     "block_bytes": block_bytes, "queue_depth": qd, "span_bytes": span_bytes}}
        for i in range(1, passes + 1)
    ]


# -- the API ---------------------------------------------------------------------------------------


def precondition(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    active_range: Optional[float] = None,
    passes: int = default_of(OPTIONS, "passes"),
    block_size: Any = default_of(OPTIONS, "block_size"),
    qd: int = default_of(OPTIONS, "qd"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> PreconditionResult:
    """PTS's purge and workload-independent preconditioning on a simulated drive: a secure erase,
    then `passes` (2) sequential passes of `block_size` (128 KiB) writes at queue depth `qd` over
    the active range: `active_range` percent of the LBAs, by default the `variant`'s (client 75 %,
    enterprise 100 %). The default label is ``"<drive> · PTS preconditioning"``."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in ACTIVE_RANGE_PCT:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    pct = _active_range(ACTIVE_RANGE_PCT[variant] if active_range is None else active_range, "active range")
    n = _passes(passes, "passes")
    block = limits.block_size(block_size, "block size")
    depth = limits.queue_depth(qd, "queue depth")
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed)
    span = active_bytes(sim.user_bytes, pct, block)
    started = time.perf_counter()
    results = sim.run_steps(steps(span, n, block, depth), progress)
    params = {"variant": variant, "active_range_pct": pct, "active_bytes": span, "passes": n, "block_size": block,
              "qd": depth}
    return PreconditionResult.from_run(label=label if label is not None else f"{cfg.name} · PTS preconditioning",
                                       config=cfg, steps=results, params=params, seed=seed,
                                       wall_seconds=time.perf_counter() - started)


# -- the result ------------------------------------------------------------------------------------


class PreconditionResult(TableResult):
    """The purge and WIPC of a simulated drive (docs/results.md, *precondition*).

    Attributes:
        series: DataFrame ``pass, time_s, mb_s, write_amplification``: one row per simulated second
            of each pass (``time_s`` from the start of the WIPC; ``mb_s`` the host's write speed,
            10^6 bytes/s, over the part of the second the pass covers, so a pass's last, partial
            second is a rate like the others; ``write_amplification`` NAND ÷ host writes in it).
        summary: the figures of ``summary.json``: per pass its seconds, mean and lowest MB/s and
            WA (``passes_detail``), and over the whole WIPC the host and NAND bytes and the WA.
    """

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("table_frame", "precondition.csv", COLUMNS, finite=("pass", "time_s", "mb_s")),)

    @property
    def series(self) -> pd.DataFrame:
        """One row per simulated second of each pass."""
        return self.table_frame

    def __repr__(self) -> str:
        p = self.summary["passes_detail"]
        speeds = ", ".join(f"{x['mb_s_mean']:,.0f}" for x in p)
        return f"<PreconditionResult {self.label!r}: {len(p)} passes at {speeds} MB/s, WA {self.summary['write_amplification']:.2f}>"

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, steps: List[StepResult], params: Dict[str, Any],
                 seed: int, wall_seconds: float) -> PreconditionResult:
        import numpy as np
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        frames, detail = [], []
        host_total = nand_total = 0
        start = next(s.start_s for s in steps if s.series is not None)
        for number, step in enumerate((s for s in steps if s.series is not None), start=1):
            raw = step.series
            host = raw["host_bytes"].to_numpy(np.float64) / 4096  # units' worth of host bytes
            nand = raw["nand_units"].to_numpy(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                wa = np.where(host > 0, nand / np.where(host > 0, host, 1), np.nan)
            # each interval's own length: the last one of a pass is partial, and its rate is its bytes
            # over the time it covers (not over a whole second, which would draw a false plunge)
            times = raw["time_s"].to_numpy(np.float64)
            covered = np.minimum(np.diff(np.append(times, step.duration_s)), step.interval_s or 1.0)
            mb_s = raw["write_bytes"].to_numpy(np.float64) / np.where(covered > 0, covered, 1.0) / 1e6
            frames.append(pd.DataFrame({"pass": number, "time_s": raw["time_s"].to_numpy(np.float64)
                                        + (step.start_s - start), "mb_s": mb_s, "write_amplification": wa}))
            counters = step.phase["counters"] if step.phase else {}
            written = step.phase["bytes"][1] if step.phase else 0  # bytes by direction: read, write, trim
            host_bytes, nand_units = counters.get("host_write_bytes", 0), counters.get("nand_write_units", 0)
            host_total += host_bytes
            nand_total += nand_units
            whole = mb_s[covered >= 0.5] if (covered >= 0.5).any() else mb_s  # a sliver is no sample
            detail.append({"pass": number, "seconds": step.duration_s,
                           "mb_s_mean": written / step.duration_s / 1e6 if step.duration_s > 0 else 0.0,
                           "mb_s_min": float(whole.min()) if len(whole) else 0.0,
                           "write_amplification": nand_units * 4096 / host_bytes if host_bytes else None,
                           "free_blocks_after": step.free_blocks})
        unit = config.describe()
        unit_bytes = unit["physical_capacity_bytes"] // (unit["dies"] * unit["blocks_per_die"] * unit["units_per_block"])
        summary["passes_detail"] = detail
        summary["host_write_bytes"] = host_total
        summary["nand_write_bytes"] = nand_total * unit_bytes
        summary["write_amplification"] = nand_total * unit_bytes / host_total if host_total else None
        summary["simulated_seconds"] = steps[-1].end_s - start
        series = pd.concat(frames, ignore_index=True)[list(COLUMNS)]
        return cls(series, plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        how = (f"secure erase, then {s['passes']} × {format_size(s['block_size'])} sequential writes at QD{s['qd']} "
               f"over {s['active_range_pct']:g} % of the LBAs (PTS-{'C' if s['variant'] == 'client' else 'E'} WIPC)")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        return {"precondition.png": figure(self.series, title=self.label, subtitle=self.subtitle())}


# -- the chart (precondition.png) ------------------------------------------------------------------


def figure(series: pd.DataFrame, *, title: str, subtitle: str) -> Figure:
    """MB/s against time over the WIPC, one colour per pass, each pass's mean as a dashed line."""
    from ssdlab.plots import PASS_COLOURS, mb_s_axis, new_figure

    fig, ax = new_figure(title, subtitle)
    for number in sorted(set(series["pass"])):
        rows = series[series["pass"] == number]
        colour = PASS_COLOURS[(int(number) - 1) % len(PASS_COLOURS)]
        ax.plot(rows["time_s"], rows["mb_s"], color=colour, linewidth=1.2, label=f"pass {int(number)}")
        ax.hlines(float(rows["mb_s"].mean()), rows["time_s"].iloc[0], rows["time_s"].iloc[-1], colors=colour,
                  linestyles="dashed", linewidth=1.0)
    mb_s_axis(ax, float(series["mb_s"].max()) if len(series) else 1.0)
    ax.set_ylabel("MB/s")
    ax.legend(loc="best", fontsize=9, framealpha=0.9)
    return fig


# -- the command -----------------------------------------------------------------------------------


def command(variant: str, active_range: Optional[float], passes: int, block_size: int, qd: int,
            drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
            gc: Optional[str], seed: int, out: Optional[str], report: bool, quiet: bool) -> None:
    """SNIA PTS's purge and workload-independent preconditioning (WIPC) on a simulated drive.

    A secure erase, then the active range (client: 75 % of the LBAs, enterprise: 100 %) written
    --passes times in --block-size sequential writes, as every PTS test starts (docs/scenarios.md).
    Writes precondition.csv (MB/s per second of each pass), summary.json and precondition.png.
    """
    from ssdlab import preload
    from ssdlab.progress import StepBars
    from ssdlab.results import check_output_dir

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    pct = ACTIVE_RANGE_PCT[variant] if active_range is None else active_range
    user_bytes = int(cfg.describe()["user_capacity_bytes"])
    span = active_bytes(user_bytes, pct, block_size)
    progress: Any = False
    if not quiet:
        what = (f"purge, then {passes} × {format_size(span)} of {format_size(block_size)} sequential writes at "
                f"QD{qd} (PTS-{'C' if variant == 'client' else 'E'} WIPC, {pct:g} % active range)")
        progress = Progress(header(cfg, what), StepBars(steps(span, passes, block_size, qd)))
    preload.start()
    try:
        result = precondition(cfg, variant=variant, active_range=active_range, passes=passes, block_size=block_size,
                              qd=qd, seed=seed, progress=progress)
    finally:
        if progress:
            progress.bars.close()
    path = save(result, out_dir, report)
    if not finish(result, path, report, quiet, FILES):
        return
    s = result.summary
    click.echo(f"  {'pass':>4}  {'seconds':>9}  {'mean MB/s':>9}  {'min MB/s':>9}  {'WA':>5}")
    for p in s["passes_detail"]:
        wa = "n/a" if p["write_amplification"] is None else f"{p['write_amplification']:.2f}"
        click.echo(f"  {p['pass']:>4}  {p['seconds']:>9,.1f}  {p['mb_s_mean']:>9,.1f}  {p['mb_s_min']:>9,.1f}  "
                   f"{wa:>5}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("active_bytes", "write_amplification", "simulated_seconds"):
        figures[key] = s.get(key)
    for p in s.get("passes_detail") or []:
        figures[f"pass{p['pass']}_mb_s"] = p.get("mb_s_mean")
        figures[f"pass{p['pass']}_write_amplification"] = p.get("write_amplification")
    return figures


# -- the report section ----------------------------------------------------------------------------


@dataclass
class PreconditionRun(Run):
    """A precondition run: MB/s against time, per pass."""

    scenario_names = (NAME,)
    kind = NAME
    passes: dict[int, tuple[list[float], list[float]]] = field(default_factory=dict)

    def _read(self) -> None:
        self._require("passes_detail", "write_amplification")
        frame = self._csv("precondition.csv", COLUMNS, ("pass", "time_s", "mb_s"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'precondition.csv'}: no rows")
        for number in dict.fromkeys(frame["pass"]):
            rows = frame[frame["pass"] == number]
            self.passes[int(number)] = (rows["time_s"].tolist(), rows["mb_s"].tolist())


def chart(runs: Sequence[Run]) -> Optional[Chart]:
    """MB/s against time over the WIPC, one line per run and pass (dotted after the first)."""
    ours = [r for r in runs if isinstance(r, PreconditionRun)]
    if not ours:
        return None
    data = []
    for i, run in enumerate(ours):
        for number, (xs, ys) in run.passes.items():
            data.append({"type": "scatter", "mode": "lines", "name": f"{run.name}, pass {number}", "x": xs, "y": ys,
                         "line": {"color": PALETTE[i % len(PALETTE)], "width": 1.5,
                                  "dash": "solid" if number == 1 else "dot"},
                         "hovertemplate": f"<b>{run.name}</b>, pass {number}<br>%{{x:.0f}} s: %{{y:,.0f}} MB/s"
                                          "<extra></extra>"})
    layout = chart_layout(chart_title("PTS preconditioning", "sequential MB/s over the purge's WIPC passes"),
                          chart_axis("Time (s)", rangemode="tozero"), chart_axis("MB/s", rangemode="tozero"),
                          showlegend=True, hovermode="closest")
    return Chart(NAME, [{"data": data, "layout": layout}])


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "PTS preconditioning" section."""
    lede = ("SNIA PTS starts every test from a purged drive written twice over in 128 KiB sequential writes. A drive "
            "with an SLC cache slows where the cache runs out in the first pass; the second pass overwrites data, "
            "so garbage collection starts.")
    return chart_section(NAME, "PTS preconditioning", lede, chart(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=PreconditionResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(precondition), figures=_sweep_figures,
                     metrics=(("pass1_mb_s", "first pass, MB/s"), ("write_amplification", "WA over the WIPC"))),
    report_runs=(PreconditionRun,),
    report_section=report_section,
)
