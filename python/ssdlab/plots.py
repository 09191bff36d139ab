"""Charts of results, in the style of the reviews: HD Tach's write graph and the reviews' bar charts
(used vs new, worst-case WA), and what the scenario modules' charts share (`new_figure`,
`thousands`, `bar_figure`, `mb_s_axis`); the performance-consistency scatter plots live in
`ssdlab.scenarios.consistency_result`.

Figures are built with `matplotlib.figure.Figure` and rendered by the Agg canvas directly, so
importing this module never touches pyplot's global backend or opens a window.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

__all__ = [
    "DPI",
    "FIGSIZE",
    "PASS_COLOURS",
    "hdtach_figure",
]

FIGSIZE = (10.0, 4.5)
"""Chart size in inches."""
DPI = 110


def thousands(value: float, _pos: object = None) -> str:
    """An axis label: 0, 0.5, 1, 1,000."""
    if value <= 0:
        return "0"
    if value < 1:
        return f"{value:g}"
    return f"{value:,.0f}"


def new_figure(title: str, subtitle: str) -> tuple[Figure, Axes]:
    """A figure of `FIGSIZE` with one plot: the title, the subtitle, a time axis and a light grid."""
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


def __getattr__(name: str) -> Any:
    """The consistency charts moved to their scenario module; the old names still resolve."""
    if name in ("consistency_figures", "LOG_FLOOR"):
        from ssdlab.scenarios import consistency_result

        return getattr(consistency_result, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
