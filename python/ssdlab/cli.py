"""The ``ssdlab`` command line.

Every mistake in the input ends the program with one line on stderr, ``ssdlab: error: <what is
wrong and how to fix it>``, and exit status 2; Ctrl-C ends it with status 130.
"""

from __future__ import annotations

import datetime
import errno
import os
import re
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence

import click

from ssdlab import __version__
from ssdlab.config import GC_POLICIES, DriveConfig, load_preset, preset_names
from ssdlab.errors import SsdlabError
from ssdlab.fio.cli import consistency_on_device_cmd, fio_cmd
from ssdlab.results import CONSISTENCY_FILES, check_output_dir
from ssdlab.progress import StepBars
from ssdlab.report import write_report
from ssdlab.simulate import CONSISTENCY_DEFAULTS, consistency, consistency_steps
from ssdlab.sizes import format_size, parse_size

__all__ = ["cli", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", None)


class _Interrupted(Exception):
    """Ctrl-C, caught before click turns it into its own Abort (which prints a blank line)."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None


class Size(click.ParamType):
    """A byte size such as 4k, 512MiB, 256GB (see ssdlab.sizes)."""

    name = "size"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return parse_size(value, what="size")
        except SsdlabError as err:
            self.fail(str(err), param, ctx)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="ssdlab", message="%(prog)s %(version)s")
def cli() -> None:
    """ssdlab: a deterministic SSD simulator.

    Simulates a NAND SSD (page-mapped FTL, garbage collection, die and channel timing) through the
    test procedures SSD reviewers used. Results go to a directory of CSV, JSON and PNG files.
    """


# -- drives ----------------------------------------------------------------------------------------


@cli.command()
def drives() -> None:
    """List the built-in drive presets."""
    rows = [("NAME", "USER", "PHYSICAL", "OP %", "DIES", "GC", "GC MODE", "DESCRIPTION")]
    for name in preset_names():
        cfg = load_preset(name)
        d = cfg.describe()
        rows.append(
            (
                name,
                format_size(d["user_capacity_bytes"]),
                format_size(d["physical_capacity_bytes"]),
                f"{100 * d['op']:.2f}",
                str(d["dies"]),
                cfg.ftl.gc_policy,
                cfg.ftl.gc_mode,
                cfg.description,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    right = {1, 2, 3, 4}
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        click.echo("  ".join(cells + [r[-1]]))


# -- consistency -----------------------------------------------------------------------------------


def _drive_config(drive: Optional[str], drive_file: Optional[str]) -> DriveConfig:
    if drive is not None and drive_file is not None:
        raise click.UsageError("give either --drive or --drive-file, not both")
    if drive_file is not None:
        return DriveConfig.from_toml_file(drive_file)
    return load_preset(drive if drive is not None else preset_names()[0])


def _default_out(drive: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", drive).strip("-") or "drive"
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("runs") / f"consistency-{safe}-{stamp}"


def _latency(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.1f} ms"
    return f"{us:.0f} µs"


_D = CONSISTENCY_DEFAULTS


class _Progress:
    """Prints `header` once the core has accepted every step (at its first call), then shows bars."""

    def __init__(self, header: str, bars: StepBars) -> None:
        self.header: Optional[str] = header
        self.bars = bars

    def __call__(self, step: int, fraction: float, sim_seconds: float) -> bool:
        if self.header is not None:
            click.echo(self.header, err=True)
            self.header = None
        return self.bars(step, fraction, sim_seconds)


@cli.command("consistency")
@click.option("--drive", metavar="NAME", help=f"Drive preset (see `ssdlab drives`). [default: {preset_names()[0]}]")
@click.option("--drive-file", metavar="PATH", help="Drive described in a TOML file (like configs/drives/*.toml).")
@click.option("--capacity", type=Size(), metavar="SIZE", help="User capacity, e.g. 2GiB or 256GB; scales the die count.")
@click.option(
    "--op",
    type=float,
    metavar="FRACTION",
    help="Over-provisioning, physical/user - 1 (e.g. 0.28); keeps the NAND, so the user capacity shrinks "
    "(with --capacity: that capacity at this OP).",
)
@click.option(
    "--spare-area",
    type=float,
    default=_D.spare_area_pct,
    metavar="PCT",
    help=f"Percent of the user space left unwritten (extra spare area). [default: {_D.spare_area_pct:g}]",
)
@click.option("--gc", type=click.Choice(GC_POLICIES), help="GC victim policy. [default: the drive's]")
@click.option("--qd", type=int, default=_D.queue_depth, show_default=True, metavar="N", help="Queue depth.")
@click.option(
    "--duration",
    type=float,
    default=_D.duration_s,
    metavar="SECONDS",
    help=f"Simulated seconds of random writes. [default: {_D.duration_s:g}]",
)
@click.option(
    "--block-size",
    type=Size(),
    default=_D.block_bytes,
    metavar="SIZE",
    help=f"Random-write request size. [default: {format_size(_D.block_bytes)}]",
)
@click.option("--seed", type=int, default=1, show_default=True, metavar="N", help="Random seed; same seed, same result.")
@click.option(
    "--out",
    metavar="DIR",
    help="Result directory (see docs/results.md). [default: runs/consistency-<drive>-<timestamp>]",
)
@click.option(
    "--report",
    is_flag=True,
    help="Also write an interactive HTML report of the run to DIR/report.html (see `ssdlab report`).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no summary.")
@click.option(
    "--device",
    metavar="PATH",
    help="Run on a real block device or regular file through fio instead of a simulated drive. DESTRUCTIVE.",
)
@click.option("--yes-destroy-data", is_flag=True, help="With --device: allow overwriting the device or an existing file.")
@click.option(
    "--force-signatures",
    is_flag=True,
    help="With --device: overwrite even a device or file that carries a filesystem or partition table.",
)
@click.pass_context
def consistency_cmd(
    ctx: click.Context,
    drive: Optional[str],
    drive_file: Optional[str],
    capacity: Optional[int],
    op: Optional[float],
    spare_area: float,
    gc: Optional[str],
    qd: int,
    duration: float,
    block_size: int,
    seed: int,
    out: Optional[str],
    report: bool,
    quiet: bool,
    device: Optional[str],
    yes_destroy_data: bool,
    force_signatures: bool,
) -> None:
    """The performance-consistency test: secure erase, sequential fill, then random writes.

    Writes iops.csv, series.csv, summary.json and three charts (whole run on a log scale, the
    steady-state zoom on log and linear scales) to the result directory.

    With --device, the same procedure runs on a real block device or file through fio (blkdiscard
    or hole punching for the erase); it refuses mounted or in-use devices, needs
    --yes-destroy-data to overwrite anything, and --force-signatures to overwrite a filesystem or
    partition table. --capacity then sizes a new file, or limits the test to the first SIZE bytes.
    """
    if device is not None:
        if report:  # consistency_on_device_cmd does not hand back its result directory yet
            raise click.UsageError("--report is not available with --device yet: run `ssdlab report DIR -o FILE` after")
        consistency_on_device_cmd(
            ctx,
            device=device,
            capacity=capacity,
            spare_area=spare_area,
            qd=qd,
            duration=duration,
            block_size=block_size,
            out=out,
            quiet=quiet,
            yes_destroy_data=yes_destroy_data,
            force_signatures=force_signatures,
        )
        return
    if yes_destroy_data or force_signatures:
        raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")
    cfg = _drive_config(drive, drive_file)
    if gc is not None:
        cfg = cfg.with_gc_policy(gc)
    if op is not None:
        cfg = cfg.with_op(op)
    if capacity is not None:
        cfg = cfg.with_user_capacity(capacity)
    out_dir = check_output_dir(out if out is not None else _default_out(cfg.name))
    params = {"spare_area_pct": spare_area, "duration_s": duration, "qd": qd, "block_size": block_size}
    progress: Any = False
    if not quiet:
        d = cfg.describe()
        header = (
            f"ssdlab: {cfg.name}, {format_size(d['user_capacity_bytes'])} user, {100 * d['op']:.1f}% OP, "
            f"{cfg.ftl.gc_policy} GC: {duration:g} s of {format_size(block_size)} random writes at QD{qd}, "
            f"{spare_area:g}% spare area"
        )
        progress = _Progress(header, StepBars(consistency_steps(cfg, **params)))
    try:
        result = consistency(cfg, seed=seed, progress=progress, **params)
    finally:
        if progress:
            progress.bars.close()
    path = result.save(out_dir)
    page = write_report([path], path / "report.html") if report else None
    if quiet:
        return
    s = result.summary
    click.echo(f"Results in {path}{os.sep}: {', '.join(CONSISTENCY_FILES)}")
    click.echo(f"  {s['label']}")
    click.echo(f"  clean IOPS     {s['iops_clean']:>10,.0f}   (mean of the first 10 s)")
    click.echo(
        f"  steady IOPS    {s['iops_steady_mean']:>10,.0f}   (mean from {s['zoom_start_s']:,.0f} s; "
        f"min {s['iops_steady_min']:,})"
    )
    click.echo(
        f"  write ampl.    {s['write_amplification']:>10.2f}   (steady state {s['steady_write_amplification']:.2f})"
    )
    click.echo(f"  latency p99    {_latency(s['latency_us']['p99']):>10}   (max {_latency(s['latency_us']['max'])})")
    click.echo(f"  wall time      {s['wall_seconds']:>9.1f}s   (fill {s['fill_seconds']:,.0f} simulated s)")
    if page is not None:
        click.echo(f"Report in {page}")


# -- report ----------------------------------------------------------------------------------------


@cli.command("report")
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option("--out", "-o", required=True, metavar="FILE", help="The HTML file to write (a directory: FILE/report.html).")
@click.option("--title", metavar="TEXT", help="Page title. [default: SSD report: <drives>]")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing.")
def report_cmd(run_dirs: Sequence[str], out: str, title: Optional[str], quiet: bool) -> None:
    """An interactive HTML report over result directories, like the review pages.

    One self-contained file (plotly.js inline: it opens from disk with no network) with a section
    per test among the runs: summary table, performance consistency (three views with drive and
    spare-area buttons), HD Tach passes, worst-case write amplification, used vs new. Any mix of
    consistency, hdtach/torture, used-vs-new and wa directories works; a directory holding result
    directories stands for all of them.
    """
    target = Path(out)
    if target.is_dir():
        target = target / "report.html"
    path = write_report([Path(d) for d in run_dirs], target, title)
    if not quiet:
        click.echo(f"Report in {path}")


cli.add_command(fio_cmd)


# -- entry point -----------------------------------------------------------------------------------


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    line = " ".join(str(message).split())  # always one line
    click.echo(f"ssdlab: error: {line}", err=True)
    return status


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the CLI and returns the exit status (the console script passes it to sys.exit)."""
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    try:
        status = cli.main(args=args, prog_name="ssdlab", standalone_mode=False)
        return status if isinstance(status, int) else 0
    except click.ClickException as err:  # UsageError, BadParameter, ...
        if _NO_ARGS_IS_HELP is not None and isinstance(err, _NO_ARGS_IS_HELP):
            click.echo(err.ctx.get_help() if err.ctx else "ssdlab --help")  # `ssdlab` alone (click >= 8.2)
            return 0
        return _fail(err.format_message())
    except SsdlabError as err:
        return _fail(str(err))
    except (_Interrupted, KeyboardInterrupt, click.exceptions.Abort):
        click.echo("ssdlab: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout went away (e.g. `ssdlab drives | head -1`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as err:
        if err.errno == errno.EPIPE:  # pragma: no cover - BrokenPipeError above
            return 1
        where = f" ({err.filename})" if err.filename else ""
        return _fail(f"{err.strerror or err}{where}")
