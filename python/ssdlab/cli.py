"""The ``ssdlab`` command line.

Every mistake in the input ends the program with one line on stderr, ``ssdlab: error: <what is
wrong and how to fix it>``, and exit status 2; Ctrl-C ends it with status 130.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any, List, Optional, Sequence, cast

import click

from ssdlab import __version__, cli_values as cv
from ssdlab.config import load_preset, preset_names
from ssdlab.errors import SsdlabError, shorten_numerals
from ssdlab.results import (
    check_output_dir,
)
from ssdlab.scenarios import all_scenarios
from ssdlab.report import write_report
from ssdlab.sizes import format_size

__all__ = ["cli", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", None)


class _Interrupted(Exception):
    """Ctrl-C, caught before click turns it into its own Abort (which prints a blank line)."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None


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
    """List the built-in drive presets.

    EFF % is the effective spare factor: the over-provisioning less the expected factory bad
    blocks, the free pool GC keeps and one open block per die (summary.json's
    effective_spare_factor gives it for the run's own seed).
    """
    rows = [("NAME", "USER", "PHYSICAL", "OP %", "EFF %", "DIES", "GC", "GC MODE", "DESCRIPTION")]
    for name in preset_names():
        cfg = load_preset(name)
        d = cfg.describe()
        rows.append(
            (
                name,
                format_size(d["user_capacity_bytes"]),
                format_size(d["physical_capacity_bytes"]),
                f"{100 * d['op']:.2f}",
                f"{100 * cfg.spare()['effective_spare_factor']:.2f}",
                str(d["dies"]),
                cfg.ftl.gc_policy,
                cfg.ftl.gc_mode,
                cfg.description,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    right = {1, 2, 3, 4, 5}
    for r in rows:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
        click.echo("  ".join(cells + [r[-1]]))


# -- calibrate -------------------------------------------------------------------------------------


@cli.command("calibrate")
@click.option("--capacity", type=cv.capacity, metavar="SIZE",
              help="User capacity of every drive; procedure minutes scale with it. The targets are for the "
              "default. [default: 256GB]")
@click.option("--seed", type=cv.SEED, default=1, show_default=True, metavar="N", help="Run seed.")
@click.option("--out", metavar="DIR", help="Directory for every run's result directory. [default: runs/fidelity]")
@click.option("--doc", metavar="FILE",
              help="Also write the table into FILE between its scorecard markers (docs/calibration.md) and copy "
              "the charts the docs show into FILE's img/ folder.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the table.")
def calibrate_cmd(capacity: Optional[int], seed: int, out: Optional[str], doc: Optional[str], quiet: bool) -> int:
    """The fidelity scorecard: every preset's seed procedures, seed figure vs ssdlab, pass/fail.

    Runs the consistency test, the HD Tach torture sequences, used vs new and worst-case WA on
    the presets (about 20 runs, minutes at 256 GB), saves each run's result directory under
    --out, prints one row per preset and phenomenon and exits with status 1 if a target fails.
    """
    from ssdlab import calibrate

    out_dir = check_output_dir(out if out is not None else Path("runs") / "fidelity")
    if doc is not None and not Path(doc).is_file():
        raise click.BadParameter(f"{doc!r} is not a file", param_hint="'--doc'")
    say = (lambda _: None) if quiet else (lambda text: click.echo(f"ssdlab: {text}", err=True))
    card = calibrate.scorecard(capacity, seed=seed, out_dir=out_dir, say=say, bars=not quiet)
    click.echo(calibrate.text_table(card), nl=False)
    if doc is not None:
        calibrate.update_doc(card, doc, out_dir)
    if not quiet:
        failed = sum(not c.passed for c in card.checks)
        click.echo(f"{len(card.checks) - failed} of {len(card.checks)} targets pass; runs in {out_dir}{os.sep}")
        if not card.full_size:
            click.echo("note: the targets are for 256 GB; other capacities are a preview", err=True)
    return 0 if card.passed else 1


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
    spare-area buttons), HD Tach passes, worst-case write amplification, used vs new, and the PTS
    tests' pages (as `ssdlab pts report`). Any mix of consistency, hdtach/torture, used-vs-new, wa
    and pts directories works; a directory holding result directories stands for all of them.
    """
    if out.strip() == "":
        raise click.BadParameter("the file name is empty; give one such as report.html", param_hint="'--out'")
    target = Path(out)
    if target.is_dir():
        target = target / "report.html"
    path = write_report([Path(d) for d in run_dirs], target, title)
    if not quiet:
        click.echo(f"Report in {path}")


# -- sweep -----------------------------------------------------------------------------------------


@cli.command("sweep")
@click.argument("spec", metavar="SPEC.toml")
@click.option("--out", metavar="DIR",
              help="Sweep directory; the same spec into the same DIR resumes. [default: runs/sweep-<spec name>]")
@click.option("--scheduler", metavar="ADDRESS",
              help="Run on an existing Dask scheduler (e.g. tcp://10.0.0.5:8786) and its workers. "
                   "[default: a cluster of this machine's cores]")
@click.option("--workers", type=click.IntRange(min=1), metavar="N",
              help="Worker processes of this machine's cluster, at most 4 per core. [default: one per core]")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def sweep_cmd(spec: str, out: Optional[str], scheduler: Optional[str], workers: Optional[int], quiet: bool) -> None:
    """Run a scenario over a grid of drives and settings, on Dask, into one table.

    SPEC.toml names a scenario (consistency, hdtach, torture, used-vs-new, wa, or fio with a
    jobfile), a [base] table of its options (the command's option names, with _ for -) and a
    [grid] table whose lists form the cross product (see docs/sweeps.md). Every point runs on a
    worker; DIR gets results.parquet (one row per point; a failed point's message in its error
    column), points/<point>/ (each point's result directory), charts/*.png and report.html.
    Running the same spec into the same DIR again runs only the points not finished.
    """
    from ssdlab import sweep as sweeps
    from ssdlab.sweep.execute import default_workers, workers_problem

    if workers is not None and workers_problem(workers) is not None:
        raise click.BadParameter(str(workers_problem(workers)), param_hint="'--workers'")
    if scheduler is not None and workers is not None:
        raise click.UsageError("--workers sizes this machine's cluster; with --scheduler the cluster's own workers "
                               "run the points")
    loaded = sweeps.load_spec(spec)
    out_dir = Path(out) if out is not None else Path("runs") / f"sweep-{_safe_name(Path(spec).stem)}"
    where = f"the Dask scheduler at {scheduler}" if scheduler else f"{workers or default_workers()} local workers"

    def events(kind: str, **details: Any) -> None:
        if quiet:
            return
        if kind == "start":
            done = details["points"] - details["todo"]
            if details["todo"]:
                on = f"{details['workers']} workers at {scheduler}" if scheduler else f"{details['workers']} local workers"
                click.echo(f"ssdlab: sweep {sweeps.describe(loaded)}; {details['todo']} to run on {on}"
                           + (f" ({done} done before)" if done else ""), err=True)
            else:
                click.echo(f"ssdlab: sweep {sweeps.describe(loaded)}: all done before; rebuilding the table and charts",
                           err=True)

    try:
        result = sweeps.sweep(loaded, out_dir, scheduler=scheduler, workers=workers, progress=not quiet,
                              events=events)
    except KeyboardInterrupt:
        import logging

        # the process ends: what Dask's loop says at exit about workers the same signal killed
        # ("Task exception was never retrieved: Nanny failed to start") stays unsaid
        logging.disable(logging.CRITICAL)
        if (out_dir / "sweep.json").is_file():  # a sweep stopped before any point finished leaves nothing
            click.echo(f"ssdlab: sweep stopped; its finished points are kept in {out_dir}: run the same command to "
                       "resume", err=True)
        raise
    if quiet:
        return
    table = result.table
    made = ["results.parquet", f"{POINTS_DIR}{os.sep}"]
    if result.charts:
        made.append(f"charts{os.sep} ({len(result.charts)} charts)")
    if result.report is not None:
        made.append("report.html")
    click.echo(f"Results in {result.out}{os.sep}: {', '.join(made)}")
    click.echo(f"  {len(table)} points: {len(table) - result.failed} with results, {result.failed} failed; "
               f"{result.ran} run now in {result.wall_seconds:.1f} s"
               + (f" on {where}" if result.ran else "") + f", {result.skipped} done before")
    errors = table[table["error"].notna()]
    for message, group in list(errors.groupby("error", sort=False))[:5]:
        names = list(group["point"])
        shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
        click.echo(f"  failed: {message} ({shown})")


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "spec"


POINTS_DIR = "points"


GROUPS = {"pts": "SNIA's Solid State Storage Performance Test Specification (PTS 2.0) tests (docs/pts.md)."}
"""The command groups whose subcommands are scenarios (`Scenario.group`), with their help."""

for _scenario in all_scenarios():  # the scenarios that live in their own module (ssdlab.scenarios)
    if _scenario.group is None:
        cli.add_command(_scenario.click_command())
        continue
    if _scenario.group not in cli.commands:
        cli.add_command(click.Group(_scenario.group, help=GROUPS[_scenario.group]))
    cast(click.Group, cli.commands[_scenario.group]).add_command(_scenario.click_command())


def _add_pts_report() -> None:
    from ssdlab.pts.report import command

    cast(click.Group, cli.commands["pts"]).add_command(command())


_add_pts_report()  # ssdlab pts report: not a scenario, the PTS results' report


def _add_fit() -> None:
    from ssdlab.fit.commands import fit_command, predict_command

    cli.add_command(fit_command)
    cli.add_command(predict_command)


_add_fit()  # ssdlab fit / predict: plain commands (they read measurements and a drive file, not a scenario's options)


# -- entry point -----------------------------------------------------------------------------------


def _fail(message: str, status: int = EXIT_USAGE) -> int:
    line = " ".join(str(message).split())  # always one line
    line = shorten_numerals(line)  # a 5000-digit value quoted back stays readable
    click.echo(f"ssdlab: error: {line}", err=True)
    return status


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python is running so every cleanup (fio stopped, staging directories
    and created files removed) runs as for Ctrl-C."""


_terminated = False
_interrupted = False  # Ctrl-C came (under the CLI's own handler)


def _on_sigterm(signum: int, frame: Any) -> None:
    global _terminated
    _terminated = True  # the core may turn the exception into a plain KeyboardInterrupt
    raise _Terminated()


def _on_sigint(signum: int, frame: Any) -> None:
    global _interrupted
    _interrupted = True  # a library may turn the exception into another one (see _after_a_signal)
    raise KeyboardInterrupt()


def _after_a_signal() -> Optional[int]:
    """EXIT_INTERRUPTED, said in one line, if a signal came: an exception raised from a handler
    inside a C extension can come out as a different one (matplotlib's renderer turned a SIGTERM
    while it drew a chart into "ValueError: Invalid bounding box"), or a cleanup may fail after it.
    The run was stopped by the signal either way, and what it was writing is staged, so nothing
    half-written is left."""
    if not (_terminated or _interrupted):
        return None
    click.echo("ssdlab: terminated" if _terminated else "ssdlab: interrupted", err=True)
    return EXIT_INTERRUPTED


def _bad_argument(args: Sequence[str]) -> Optional[str]:
    """The first argument that is not valid UTF-8 text (the shell passed raw bytes), described."""
    for i, a in enumerate(args, start=1):
        try:
            a.encode("utf-8")
        except UnicodeEncodeError:
            raw = a.encode("utf-8", "surrogateescape")
            return f"argument {i} ({raw!r}) is not valid UTF-8 text; ssdlab takes UTF-8 names, values and paths"
        if "\x00" in a:
            return f"argument {i} holds a NUL character"
    return None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the CLI and returns the exit status (the console script passes it to sys.exit)."""
    args: List[str] = list(sys.argv[1:] if argv is None else argv)
    bad = _bad_argument(args)
    if bad is not None:
        return _fail(bad)
    global _terminated, _interrupted
    _terminated = _interrupted = False
    previous = previous_int = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # a program's own handler stays
            previous_int = signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread (an embedding program): leave the signals alone
        pass
    try:
        status = _main(args)
    except _Terminated:  # between the handlers of _main
        click.echo("ssdlab: terminated", err=True)
        status = EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if previous_int is not None:
            signal.signal(signal.SIGINT, previous_int)
    if status == EXIT_INTERRUPTED and _terminated:
        return EXIT_TERMINATED
    return status


def _main(args: List[str]) -> int:
    try:
        from ssdlab.outputs import guard_stdout

        guard_stdout()  # a short write to a full disk is an error, not silent loss (PYTHONUNBUFFERED)
        status = cli.main(args=args, prog_name="ssdlab", standalone_mode=False)
        sys.stdout.flush()  # what the command printed is out, or the error below is reported
        return status if isinstance(status, int) else 0
    except click.ClickException as err:  # UsageError, BadParameter, ...
        signalled = _after_a_signal()
        if signalled is not None:
            return signalled
        if _NO_ARGS_IS_HELP is not None and isinstance(err, _NO_ARGS_IS_HELP):
            click.echo(err.ctx.get_help() if err.ctx else "ssdlab --help")  # `ssdlab` alone (click >= 8.2)
            return 0
        return _fail(err.format_message())
    except SsdlabError as err:
        signalled = _after_a_signal()
        return signalled if signalled is not None else _fail(str(err))
    except (_Interrupted, KeyboardInterrupt, click.exceptions.Abort):
        click.echo("ssdlab: terminated" if _terminated else "ssdlab: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout went away (e.g. `ssdlab drives | head -1`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as err:
        if err.errno == errno.EPIPE:  # pragma: no cover - BrokenPipeError above
            return 1
        name = os.fsdecode(err.filename) if isinstance(err.filename, (str, bytes)) else None
        if err.errno == errno.ENAMETOOLONG:
            shown = f" {name[:40]!r}{'...' if len(name) > 40 else ''} ({len(os.fsencode(name))} bytes)" if name else ""
            return _fail(f"the name{shown} is too long for the file system (ENAMETOOLONG: most allow 255 bytes per "
                         f"name, 4095 per path); choose a shorter one")
        where = f" ({name})" if name else ""
        signalled = _after_a_signal()
        return signalled if signalled is not None else _fail(f"{err.strerror or err}{where}")
    except Exception:
        signalled = _after_a_signal()
        if signalled is None:
            raise
        return signalled
    finally:
        _settle_stdout()


def _settle_stdout() -> None:
    """After a failed write to stdout (a full disk), what is left in its buffer can never be
    written: it is dropped (stdout to /dev/null), so the interpreter's exit does not report the
    same failure again as a traceback-like message and status 120."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError):
            pass
    except AttributeError:  # no stdout (closed by the caller)
        pass
