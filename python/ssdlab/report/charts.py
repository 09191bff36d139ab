"""The report's charts as plotly specs, and the buttons that switch between them.

One job: from loaded runs, decide what each chart shows: the traces (the numbers), their axes and
titles, and for switchable charts which button combination shows which spec. A :class:`Chart` is
plain data (JSON-ready dicts in plotly.js's own format); ``page.py`` turns it into HTML and the
page's script draws ``specs[i]`` when the buttons select ``keys[i]``.

Consistency charts follow the review pages: three views (whole run on a log scale, the steady-state
zoom from ``zoom_start_s`` on a log scale, the same zoom on a linear scale), each with a row of drive
buttons and a row of spare-area buttons ("Default", "25% Spare Area"). Every view keeps one scale for
all runs so that switching compares like with like.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from .load import ConsistencyRun, HdtachRun, Pass, Run, spare_label

__all__ = [
    "ALL_PASSES",
    "Chart",
    "consistency_charts",
    "drive_keys",
    "hdtach_chart",
]

#: Colours by drive, in the order drives first appear (colour-blind-friendly where it matters).
PALETTE = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569")
#: Colours by HD Tach pass, in run order (clean first).
PASS_COLOURS = ("#059669", "#dc2626", "#2563eb", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#475569")
ALL_PASSES = "All passes"
#: Log-scale views draw a second with 0 IOPS (a stall) at this value; hover shows the true value.
LOG_FLOOR_IOPS = 1.0

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
GRID = "#e5e7eb"
AXIS = "#9ca3af"


@dataclass
class Chart:
    """A plotly chart, switchable by rows of buttons.

    ``rows`` are ``(row name, button labels)``; ``keys[i]`` holds one button index per row and
    selects ``specs[i]`` (``{"data": [...], "layout": {...}}``). A chart without rows has one spec
    under the key ``()``. The first key is shown first.
    """

    id: str
    specs: list[dict[str, Any]]
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    keys: list[tuple[int, ...]] = field(default_factory=list)
    caption: str = ""

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = [()] * len(self.specs)
        if len(self.keys) != len(self.specs):
            raise ValueError("a chart needs one key per spec")

    def spec(self, *labels: str) -> dict[str, Any]:
        """The spec shown when the buttons with these labels (one per row) are selected."""
        key = tuple(self.rows[r][1].index(label) for r, label in enumerate(labels))
        return self.specs[self.keys.index(key)]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "keys": [list(k) for k in self.keys], "specs": self.specs}


# --- small helpers -------------------------------------------------------------------------------


def chart_text(text: str) -> str:
    """Plain text for plotly's title/hover markup (which reads <b>, <br>, entities)."""
    return html.escape(text, quote=False)


def chart_title(main: str, sub: str) -> dict[str, Any]:
    return {
        "text": f"<b>{chart_text(main)}</b><br><span style='font-size:13px;color:#6b7280'>{chart_text(sub)}</span>",
        "x": 0.0,
        "xanchor": "left",
        "xref": "paper",
        "font": {"size": 17},
    }


def chart_axis(title: str, **extra: Any) -> dict[str, Any]:
    axis = {
        "title": {"text": title, "standoff": 8},
        "gridcolor": GRID,
        "linecolor": AXIS,
        "zeroline": False,
        "ticks": "outside",
        "tickcolor": AXIS,
        "showline": True,
        "mirror": False,
    }
    axis.update(extra)
    return axis


def chart_layout(title: dict[str, Any], xaxis: dict[str, Any], yaxis: dict[str, Any], **extra: Any) -> dict[str, Any]:
    layout = {
        "title": title,
        "xaxis": xaxis,
        "yaxis": yaxis,
        "height": 440,
        "margin": {"l": 72, "r": 24, "t": 76, "b": 56},
        "font": {"family": FONT, "size": 13, "color": "#111827"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT}},
        "showlegend": False,
        "legend": {"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.02, "yanchor": "bottom"},
    }
    layout.update(extra)
    return layout


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is at least ``value`` (an axis top)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exp = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        top = step * 10**exp
        if top >= value * (1 - 1e-12):
            return float(top)
    return float(10 ** (exp + 1))  # pragma: no cover - the loop always returns


def format_bytes(n: float | None) -> str:
    """4096 -> '4 KiB' (binary units, as the CLI's sizes)."""
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"  # pragma: no cover


def _decade(k: int) -> str:
    """10**k as an axis label: 1, 10, 100, 1K, 10K, 100K, 1M."""
    return {0: "1", 1: "10", 2: "100"}.get(k) or (f"{10 ** (k - 3):g}K" if k < 6 else f"{10 ** (k - 6):g}M")


def _colours(runs: Sequence[Run]) -> dict[str, str]:
    """One colour per drive, stable across every chart of the report."""
    out: dict[str, str] = {}
    for run in runs:
        out.setdefault(run.drive, PALETTE[len(out) % len(PALETTE)])
    return out


# --- grouping ------------------------------------------------------------------------------------

#: Fields that can tell apart two runs of one drive at one spare-area setting, in order of preference.
_DISTINGUISHING = (
    ("device", lambda v: str(v)),
    ("gc_policy", lambda v: str(v)),
    ("qd", lambda v: f"QD{v:g}" if isinstance(v, (int, float)) else f"QD{v}"),
    ("block_size", lambda v: f"{format_bytes(v)} blocks" if isinstance(v, (int, float)) else str(v)),
    ("user_capacity_bytes", lambda v: format_bytes(v) if isinstance(v, (int, float)) else str(v)),
    ("duration_s", lambda v: f"{v:g} s" if isinstance(v, (int, float)) else str(v)),
    ("seed", lambda v: f"seed {v}"),
)


def drive_keys(runs: Sequence[Run], setting=lambda r: r.spare_area_pct) -> list[str]:
    """The drive-button label of each run.

    Runs group by ``drive``; when a drive has two runs with the same ``setting`` (the other button
    row, spare area by default), all its runs get the first summary field that tells them apart
    (device, GC policy, QD, ...) appended, else their directory name.
    """
    labels = [r.drive for r in runs]
    by_drive: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        by_drive.setdefault(run.drive, []).append(i)
    for drive, idx in by_drive.items():
        settings = [setting(runs[i]) for i in idx]
        if len(set(settings)) == len(settings):
            continue
        for key, fmt in _DISTINGUISHING:
            values = [runs[i].summary.get(key) for i in idx]
            pairs = list(zip(settings, map(repr, values)))
            if len(set(pairs)) == len(pairs):
                for i, v in zip(idx, values):
                    labels[i] = f"{drive} · {fmt(v)}" if v is not None else drive
                break
        else:
            for i in idx:
                labels[i] = f"{drive} · {runs[i].path.name}"
    # still ambiguous (e.g. same directory name twice): fall back to the unique run names
    seen: dict[tuple[str, Any], int] = {}
    for i, run in enumerate(runs):
        seen[(labels[i], setting(run))] = seen.get((labels[i], setting(run)), 0) + 1
    return [run.name if seen[(lab, setting(run))] > 1 else lab for lab, run in zip(labels, runs)]


# --- consistency ---------------------------------------------------------------------------------

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


def consistency_charts(runs: Sequence[Run]) -> list[Chart]:
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

    charts = []
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
        charts.append(Chart(chart_id, specs, rows, [cells[i] for i in order]))
    return charts


# --- HD Tach / torture ---------------------------------------------------------------------------


def hdtach_chart(runs: Sequence[Run]) -> Chart | None:
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
