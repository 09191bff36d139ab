"""What every scenario's command shares when it runs: the drive it builds from the `SIM` options,
the default result directory, the progress header and bars, the atomic save (with the report),
and the closing lines. A scenario's command calls these; none names a scenario.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import click

from ssdlab import preload
from ssdlab.config import DriveConfig, load_preset, preset_names
from ssdlab.progress import StepBars
from ssdlab.results import ResultStage, check_output_dir
from ssdlab.sizes import format_size

__all__ = ["Progress", "default_out", "drive_config", "finish", "header", "latency_text", "pct_text", "save",
           "sim_config", "simulate"]


def drive_config(drive: Optional[str], drive_file: Optional[str]) -> DriveConfig:
    """The preset or the drive file (not both; the first preset when neither)."""
    if drive is not None and drive_file is not None:
        raise click.UsageError("give either --drive or --drive-file, not both")
    if drive_file is not None:
        return DriveConfig.from_toml_file(drive_file)
    return load_preset(drive if drive is not None else preset_names()[0])


def sim_config(drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
               gc: Optional[str]) -> DriveConfig:
    """The simulated drive of the `SIM` options: preset or file, then GC policy, OP and capacity."""
    return drive_config(drive, drive_file).adjusted(gc_policy=gc, op=op, capacity=capacity)


def default_out(drive: str, command: str = "consistency") -> Path:
    """``runs/<command>-<drive>-<timestamp>``."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", drive).strip("-") or "drive"
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"{command}-{safe}-{stamp}"


def header(cfg: DriveConfig, what: str) -> str:
    """The line printed when a simulation starts: the drive, then `what` runs on it."""
    d = cfg.describe()
    return (
        f"ssdlab: {cfg.name}, {format_size(d['user_capacity_bytes'])} user, {100 * d['op']:.1f}% OP, "
        f"{cfg.ftl.gc_policy} {cfg.ftl.gc_mode} GC: {what}"
    )


class Progress:
    """Prints `header` once the core has accepted every step (at its first call), then shows bars."""

    def __init__(self, header: str, bars: StepBars) -> None:
        self.header: Optional[str] = header
        self.bars = bars

    def __call__(self, step: int, fraction: float, sim_seconds: float) -> bool:
        if self.header is not None:
            click.echo(self.header, err=True)
            self.header = None
        return self.bars(step, fraction, sim_seconds)


def save(result: Any, out_dir: Path, report: bool) -> Path:
    """Saves the result directory and, with `report`, its report.html: both or neither."""
    from ssdlab.report import write_report

    with ResultStage(out_dir) as stage:
        result.save(stage.path)
        if report:
            write_report([stage.path], stage.path / "report.html")
        return stage.commit()


def simulate(cfg: DriveConfig, scenario: str, options: Dict[str, Any], what: str, out: Optional[str],
             quiet: bool, run: Callable[[Any], Any], report: bool = False) -> Tuple[Any, Path]:
    """Checks the output directory, runs `run(progress)` with bars and a header, saves the result."""
    from ssdlab.procedures import procedure_steps

    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, scenario), scenario)
    progress: Any = False
    if not quiet:
        progress = Progress(header(cfg, what), StepBars(procedure_steps(scenario, cfg, **options)))
    preload.start()
    try:
        result = run(progress)
    finally:
        if progress:
            progress.bars.close()
    return result, save(result, out_dir, report)


def finish(result: Any, path: Path, report: bool, quiet: bool, files: Sequence[str], written: bool = True) -> bool:
    """Writes the report if asked; prints where the files are. Returns False when quiet."""
    from ssdlab.report import write_report

    if report and not written:
        write_report([path], path / "report.html")
    page = path / "report.html" if report else None
    if quiet:
        return False
    extra = ", report.html" if page is not None else ""
    click.echo(f"Results in {path}{os.sep}: {', '.join(files)}{extra}")
    click.echo(f"  {result.summary['label']}")
    return True


def pct_text(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.0f}"


def latency_text(us: float) -> str:
    """A latency in microseconds as the commands print it: µs, ms or s."""
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.0f} µs"
