"""``ssdlab pts cbw``: the SNIA PTS composite block size workload (CBW; PTS-E 1.1's ECW) on a
simulated drive, in one module.

The test (docs/pts.md, *CBW*; [YF] the only implementation): purge, the write cache as the
variant asks (or ``--write-cache``), preconditioning with the stimulus as 100 % writes at TC 32 ×
QD 32 (twice the user capacity), then rounds of a TC × QD sweep from 32 × 32 down to 1 × 1
(`ssdlab.pts.sweep`), each point ``--round-s`` of the composite stimulus: random requests of the
size mix `BLOCK_SIZES` (fio's ``bssplit=512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/
7:32k/3:64k/3``), offsets drawn from `ZONES` (fio's ``random_distribution=zoned:50/5:30/15:20/80``:
half the requests to the first 5 % of the active range), 40 % reads. Tracked: the IOPS at TC 32 ×
QD 32, until steady (`ssdlab.pts.steady`) or ``--rounds-max`` rounds. Then the maximum, middle and
minimum IOPS points' response-time histograms (`ssdlab.pts.demand`).
"""

from __future__ import annotations

from typing import Any, Optional

from ssdlab import procedures
from ssdlab.pts import columns, demand, options as pto, sweep
from ssdlab.pts.device import DEVICE_OPTIONS, with_device
from ssdlab.pts.report import PtsRun, report_section
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of

__all__ = ["BLOCK_SIZES", "FILES", "OPTIONS", "SCENARIO", "STIMULUS", "ZONES", "pts_cbw"]

NAME = "pts-cbw"
BLOCK_SIZES = ((512, 4), (1024, 1), (1536, 1), (2048, 1), (2560, 1), (3072, 1), (3584, 1), (4096, 67), (8192, 10),
               (16384, 7), (32768, 3), (65536, 3))
"""(bytes, percent of the requests): [YF]'s and the issue's bssplit."""
ZONES = ((50, 5), (30, 15), (20, 80))
"""(percent of the accesses, percent of the active range), zone after zone from its start."""
READ_PCT = 40
STIMULUS = sweep.Stimulus(READ_PCT, 512, BLOCK_SIZES, ZONES)
FILES = demand.FILES
SIM_NO_REPORT = pto.SIM_NO_REPORT

OPTIONS = demand.OPTIONS


def pts_cbw(
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
    """PTS's composite block size workload on a simulated drive: purge, preconditioning, then
    rounds of the TC × QD sweep (32 × 32 … 1 × 1) of the composite stimulus until the IOPS at
    32 × 32 is steady, then the max / mid / min IOPS points' response-time histograms.
    `progress(round, rows, verdict)` is called after every round. With `device` (a
    `ssdlab.pts.device.DeviceDrive`) the same steps run through fio."""
    return demand.run(NAME, STIMULUS, "CBW", config, variant=variant, rounds_max=rounds_max, round_s=round_s,
                      write_cache=write_cache, seed=seed, progress=progress, label=label,
                      device=device)


def command(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], quiet: bool) -> None:
    """SNIA PTS's composite block size workload (CBW, PTS-E 1.1's ECW) on a simulated drive.

    Purge, preconditioning (the stimulus as writes at TC 32 × QD 32, twice the user capacity),
    then rounds of every TC × QD from 32 × 32 down to 1 × 1 (--round-s each) of random requests
    of the composite size mix (512 B … 64 KiB, 67 % 4 KiB), zoned 50/5:30/15:20/80, 40 % reads,
    until the IOPS at 32 × 32 is steady or --rounds-max rounds ran; then the response-time
    histograms of the max, mid and min IOPS points (docs/pts.md). Writes rounds.csv,
    histograms.csv, summary.json and the PTS plots.
    """
    demand.command(NAME, STIMULUS, "CBW", FILES, variant=variant, rounds_max=rounds_max, round_s=round_s,
                   write_cache=write_cache, drive=drive, drive_file=drive_file, capacity=capacity, op=op, gc=gc,
                   seed=seed, out=out, quiet=quiet)


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_cbw, OPTIONS, NAME, FILES),
    result=demand.DemandResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_cbw), figures=columns.cbw_dirth, metrics=(
        ("iops_t32q32", "IOPS at TC 32 × QD 32 (window average)"),
        ("t1q1_mean_latency_us", "TC 1 × QD 1 ART, µs"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
