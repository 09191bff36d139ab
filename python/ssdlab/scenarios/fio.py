"""``ssdlab fio``: a fio job file on a simulated drive (or, with --device, through the system fio on
a real one), the scenario in one module.

The fio engine is the package ``ssdlab.fio`` (reading and planning job files, the simulated run,
fio's output formats, the device run and its safety checks; docs/fio.md); this module holds what
makes it a scenario: its options (declared once), its command, its sweep entry (`FioResult`, the
job file parsed and planned on the client) and ``SCENARIO``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import click

from ssdlab import cli_values as cv
from ssdlab.config import GC_POLICIES, DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, drive_figures, spec_file
from ssdlab.scenarios.shared import DEVICE
from ssdlab.sizes import format_size

__all__ = ["OPTIONS", "SCENARIO", "FioResult"]

NAME = "fio"


# -- how a sweep spec reads the keys the command line reads otherwise --------------------------------


def _jobfile(value: Any, spec_dir: Path) -> Path:
    return spec_file(value, spec_dir, "job file")


def _words(value: Any, spec_dir: Path) -> List[str]:
    from ssdlab.sweep.scenarios import words

    return words(value, spec_dir)


def _env(value: Any, spec_dir: Path) -> Dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float)) for v in value.values()):
        raise SsdlabError('must be a table of variables such as { RUNTIME = "60" }')
    return {str(k): str(v) for k, v in value.items()}


DRIVE = (
    Opt("drive", "Drive preset (see `ssdlab drives`). [default: the first preset]", metavar="NAME", kind="text",
        axis="category"),
    Opt("drive_file", "Drive described in a TOML file (like configs/drives/*.toml).", metavar="PATH", kind="text",
        axis="category"),
    Opt("capacity", "User capacity, e.g. 2GiB or 256GB.", type=cv.capacity, metavar="SIZE", kind="size",
        axis="size"),
    Opt("op", "Over-provisioning, physical/user - 1.", type=cv.op, metavar="FRACTION"),
    Opt("gc", "GC victim policy. [default: the drive's]", type=click.Choice(GC_POLICIES), kind="text",
        axis="category"),
    Opt("seed", "Seeds the drive and every job's offsets (a job's randseed= overrides its own).", type=cv.SEED,
        default=1, show_default=True, metavar="N", kind="whole"),
)
"""The simulated drive, as ``ssdlab fio`` words it (the sweep's drive keys are every scenario's)."""

OPTIONS = (
    Opt("jobfile", "The fio job file (docs/fio.md).", metavar="JOBFILE", argument=True, kind="text",
        axis="category", spec_type=_jobfile, range="a fio job file"),
    Opt("output_format", "fio's report format.", type=click.Choice(["normal", "json"]), default="normal",
        show_default=True, kind="text", axis=None, range="normal / json"),
    Opt("output", "Write the report to FILE instead of stdout.", metavar="FILE", kind="text", axis=None),
    Opt("out", "Result directory: fio.json, fio.txt, summary.json, iops.csv, series.csv, one IOPS chart per job, "
        "and the job file's logs.", metavar="DIR", kind="text", axis=None),
    Opt("sections", "Run only this job section (repeatable).", flag="--section", spec_key="section", multiple=True,
        metavar="NAME", kind="text", axis="category", spec_type=_words),
    Opt("sequential_jobs", "Run jobs that fio would run at the same time (no stonewall) one after another.",
        is_flag=True, kind="flag", axis="category"),
    Opt("quiet", "No progress bars and no notes on stderr.", short="-q", is_flag=True, kind="flag", axis=None),
    Opt("device", "Run the job file with the system fio on this block device or regular file (filename= is "
        "overridden) instead of a simulated drive. DESTRUCTIVE.", metavar="PATH", kind="text", axis=None),
) + DEVICE[1:]

ORDER = ("jobfile", "drive", "drive_file", "capacity", "op", "gc", "seed", "output_format", "output", "out",
         "sections", "sequential_jobs", "quiet", "device", "yes_destroy_data", "force_signatures")

ENV = Opt("env", "The job file's ${VAR} values (a sweep spec's table).", kind="text", axis="category",
          spec_type=_env)
"""A spec's ``env``: the command line has none (the shell's environment gives the job file's variables)."""


# -- the command -----------------------------------------------------------------------------------


def _config(drive: Optional[str], drive_file: Optional[str], capacity: Optional[int], op: Optional[float],
            gc: Optional[str]) -> DriveConfig:
    from ssdlab.fio.simrun import drive_config

    if drive is not None and drive_file is not None:
        raise click.UsageError("give either --drive or --drive-file, not both")
    base: Any = DriveConfig.from_toml_file(drive_file) if drive_file is not None else drive
    return drive_config(base, capacity=capacity, op=op, gc=gc)


def command(ctx: click.Context, jobfile: str, drive: Optional[str], drive_file: Optional[str],
            capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, output_format: str,
            output: Optional[str], out: Optional[str], sections: Tuple[str, ...], sequential_jobs: bool,
            quiet: bool, device: Optional[str], yes_destroy_data: bool, force_signatures: bool) -> None:
    """Run a fio job file on a simulated drive and report as fio does.

    Options the simulator cannot honour are refused with the file and line; options that only
    matter on real hardware (ioengine, direct, filename, ...) are accepted and listed as notes.
    Logs asked for by write_iops_log/write_bw_log/write_lat_log are written like fio's (into
    --out when given, else the current directory).

    With --device PATH the same job file (same checks) runs through the system fio on PATH,
    after the safety checks of `ssdlab consistency --device`; the report is fio's own, and --out
    holds the same files as a simulated run. See docs/fio.md.
    """
    if device is not None:
        _fio_on_device(ctx, jobfile, device, capacity=capacity, output_format=output_format, output=output, out=out,
                       sections=sections, sequential_jobs=sequential_jobs, quiet=quiet,
                       yes_destroy_data=yes_destroy_data, force_signatures=force_signatures)
        return
    if yes_destroy_data or force_signatures:
        raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")
    from ssdlab.fio import jobfile as jf
    from ssdlab.fio import jsonout, logfiles, resultdir, textout
    from ssdlab.fio.planner import plan as make_plan
    from ssdlab.fio.simrun import run_plan
    from ssdlab.results import ResultStage, check_output_dir

    if not 0 <= seed < 2**64:
        raise click.BadParameter(f"seed must be from 0 to 2**64-1, got {seed}", param_hint="'--seed'")
    parsed = jf.parse(jobfile)
    cfg = _config(drive, drive_file, capacity, op, gc)
    user_bytes = int(cfg.describe()["user_capacity_bytes"])
    plan = make_plan(parsed, user_bytes, sequential_jobs=sequential_jobs, sections=list(sections) or None)
    out_dir = check_output_dir(out, NAME) if out is not None else None
    _check_output_file(output, out_dir)
    if out_dir is not None:  # relative log names stay inside --out (docs/safety.md)
        logfiles.check_log_names(plan, out_dir)
    if not quiet:
        for n in dict.fromkeys(plan.notes + [n for j in plan.jobs for n in j.notes]):  # clones share notes
            click.echo(f"ssdlab: note: {n}", err=True)
    run = run_plan(plan, cfg, seed, progress=not quiet)
    from ssdlab.fio import joberrors

    for line in joberrors.run_errors(run):  # fio's lines for jobs that ended in error (a failed verify)
        click.echo(line, err=True)
    text = jsonout.dumps(jsonout.fio_json(run)) if output_format == "json" else textout.normal_text(run)
    if out_dir is not None:
        with ResultStage(out_dir) as stage:  # results, logs and --output appear together or not at all
            resultdir.save(run, stage.path)
            logs = logfiles.write_logs(run, stage.path, contain=True)
            pending = _prepare_report(text, output)
            try:
                stage.commit()
            except BaseException:
                if pending is not None:
                    pending.discard()
                raise
            if pending is not None:
                pending.commit()
            logs = [stage.target / p.relative_to(stage.path) if stage.path in p.parents else p for p in logs]
    else:
        logs = logfiles.write_logs(run, Path.cwd())
        _write_report(text, output)
    if not quiet and (out_dir is not None or logs):
        where = f"results in {out_dir}{os.sep}" if out_dir is not None else ""
        wrote = f"{len(logs)} fio log{'s' if len(logs) != 1 else ''}" if logs else ""
        click.echo(f"ssdlab: {', '.join(x for x in (where, wrote) if x)}", err=True)
    if joberrors.exit_status(run):
        ctx.exit(joberrors.exit_status(run))  # as fio: the number of jobs that ended in error


def _check_output_file(output: Optional[str], out_dir: Optional[Path]) -> None:
    """Refuses, before anything runs, an --output the output-path policy refuses (ssdlab.outputs:
    a socket, a block device, a directory, a path under a file) and one that overlaps --out (the
    result directory is written as a whole and holds the report already, as fio.txt/fio.json)."""
    if output is None:
        return
    from ssdlab.inputs import check_path_text
    from ssdlab.outputs import check_output_file

    check_path_text(output, "--output")
    if out_dir is not None:
        o, d = os.path.realpath(output), os.path.realpath(out_dir)
        if o == d or o.startswith(d.rstrip(os.sep) + os.sep) or d.startswith(o.rstrip(os.sep) + os.sep):
            how = "is" if o == d else "is inside" if len(o) > len(d) else "contains"
            raise SsdlabError(f"--output {output} {how} --out {out_dir}: the result directory is written as a whole "
                              f"and holds the report already (fio.txt, fio.json); give --output a path outside it "
                              f"or leave it out -- nothing was run")
    check_output_file(output, "--output")


def _prepare_report(text: str, output: Optional[str]) -> Any:
    """The report on stdout, or --output written up to its last step (ssdlab.outputs.Pending)."""
    if output is None:
        try:
            click.echo(text, nl=False)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise SsdlabError(f"cannot write the report to standard output: {err.strerror or err}") from None
        return None
    from ssdlab.outputs import prepare_output

    return prepare_output(output, text, "--output")


def _write_report(text: str, output: Optional[str]) -> None:
    pending = _prepare_report(text, output)
    if pending is not None:
        pending.commit()


def _fio_on_device(ctx: click.Context, jobfile: str, device: str, *, capacity: Optional[int], output_format: str,
                   output: Optional[str], out: Optional[str], sections: Tuple[str, ...], sequential_jobs: bool,
                   quiet: bool, yes_destroy_data: bool, force_signatures: bool) -> None:
    """``ssdlab fio JOBFILE --device PATH``: the job file through the system fio (ssdlab.fio.devrun)."""
    from ssdlab.fio.devrun import run_jobfile_on_device
    from ssdlab.results import check_output_dir

    sim_only = [name for name in ("drive", "drive_file", "op", "gc", "seed")
                if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if sim_only:
        flag = "--" + sim_only[0].replace("_", "-")
        raise click.UsageError(f"{flag} applies to simulated drives only; it cannot be combined with --device")
    out_dir = check_output_dir(out, NAME) if out is not None else None
    _check_output_file(output, out_dir)
    pending: List[Any] = []

    def announce(target: Any) -> None:
        if not quiet:
            click.echo(f"ssdlab: {device} ({target.name}, {format_size(target.size_bytes)}): {jobfile} through fio",
                       err=True)

    def finish(run: Any) -> None:  # inside the run's staging: an error here leaves no result behind
        if out_dir is None:
            run.log_files = run.copy_logs(Path.cwd())
        pending.append(_prepare_report(run.json_text() if output_format == "json" else run.text, output))

    committed = False
    try:
        run = run_jobfile_on_device(device, jobfile, capacity=capacity, yes_destroy_data=yes_destroy_data,
                                    force_signatures=force_signatures, sequential_jobs=sequential_jobs,
                                    sections=list(sections) or None, out_dir=out_dir, progress=not quiet,
                                    on_start=announce, finish=finish)
        committed = True
    finally:  # --output appears with the result directory, or not at all
        for p in pending:
            if p is not None and committed:
                p.commit()
            elif p is not None:
                p.discard()
    logs = run.log_files
    if not quiet:
        for n in run.notes:
            click.echo(f"ssdlab: note: {n}", err=True)
        where = f"results in {out_dir}{os.sep} (fio's files in fio{os.sep})" if out_dir is not None else \
            f"fio's files in {run.workdir}{os.sep}"
        wrote = f"{len(logs)} fio log{'s' if len(logs) != 1 else ''}" if logs else ""
        click.echo(f"ssdlab: {', '.join(x for x in (where, wrote) if x)}", err=True)


# -- the sweep entry -------------------------------------------------------------------------------


class FioResult:
    """A job-file run as the sweep saves it: ``ssdlab fio --out DIR``'s files and the logs."""

    def __init__(self, run: Any) -> None:
        from ssdlab.fio import resultdir

        self.run = run
        self.summary: Dict[str, Any] = resultdir.summary(run)

    def save(self, out_dir: Any) -> Path:
        from ssdlab.fio import logfiles, resultdir

        resultdir.save(self.run, out_dir)
        # `summary` (whose label the sweep sets) is what summary.json holds
        (Path(out_dir) / "summary.json").write_text(
            json.dumps(self.summary, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
        )
        logfiles.write_logs(self.run, out_dir)
        return Path(out_dir)


def _prepare(options: Dict[str, Any]) -> Dict[str, Any]:
    """Parses the job file (with `env` for its ``${VAR}``) on the client; workers get the parsed
    form."""
    from ssdlab.fio import jobfile

    prepared = dict(options)
    prepared["jobfile"] = jobfile.parse(options["jobfile"], env=options.get("env", {}))
    prepared.pop("env", None)
    _check(prepared)
    return prepared


def _check(prepared: Dict[str, Any]) -> None:
    """What ``ssdlab fio`` checks before it runs, on the client: the sections named exist, and every
    job (options the simulator refuses, such as ``exec_prerun``, values out of range, a job the
    point's drive cannot hold) is planned against the point's drive as the command plans it. A
    drive that cannot be built is left to the point (it fails alone, as documented)."""
    from ssdlab.fio.planner import plan
    from ssdlab.sweep.scenarios import drive_config

    job = prepared["jobfile"]
    sections: Optional[Sequence[str]] = prepared.get("section")
    if sections:
        known = {j.section for j in job.jobs()}
        missing = [s for s in sections if s not in known]
        if missing:
            shown = missing[0] if len(missing[0]) <= 60 else f"{missing[0][:57]}..."
            raise SsdlabError(f"section {shown!r}: {job.path} has no job section of that name; its sections are "
                              f"{', '.join(sorted(known)[:10]) or 'none'}{' ...' if len(known) > 10 else ''}")
    try:
        user_bytes = int(drive_config(prepared).describe()["user_capacity_bytes"])
    except SsdlabError:
        return
    plan(job, user_bytes, sequential_jobs=prepared.get("sequential_jobs", False),
         sections=list(sections) if sections else None)


def _content(options: Dict[str, Any]) -> Any:
    sections = [[s.name, [[o.name, o.value] for o in s.options]] for s in options["jobfile"].sections]
    return [options.get("drive_file"), sections]


def _sweep_run(cfg: DriveConfig, kwargs: Dict[str, Any]) -> FioResult:
    from ssdlab.fio.planner import plan
    from ssdlab.fio.simrun import run_plan

    user_bytes = int(cfg.describe()["user_capacity_bytes"])
    sections: Optional[Sequence[str]] = kwargs.get("sections")
    p = plan(kwargs["jobfile"], user_bytes, sequential_jobs=kwargs.get("sequential_jobs", False),
             sections=list(sections) if sections else None)
    return FioResult(run_plan(p, cfg, kwargs.get("seed", 1)))


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for job in s.get("jobs") or []:
        prefix = f"job{job.get('job')}_{job.get('name')}"
        for key in ("read_iops", "write_iops", "write_amplification"):
            figures[f"{prefix}_{key}"] = job.get(key)
    return figures


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(DRIVE,),
    command=command,
    context=True,
    order=ORDER,
    sweep=SweepEntry(run=_sweep_run, figures=_sweep_figures,
                     metrics=(),  # the columns depend on the job file: the charts take the last job's write IOPS
                     required=("jobfile",), prepare=_prepare, reportable=False, content=_content,
                     spec_only=(ENV,)),
)
