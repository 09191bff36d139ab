"""A trace replay's result: per-interval series, latency percentiles per direction, the summary,
and the chart; saved as a result directory (docs/traces.md, "Output")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import numpy as np

from ssdlab.config import DriveConfig
from ssdlab.results import PathLike, _write_atomically, write_summary

if TYPE_CHECKING:  # pandas is imported where a frame is made (see ssdlab.results)
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["REPLAY_FILES", "ReplayResult"]

REPLAY_FILES = ("series.csv", "latency.csv", "summary.json", "replay.png")
_DIRS = ("read", "write", "trim")
_COLOURS = {"read": "#1f6fb4", "write": "#d62728", "trim": "#2ca02c"}
MIB = float(1 << 20)


def series_table(raw: pd.DataFrame, interval_s: float) -> pd.DataFrame:
    """The per-interval table written to series.csv: IOPS, MB/s and mean latency by direction,
    host/NAND/GC MiB, erases and the interval's WA."""
    import pandas as pd

    out = pd.DataFrame({"time_s": raw["time_s"]})
    for d in _DIRS:
        ios = raw[f"{d}_ios"].to_numpy(dtype=np.float64)
        out[f"{d}_iops"] = ios / interval_s
        out[f"{d}_mb_s"] = raw[f"{d}_bytes"].to_numpy(dtype=np.float64) / 1e6 / interval_s
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"{d}_mean_latency_us"] = raw[f"{d}_latency_sum_ns"].to_numpy(dtype=np.float64) / ios / 1e3
    host = raw["host_bytes"].to_numpy(dtype=np.float64) / 4096  # units' worth of host bytes (WA: NAND over host bytes)
    nand = raw["nand_units"].to_numpy(dtype=np.float64)
    out["host_mib"] = host * 4096 / MIB
    out["nand_mib"] = nand * 4096 / MIB
    out["gc_mib"] = raw["gc_units"].to_numpy(dtype=np.float64) * 4096 / MIB
    out["erases"] = raw["erases"]
    with np.errstate(invalid="ignore", divide="ignore"):
        out["write_amplification"] = np.where(host > 0, nand / host, np.nan)
    return out


def latency_table(latency: List[Optional[Dict[str, Any]]]) -> pd.DataFrame:
    """One row per direction that had requests: count, min, mean, max and percentiles in µs."""
    import pandas as pd

    rows = []
    for d, stats in zip(_DIRS, latency):
        if not stats:
            continue
        row: Dict[str, Any] = {"direction": d, "count": stats["count"], "min_us": stats["min_ns"] / 1e3,
                               "mean_us": stats["mean_ns"] / 1e3, "max_us": stats["max_ns"] / 1e3}
        for p, ns in stats["percentiles"]:
            row[f"p{p:g}_us"] = ns / 1e3
        rows.append(row)
    return pd.DataFrame(rows)


class ReplayResult:
    """What `ssdlab.replay` measured.

    Attributes:
        summary: the figures of summary.json (docs/traces.md lists them).
        series: DataFrame per interval (see `series_table`).
        latency: DataFrame of latency percentiles per direction, in µs.
        config: the simulated `DriveConfig`.
    """

    FILES = REPLAY_FILES

    def __init__(self, summary: Dict[str, Any], raw_series: pd.DataFrame, interval_s: float,
                 latency: List[Optional[Dict[str, Any]]], *, config: Optional[DriveConfig] = None) -> None:
        self.summary = summary
        self.interval_s = interval_s
        self.series = series_table(raw_series, interval_s)
        self.latency = latency_table(latency)
        self.config = config

    def __repr__(self) -> str:
        s = self.summary
        return f"ReplayResult({s['label']!r}, requests={s['requests']}, WA={s['write_amplification']})"

    @property
    def label(self) -> str:
        return str(self.summary["label"])

    def subtitle(self) -> str:
        s = self.summary
        how = (f"trace timing ×{s['speed']:g}" if s["timing"] == "trace" else f"as fast as possible, QD{s['queue_depth']}")
        wa = s["write_amplification"]
        return (f"{s['requests']:,} requests ({s['format']}), {how}, precondition {s['precondition']}, "
                f"{s['gc_policy']} GC" + (f", WA {wa:.2f}" if wa is not None else ""))

    def chart(self) -> Figure:
        """Three panels over time: IOPS by direction, mean latency by direction (log), WA."""
        # Imported here, not at the top: `import ssdlab` should not pay for matplotlib.
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(10.0, 7.5), dpi=110, layout="constrained")
        FigureCanvasAgg(fig)
        axes = fig.subplots(3, 1, sharex=True)
        fig.suptitle(self.label, fontsize=13, fontweight="bold")
        axes[0].set_title(self.subtitle(), fontsize=9, color="#555555")
        t = self.series["time_s"].to_numpy()
        for d in _DIRS:
            iops = self.series[f"{d}_iops"].to_numpy()
            if iops.sum() > 0:
                axes[0].plot(t, iops, lw=0.9, color=_COLOURS[d], label=d)
                lat = self.series[f"{d}_mean_latency_us"].to_numpy()
                axes[1].plot(t, lat, lw=0.9, color=_COLOURS[d], label=d)
        axes[0].set_ylabel(f"IOPS (per {self.interval_s:g} s)")
        axes[0].legend(loc="upper right", fontsize=8)
        axes[1].set_ylabel("mean latency (µs)")
        if np.nanmax(np.r_[self.series[[f"{d}_mean_latency_us" for d in _DIRS]].to_numpy().ravel(), 0]) > 0:
            axes[1].set_yscale("log")
        wa = self.series["write_amplification"].to_numpy()
        axes[2].plot(t, wa, lw=0.9, color="#444444", label="per interval")
        total = self.summary["write_amplification"]
        if total is not None:
            axes[2].axhline(total, color="#ff7f0e", lw=1, ls="--", label=f"whole replay {total:.2f}")
            axes[2].legend(loc="upper right", fontsize=8)
        axes[2].set_ylabel("write amplification")
        axes[2].set_xlabel("Time (s)")
        for ax in axes:
            ax.grid(True, color="#d0d0d0", linewidth=0.8)
            ax.set_axisbelow(True)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        return fig

    def save(self, out_dir: PathLike) -> Path:
        """Writes series.csv, latency.csv, summary.json and replay.png atomically."""

        def write(staging: Path) -> None:
            self.series.to_csv(staging / "series.csv", index=False, float_format="%.6g")
            self.latency.to_csv(staging / "latency.csv", index=False, float_format="%.6g")
            write_summary(staging, self.summary)
            self.chart().savefig(staging / "replay.png")

        return _write_atomically(out_dir, write)
