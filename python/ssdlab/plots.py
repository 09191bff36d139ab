"""Charts of results, in the style of the reviews: the reviews' bar charts (used vs new,
worst-case WA), and what the scenario modules' charts share (`new_figure`,
`thousands`, `bar_figure`, `mb_s_axis`); the performance-consistency scatter plots live in
`ssdlab.scenarios.consistency_result`.

Figures are built with `matplotlib.figure.Figure` and rendered by the Agg canvas directly, so
importing this module never touches pyplot's global backend or opens a window.
"""

from __future__ import annotations

from typing import Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ssdlab import moved

__all__ = [
    "DPI",
    "FIGSIZE",
    "PASS_COLOURS",
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


# -- MB/s axes, and the passes' colours (HD Tach's write graph is ssdlab.scenarios.hdtach's) -------

PASS_COLOURS = ("#059669", "#dc2626", "#2563eb", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#475569")
"""Colours by HD Tach pass, in run order (clean first); the same as the HTML report's."""


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


_MOVED = {
    "consistency_figures": "ssdlab.scenarios.consistency_result:consistency_figures",
    "LOG_FLOOR": "ssdlab.scenarios.consistency_result:LOG_FLOOR",
}
"""The consistency charts, now in their scenario module (ssdlab.fio.resultdir imports them from here)."""


def __getattr__(name: str) -> Any:
    """The names in `_MOVED` resolve to their scenario module."""
    return moved.resolve(__name__, name, _MOVED)
