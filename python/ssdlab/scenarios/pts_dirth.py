"""``ssdlab pts dirth``: the SNIA PTS demand intensity / response time histogram test (DIRTH) on a
simulated drive, in one module.

The test (docs/pts.md, *DIRTH*; [YF] the only implementation): CBW's flow (`ssdlab.pts.demand`)
with one block size and mix: random 8 KiB requests, 65 % reads, uniform over the active range.
Purge, the write cache as the variant asks (or ``--write-cache``), preconditioning with 8 KiB
random writes at TC 32 × QD 32 (twice the user capacity), then rounds of the TC × QD sweep from
32 × 32 down to 1 × 1, ``--round-s`` each, until the IOPS at 32 × 32 is steady. Plots: demand
variation (IOPS against QD, one line per TC), demand intensity (average response time against
IOPS), and the response-time histograms at the maximum, middle and minimum IOPS points.
"""

from __future__ import annotations

from typing import Any, Optional

from ssdlab import procedures
from ssdlab.pts import columns, demand, options as pto, sweep
from ssdlab.pts.device import DEVICE_OPTIONS, with_device
from ssdlab.pts.report import PtsRun, report_section
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of

__all__ = ["FILES", "OPTIONS", "SCENARIO", "STIMULUS", "pts_dirth"]

NAME = "pts-dirth"
STIMULUS = sweep.Stimulus(65, 8192)
"""[YF]'s defaults, ``dirth_bs`` 8 KiB and ``dirth_rw`` 65 (% reads)."""
FILES = demand.FILES
SIM_NO_REPORT = pto.SIM_NO_REPORT

OPTIONS = demand.OPTIONS


def pts_dirth(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    rounds_max: int = default_of(OPTIONS, "rounds_max"),
    round_s: float = default_of(OPTIONS, "round_s"),
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: Any = None,
    label: Optional[str] = None,
    device: Any = None,
) -> demand.DemandResult:
    """PTS's DIRTH on a simulated drive: purge, preconditioning, then rounds of the TC × QD sweep
    (32 × 32 … 1 × 1) of random 8 KiB requests, 65 % reads, until the IOPS at 32 × 32 is steady,
    then the max / mid / min IOPS points' response-time histograms."""
    return demand.run(NAME, STIMULUS, "DIRTH", config, variant=variant, rounds_max=rounds_max, round_s=round_s,
                      write_cache=write_cache, seed=seed, progress=progress, label=label,
                      device=device)


def command(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], quiet: bool) -> None:
    """SNIA PTS's demand intensity / response time histogram test (DIRTH) on a simulated drive.

    Purge, preconditioning (8 KiB random writes at TC 32 × QD 32, twice the user capacity), then
    rounds of every TC × QD from 32 × 32 down to 1 × 1 (--round-s each) of random 8 KiB requests,
    65 % reads, until the IOPS at 32 × 32 is steady or --rounds-max rounds ran; then the
    response-time histograms of the max, mid and min IOPS points (docs/pts.md). Writes
    rounds.csv, histograms.csv, summary.json, the demand variation and intensity plots and the
    histograms.
    """
    demand.command(NAME, STIMULUS, "DIRTH", FILES, variant=variant, rounds_max=rounds_max, round_s=round_s,
                   write_cache=write_cache, drive=drive, drive_file=drive_file, capacity=capacity, op=op, gc=gc,
                   seed=seed, out=out, quiet=quiet)


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_dirth, OPTIONS, NAME, FILES),
    result=demand.DemandResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_dirth), figures=columns.cbw_dirth, metrics=(
        ("iops_t32q32", "IOPS at TC 32 × QD 32 (window average)"),
        ("t1q1_mean_latency_us", "TC 1 × QD 1 ART, µs"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
