"""The option groups every scenario shares, declared once (`ssdlab.scenarios.base.Opt`): the
simulated drive and the result (`SIM`), a real device through fio (`DEVICE`), and the single
options several procedures take (`COMPRESSIBILITY`, `SAMPLE_PCT`).
"""

from __future__ import annotations

import click

from ssdlab import cli_values as cv
from ssdlab.config import GC_POLICIES, preset_names
from ssdlab.scenarios.base import Opt

__all__ = ["COMPRESSIBILITY", "DEVICE", "SAMPLE_PCT", "SIM", "SIM_ONLY", "torture_minutes"]

SIM = (
    Opt("drive", f"Drive preset (see `ssdlab drives`). [default: {preset_names()[0]}]", metavar="NAME",
        kind="text", axis="category", range="a preset name (`ssdlab drives`)"),
    Opt("drive_file", "Drive described in a TOML file (like configs/drives/*.toml).", metavar="PATH", kind="text",
        axis="category", range="a drive file (docs/parameters.md)"),
    Opt("capacity", "User capacity, e.g. 16GiB or 256GB; keeps the dies and scales their size.", type=cv.capacity,
        metavar="SIZE", kind="size", axis="size"),
    Opt("op", "Over-provisioning, physical/user - 1 (e.g. 0.28); keeps the NAND, so the user capacity shrinks.",
        type=cv.op, metavar="FRACTION"),
    Opt("gc", "GC victim policy. [default: the drive's]", type=click.Choice(GC_POLICIES), kind="text",
        axis="category", range=" / ".join(GC_POLICIES)),
    Opt("seed", "Random seed; same seed, same result.", type=cv.SEED, default=1, show_default=True, metavar="N",
        kind="whole", range="0 … 2**64-1"),
    Opt("out", "Result directory (see docs/results.md). [default: runs/<command>-<drive>-<timestamp>]",
        metavar="DIR", axis=None, kind="text"),
    Opt("report", "Also write an interactive HTML report of the run to DIR/report.html.", is_flag=True,
        kind="flag", axis=None),
    Opt("quiet", "No progress bars and no summary.", short="-q", is_flag=True, kind="flag", axis=None),
)
"""The simulated drive (preset or file, capacity, OP, GC policy, seed) and where the result goes."""

SIM_ONLY = ("drive", "drive_file", "op", "gc", "seed")
"""The `SIM` options that have no meaning with --device."""

DEVICE = (
    Opt("device", "Run on a real block device or regular file through fio instead of a simulated drive. DESTRUCTIVE.",
        metavar="PATH", kind="text", axis=None),
    Opt("yes_destroy_data", "With --device: allow overwriting the device or an existing file.", is_flag=True,
        kind="flag", axis=None),
    Opt("force_signatures", "With --device: overwrite even a device or file that carries a filesystem or partition "
        "table.", is_flag=True, kind="flag", axis=None),
)
"""A real drive or file through fio, and the confirmations destroying its data needs (docs/safety.md)."""

COMPRESSIBILITY = Opt(
    "compressibility",
    "Compressed size of the data written, as a fraction of its size, in (0, 1]; 1 = incompressible (only a "
    "compressing drive, e.g. --drive compressing, cares).",
    type=cv.fraction, default=1.0, show_default="1", metavar="C", range="(0, 1]",
)

SAMPLE_PCT = Opt(
    "sample_pct",
    "Percent of each 0.5 % position a pass writes, at its start, in (0, 100]; HD Tach tests areas spread over the "
    "drive, not every LBA (100: the whole span). Simulated drives only.",
    type=cv.percent_of_position, default=50.0, show_default="50", metavar="PCT", axis=None, range="(0, 100]",
)
"""``--sample-pct`` of the HD Tach passes (hdtach, torture; by default the core's `hdtach::SAMPLE_PCT`); not a
sweep key."""


def torture_minutes(default: float, help_text: str, allow_zero: bool = False) -> Opt:
    """``--torture-minutes``: minutes of 4 KiB QD32 random writes (each procedure its own default)."""
    return Opt("torture_minutes", help_text, type=cv.minutes(allow_zero), default=default,
               show_default=f"{default:g}", metavar="MINUTES",
               range=f"{'0' if allow_zero else '> 0'} … 166,666 (10^7 s)")
