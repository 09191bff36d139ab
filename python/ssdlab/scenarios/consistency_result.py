"""The result of ``ssdlab consistency`` (`ConsistencyResult`) and its three charts.

A consistency result directory (docs/results.md, section *consistency*) holds ``iops.csv``,
``series.csv``, ``summary.json`` and three scatter plots of IOPS per second in the style of
AnandTech's performance-consistency charts (``iops_log.png``, ``steady_log.png``,
``steady_linear.png``). The same files come from a simulated drive (`ConsistencyResult.from_run`)
and from a real device through fio (``ssdlab.fio.device.DeviceConsistencyResult``, a subclass),
so the file names, columns and summary keys below are the contract of both.

The rest of the scenario (options, steps, API, command, sweep) is in
`ssdlab.scenarios.consistency`, its part of the HTML report in
`ssdlab.scenarios.consistency_report`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import numpy as np

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.results import MIB, PathLike, ProcedureResult, plain, read_csv, read_summary
from ssdlab.sizes import format_size

if TYPE_CHECKING:  # pandas and matplotlib are imported where a frame or a chart is made
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ssdlab.config import DriveConfig
    from ssdlab.simulate import StepResult

__all__ = [
    "CHART_FILES",
    "CONSISTENCY_FILES",
    "FILES",
    "IOPS_COLUMNS",
    "LATENCY_KEYS",
    "LOG_FLOOR",
    "SERIES_COLUMNS",
    "SUMMARY_KEYS",
    "ConsistencyResult",
    "burst_seconds",
    "consistency_figures",
]

IOPS_COLUMNS = ("time_s", "iops")
SERIES_COLUMNS = (
    "time_s",
    "iops",
    "host_mib",
    "nand_mib",
    "gc_mib",
    "erases",
    "write_amplification",
    "mean_latency_us",
)
SUMMARY_KEYS = (
    "scenario",
    "label",
    "drive",
    "device",
    "seed",
    "ssdlab_version",
    "wall_seconds",
    "user_capacity_bytes",
    "op",
    "effective_spare_factor",
    "spare_area_pct",
    "gc_policy",
    "duration_s",
    "qd",
    "block_size",
    "host_write_bytes",
    "nand_write_bytes",
    "write_amplification",
    "steady_write_amplification",
    "iops_clean",
    "burst_s",
    "iops_steady_mean",
    "iops_steady_min",
    "zoom_start_s",
    "latency_us",
    "fill_seconds",
)
LATENCY_KEYS = ("p50", "p99", "p999", "max", "mean")
CHART_FILES = ("iops_log.png", "steady_log.png", "steady_linear.png")
CONSISTENCY_FILES = ("iops.csv", "series.csv", "summary.json", *CHART_FILES)
FILES = CONSISTENCY_FILES


def burst_seconds(iops: Sequence[int]) -> int:
    """Seconds of a fresh drive's burst: until the first second below half the best of the first
    three (the cliff), or the whole run if there is none. The core's `scenario::burst_seconds`
    applies the same rule to simulated runs; this one serves runs on real devices."""
    best = max(list(iops[:3]) or [0])
    for i, n in enumerate(iops):
        if 2 * n < best:
            return i
    return len(iops)


# -- the result ------------------------------------------------------------------------------------


class ConsistencyResult(ProcedureResult):
    """The performance-consistency test's result (docs/results.md, section *consistency*).

    Attributes:
        iops: DataFrame ``time_s, iops``, one row per simulated second of the random writes.
        series: DataFrame ``time_s, iops, host_mib, nand_mib, gc_mib, erases,
            write_amplification, mean_latency_us`` per second (`write_amplification` and
            `mean_latency_us` are NaN in seconds without host writes or completions).
        summary: the figures of ``summary.json``, keys in `SUMMARY_KEYS` order.
        config: the simulated `DriveConfig` (None for a loaded result).
        steps: the `StepResult` of every step (empty for a loaded result).
    """

    SCENARIOS = ("consistency",)
    FILES = FILES

    def __init__(
        self,
        iops: pd.DataFrame,
        series: pd.DataFrame,
        summary: Dict[str, Any],
        *,
        config: Optional[DriveConfig] = None,
        steps: Optional[List[StepResult]] = None,
    ) -> None:
        self.iops = iops
        self.series = series
        super().__init__(summary, config=config, steps=steps)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<ConsistencyResult {s['label']!r}: clean {s['iops_clean']:,.0f} IOPS, steady mean "
            f"{s['iops_steady_mean']:,.0f} / min {s['iops_steady_min']:,} IOPS, WA {s['write_amplification']:.2f}>"
        )

    @classmethod
    def from_run(
        cls,
        *,
        config: DriveConfig,
        steps: List[StepResult],
        core_summary: Dict[str, Any],
        spare_area_pct: float,
        duration_s: float,
        qd: int,
        block_size: int,
        seed: int,
        wall_seconds: float,
        label: Optional[str] = None,
    ) -> ConsistencyResult:
        """Assembles the result of a finished run (see `ssdlab.scenarios.consistency.consistency`)."""
        import pandas as pd

        runs = [s for s in steps if s.series is not None]
        if len(runs) < 2 or runs[-1].series is None:
            raise SsdlabError("the consistency run returned no fill and random-write phases")
        fill, random = runs[-2], runs[-1]
        assert random.series is not None
        if random.interval_s != 1.0:
            raise SsdlabError(f"the random-write series has {random.interval_s} s intervals; expected 1 s")
        seconds = math.ceil(duration_s)
        raw = random.series.reindex(range(seconds), fill_value=0)
        ios = (raw["read_ios"] + raw["write_ios"] + raw["trim_ios"]).to_numpy(np.int64)
        layout = config.describe()
        unit_bytes = layout["physical_capacity_bytes"] // (
            layout["dies"] * layout["blocks_per_die"] * layout["units_per_block"]
        )
        time_s = np.arange(seconds, dtype=np.int64)
        host = raw["host_bytes"].to_numpy(np.float64) / 4096  # host data in units' worth (WA: NAND over host bytes)
        nand = raw["nand_units"].to_numpy(np.float64)
        latency_sum = (raw["read_latency_sum_ns"] + raw["write_latency_sum_ns"] + raw["trim_latency_sum_ns"]).to_numpy(
            np.float64
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            wa = np.where(host > 0, nand / np.where(host > 0, host, 1), np.nan)
            mean_latency_us = np.where(ios > 0, latency_sum / np.where(ios > 0, ios, 1) / 1000.0, np.nan)
        iops = pd.DataFrame({"time_s": time_s, "iops": ios})
        series = pd.DataFrame(
            {
                "time_s": time_s,
                "iops": ios,
                "host_mib": host * unit_bytes / MIB,
                "nand_mib": nand * unit_bytes / MIB,
                "gc_mib": raw["gc_units"].to_numpy(np.float64) * unit_bytes / MIB,
                "erases": raw["erases"].to_numpy(np.int64),
                "write_amplification": wa,
                "mean_latency_us": mean_latency_us,
            }
        )
        if label is None:
            label = f"{config.name} · {spare_area_pct:g}% spare area"
        c = core_summary
        summary: Dict[str, Any] = {
            "scenario": "consistency",
            "label": label,
            "drive": config.name,
            "device": None,
            "seed": seed,
            "ssdlab_version": _core.__version__,
            "wall_seconds": wall_seconds,
            "user_capacity_bytes": layout["user_capacity_bytes"],
            "op": layout["op"],
            "effective_spare_factor": config.spare(seed)["effective_spare_factor"],
            "spare_area_pct": spare_area_pct,
            "gc_policy": config.ftl.gc_policy,
            "duration_s": duration_s,
            "qd": qd,
            "block_size": block_size,
            "host_write_bytes": c["host_write_bytes"],
            "nand_write_bytes": c["nand_write_bytes"],
            "write_amplification": c["write_amplification"],
            "steady_write_amplification": c["steady_write_amplification"],
            "iops_clean": c["iops_clean"],
            "burst_s": c["burst_s"],
            "iops_steady_mean": c["iops_steady_mean"],
            "iops_steady_min": c["iops_steady_min"],
            "zoom_start_s": c["zoom_start_s"],
            "latency_us": {k: c["latency_us"][k] for k in LATENCY_KEYS},
            "fill_seconds": fill.duration_s,
        }
        return cls(iops, series, plain(summary), config=config, steps=steps)

    @classmethod
    def load(cls, directory: PathLike) -> ConsistencyResult:
        """Reads a saved result directory back (without its config and steps)."""
        d = Path(directory)
        summary = read_summary(d, cls.SCENARIOS)
        iops = read_csv(d, "iops.csv", IOPS_COLUMNS, finite=IOPS_COLUMNS)
        series = read_csv(d, "series.csv", SERIES_COLUMNS, finite=("time_s", "iops"))
        return cls(iops, series, summary)

    # -- charts and files ------------------------------------------------------------------------

    def subtitle(self) -> str:
        """One line of run parameters for chart subtitles."""
        s = self.summary
        device = f"device {s['device']}" if s.get("device") else f"seed {s['seed']}"
        return (
            f"{format_size(int(s['block_size']))} random writes, QD{s['qd']} · "
            f"{format_size(int(s['user_capacity_bytes']))} user, {100 * s['op']:.1f}% OP, "
            f"{s['gc_policy']} GC · {device} · ssdlab {s['ssdlab_version']}"
        )

    def charts(self) -> Dict[str, Figure]:
        """The three consistency charts as matplotlib figures, keyed by file name."""
        s = self.summary
        return consistency_figures(
            self.iops,
            title=str(s["label"]),
            subtitle=self.subtitle(),
            zoom_start_s=float(s["zoom_start_s"]),
            steady_mean=float(s["iops_steady_mean"]),
        )

    def _write_frames(self, staging: Path) -> None:
        self.iops.to_csv(staging / "iops.csv", index=False)
        self.series.to_csv(staging / "series.csv", index=False, float_format="%.10g")


# -- the charts (iops_log.png, steady_log.png, steady_linear.png) ----------------------------------

LOG_FLOOR = 1.0
"""Seconds with fewer IOPS than this (i.e. none) are drawn at this value on log charts."""

_DOT = "#1f6fb4"
_ZERO = "#d62728"
_MEAN = "#444444"


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
    from ssdlab.plots import thousands  # first: see consistency_figures

    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

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
    in red at `LOG_FLOOR` on the log charts. (``ssdlab fio`` draws its per-job IOPS charts with it.)
    """
    # ssdlab.plots first: the preload thread may be importing it (and matplotlib) right now, and its
    # module lock makes this thread wait until matplotlib is whole (ssdlab.preload).
    from ssdlab.plots import new_figure, thousands

    from matplotlib.ticker import FuncFormatter, MaxNLocator

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
