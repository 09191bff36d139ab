"""PTS's response-time histograms, from the core's HdrHistogram buckets.

A phase run with ``latency_histogram`` returns its reads' and writes' response times as buckets
``[lowest ns, highest ns, count]`` in increasing order (the core's `LatencyRecorder::buckets`: 3
significant digits from 1 ns to an hour, so a bucket spans at most 1/1024 of its values). Buckets
of several phases of one histogram configuration add up key by key (`merge`), so a window's
histogram is the sum of its rounds'. Percentiles are read the way HdrHistogram reads them: the
highest value of the bucket that holds rank ⌈p/100 · N⌉ (`percentile_us`).

This module writes them as CSV (`frame`: ``point, low_us, high_us, count, cumulative_pct``) and
plots them (`histogram_figure`: counts per log-spaced bin and the cumulative share, PTS's
"Response Time Histogram – Confidence Level Plot"; `confidence_figure`: the share of responses
slower than a time, down to 10⁻⁵, one line per point).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Dict, Iterable, List, Mapping, Sequence

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["COLUMNS", "confidence_figure", "frame", "histogram_figure", "merge", "percentile_us"]

COLUMNS = ("point", "low_us", "high_us", "count", "cumulative_pct")
Buckets = List[List[int]]


def merge(parts: Iterable[Sequence[Sequence[int]]]) -> Buckets:
    """The buckets of several histograms of one configuration as one (counts added per bucket)."""
    acc: Dict[int, List[int]] = {}
    for part in parts:
        for low, high, count in part:
            b = acc.setdefault(int(low), [int(low), int(high), 0])
            b[2] += int(count)
    return [acc[k] for k in sorted(acc)]


def percentile_us(buckets: Sequence[Sequence[int]], pct: float) -> float:
    """The response time at `pct` percent, in µs: the highest value of the bucket holding rank
    ⌈pct/100 · N⌉ (HdrHistogram's ``value_at_percentile``)."""
    total = sum(int(b[2]) for b in buckets)
    if total == 0:
        return 0.0
    rank = max(1, math.ceil(pct / 100.0 * total))
    seen = 0
    for low, high, count in buckets:
        seen += int(count)
        if seen >= rank:
            return int(high) / 1e3
    return int(buckets[-1][1]) / 1e3


def frame(histograms: Mapping[str, Sequence[Sequence[int]]]) -> pd.DataFrame:
    """`histograms` (point name -> buckets) as one table: a row per bucket, with the share of the
    point's responses at or below the bucket's top (``cumulative_pct``)."""
    import pandas as pd

    rows = []
    for name, buckets in histograms.items():
        total = sum(int(b[2]) for b in buckets) or 1
        seen = 0
        for low, high, count in buckets:
            seen += int(count)
            rows.append({"point": name, "low_us": int(low) / 1e3, "high_us": int(high) / 1e3, "count": int(count),
                         "cumulative_pct": 100.0 * seen / total})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _of(table: pd.DataFrame, name: str) -> pd.DataFrame:
    return table[table["point"] == name]


def histogram_figure(table: pd.DataFrame, names: Sequence[str], *, title: str, subtitle: str) -> Figure:
    """One panel per point of `names`: the response counts in 20 log-spaced bins per decade (bars,
    log count axis) and the cumulative share of responses (line, right axis), with the mean, the
    99.999th percentile and the maximum marked."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import DPI, FIGSIZE, thousands

    width, height = FIGSIZE
    fig = Figure(figsize=(width, max(height, 2.6 * len(names))), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(names), 1, squeeze=False)[:, 0]
    fig.suptitle(title, fontsize=13, fontweight="bold")
    t = table
    lo = float(t["low_us"].min()) if len(t) else 1.0
    hi = float(t["high_us"].max()) if len(t) else 10.0
    per = 20  # bins per decade
    edges = 10 ** np.arange(math.floor(math.log10(max(lo, 1e-3)) * per) / per,
                            math.ceil(math.log10(max(hi, lo * 1.01)) * per) / per + 1 / per, 1 / per)
    for ax, name in zip(axes, names):
        rows = _of(t, name)
        mids = (rows["low_us"] + rows["high_us"]) / 2
        counts, _ = np.histogram(mids, bins=edges, weights=rows["count"])
        ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#93c5fd", edgecolor="#2563eb",
               linewidth=0.5, label="responses per bin")
        if not len(rows):
            ax.set_xlim(1.0, 1e5)
        ax.set_xscale("log")
        if len(counts) and float(counts.max()) > 0:
            ax.set_yscale("log")
            ax.set_ylim(0.8, float(counts.max()) * 3)
        else:  # a device run: fio gives no histogram of its own here
            ax.text(0.5, 0.5, "no response-time histogram recorded", transform=ax.transAxes, ha="center",
                    va="center", color="#6b7280")
        ax.yaxis.set_major_formatter(FuncFormatter(thousands))
        ax.set_ylabel("responses")
        ax.grid(True, which="major", color="#e5e7eb", linewidth=0.8)
        for side in ("top",):
            ax.spines[side].set_visible(False)
        total = int(rows["count"].sum())
        buckets = rows[["low_us", "high_us", "count"]].to_numpy()
        mean = float((mids * rows["count"]).sum() / total) if total else 0.0
        p5 = percentile_us([[int(round(a * 1e3)), int(round(b * 1e3)), int(c)] for a, b, c in buckets], 99.999)
        top = float(rows["high_us"].max()) if total else 0.0
        cum = ax.twinx()
        cum.plot(rows["high_us"], rows["cumulative_pct"], color="#dc2626", linewidth=1.2, label="cumulative %")
        cum.set_ylim(0, 100.5)
        cum.set_ylabel("cumulative %", color="#dc2626", fontsize=9)
        for value, style, what in ((mean, "-", "mean"), (p5, "--", "99.999 %"), (top, ":", "max")):
            ax.axvline(value, color="#111827", linestyle=style, linewidth=1.0, label=f"{what} {value:,.0f} µs")
        ax.text(0.99, 0.94, f"{name}: {total:,} responses", transform=ax.transAxes, ha="right", va="top", fontsize=9,
                fontweight="bold", bbox={"facecolor": "white", "edgecolor": "#d0d0d0", "alpha": 0.9})
        ax.legend(loc="upper left", fontsize=7.5, framealpha=0.9)
    axes[0].set_title(subtitle, fontsize=8.5, color="#555555")
    axes[-1].set_xlabel("response time (µs, log)")
    return fig


def confidence_figure(table: pd.DataFrame, names: Sequence[str], *, title: str, subtitle: str) -> Figure:
    """The share of responses slower than each time (1 − cumulative, log) against the response
    time (log), one line per point, down to 10⁻⁵ (the 99.999th percentile, PTS's "5 9s")."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import new_figure
    from ssdlab.pts.charts import COLOURS

    fig, ax = new_figure(title, subtitle)
    floor = 1e-6
    for i, name in enumerate(names):
        rows = _of(table, name)
        slower = (1.0 - rows["cumulative_pct"] / 100.0).clip(lower=floor)
        ax.step(rows["high_us"], slower, where="post", color=COLOURS[i % len(COLOURS)], linewidth=1.3, label=name,
                linestyle=("-", "--", ":")[(i // len(COLOURS)) % 3])
    ax.axhline(1e-5, color="#6b7280", linestyle="--", linewidth=1.0, label="99.999 % (5 9s)")
    if not len(table):  # a device run: no histogram recorded
        ax.set_xlim(1.0, 1e5)
        ax.text(0.5, 0.5, "no response-time histogram recorded", transform=ax.transAxes, ha="center",
                va="center", color="#6b7280")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(floor * 0.8, 1.2)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{100 * v:g} %"))
    ax.set_xlabel("response time (µs, log)")
    ax.set_ylabel("responses slower than this")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.9)
    return fig
