"""The consistency runs' part of the HTML report (``ssdlab report``, ``--report``): the run class
that reads a consistency result directory (`ConsistencyRun`), the "Summary" table of their figures
(`table`), the three performance-consistency charts (`charts`) and the sections (`report_section`).

Consistency charts follow the review pages: three views (whole run on a log scale, the steady-state
zoom from ``zoom_start_s`` on a log scale, the same zoom on a linear scale), each with a row of drive
buttons and a row of spare-area buttons ("Default", "25% Spare Area"). Every view keeps one scale for
all runs so that switching compares like with like.

The rest of the scenario is in `ssdlab.scenarios.consistency` (options, steps, API, command, sweep)
and `ssdlab.scenarios.consistency_result` (the result and its PNG charts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from ssdlab.errors import SsdlabError
from ssdlab.report.charts import (
    AXIS,
    PALETTE,
    Chart,
    chart_axis,
    chart_layout,
    chart_title,
    drive_keys,
    format_bytes,
    nice_ceiling,
)
from ssdlab.report.load import SUMMARY, Run, spare_label
from ssdlab.report.page import Section
from ssdlab.report.tables import Cell, Table, number_cell

__all__ = ["LOG_FLOOR_IOPS", "VIEWS", "ConsistencyRun", "charts", "report_section", "table"]

#: Log-scale views draw a second with 0 IOPS (a stall) at this value; hover shows the true value.
LOG_FLOOR_IOPS = 1.0


# --- the run ------------------------------------------------------------------------------------


@dataclass
class ConsistencyRun(Run):
    """A consistency run: its summary and the IOPS of every second of the random writes (iops.csv)."""

    scenario_names = ("consistency",)
    kind = "consistency"
    time_s: list[float] = field(default_factory=list)
    iops: list[float] = field(default_factory=list)

    def _read(self) -> None:
        self._require("spare_area_pct", "zoom_start_s")
        if self.figure("zoom_start_s") is None:
            raise SsdlabError(f"{self.path / SUMMARY}: 'zoom_start_s' is not a number")
        frame = self._csv("iops.csv", ("time_s", "iops"), ("time_s", "iops"))
        if frame.empty:
            raise SsdlabError(f"{self.path / 'iops.csv'}: no rows")
        self.time_s = frame["time_s"].tolist()
        self.iops = frame["iops"].tolist()

    @property
    def zoom_start_s(self) -> float:
        return float(self.summary["zoom_start_s"])

    @property
    def duration_s(self) -> float:
        return self.figure("duration_s") or (self.time_s[-1] + 1 if self.time_s else 0.0)

    def zoom(self) -> tuple[list[float], list[float]]:
        """The per-second samples from ``zoom_start_s`` on."""
        start = next((i for i, t in enumerate(self.time_s) if t >= self.zoom_start_s), len(self.time_s))
        return self.time_s[start:], self.iops[start:]


# --- the charts ---------------------------------------------------------------------------------


def _decade(k: int) -> str:
    """10**k as an axis label: 1, 10, 100, 1K, 10K, 100K, 1M."""
    return {0: "1", 1: "10", 2: "100"}.get(k) or (f"{10 ** (k - 3):g}K" if k < 6 else f"{10 ** (k - 6):g}M")


def _colours(runs: Sequence[Run]) -> dict[str, str]:
    """One colour per drive, stable across every chart of the report."""
    out: dict[str, str] = {}
    for run in runs:
        out.setdefault(run.drive, PALETTE[len(out) % len(PALETTE)])
    return out


VIEWS = (
    ("consistency-log", "whole run, log scale"),
    ("consistency-steady-log", "steady state from t = {zoom:g} s, log scale"),
    ("consistency-steady-linear", "steady state from t = {zoom:g} s, linear scale"),
)


def _workload(run: ConsistencyRun) -> str:
    block = run.figure("block_size")
    qd = run.figure("qd")
    parts = [f"{format_bytes(block)} random writes" if block else "random writes"]
    if qd:
        parts.append(f"QD{qd:g}")
    return ", ".join(parts)


def charts(runs: Sequence[Run]) -> list[Chart]:
    """The three consistency views, each switchable by drive and by spare area."""
    cruns = [r for r in runs if isinstance(r, ConsistencyRun)]
    if not cruns:
        return []
    colours = _colours(runs)
    spares = [r.spare_area_pct or 0.0 for r in cruns]
    dkeys = drive_keys(cruns)
    drives = list(dict.fromkeys(dkeys))  # first-appearance order: the order the user gave
    spare_values = sorted(set(spares))
    cells = [(drives.index(d), spare_values.index(s)) for d, s in zip(dkeys, spares)]
    # sort combos by (drive, spare) so that the first shown is the first drive at its lowest spare
    order = sorted(range(len(cruns)), key=lambda i: cells[i])
    rows = [("Drive", drives), ("Spare area", [spare_label(s) for s in spare_values])]

    peak = max((max(r.iops) for r in cruns if r.iops), default=1.0)
    log_top = math.ceil(math.log10(max(peak, 10.0) * 1.05))
    steady_peak = max((max(r.zoom()[1], default=0.0) for r in cruns), default=0.0)
    linear_top = nice_ceiling(max(steady_peak, 1.0) * 1.05)

    out = []
    for view, (chart_id, sub) in enumerate(VIEWS):
        specs = []
        for i in order:
            run = cruns[i]
            zoomed = view > 0
            t, iops = run.zoom() if zoomed else (run.time_s, run.iops)
            log = view < 2
            y = [max(v, LOG_FLOOR_IOPS) for v in iops] if log else list(iops)
            trace: dict[str, Any] = {
                "type": "scatter",
                "mode": "markers",
                "name": run.name,
                "x": list(t),
                "y": y,
                "marker": {"size": 4, "color": colours[run.drive], "opacity": 0.85},
                "showlegend": False,
                "hovertemplate": "t = %{x:,} s<br><b>%{customdata:,.0f} IOPS</b><extra></extra>",
                "customdata": list(iops),
            }
            data = [trace]
            mean = run.figure("iops_steady_mean")
            shapes: list[dict[str, Any]] = []
            annotations: list[dict[str, Any]] = []
            if zoomed and mean is not None and (mean > 0 or not log):
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines",
                        "name": f"steady-state mean: {mean:,.0f} IOPS",
                        "x": [t[0], t[-1]] if t else [],
                        "y": [mean, mean],
                        "line": {"color": "#111827", "width": 1.5, "dash": "dash"},
                        "hovertemplate": f"steady-state mean: {mean:,.0f} IOPS<extra></extra>",
                    }
                )
            if not zoomed:
                z = run.zoom_start_s
                shapes.append(
                    {"type": "line", "x0": z, "x1": z, "yref": "paper", "y0": 0, "y1": 1,
                     "line": {"color": AXIS, "width": 1, "dash": "dot"}}
                )
                annotations.append(
                    {"x": z, "y": 1, "yref": "paper", "text": "steady-state zoom →", "showarrow": False,
                     "xanchor": "left", "yanchor": "top", "font": {"size": 11, "color": "#6b7280"}}
                )
            x0 = run.zoom_start_s if zoomed else 0.0
            x1 = max(run.duration_s, (t[-1] + 1) if t else 0.0)
            yaxis = (
                chart_axis("IOPS (log scale)", type="log", range=[math.log10(LOG_FLOOR_IOPS), log_top],
                           tickvals=[10**k for k in range(log_top + 1)],
                           ticktext=[_decade(k) for k in range(log_top + 1)])
                if log
                else chart_axis("IOPS", range=[0, linear_top], tickformat=",.0f")
            )
            specs.append(
                {
                    "data": data,
                    "layout": chart_layout(
                        chart_title(run.name, f"{_workload(run)}: {sub.format(zoom=run.zoom_start_s)}"),
                        chart_axis("Time (s)", range=[x0, x1]),
                        yaxis,
                        shapes=shapes,
                        annotations=annotations,
                        showlegend=len(data) > 1,
                    ),
                }
            )
        out.append(Chart(chart_id, specs, rows, [cells[i] for i in order]))
    return out


# --- the table and the sections ---------------------------------------------------------------


def _latency(us: float) -> str:
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}"


def _device(run: Run) -> Cell:
    return Cell(run.device or "simulated")


def table(runs: Sequence[Run]) -> Table | None:
    rows = [r for r in runs if isinstance(r, ConsistencyRun)]
    if not rows:
        return None
    out = Table(
        "summary-consistency",
        ["Run", "Drive", "Device", "Spare area", "Clean IOPS", "Steady mean IOPS", "Steady min IOPS",
         "WA", "Steady WA", "Latency p50 (µs)", "p99 (µs)", "p99.9 (µs)"],
        notes={
            "Clean IOPS": "mean IOPS over the first 10 s of random writes",
            "Steady mean IOPS": "mean IOPS from zoom_start_s to the end",
            "Steady min IOPS": "lowest one-second IOPS from zoom_start_s to the end",
            "WA": "NAND writes ÷ host writes over the random-write phase",
            "Steady WA": "NAND writes ÷ host writes from zoom_start_s to the end",
            "Latency p50 (µs)": "write latency percentiles of the random-write phase, microseconds",
        },
    )
    for run in rows:
        out.rows.append(
            [
                Cell(run.name),
                Cell(run.drive),
                _device(run),
                Cell(spare_label(run.spare_area_pct)),
                number_cell(run.figure("iops_clean"), ",.0f"),
                number_cell(run.figure("iops_steady_mean"), ",.0f"),
                number_cell(run.figure("iops_steady_min"), ",.0f"),
                number_cell(run.figure("write_amplification"), ".2f"),
                number_cell(run.figure("steady_write_amplification"), ".2f"),
                number_cell(run.figure("latency_us.p50"), _latency),
                number_cell(run.figure("latency_us.p99"), _latency),
                number_cell(run.figure("latency_us.p999"), _latency),
            ]
        )
    return out


def report_section(runs: Sequence[Run]) -> list[Section]:
    """The report's "Summary" table and "Performance consistency" charts (consistency runs)."""
    sections = []
    ctable = table(runs)
    if ctable:
        sections.append(
            Section("summary", "Summary", "The consistency runs' figures; hover a column header for its meaning.",
                    [ctable])
        )
    cons = charts(runs)
    if cons:
        durations = {r.figure("duration_s") for r in runs if isinstance(r, ConsistencyRun)}
        duration = durations.pop() if len(durations) == 1 else None
        lede = (
            "A secure-erased drive is filled sequentially, then written with random writes across the tested "
            "span for "
            + (f"{duration:g} s" if duration else "the run's duration")
            + "; IOPS are recorded every second. The first chart shows the whole run (log scale), the second "
            "zooms into steady state (log scale), the third shows the same zoom on a linear scale. "
            "Spare area is the share of user LBAs left unused. Each set keeps one scale for all drives."
        )
        sections.append(Section("consistency", "Performance consistency", lede, list(cons)))
    return sections
