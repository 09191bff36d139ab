"""The PTS report's common plots (matplotlib, imported inside each function so the CLI starts fast):

- the steady-state convergence plot: a variable per round, one line per series, the
  measurement window shaded;
- the steady-state measurement-window plot of one tracking variable: its value in the window's
  rounds, the window average with its 110 % and 90 % bands, the least-squares fit line, and the
  determination table (average, allowed and measured range and slope excursion, the fit formula);
- the 2D plot: a variable against block size, one line per R/W mix, log-log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Sequence

from ssdlab.sizes import format_size

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ssdlab.pts.steady import Window

__all__ = ["convergence_figure", "three_d_figure", "two_d_figure", "window_figure"]

COLOURS = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#475569")


def _int_ticks(ax, axis: str = "x") -> None:
    from matplotlib.ticker import MaxNLocator

    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(MaxNLocator(integer=True))


def convergence_figure(series: Dict[str, Sequence[float]], *, window: Sequence[int], steady: bool, title: str,
                       subtitle: str, ylabel: str = "IOPS", log: bool = True) -> Figure:
    """`series` (name -> value in rounds 1, 2, ...) against the round number; the measurement
    window's rounds shaded (green when steady, red when not)."""
    from ssdlab.plots import new_figure, thousands
    from matplotlib.ticker import FuncFormatter

    fig, ax = new_figure(title, subtitle)
    first, last = window
    ax.axvspan(first - 0.5, last + 0.5, color="#059669" if steady else "#dc2626", alpha=0.08, linewidth=0,
               label=f"measurement window, rounds {first}-{last} ({'steady' if steady else 'not steady'})")
    for i, (name, ys) in enumerate(series.items()):
        ax.plot(range(1, len(ys) + 1), ys, marker="o", markersize=3.5, linewidth=1.3,
                color=COLOURS[i % len(COLOURS)], label=name)
    if log and all(y > 0 for ys in series.values() for y in ys):
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, max((max(ys) for ys in series.values() if ys), default=1.0) * 1.1 or 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("Round")
    ax.set_ylabel(ylabel)
    _int_ticks(ax)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.9)
    return fig


def window_figure(w: Window, *, name: str, title: str, subtitle: str, ylabel: str = "IOPS") -> Figure:
    """The measurement-window plot of tracking variable `name` (`w`, `ssdlab.pts.steady.Window`),
    with the determination table beside it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import DPI, FIGSIZE, thousands

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax, tax = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.6, 1.0]})
    fig.suptitle(title, fontsize=13, fontweight="bold")
    ax.set_title(subtitle, fontsize=8.5, color="#555555", loc="left")
    ax.grid(True, which="major", color="#d0d0d0", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    xs = w.rounds
    ax.plot(xs, w.values, marker="o", color="#2563eb", linewidth=1.5, label=name, zorder=3)
    ax.axhline(w.average, color="#111827", linewidth=1.2, label="average")
    ax.axhline(1.1 * w.average, color="#6b7280", linewidth=1.0, linestyle="--", label="110 % of average")
    ax.axhline(0.9 * w.average, color="#6b7280", linewidth=1.0, linestyle=":", label="90 % of average")
    ax.plot([xs[0], xs[-1]], [w.fit(xs[0]), w.fit(xs[-1])], color="#dc2626", linewidth=1.2,
            label="least-squares fit")
    top = max(max(w.values), 1.1 * w.average) * 1.3 if w.average > 0 else 1.0
    ax.set_ylim(0, top)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("Round")
    ax.set_ylabel(ylabel)
    ax.set_xlim(xs[0] - 0.5, xs[-1] + 0.5)
    _int_ticks(ax)
    ax.legend(loc="lower left", fontsize=8, ncol=2, framealpha=0.95)
    verdict = "steady" if w.steady else "NOT steady"
    sign = "−" if w.intercept < 0 else "+"
    rows = [("Average", f"{w.average:,.1f}"),
            ("Data excursion allowed (20 %)", f"{w.range_limit:,.1f}"),
            ("Data excursion measured", f"{w.range:,.1f}" + ("" if w.range_ok else " ✗")),
            ("Slope excursion allowed (10 %)", f"{w.excursion_limit:,.1f}"),
            ("Slope excursion measured", f"{w.excursion:,.1f}" + ("" if w.slope_ok else " ✗")),
            ("Least-squares fit", f"{w.slope:,.2f}·x {sign} {abs(w.intercept):,.0f}"),
            ("Measurement window", f"rounds {w.first_round}-{w.last_round}"),
            ("Determination", verdict)]
    tax.axis("off")
    table = tax.table(cellText=[list(r) for r in rows], colWidths=[0.6, 0.4], loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1.0, 1.6)
    for (row, _col), cell in table.get_celld().items():
        cell.set_edgecolor("#d0d0d0")
        if row == len(rows) - 1:
            cell.set_facecolor("#dcfce7" if w.steady else "#fee2e2")
    return fig


def two_d_figure(curves: Dict[str, Dict[int, float]], *, title: str, subtitle: str, ylabel: str = "IOPS") -> Figure:
    """`curves` (mix -> block size in bytes -> value) against block size, log-log, one line per mix."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    from ssdlab.plots import new_figure, thousands

    fig, ax = new_figure(title, subtitle)
    sizes = sorted({b for c in curves.values() for b in c})
    for i, (mix, values) in enumerate(curves.items()):
        bs = sorted(values)
        ax.plot(bs, [values[b] for b in bs], marker="o", markersize=3.5, linewidth=1.3,
                color=COLOURS[i % len(COLOURS)], label=mix)
    ax.set_xscale("log", base=2)
    if all(v > 0 for c in curves.values() for v in c.values()):
        ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: format_size(int(v)).replace(" ", "\u00a0")))
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("Block size")
    ax.set_ylabel(ylabel)
    ax.legend(title="R/W mix", loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.9)
    return fig


def three_d_figure(table: Dict[str, Dict[int, float]], *, title: str, subtitle: str, zlabel: str = "IOPS"
                   ) -> Figure:
    """PTS's 3D column plot: `table` (mix -> block size in bytes -> value) as one column per
    (block size, mix), block sizes from large to small along x and the mixes in PTS's order along
    y, heights on a linear scale (as the spec's report draws them); each mix its colour."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import DPI, FIGSIZE, thousands

    fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * 1.15), dpi=DPI)
    FigureCanvasAgg(fig)
    fig.text(0.5, 0.975, title, fontsize=13, fontweight="bold", ha="center", va="top")
    fig.text(0.5, 0.925, subtitle, fontsize=8.5, color="#555555", ha="center", va="top")
    ax = fig.add_axes((-0.06, -0.08, 1.12, 1.0), projection="3d")
    ax.set_box_aspect((2.4, 1.5, 1.0), zoom=1.05)
    mixes = list(table)
    sizes = sorted({b for c in table.values() for b in c}, reverse=True)
    for j, mix in enumerate(mixes):
        for i, b in enumerate(sizes):
            z = float(table[mix].get(b, 0.0))
            ax.bar3d(i - 0.35, j - 0.35, 0.0, 0.7, 0.7, z, color=COLOURS[j % len(COLOURS)], alpha=0.9, shade=True,
                     edgecolor="#1f2937", linewidth=0.2)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([format_size(b).replace(" ", "\u00a0") for b in sizes], fontsize=7, rotation=0)
    ax.set_yticks(range(len(mixes)))
    ax.set_yticklabels(mixes, fontsize=7)
    ax.zaxis.set_major_formatter(FuncFormatter(thousands))
    ax.tick_params(axis="z", labelsize=7)
    ax.set_xlabel("Block size", fontsize=8, labelpad=6)
    ax.set_ylabel("R/W mix", fontsize=8, labelpad=6)
    ax.set_zlabel(zlabel, fontsize=8, labelpad=8)
    ax.view_init(elev=24, azim=-58)
    return fig
