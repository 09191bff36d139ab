"""The commands ``ssdlab fit`` and ``ssdlab predict`` (plain commands, like ``report``: they read
result directories and a drive file, not a simulated drive's options, so they are not scenarios)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Tuple

import click

from ssdlab import cli_values as cv

__all__ = ["fit_command", "predict_command"]


@click.command("fit")
@click.argument("dirs", nargs=-1, required=True, metavar="DIR...")
@click.option("--out", "-o", required=True, metavar="FILE",
              help="The twin's drive file (TOML; use it with --drive-file or `ssdlab predict`).")
@click.option("--report", "report_dir", metavar="DIR",
              help="Directory for the fit report (fit.json, fit.png; `ssdlab report DIR` shows it). "
                   "[default: FILE without .toml + '-fit']")
@click.option("--budget", type=click.FloatRange(min=1.0), default=600.0, show_default=True, metavar="SECONDS",
              help="Wall-clock bound of the fit's simulations; the best twin so far is kept.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
def fit_command(dirs: Tuple[str, ...], out: str, report_dir: Optional[str], budget: float, quiet: bool) -> None:
    """Fit a simulated twin to a drive's measurements.

    DIR... are result directories of the drive: consistency, hdtach/torture and saturation runs,
    PTS latency / iops / throughput runs (or a `pts all` directory) for the reads (`--device` runs
    or any ssdlab run; only what a device run records is read), or directories of fio JSON output
    with per-second logs (docs/fit.md). Writes the twin's drive file and a fit report saying which
    knobs each measurement determined and which stay undetermined (`ssdlab report` shows it too).
    """
    from ssdlab.fit.engine import fit
    from ssdlab.fit.measurements import read_measurements
    from ssdlab.fit.report import save_report
    from ssdlab.fit.twin import to_toml
    from ssdlab.outputs import check_output_file, prepare_output
    from ssdlab.results import check_output_dir

    target = check_output_file(out, "twin drive file")
    rdir = Path(report_dir) if report_dir else Path(str(Path(out).with_suffix("")) + "-fit")
    rdir = check_output_dir(rdir)
    m = read_measurements(dirs)
    say = (lambda _: None) if quiet else (lambda text: click.echo(f"ssdlab: {text}", err=True))
    result = fit(m, budget_s=budget, say=say)
    cfg = result.config()
    undetermined = ", ".join(n for n, k in result.table.items() if k.status != "determined")
    comment = (f"ssdlab fit twin of {', '.join(result.measured['sources'])}\n"
               f"{cfg.description}\nundetermined (design defaults or assumptions): {undetermined}\n"
               f"fit report: {rdir}")
    text = to_toml(cfg, comment)
    prepare_output(target, text, "twin drive file").commit()
    save_report(result, rdir, str(out))
    if quiet:
        return
    click.echo(f"Twin in {out}; report in {rdir}{'/'}: fit.json, fit.png (and for `ssdlab report`: summary.json) "
               f"({result.evaluations} simulations, {result.wall_seconds:.0f} s)")
    for name, k in result.table.items():
        click.echo(f"  {name:<20} {str(k.value):<14} {k.status:<13} {k.by}")
    click.echo("  errors (twin / measured - 1): " + ", ".join(
        f"{k} {100 * v:+.1f} %" for k, v in result.errors.items() if v is not None))


@click.command("predict")
@click.argument("twin", metavar="TWIN.toml")
@click.option("--rw", type=click.Choice(["randwrite", "randrw", "randread", "write", "read"]), default="randwrite",
              show_default=True, help="What the workload does (fio's names).")
@click.option("--read-pct", type=click.FloatRange(0, 100), default=70.0, show_default=True, metavar="PCT",
              help="Reads' share of a randrw mix (fio's rwmixread).")
@click.option("--qd", type=cv.queue_depth, default=32, show_default=True, metavar="N", help="Queue depth.")
@click.option("--bs", "block_size", type=cv.block_size, default=4096, metavar="SIZE", help="Request size. [default: 4KiB]")
@click.option("--zipf", type=click.FloatRange(min=0.0, min_open=True), metavar="THETA",
              help="Zipf-distributed offsets (fio's random_distribution=zipf:THETA).")
@click.option("--spare-area", type=cv.percent(), default=0.0, show_default=True, metavar="PCT",
              help="Percent of the drive left unwritten (extra spare area).")
@click.option("--duration", type=cv.duration, default=600.0, show_default=True, metavar="SECONDS",
              help="Simulated seconds of the workload (the last 30 % are its steady window).")
@click.option("--trace", metavar="FILE", help="Replay this block trace instead (any format `ssdlab replay` reads).")
@click.option("--capacity", type=cv.capacity, metavar="SIZE",
              help="Run the twin at this capacity (the capacity rule: speeds stay, times scale).")
@click.option("--seed", type=cv.SEED, default=1, show_default=True, metavar="N", help="Run seed.")
@click.option("--json", "json_out", metavar="FILE", help="Also write the prediction as JSON to FILE.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors (the JSON file is still written).")
def predict_command(twin: str, rw: str, read_pct: float, qd: int, block_size: int, zipf: Optional[float],
                    spare_area: float, duration: float, trace: Optional[str], capacity: Optional[int], seed: int,
                    json_out: Optional[str], quiet: bool) -> None:
    """Predict a workload on a fitted twin (or any drive file).

    Runs the workload after a secure erase and a sequential fill and prints its steady window:
    IOPS, MB/s, write amplification, mean latency. Any scenario takes the twin too:
    `ssdlab consistency --drive-file TWIN.toml`, `ssdlab fio --drive-file TWIN.toml job.fio`.
    The expected error of each kind of prediction is in docs/fit.md ("Validation").
    """
    from ssdlab.config import DriveConfig
    from ssdlab.fit.predict import Workload, predict, predict_trace
    from ssdlab.outputs import check_output_file, prepare_output

    cfg = DriveConfig.from_toml_file(twin)
    if capacity is not None:
        cfg = cfg.with_user_capacity(capacity)
    target = check_output_file(json_out, "prediction JSON") if json_out else None
    if trace is not None:
        p = predict_trace(cfg, trace, seed=seed)
    else:
        w = Workload(rw=rw, read_pct=read_pct if rw == "randrw" else (100.0 if "read" in rw else 0.0), qd=qd,
                     block_bytes=block_size, zipf=zipf, spare_area_pct=spare_area, duration_s=duration)
        p = predict(cfg, w, seed=seed)
    if target is not None:
        prepare_output(target, json.dumps(p.as_dict(), indent=2) + "\n", "prediction JSON").commit()
    if quiet:
        return
    wa = "n/a" if p.write_amplification is None else f"{p.write_amplification:.2f}"
    lat = "n/a" if p.mean_latency_us is None else f"{p.mean_latency_us:,.0f} µs"
    click.echo(f"{cfg.name}: {p.workload}")
    click.echo(f"  IOPS           {p.iops:>12,.0f}   (read {p.read_iops:,.0f}, write {p.write_iops:,.0f})")
    click.echo(f"  MB/s           {p.mb_s:>12,.1f}")
    click.echo(f"  write ampl.    {wa:>12}")
    click.echo(f"  mean latency   {lat:>12}")
