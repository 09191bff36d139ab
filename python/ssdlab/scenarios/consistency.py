"""``ssdlab consistency``: the performance-consistency test of the 2012-2013 SSD reviews, the
scenario in one module.

Secure erase, a sequential fill of the tested span, then random writes over it, with IOPS recorded
every second (docs/scenarios.md, *consistency*). The core runs it as one call
(``Simulator._run_consistency``); a real device or file runs it through fio
(``ssdlab.fio.device.consistency_on_device``). This module holds:

* its options, declared once (`OPTIONS`, with the core's defaults, `CONSISTENCY_DEFAULTS`), and
  its variants of the simulated-drive options (`DRIVE`: its --capacity, --op, --out and --report
  say more than the shared group's);
* its steps (`consistency_steps`) and its API function (`consistency`);
* its command (`command`: ``ssdlab consistency``, and `on_device` for ``--device``);
* its sweep entry and the line that registers it (`SCENARIO`).

Its result and PNG charts are in `ssdlab.scenarios.consistency_result`, its part of the HTML
report in `ssdlab.scenarios.consistency_report` (the three together are over 600 lines).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import click

from ssdlab import _core, cli_values as cv, limits, preload, procedures
from ssdlab.progress import StepBars
from ssdlab.results import check_output_dir
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import Progress, default_out, latency_text, save, sim_config
from ssdlab.scenarios.consistency_report import ConsistencyRun, report_section
from ssdlab.scenarios.consistency_result import FILES, ConsistencyResult
from ssdlab.scenarios.shared import DEVICE, SIM, SIM_ONLY
from ssdlab.simulate import Simulator, to_json
from ssdlab.sizes import format_size, parse_size

__all__ = [
    "CONSISTENCY_DEFAULTS",
    "DRIVE",
    "FILES",
    "OPTIONS",
    "SCENARIO",
    "ConsistencyDefaults",
    "ConsistencyResult",
    "ConsistencyRun",
    "consistency",
    "consistency_steps",
]

NAME = "consistency"


# -- the core's defaults ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsistencyDefaults:
    """The core's defaults for the consistency test."""

    spare_area_pct: float
    duration_s: float
    queue_depth: int
    block_bytes: int


def _consistency_defaults() -> ConsistencyDefaults:
    # The binding exposes no `Consistency::default()`, so read the defaults back from the steps the
    # core builds for empty parameters: the last step is the random-write phase, and a drive whose
    # size is a multiple of every request size shows the spare area as span / size.
    user_bytes = 2**40
    steps = json.loads(_core.consistency_steps("{}", user_bytes))
    random = steps[-1]["workload"]
    return ConsistencyDefaults(
        spare_area_pct=100.0 * (1.0 - random["span_bytes"] / user_bytes),
        duration_s=float(random["duration_s"]),
        queue_depth=int(random["queue_depth"]),
        block_bytes=int(random["block_bytes"]),
    )


CONSISTENCY_DEFAULTS = _consistency_defaults()
_D = CONSISTENCY_DEFAULTS


# -- the options -----------------------------------------------------------------------------------

OPTIONS = (
    Opt("spare_area", f"Percent of the user space left unwritten (extra spare area). [default: {_D.spare_area_pct:g}]",
        type=cv.percent(), default=_D.spare_area_pct, metavar="PCT", api="spare_area_pct", range="0 … < 100"),
    Opt("qd", "Queue depth.", type=cv.queue_depth, default=_D.queue_depth, show_default=True, metavar="N",
        kind="whole", range=f"1 … {limits.MAX_QUEUE_DEPTH}"),
    Opt("duration", f"Simulated seconds of random writes. [default: {_D.duration_s:g}]", type=cv.duration,
        default=_D.duration_s, metavar="SECONDS", api="duration_s", range="0.001 … 10^7"),
    Opt("block_size", f"Random-write request size. [default: {format_size(_D.block_bytes)}]", type=cv.block_size,
        default=_D.block_bytes, metavar="SIZE", kind="size", axis="size",
        range=f"multiples of 512 B up to {format_size(limits.MAX_BLOCK_BYTES)}"),
)
"""The scenario's own options (the API's keywords and the sweep's keys); defaults are the core's."""

_DRIVE_HELP = {
    "capacity": "User capacity, e.g. 2GiB or 256GB; keeps the dies and scales their size.",
    "op": "Over-provisioning, physical/user - 1 (e.g. 0.28); keeps the NAND, so the user capacity shrinks "
          "(with --capacity: that capacity at this OP).",
    "out": "Result directory (see docs/results.md). [default: runs/consistency-<drive>-<timestamp>]",
    "report": "Also write an interactive HTML report of the run to DIR/report.html (see `ssdlab report`).",
}
DRIVE = tuple(replace(o, help=_DRIVE_HELP[o.key]) if o.key in _DRIVE_HELP else o for o in SIM)
"""The shared simulated-drive options (`SIM`), with this command's own help for four of them."""

HELP_ORDER = ("drive", "drive_file", "capacity", "op", "spare_area", "gc", "qd", "duration", "block_size", "seed",
              "out", "report", "quiet", "device", "yes_destroy_data", "force_signatures")
"""--help lists the scenario's options among the drive's, as it always has."""


# -- steps and the API -----------------------------------------------------------------------------


def params_of(spare_area_pct: Any, duration_s: Any, qd: Any, block_size: Any) -> Dict[str, Any]:
    """The core's parameters (scenario/consistency.rs), each checked."""
    return {
        "spare_area_pct": procedures.number(spare_area_pct, "spare area"),
        "duration_s": procedures.number(duration_s, "duration"),
        "queue_depth": procedures.whole(qd, "queue depth"),
        "block_bytes": parse_size(block_size, what="block size"),
    }


def consistency_steps(
    config: procedures.Config = None,
    *,
    spare_area_pct: float = default_of(OPTIONS, "spare_area"),
    duration_s: float = default_of(OPTIONS, "duration"),
    qd: int = default_of(OPTIONS, "qd"),
    block_size: Union[int, str] = default_of(OPTIONS, "block_size"),
) -> List[Dict[str, Any]]:
    """The steps `consistency` runs, in the core's step format (for inspection and progress bars)."""
    cfg = procedures.resolve_config(config)
    params = params_of(spare_area_pct, duration_s, qd, block_size)
    user_bytes = cfg.describe()["user_capacity_bytes"]
    steps: List[Dict[str, Any]] = json.loads(_core.consistency_steps(to_json(params, "consistency parameters"), user_bytes))
    return steps


def consistency(
    config: procedures.Config = None,
    *,
    spare_area_pct: float = default_of(OPTIONS, "spare_area"),
    duration_s: float = default_of(OPTIONS, "duration"),
    qd: int = default_of(OPTIONS, "qd"),
    block_size: Union[int, str] = default_of(OPTIONS, "block_size"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> ConsistencyResult:
    """The performance-consistency test of the 2012-2013 SSD reviews.

    Secure erase, a sequential fill of the tested span, then `duration_s` seconds of random writes
    of `block_size` bytes at queue depth `qd` over it; the span leaves the last `spare_area_pct`
    percent of the user space unused (extra spare area for the FTL).

    `config` is a `DriveConfig`, a preset name, or None for the default preset. `block_size` takes
    a size string such as ``"4k"``. `progress`: True shows bars on stderr (when it is a terminal);
    a callable gets ``(step_index, fraction, sim_seconds)``; the core checks every step before the
    first call. `label` names the run in the summary and charts (default ``"<drive> · <spare>%
    spare area"``). Every input is checked before the simulation starts.
    """
    cfg = procedures.resolve_config(config)
    params = params_of(spare_area_pct, duration_s, qd, block_size)
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed)
    started = time.perf_counter()
    steps, core_summary = sim._run_consistency(params, progress)
    wall = time.perf_counter() - started
    return ConsistencyResult.from_run(
        config=cfg,
        steps=steps,
        core_summary=core_summary,
        spare_area_pct=params["spare_area_pct"],
        duration_s=params["duration_s"],
        qd=params["queue_depth"],
        block_size=params["block_bytes"],
        seed=seed,
        wall_seconds=wall,
        label=label,
    )


# -- the command -----------------------------------------------------------------------------------


def command(ctx: click.Context, drive: Optional[str], drive_file: Optional[str], capacity: Optional[int],
            op: Optional[float], spare_area: float, gc: Optional[str], qd: int, duration: float, block_size: int,
            seed: int, out: Optional[str], report: bool, quiet: bool, device: Optional[str], yes_destroy_data: bool,
            force_signatures: bool) -> None:
    """The performance-consistency test: secure erase, sequential fill, then random writes.

    Writes iops.csv, series.csv, summary.json and three charts (whole run on a log scale, the
    steady-state zoom on log and linear scales) to the result directory.

    With --device, the same procedure runs on a real block device or file through fio (blkdiscard
    or hole punching for the erase); it refuses mounted or in-use devices, needs
    --yes-destroy-data to overwrite anything, and --force-signatures to overwrite a filesystem or
    partition table. --capacity then sizes a new file, or limits the test to the first SIZE bytes.
    """
    if device is not None:
        if report:  # on_device does not hand back its result directory yet
            raise click.UsageError("--report is not available with --device yet: run `ssdlab report DIR -o FILE` after")
        on_device(ctx, device=device, capacity=capacity, spare_area=spare_area, qd=qd, duration=duration,
                  block_size=block_size, out=out, quiet=quiet, yes_destroy_data=yes_destroy_data,
                  force_signatures=force_signatures)
        return
    if yes_destroy_data or force_signatures:
        raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    params = {"spare_area_pct": spare_area, "duration_s": duration, "qd": qd, "block_size": block_size}
    progress: Any = False
    if not quiet:
        d = cfg.describe()
        header = (
            f"ssdlab: {cfg.name}, {format_size(d['user_capacity_bytes'])} user, {100 * d['op']:.1f}% OP, "
            f"{cfg.ftl.gc_policy} GC: {duration:g} s of {format_size(block_size)} random writes at QD{qd}, "
            f"{spare_area:g}% spare area"
        )
        progress = Progress(header, StepBars(consistency_steps(cfg, **params)))
    preload.start()
    try:
        result = consistency(cfg, seed=seed, progress=progress, **params)
    finally:
        if progress:
            progress.bars.close()
    path = save(result, out_dir, report)
    page = path / "report.html" if report else None
    if quiet:
        return
    s = result.summary
    click.echo(f"Results in {path}{os.sep}: {', '.join(FILES)}")
    click.echo(f"  {s['label']}")
    click.echo(f"  clean IOPS     {s['iops_clean']:>10,.0f}   (mean of the burst, cliff at {s['burst_s']:,.0f} s)")
    click.echo(
        f"  steady IOPS    {s['iops_steady_mean']:>10,.0f}   (mean from {s['zoom_start_s']:,.0f} s; "
        f"min {s['iops_steady_min']:,})"
    )
    click.echo(
        f"  write ampl.    {s['write_amplification']:>10.2f}   (steady state {s['steady_write_amplification']:.2f})"
    )
    click.echo(f"  latency p99    {latency_text(s['latency_us']['p99']):>10}   "
               f"(max {latency_text(s['latency_us']['max'])})")
    click.echo(f"  wall time      {s['wall_seconds']:>9.1f}s   (fill {s['fill_seconds']:,.0f} simulated s)")
    if page is not None:
        click.echo(f"Report in {page}")


def on_device(ctx: click.Context, *, device: str, capacity: Optional[int], spare_area: float, qd: int,
              duration: float, block_size: int, out: Optional[str], quiet: bool, yes_destroy_data: bool,
              force_signatures: bool) -> None:
    """``ssdlab consistency --device PATH``: the same test on a real device or file through fio."""
    from ssdlab.fio.device import consistency_on_device

    sim_only = [name for name in SIM_ONLY
                if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if sim_only:
        flag = "--" + sim_only[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to simulated drives only; it cannot be combined with --device")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(device).name).strip("-") or "run"
    out_dir = check_output_dir(out if out is not None else default_out(name, NAME), NAME)

    def announce(target: Any) -> None:
        if not quiet:
            click.echo(f"ssdlab: {device} ({target.name}, {format_size(target.size_bytes)}): {duration:g} s of "
                       f"{format_size(block_size)} random writes at QD{qd}, {spare_area:g}% spare area, through fio",
                       err=True)

    result = consistency_on_device(device, spare_area_pct=spare_area, duration_s=duration, qd=qd,
                                   block_size=block_size, capacity=capacity, yes_destroy_data=yes_destroy_data,
                                   force_signatures=force_signatures, out_dir=out_dir, progress=not quiet,
                                   on_start=announce)
    path = out_dir  # consistency_on_device wrote the result directory atomically
    if quiet:
        return
    s = result.summary
    for n in s.get("notes", []):
        click.echo(f"ssdlab: note: {n}", err=True)
    click.echo(f"Results in {path}{os.sep}: {', '.join(FILES)} (fio's files in fio{os.sep})")
    click.echo(f"  {s['label']}")
    click.echo(f"  clean IOPS     {s['iops_clean']:>10,.0f}   (mean of the burst, cliff at {s['burst_s']:,.0f} s)")
    click.echo(f"  steady IOPS    {s['iops_steady_mean']:>10,.0f}   (mean from {s['zoom_start_s']:,.0f} s; "
               f"min {s['iops_steady_min']:,})")
    wa = s.get("write_amplification")
    click.echo(f"  write ampl.    {('%.2f' % wa) if wa is not None else 'n/a':>10}   "
               f"({'SMART: ' + s['smart_source'] if s.get('smart_source') else 'no SMART write counters'})")
    p99 = s["latency_us"]["p99"]
    click.echo(f"  latency p99    {(f'{p99:,.0f} µs' if p99 is not None else 'n/a'):>10}")
    click.echo(f"  wall time      {s['wall_seconds']:>9.1f}s   (fill {s['fill_seconds']:,.1f} s)")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("iops_clean", "iops_steady_mean", "iops_steady_min", "write_amplification",
                "steady_write_amplification"):
        figures[key] = s.get(key)
    for key in ("p50", "p99", "p999", "max"):
        figures[f"latency_{key}_us"] = (s.get("latency_us") or {}).get(key)
    for key in ("host_write_bytes", "nand_write_bytes"):
        figures[key] = s.get(key)
    return figures


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(DRIVE, DEVICE),
    command=command,
    context=True,
    order=HELP_ORDER,
    result=ConsistencyResult,
    files=FILES,
    sweep=SweepEntry(
        run=api_runner(consistency),
        figures=_sweep_figures,
        metrics=(("iops_steady_mean", "steady-state IOPS (mean)"), ("steady_write_amplification", "steady-state WA")),
        label_keys=frozenset({"drive", "drive_file", "spare_area"}),
    ),
    report_runs=(ConsistencyRun,),
    report_section=report_section,
)
