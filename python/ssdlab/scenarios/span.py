"""``ssdlab span``: random 4 KiB performance against the test span, the scenario in one module.

The reviewers' test of DRAM-less drives (AnandTech's "working set size", TechPowerUp's "DRAM-less
testing", ascii.jp's TxBENCH 1–64 GB sweep): after a sequential fill of the whole drive, random
4 KiB reads at QD1 and QD32 over a growing span of LBAs from LBA 0 (1 GB, 2 GB, 4 GB, … and the
whole drive), one point per span, then random writes the same way. A drive with its mapping table
in DRAM is flat; a DRAM-less drive (``[ftl.map_cache]``) is flat while the span fits what its
SRAM and Host Memory Buffer cache (4 bytes of table per 4 KiB of span) and slows beyond, where
every miss costs a NAND read of a translation page before the data read. ``--hmb-mb 0`` turns the
HMB off (docs/scenarios.md, *span*).

This module holds its options (declared once), its steps and API function (`span_test`), its
result (`SpanResult`: ``span.csv``, ``summary.json``, ``span.png``), its command, its sweep entry
and its section of the HTML report.
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
from ssdlab.sizes import format_size, parse_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ssdlab.simulate import StepResult

__all__ = ["COLUMNS", "FILES", "OPTIONS", "SCENARIO", "SpanResult", "SpanRun", "span_test", "spans_of", "steps"]

NAME = "span"
FILES = ("span.csv", "summary.json", "span.png")
COLUMNS = ("rw", "qd", "span_bytes", "iops", "mb_s", "mean_latency_us", "map_reads_per_io", "hmb_hits_per_io")
MODES = (("read", 32), ("read", 1), ("write", 32), ("write", 1))
"""The points at each span, in the order they run: QD32 first warms the mapping cache for QD1."""
KNEE_SHARE = 0.9
"""The knee: the last span whose QD1 read IOPS are at least this share of the smallest span's."""


def _hmb(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4096:
        raise SsdlabError(f"{what} must be a whole number of MiB from 0 (HMB off) to 4096, got {value!r}")
    return value


def _seconds(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if not 0.01 <= v <= 3600:
        raise SsdlabError(f"{what} must be from 0.01 to 3600 seconds, got {value!r}")
    return v


OPTIONS = (
    Opt("hmb_mb", "Host Memory Buffer the host grants a DRAM-less drive, MiB; 0 switches HMB off. "
        "[default: the drive's]", type=cv.Checked("mib", _hmb, base=int), metavar="MIB", kind="whole",
        range="0 … 4096 (DRAM-less drives only)"),
    Opt("min_span", "Smallest test span; the spans double from it up to the whole drive (each rounded down to 4 KiB).",
        type=cv.capacity,
        default="1GB", show_default=True, metavar="SIZE", kind="size", axis="size", range="≥ 1 MiB"),
    Opt("seconds", "Measured seconds per point (after the warm-up).", type=cv.Checked("s", _seconds),
        default=2.0, show_default=True, metavar="S", range="0.01 … 3600"),
    Opt("warmup", "Seconds per point before the measurement (fills the mapping cache).",
        type=cv.Checked("s", _seconds), default=1.0, show_default=True, metavar="S", range="0.01 … 3600"),
    Opt("writes", "Also measure random writes at each span (after every read point).", is_flag=True,
        secondary="--no-writes", default=True, show_default=True, kind="flag", axis="category",
        range="true / false"),
)


# -- steps -----------------------------------------------------------------------------------------


def spans_of(user_bytes: int, min_span: int) -> List[int]:
    """The test spans: `min_span` doubling while below the drive's user space, then all of it
    (whole 4 KiB units)."""
    if min_span < 1 << 20:
        raise SsdlabError(f"the smallest span must be at least 1 MiB, got {format_size(min_span)}")
    out, s = [], min_span
    while s < user_bytes:
        out.append(s // 4096 * 4096)
        s *= 2
    out.append(user_bytes // 4096 * 4096)
    return out


def steps(spans: Sequence[int], seconds: float, warmup: float, writes: bool) -> List[Dict[str, Any]]:
    """A secure erase, a sequential fill of the whole drive, then per span the random 4 KiB reads
    at QD32 and QD1, and (with `writes`) per span the random writes the same way."""
    out: List[Dict[str, Any]] = [
        {"step": "secure_erase"},
        {"step": "run", "workload": {"label": "fill", "rw": "write", "pattern": "sequential",
                                     "block_bytes": 131072, "queue_depth": 32}},
    ]
    for rw, qd in MODES:
        if rw == "write" and not writes:
            continue
        for span in spans:
            out.append({"step": "run", "workload": {
                "label": f"{rw} QD{qd} {format_size(span)}", "rw": rw, "pattern": "random", "block_bytes": 4096,
                "queue_depth": qd, "span_bytes": span, "duration_s": seconds, "ramp_s": warmup}})
    return out


def hmb_config(cfg: DriveConfig, hmb_mb: Optional[int]) -> DriveConfig:
    """The drive with its HMB set to `hmb_mb` MiB (None: as it is); refused for a drive whose
    mapping table is in DRAM."""
    if hmb_mb is None:
        return cfg
    cache = cfg.ftl.map_cache
    if cache is None:
        raise SsdlabError(f"--hmb-mb applies to DRAM-less drives ([ftl.map_cache]); {cfg.name} keeps its mapping "
                          "table in DRAM. Choose a DRAM-less preset (dramless-hmb, dramless-sata) or drop --hmb-mb")
    data = cfg.to_dict()
    data["ftl"]["map_cache"]["hmb_mib"] = int(hmb_mb)
    return DriveConfig.from_dict(data)


# -- the API ---------------------------------------------------------------------------------------


def span_test(
    config: procedures.Config = None,
    *,
    hmb_mb: Optional[int] = None,
    min_span: Any = default_of(OPTIONS, "min_span"),
    seconds: float = default_of(OPTIONS, "seconds"),
    warmup: float = default_of(OPTIONS, "warmup"),
    writes: bool = default_of(OPTIONS, "writes"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> SpanResult:
    """Random 4 KiB reads (and writes) at QD32 and QD1 over growing test spans of a filled drive:
    `min_span` (1 GB) doubling up to the whole drive, `warmup` (1 s) then `seconds` (2 s) per
    point. `hmb_mb` sets a DRAM-less drive's Host Memory Buffer (0: off). The default label is
    ``"<drive> · span"``."""
    from ssdlab.simulate import Simulator

    cfg = hmb_config(procedures.resolve_config(config), None if hmb_mb is None else _hmb(hmb_mb, "hmb_mb"))
    secs, warm = _seconds(seconds, "seconds"), _seconds(warmup, "warmup")
    smallest = min_span if isinstance(min_span, int) else parse_size(str(min_span))
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed)
    spans = spans_of(sim.user_bytes, smallest)
    started = time.perf_counter()
    results = sim.run_steps(steps(spans, secs, warm, bool(writes)), progress)
    cache = cfg.ftl.map_cache
    params = {"min_span": smallest, "spans": spans, "seconds": secs, "warmup": warm, "writes": bool(writes),
              "hmb_mib": None if cache is None else cache.hmb_mib,
              "sram_kib": None if cache is None else cache.sram_kib}
    return SpanResult.from_run(label=label if label is not None else f"{cfg.name} · span", config=cfg,
                               steps=results, params=params, seed=seed,
                               wall_seconds=time.perf_counter() - started)


def coverage_bytes(cfg: DriveConfig) -> Optional[Dict[str, int]]:
    """The spans the mapping cache covers: SRAM, and SRAM + HMB (whole translation pages of
    page_bytes / 4 entries, 4 KiB each), or None for a drive with DRAM."""
    cache = cfg.ftl.map_cache
    if cache is None:
        return None
    page = cfg.geometry.page_bytes
    sram_pages = max(1, cache.sram_kib * 1024 // page)
    hmb_pages = cache.hmb_mib * (1 << 20) // page
    per_page = page // 4 * 4096
    return {"sram": sram_pages * per_page, "total": (sram_pages + hmb_pages) * per_page}


# -- the result ------------------------------------------------------------------------------------


class SpanResult(TableResult):
    """Random 4 KiB IOPS against the test span (docs/results.md, *span*).

    Attributes:
        curve: DataFrame ``rw, qd, span_bytes, iops, mb_s, mean_latency_us, map_reads_per_io,
            hmb_hits_per_io``: one row per point (``map_reads_per_io``: translation pages read
            from NAND per request, 0 on a drive with DRAM).
        summary: the figures of ``summary.json``: the spans, the mapping cache's coverage
            (``coverage_bytes``), and per mode the IOPS at the smallest and the largest span and
            the knee (``knee_span_bytes``: the last span whose QD1 reads keep 90 % of the smallest
            span's IOPS).
    """

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("table_frame", "span.csv", COLUMNS, finite=("qd", "span_bytes", "iops", "mb_s"),
                       text=("rw",)),)

    @property
    def curve(self) -> pd.DataFrame:
        """One row per point."""
        return self.table_frame

    def __repr__(self) -> str:
        s = self.summary
        return (f"<SpanResult {self.label!r}: QD1 reads {s['read_qd1_iops_first']:,.0f} IOPS at "
                f"{format_size(s['spans'][0])}, {s['read_qd1_iops_last']:,.0f} over the drive>")

    def iops(self, rw: str, qd: int) -> List[float]:
        """IOPS per span of one mode, in span order."""
        rows = self.curve[(self.curve["rw"] == rw) & (self.curve["qd"] == qd)]
        return [float(x) for x in rows.sort_values("span_bytes")["iops"]]

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, steps: List[StepResult], params: Dict[str, Any],
                 seed: int, wall_seconds: float) -> SpanResult:
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        rows = []
        points = [s for s in steps if s.phase is not None and s.label != "fill"]
        for step in points:
            rw, qd_text, _ = step.label.split(" ", 2)
            d = 0 if rw == "read" else 1
            phase = step.phase or {}
            ios = int(phase["ios"][d])
            secs = float(params["seconds"])
            c = phase.get("counters", {})
            total = c.get("host_read_units", 0) + c.get("host_write_units", 0)
            lat = phase["latency"][d]
            rows.append({
                "rw": rw, "qd": int(qd_text[2:]), "span_bytes": 0, "iops": ios / secs,
                "mb_s": phase["bytes"][d] / secs / 1e6,
                "mean_latency_us": lat["mean_ns"] / 1e3 if lat else float("nan"),
                "map_reads_per_io": c.get("map_page_reads", 0) / total if total else 0.0,
                "hmb_hits_per_io": c.get("map_hmb_hits", 0) / total if total else 0.0,
            })
        spans = list(params["spans"])
        per_mode = len(spans)
        for i, row in enumerate(rows):
            row["span_bytes"] = spans[i % per_mode]
        curve = pd.DataFrame(rows, columns=list(COLUMNS))
        summary["coverage_bytes"] = coverage_bytes(config)
        for rw, qd in MODES:
            sel = [r["iops"] for r in rows if r["rw"] == rw and r["qd"] == qd]
            if sel:
                summary[f"{rw}_qd{qd}_iops_first"] = sel[0]
                summary[f"{rw}_qd{qd}_iops_last"] = sel[-1]
        qd1 = [r["iops"] for r in rows if r["rw"] == "read" and r["qd"] == 1]
        knee = None
        for span, iops in zip(spans, qd1):
            if iops >= KNEE_SHARE * qd1[0]:
                knee = span
            else:
                break
        summary["knee_span_bytes"] = knee
        summary["simulated_seconds"] = steps[-1].end_s - steps[0].start_s
        return cls(curve, plain(summary), config=config, steps=steps)

    def subtitle(self) -> str:
        s = self.summary
        hmb = "" if s.get("hmb_mib") is None else f", HMB {s['hmb_mib']} MiB" if s["hmb_mib"] else ", HMB off"
        how = (f"filled, then 4 KiB random reads{' and writes' if s['writes'] else ''} at QD32 and QD1 over spans "
               f"from {s['spans'][0] / 1e9:.3g} GB, {s['warmup']:g} s warm-up + {s['seconds']:g} s per point{hmb}")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        return {"span.png": figure(self.curve, coverage=self.summary.get("coverage_bytes"), title=self.label,
                                   subtitle=self.subtitle())}


# -- the chart (span.png) --------------------------------------------------------------------------

STYLE = {("read", 1): ("#2563eb", "-"), ("read", 32): ("#2563eb", "--"),
         ("write", 1): ("#dc2626", "-"), ("write", 32): ("#dc2626", "--")}


def figure(curve: pd.DataFrame, *, coverage: Optional[Dict[str, int]], title: str, subtitle: str) -> Figure:
    """Two panels, reads and writes: IOPS against the test span (log-x, GB; IOPS from 0), one line
    per queue depth, with the mapping cache's coverage (SRAM, SRAM + HMB) as dotted verticals."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import DPI, FIGSIZE

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    fig.supxlabel(subtitle, fontsize=8, color="#555555")
    directions = [rw for rw in ("read", "write") if (curve["rw"] == rw).any()] or ["read"]
    axes = fig.subplots(1, len(directions), squeeze=False)[0]
    for ax, rw in zip(axes, directions):
        rows_rw = curve[curve["rw"] == rw]
        for qd, dash in ((1, "-"), (32, "--")):
            rows = rows_rw[rows_rw["qd"] == qd].sort_values("span_bytes")
            if rows.empty:
                continue
            colour = STYLE[(rw, qd)][0]
            ax.plot(rows["span_bytes"] / 1e9, rows["iops"], color=colour, linestyle=dash, marker="o", markersize=4,
                    linewidth=1.4, label=f"QD{qd}")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_ylim(0, float(rows_rw["iops"].max()) * 1.15 if len(rows_rw) else 1.0)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
        ax.grid(True, which="major", color="#d0d0d0", linewidth=0.8)
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        if coverage:
            for key, text in (("sram", "SRAM maps"), ("total", "SRAM + HMB map")):
                if key == "total" and coverage["total"] == coverage["sram"]:
                    continue
                x = coverage[key] / 1e9
                ax.axvline(x, color="#777777", linestyle=":", linewidth=1.1)
                ax.annotate(f"{text} {format_size(coverage[key])}", (x, 0), xytext=(4, 6),
                            textcoords="offset points", fontsize=8, color="#555555", rotation=90, va="bottom")
        ax.set_title(f"Random 4 KiB {rw}s", fontsize=10)
        ax.set_xlabel("Test span (GB, log scale)")
        ax.set_ylabel("IOPS")
        ax.legend(loc="upper right", fontsize=9, framealpha=0.9)
    return fig


# -- the command -----------------------------------------------------------------------------------


def command(hmb_mb: Optional[int], min_span: int, seconds: float, warmup: float, writes: bool,
            drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
            gc: Optional[str], seed: int, out: Optional[str], report: bool, quiet: bool) -> None:
    """Random 4 KiB IOPS against the test span (reviewers' DRAM-less test).

    A secure erase and a sequential fill, then random 4 KiB reads at QD32 and QD1 over spans from
    --min-span doubling to the whole drive (and random writes the same way), one point per span.
    A DRAM-less drive is fast while the span fits what its mapping cache covers; --hmb-mb 0
    switches its Host Memory Buffer off. Writes span.csv, summary.json and span.png.
    """
    from ssdlab import preload
    from ssdlab.progress import StepBars
    from ssdlab.results import check_output_dir

    cfg = hmb_config(sim_config(drive, drive_file, capacity, op, gc), hmb_mb)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    user_bytes = int(cfg.describe()["user_capacity_bytes"])
    spans = spans_of(user_bytes, min_span)
    progress: Any = False
    if not quiet:
        what = (f"fill, then 4 KiB random reads{' and writes' if writes else ''} at QD32 and QD1 over "
                f"{len(spans)} spans from {format_size(spans[0])} to {format_size(spans[-1])}")
        progress = Progress(header(cfg, what), StepBars(steps(spans, seconds, warmup, writes)))
    preload.start()
    try:
        result = span_test(cfg, min_span=min_span, seconds=seconds, warmup=warmup, writes=writes, seed=seed,
                           progress=progress)
    finally:
        if progress:
            progress.bars.close()
    path = save(result, out_dir, report)
    if not finish(result, path, report, quiet, FILES):
        return
    curve = result.curve
    click.echo(f"  {'span':>10}  {'read QD1':>10}  {'read QD32':>10}  {'write QD1':>10}  {'write QD32':>10}")
    for span in result.summary["spans"]:
        cells = []
        for rw, qd in (("read", 1), ("read", 32), ("write", 1), ("write", 32)):
            rows = curve[(curve["rw"] == rw) & (curve["qd"] == qd) & (curve["span_bytes"] == span)]
            cells.append(f"{float(rows['iops'].iloc[0]):>10,.0f}" if len(rows) else f"{'':>10}")
        click.echo(f"  {format_size(span):>10}  " + "  ".join(cells))
    knee = result.summary["knee_span_bytes"]
    click.echo(f"  QD1 reads keep 90 % of their best up to {format_size(knee) if knee else 'no span'}")
    click.echo(f"  wall time {result.summary['wall_seconds']:.1f}s")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("knee_span_bytes", "read_qd1_iops_first", "read_qd1_iops_last", "read_qd32_iops_first",
                "read_qd32_iops_last", "write_qd32_iops_last"):
        figures[key] = s.get(key)
    return figures


# -- the report section ----------------------------------------------------------------------------


@dataclass
class SpanRun(Run):
    """A span run: IOPS against the test span, per direction and queue depth."""

    scenario_names = (NAME,)
    kind = NAME
    lines: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)

    def _read(self) -> None:
        self._require("spans", "knee_span_bytes")
        frame = self._csv("span.csv", COLUMNS, ("qd", "span_bytes", "iops"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'span.csv'}: no rows")
        for (rw, qd), rows in frame.groupby(["rw", "qd"], sort=False):
            rows = rows.sort_values("span_bytes")
            self.lines[f"{rw} QD{int(qd)}"] = ((rows["span_bytes"] / 1e9).tolist(), rows["iops"].tolist())


def chart(runs: Sequence[Run]) -> Optional[Chart]:
    """IOPS against the span (log-log), one colour per run, one dash per mode."""
    ours = [r for r in runs if isinstance(r, SpanRun)]
    if not ours:
        return None
    dashes = {"read QD1": "solid", "read QD32": "dash", "write QD1": "dot", "write QD32": "dashdot"}
    data = []
    for i, run in enumerate(ours):
        for name, (xs, ys) in run.lines.items():
            data.append({"type": "scatter", "mode": "lines+markers", "name": f"{run.name}, {name}", "x": xs, "y": ys,
                         "line": {"color": PALETTE[i % len(PALETTE)], "width": 1.5, "dash": dashes.get(name, "solid")},
                         "hovertemplate": f"<b>{run.name}</b>, {name}<br>%{{x:g}} GB: %{{y:,.0f}} IOPS<extra></extra>"})
    layout = chart_layout(chart_title("Random IOPS against the test span", "4 KiB, after a full fill"),
                          chart_axis("Test span (GB)", type="log"), chart_axis("IOPS", type="log"),
                          showlegend=True, hovermode="closest")
    return Chart(NAME, [{"data": data, "layout": layout}])


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Random IOPS against the test span" section."""
    lede = ("Random 4 KiB reads and writes over a growing span of a full drive. A drive that keeps its mapping table "
            "in DRAM is flat; a DRAM-less drive is fast only while the span fits what its SRAM and Host Memory Buffer "
            "cache, and pays a NAND read of the table for each miss beyond.")
    return chart_section(NAME, "Random IOPS against the test span", lede, chart(runs))


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=SpanResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(span_test), figures=_sweep_figures,
                     metrics=(("read_qd1_iops_last", "QD1 random reads over the drive, IOPS"),
                              ("knee_span_bytes", "span QD1 reads keep 90 % of their best, bytes"))),
    report_runs=(SpanRun,),
    report_section=report_section,
)
