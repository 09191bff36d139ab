"""``ssdlab replay``: a block trace replayed on a simulated drive, the scenario in one module.

The replay engine is the package ``ssdlab.replay`` (the readers of every trace format, the run,
`ReplayResult` and its files; docs/traces.md); this module holds what makes it a scenario: its
options (declared once), its command, its sweep entry and ``SCENARIO``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

import click

from ssdlab import cli_values as cv
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.replay.formats import FORMATS
from ssdlab.replay.result import REPLAY_FILES, ReplayResult
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, drive_figures, spec_file
from ssdlab.scenarios.command import default_out, header, latency_text, sim_config
from ssdlab.scenarios.shared import SIM
from ssdlab.sizes import format_size

__all__ = ["OPTIONS", "SCENARIO"]

NAME = "replay"


def _seconds(value: Any, what: str) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
        raise SsdlabError(f"{what} must be a number of seconds, zero or more, got {value!r}")
    return float(value)


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SsdlabError(f"{what} must be a positive whole number, got {value!r}")
    return value


# -- how a sweep spec reads the keys the command line reads otherwise --------------------------------


def _trace(value: Any, spec_dir: Path) -> Path:
    return spec_file(value, spec_dir, "trace", " (workers on other machines read the same path)")


def _choice(*allowed: str) -> Any:
    def convert(value: Any, spec_dir: Path) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise SsdlabError(f"must be one of {', '.join(allowed)}")
        return value

    return convert


def _text(value: Any, spec_dir: Path) -> str:
    if not isinstance(value, str) or not value:
        raise SsdlabError("must be a non-empty string")
    return value


def _choice_opt(key: str, choices: Tuple[str, ...], help_text: str) -> Opt:
    return Opt(key, help_text, type=click.Choice(choices), default=choices[0], show_default=True, kind="text",
               axis="category", spec_type=_choice(*choices), range=" / ".join(choices))


FORMAT_CHOICES = ("auto",) + tuple(FORMATS)

OPTIONS = (
    Opt("trace", "The trace file (docs/traces.md), plain or compressed.", metavar="TRACE", argument=True,
        kind="text", axis="category", spec_type=_trace, range="a trace file"),
    Opt("fmt", "Trace format; auto reads the first lines and says which it chose.", flag="--format",
        spec_key="format", api="format", type=click.Choice(FORMAT_CHOICES), default="auto", show_default=True,
        kind="text", axis="category", spec_type=_choice(*FORMAT_CHOICES), range=" / ".join(FORMAT_CHOICES)),
    Opt("trace_device", "Replay only this device/volume/disk of a multi-device trace (docs/traces.md names each "
        "format's field, e.g. hm_0 for MSR).", metavar="ID", kind="text", axis="category", spec_type=_text),
    Opt("start_s", "Start of the time window, in seconds from the first selected request.", flag="--from",
        spec_key="from", type=cv.Checked("s", _seconds), metavar="SECONDS", range="≥ 0"),
    Opt("end_s", "End of the time window, in seconds from the first selected request.", flag="--to",
        spec_key="to", type=cv.Checked("s", _seconds), metavar="SECONDS", range="≥ 0"),
    Opt("limit", "Replay at most N requests.", type=cv.Checked("n", _positive_int, base=int), metavar="N",
        kind="whole", range="≥ 1"),
    _choice_opt("fit", ("refuse", "wrap", "scale"),
                "Offsets beyond the drive's capacity: refuse them, wrap them (modulo the capacity) or scale the "
                "trace's extent onto the drive (reads the trace twice)."),
    _choice_opt("timing", ("trace", "afap"),
                "trace: open loop at the trace's timestamps (queueing shows in latency); afap: closed loop, as "
                "fast as possible at --qd."),
    Opt("speed", "With --timing trace: X times faster (2) or slower (0.5) than recorded.", type=cv.replay_speed,
        default=1.0, show_default=True, metavar="X", range="10^-9 … 10^9"),
    Opt("qd", "With --timing afap: requests kept outstanding.", type=cv.queue_depth, default=32, show_default=True,
        metavar="N", kind="whole", range="1 … 65536"),
    _choice_opt("precondition", ("none", "fill", "steady"),
                "Drive state before the trace: fresh, filled sequentially once, or filled plus random writes of "
                "twice its capacity."),
    Opt("skip_bad_lines", "Count and skip lines the format cannot read, instead of stopping at the first.",
        is_flag=True, kind="flag", axis="category"),
    _choice_opt("blkparse_action", ("D", "Q", "C"),
                "blkparse: the event whose lines are the requests (D issued to the device, Q queued, C "
                "completed)."),
)


# -- the command -----------------------------------------------------------------------------------


def command(trace: str, fmt: str, trace_device: Optional[str], start_s: Optional[float], end_s: Optional[float],
            limit: Optional[int], fit: str, timing: str, speed: float, qd: int, precondition: str,
            skip_bad_lines: bool, blkparse_action: str, drive: Optional[str], drive_file: Optional[str],
            capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, out: Optional[str],
            report: bool, quiet: bool) -> None:
    """Replay a block trace on a simulated drive.

    Reads MSR Cambridge, FIU, SPC, Alibaba, Tencent CBS, blkparse, fio iolog (v2, v3), DiskSim and
    SYSTOR '17 traces, plain or .gz/.bz2/.xz/.zst, streaming (any size, in bounded memory). Writes
    series.csv (per second), latency.csv (percentiles per direction), summary.json and
    replay.png to the result directory (docs/traces.md).
    """
    from ssdlab.replay import replay
    from ssdlab.results import check_output_dir

    if report:
        raise click.UsageError("--report does not show replays yet; the result directory has the chart and tables")
    if timing == "afap" and speed != 1.0:
        raise click.UsageError("--speed applies to --timing trace; --timing afap runs as fast as the drive can")
    if timing == "trace" and qd != 32:
        raise click.UsageError("--qd applies to --timing afap; with --timing trace the trace's times set the load")
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    if not quiet:
        how = f"at trace timing x{speed:g}" if timing == "trace" else f"as fast as possible at QD{qd}"
        click.echo(header(cfg, f"replay of {trace} {how}, precondition {precondition}"), err=True)
    result = replay(trace, cfg, format=fmt, trace_device=trace_device, start_s=start_s, end_s=end_s, limit=limit,
                    fit=fit, timing=timing, speed=speed, qd=qd, precondition=precondition,
                    skip_bad_lines=skip_bad_lines, blkparse_action=blkparse_action, seed=seed, progress=not quiet)
    path = result.save(out_dir)
    if quiet:
        return
    s = result.summary
    click.echo(f"Results in {path}{os.sep}: {', '.join(REPLAY_FILES)}")
    click.echo(f"  {s['label']}")
    click.echo(f"  requests   {s['requests']:>14,}   ({s['reads']:,} reads, {s['writes']:,} writes, "
               f"{s['trims']:,} trims; {sum(s['unaligned_requests'].values()):,} unaligned)")
    click.echo(f"  host bytes {format_size(s['host_read_bytes']):>14} read, {format_size(s['host_write_bytes'])} "
               f"written, {format_size(s['host_trim_bytes'])} trimmed")
    wa = s["write_amplification"]
    click.echo(f"  write ampl. {('%.3f' % wa) if wa is not None else 'n/a':>13}   ({s['erases']:,} erases, "
               f"{s['gc_victims']:,} GC victims)")
    original = s.get("trace_latency_us") or {}
    for d in ("read", "write", "trim"):
        for what, lat in (("lat. ", s["latency_us"][d]), ("trace", original.get(d))):
            if lat:
                click.echo(f"  {d if what == 'lat. ' else '':5} {what} p50 {latency_text(lat['p50']):>9}  "
                           f"p99 {latency_text(lat['p99']):>9}  max {latency_text(lat['max']):>9}")
    if original:
        click.echo(f"  trace lat. is the traced system's: {original['source']} ({original['requests_with_latency']:,} "
                   f"of {original['requests']:,} requests)")
    skipped = {k: v for k, v in s["lines"].items() if k not in ("read", "requests") and v}
    if skipped:
        click.echo("  lines skipped: " + ", ".join(f"{v:,} {k.replace('_', ' ')}" for k, v in skipped.items()))
    if s.get("note"):
        click.echo(f"  note: {s['note']}")
    click.echo(f"  simulated {s['duration_s']:,.1f} s in {s['wall_seconds']:.1f} s of wall time "
               f"({s['requests_per_wall_second']:,.0f} requests/s)")


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_run(cfg: DriveConfig, kwargs: Dict[str, Any]) -> ReplayResult:
    from ssdlab.replay import replay

    kwargs = dict(kwargs)
    return replay(kwargs.pop("trace"), cfg, **kwargs)


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    figures = drive_figures(s)
    for key in ("requests", "host_read_bytes", "host_write_bytes", "host_trim_bytes", "write_amplification",
                "erases", "duration_s"):
        figures[key] = s.get(key)
    for d in ("read", "write"):
        lat = (s.get("latency_us") or {}).get(d) or {}
        figures[f"{d}_p99_us"] = lat.get("p99")
        figures[f"{d}_mean_us"] = lat.get("mean")
    return figures


def _trace_content(options: Dict[str, Any]) -> Any:
    """A trace may be many GB: its size and modification time stand for its contents."""
    st = Path(options["trace"]).stat()
    return [options.get("drive_file"), str(options["trace"]), st.st_size, st.st_mtime_ns]


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM,),
    command=command,
    result=ReplayResult,
    files=REPLAY_FILES,
    sweep=SweepEntry(run=_sweep_run, figures=_sweep_figures,
                     metrics=(("write_amplification", "write amplification"),
                              ("write_p99_us", "write latency p99 (µs)"), ("read_p99_us", "read latency p99 (µs)")),
                     required=("trace",), reportable=False, content=_trace_content),
)
