"""Charts of results, in the style of the reviews: AnandTech's performance-consistency scatter
plots, HD Tach's write graph, and the reviews' bar charts (used vs new, worst-case WA).

Figures are built with `matplotlib.figure.Figure` and rendered by the Agg canvas directly, so
importing this module never touches pyplot's global backend or opens a window.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

__all__ = [
    "DPI",
    "FIGSIZE",
    "LOG_FLOOR",
    "PASS_COLOURS",
    "consistency_figures",
    "hdtach_figure",
]

FIGSIZE = (10.0, 4.5)
"""Chart size in inches."""
DPI = 110
LOG_FLOOR = 1.0
"""Seconds with fewer IOPS than this (i.e. none) are drawn at this value on log charts."""

_DOT = "#1f6fb4"
_ZERO = "#d62728"
_MEAN = "#444444"


def thousands(value: float, _pos: object = None) -> str:
    if value <= 0:
        return "0"
    if value < 1:
        return f"{value:g}"
    return f"{value:,.0f}"


def new_figure(title: str, subtitle: str) -> tuple[Figure, Axes]:
    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(subtitle, fontsize=9, color="#555555")
    ax.set_xlabel("Time (s)")
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return fig, ax


def _dot_size(n: int) -> float:
    """Marker area: small dots for long runs (as in the reviews), bigger ones for short runs."""
    return float(np.clip(3000.0 / max(n, 1), 4.0, 16.0))


def _scatter(ax: Axes, t: np.ndarray, iops: np.ndarray, *, log: bool) -> None:
    size = _dot_size(len(t))
    style = {"linewidths": 0, "clip_on": False, "zorder": 3}
    zero = iops < LOG_FLOOR
    if log:
        ax.scatter(t[~zero], iops[~zero], s=size, color=_DOT, label="IOPS in one second", **style)
        if zero.any():
            ax.scatter(
                t[zero],
                np.full(int(zero.sum()), LOG_FLOOR),
                s=size * 1.5,
                color=_ZERO,
                label=f"seconds with 0 IOPS, drawn at {LOG_FLOOR:g} ({int(zero.sum()):,})",
                **style,
            )
    else:
        ax.scatter(t, iops, s=size, color=_DOT, label="IOPS in one second", **style)


def _mantissa(v: float) -> int:
    return int(round(v / 10 ** np.floor(np.log10(v)))) if v > 0 else 0


def _log_axis(ax: Axes, iops: np.ndarray) -> None:
    ax.set_yscale("log")
    top = max(float(iops.max(initial=0)), 10.0)
    bottom = LOG_FLOOR if (iops < LOG_FLOOR).any() else max(float(iops.min(initial=top)), LOG_FLOOR)
    ax.set_ylim(bottom / 1.4, top * 1.4)
    ax.set_ylabel("IOPS (log scale)")
    decades = np.log10(top / bottom)
    if decades < 0.8:  # a steady state within a factor of ~6: evenly chosen round numbers
        ax.yaxis.set_major_locator(MaxNLocator(nbins=7, steps=[1, 2, 2.5, 5, 10]))
        ax.yaxis.set_major_formatter(FuncFormatter(thousands))
        ax.yaxis.set_minor_locator(NullLocator())
        return
    # Narrow ranges get more labelled minor ticks than a run spanning many decades.
    labelled = {2, 3, 5} if decades < 1.5 else {2, 5}
    narrow = decades < 1.5
    ax.yaxis.set_major_locator(LogLocator(base=10))
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10)) if narrow else (2.0, 5.0)))
    ax.yaxis.set_minor_formatter(
        FuncFormatter(lambda v, _p: thousands(v) if v >= 10 and _mantissa(v) in labelled else "")
    )
    ax.tick_params(axis="y", which="minor", labelsize=7, labelcolor="#666666")
    ax.grid(True, which="minor", color="#ececec", linewidth=0.6)


def _mean_line(ax: Axes, mean: Optional[float], x0: float, x1: float) -> None:
    if mean is None or not np.isfinite(mean) or mean <= 0:
        return
    ax.hlines(mean, x0, x1, colors=_MEAN, linestyles="--", linewidth=1.0, label=f"steady mean {mean:,.0f} IOPS")


def _legend(fig: Figure, ax: Axes) -> None:
    """The legend in one row under the plot, where it never hides a point."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    for handle in fig.legends[-1].legend_handles:
        if hasattr(handle, "set_sizes"):
            handle.set_sizes([20.0])


def consistency_figures(
    iops: pd.DataFrame,
    *,
    title: str,
    subtitle: str,
    zoom_start_s: float,
    steady_mean: Optional[float] = None,
) -> Dict[str, Figure]:
    """The three consistency charts of `iops` (columns ``time_s, iops``), keyed by file name.

    ``iops_log.png``: the whole run, log y. ``steady_log.png``: from `zoom_start_s` to the end,
    log y. ``steady_linear.png``: the same zoom, linear y from 0. Seconds with zero IOPS are drawn
    in red at `LOG_FLOOR` on the log charts.
    """
    t = iops["time_s"].to_numpy(np.float64)
    y = iops["iops"].to_numpy(np.float64)
    end = float(t[-1] + 1) if len(t) else 1.0
    zoom = t >= zoom_start_s
    figures: Dict[str, Figure] = {}

    fig, ax = new_figure(title, subtitle)
    _scatter(ax, t, y, log=True)
    _log_axis(ax, y)
    ax.set_xlim(0, end)
    if 0 < zoom_start_s < end:
        ax.axvline(zoom_start_s, color="#999999", linestyle=":", linewidth=1.0)
        ax.annotate(
            "steady-state zoom →",
            (zoom_start_s, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -10),
            textcoords="offset points",
            fontsize=8,
            color="#777777",
        )
    _legend(fig, ax)
    figures["iops_log.png"] = fig

    for name, log in (("steady_log.png", True), ("steady_linear.png", False)):
        fig, ax = new_figure(f"{title} · steady state", subtitle)
        tz, yz = t[zoom], y[zoom]
        _scatter(ax, tz, yz, log=log)
        if log:
            _log_axis(ax, yz)
        else:
            ax.set_ylim(0, max(float(yz.max(initial=0)), 1.0) * 1.1)
            ax.yaxis.set_major_locator(MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10], integer=True))
            ax.yaxis.set_major_formatter(FuncFormatter(thousands))
            ax.set_ylabel("IOPS")
        _mean_line(ax, steady_mean, zoom_start_s, end)
        ax.set_xlim(zoom_start_s, end)
        _legend(fig, ax)
        figures[name] = fig
    return figures


# -- HD Tach ---------------------------------------------------------------------------------------

PASS_COLOURS = ("#059669", "#dc2626", "#2563eb", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#475569")
"""Colours by HD Tach pass, in run order (clean first); the same as the HTML report's."""


_PASS_STYLES: tuple = ("-", "-", (0, (6, 3)), (0, (2, 2)), (0, (8, 3, 2, 3)))


def mb_s_axis(ax: Axes, top: float, *, axis: str = "y") -> None:
    """A linear MB/s (or ×) axis from 0 with round ticks and a little headroom."""
    top = max(top, 1e-9) * 1.12
    locator = MaxNLocator(nbins=8, steps=[1, 2, 2.5, 5, 10])
    if axis == "y":
        ax.set_ylim(0, top)
        ax.yaxis.set_major_locator(locator)
    else:
        ax.set_xlim(0, top)
        ax.xaxis.set_major_locator(locator)


def mb_text(value: float) -> str:
    """MB/s with three significant figures, as the reviews print them (6.93, 13.1, 171, 1,234)."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _pass_label(row: Mapping[str, Any], first: bool) -> str:
    text = f"{row['name']}: avg {row['avg_mb_s']:,.1f} MB/s"
    pct = row.get("pct_of_clean")
    if not first and pct is not None:
        text += f" ({pct:.0f}% of clean)"
    return text


def hdtach_figure(
    passes: pd.DataFrame, table: Sequence[Mapping[str, Any]], *, title: str, subtitle: str
) -> Figure:
    """HD Tach's write graph: MB/s (y, from 0) against position in % of the span (x, 0-100), one
    line per pass of `passes` (columns ``pass, position_pct, mb_s``). The legend shows each pass's
    average and its percentage of the clean pass, from `table` (``summary["passes"]``)."""
    fig, ax = new_figure(title, subtitle)
    stats = {str(row["name"]): row for row in table}
    names = list(dict.fromkeys(passes["pass"].astype(str)))
    for i, name in enumerate(names):
        rows = passes[passes["pass"].astype(str) == name]
        x = rows["position_pct"].to_numpy(np.float64)
        y = rows["mb_s"].to_numpy(np.float64)
        row = stats.get(name, {"name": name, "avg_mb_s": float(np.mean(y)) if len(y) else 0.0})
        colour = PASS_COLOURS[i % len(PASS_COLOURS)]
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
    fig.legend(
        handles, labels, loc="outside lower center", ncols=min(2, len(handles)), fontsize=8, frameon=False
    )
    return fig


# -- bar charts (the scenario modules' used vs new and worst-case WA) -------------------------------


def bar_figure(title: str, subtitle: str, n: int) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(FIGSIZE[0], 1.9 + 0.62 * n), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(subtitle, fontsize=9, color="#555555")
    ax.grid(True, axis="x", color="#d0d0d0", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0, labelsize=10)
    return fig, ax
