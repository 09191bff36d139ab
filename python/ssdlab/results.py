"""Result directories (docs/results.md): `ConsistencyResult` and safe, atomic saving.

A result is saved by writing every file into a hidden staging directory next to the target and
moving the files in only when all of them are written, so a failure (a full disk, Ctrl-C, a bad
chart) never leaves a half-written result behind.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

import numpy as np
import pandas as pd

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ssdlab.config import DriveConfig
    from ssdlab.simulate import StepResult

__all__ = [
    "CONSISTENCY_FILES",
    "IOPS_COLUMNS",
    "SERIES_COLUMNS",
    "SUMMARY_KEYS",
    "ConsistencyResult",
    "check_output_dir",
]

PathLike = Union[str, "os.PathLike[str]"]

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
    "iops_steady_mean",
    "iops_steady_min",
    "zoom_start_s",
    "latency_us",
    "fill_seconds",
)
LATENCY_KEYS = ("p50", "p99", "p999", "max", "mean")
CHART_FILES = ("iops_log.png", "steady_log.png", "steady_linear.png")
CONSISTENCY_FILES = ("iops.csv", "series.csv", "summary.json", *CHART_FILES)

_MIB = 2**20


# -- output directories ----------------------------------------------------------------------------


def _probe(directory: Path) -> None:
    """Creates and removes a directory in `directory`: the one honest test of writability."""
    probe = directory / f".ssdlab-probe-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(probe)
    os.rmdir(probe)


def check_output_dir(out_dir: PathLike) -> Path:
    """Checks that results can be written to `out_dir` (without creating it) and returns it.

    Refuses, with `SsdlabError`, a path that exists and is not a directory, a path under a file,
    and a place where nothing can be created. Call it before a long simulation.
    """
    path = Path(out_dir).expanduser()
    if str(out_dir) == "":
        raise SsdlabError("the output directory name is empty; give a directory such as runs/my-test")
    if path.exists() and not path.is_dir():
        raise SsdlabError(f"output directory {str(path)!r} exists and is not a directory; choose another name")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise SsdlabError(
            f"cannot create output directory {str(path)!r}: {str(existing)!r} is a file, not a directory"
        )
    for where in {existing, path.parent if path.parent.exists() else existing}:
        try:
            _probe(where)
        except OSError as err:
            raise SsdlabError(
                f"cannot write results to {str(path)!r}: {str(where)!r} is not writable "
                f"({err.strerror or err}); choose another output directory"
            ) from None
    return path


def _write_atomically(target: Path, write: Any) -> Path:
    """Runs ``write(staging_dir)`` and moves what it wrote into `target` only if it succeeds."""
    target = check_output_dir(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.parent / f".{target.name}.partial-{os.getpid()}-{secrets.token_hex(4)}"
        os.mkdir(staging)
    except OSError as err:
        raise SsdlabError(f"cannot create output directory {str(target)!r}: {err.strerror or err}") from None
    try:
        write(staging)
        if not target.exists():
            os.rename(staging, target)
        else:
            for item in sorted(staging.iterdir()):
                os.replace(item, target / item.name)
            staging.rmdir()
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise SsdlabError(f"cannot write results to {str(target)!r}: {err.strerror or err}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


# -- the consistency result ------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """`value` with NumPy scalars turned into Python ones (for JSON)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


class ConsistencyResult:
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
        self.summary = summary
        self.config = config
        self.steps = list(steps or [])

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<ConsistencyResult {s['label']!r}: clean {s['iops_clean']:,.0f} IOPS, steady mean "
            f"{s['iops_steady_mean']:,.0f} / min {s['iops_steady_min']:,} IOPS, WA {s['write_amplification']:.2f}>"
        )

    @property
    def label(self) -> str:
        return str(self.summary["label"])

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
        """Assembles the result of a finished run (see `ssdlab.simulate.consistency`)."""
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
        host = raw["host_units"].to_numpy(np.float64)
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
                "host_mib": host * unit_bytes / _MIB,
                "nand_mib": nand * unit_bytes / _MIB,
                "gc_mib": raw["gc_units"].to_numpy(np.float64) * unit_bytes / _MIB,
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
            "iops_steady_mean": c["iops_steady_mean"],
            "iops_steady_min": c["iops_steady_min"],
            "zoom_start_s": c["zoom_start_s"],
            "latency_us": {k: c["latency_us"][k] for k in LATENCY_KEYS},
            "fill_seconds": fill.duration_s,
        }
        return cls(iops, series, _plain(summary), config=config, steps=steps)

    @classmethod
    def load(cls, directory: PathLike) -> ConsistencyResult:
        """Reads a saved result directory back (without its config and steps)."""
        d = Path(directory)
        try:
            summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
            iops = pd.read_csv(d / "iops.csv")
            series = pd.read_csv(d / "series.csv")
        except (OSError, ValueError) as err:
            raise SsdlabError(f"cannot read a consistency result from {str(d)!r}: {err}") from None
        if summary.get("scenario") != "consistency":
            raise SsdlabError(f"{str(d)!r} holds a {summary.get('scenario')!r} result, not a consistency one")
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
        from ssdlab.plots import consistency_figures

        s = self.summary
        return consistency_figures(
            self.iops,
            title=str(s["label"]),
            subtitle=self.subtitle(),
            zoom_start_s=float(s["zoom_start_s"]),
            steady_mean=float(s["iops_steady_mean"]),
        )

    def save(self, out_dir: PathLike) -> Path:
        """Writes the result directory (docs/results.md) atomically; returns its path.

        Existing files of the same names in `out_dir` are replaced; other files are left alone.
        """

        def write(staging: Path) -> None:
            self.iops.to_csv(staging / "iops.csv", index=False)
            self.series.to_csv(staging / "series.csv", index=False, float_format="%.10g")
            text = json.dumps(self.summary, indent=2, ensure_ascii=False, allow_nan=False)
            (staging / "summary.json").write_text(text + "\n", encoding="utf-8")
            for name, fig in self.charts().items():
                fig.savefig(staging / name)

        return _write_atomically(Path(out_dir), write)
