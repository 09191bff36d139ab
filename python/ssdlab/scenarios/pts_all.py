"""``ssdlab pts all``: every PTS test in sequence on one simulated drive model, into one directory
(one subdirectory per test), in one module.

Each test starts from its own purge on a fresh simulated drive of the same configuration (PTS
purges before every test), with the shared options (variant, rounds, round length, write cache,
seed). Two tests are scaled so that the whole run stays in ~20 minutes of wall time at 256 GB
(docs/pts.md, *pts all*): XSR's access groups run `XSR_MINUTES` (instead of the spec's 8 h / 6 h /
8 h) and HIR runs `HIR_SEGMENTS` write slices per wait state (instead of [CH]'s 360); WSAT writes
its full 4 × the user capacity. ``--xsr-minutes`` and ``--hir-segments`` set them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import click

from ssdlab import cli_values as cv
from ssdlab.pts import options as pto
from ssdlab.pts.device import DEVICE_OPTIONS
from ssdlab.sizes import format_size
from ssdlab.scenarios.base import Opt, Scenario

__all__ = ["HIR_SEGMENTS", "OPTIONS", "SCENARIO", "TESTS", "XSR_MINUTES", "pts_all"]

NAME = "pts-all"
TESTS = ("iops", "throughput", "latency", "wsat", "hir", "xsr", "cbw", "dirth")
"""The tests in the order they run (and their subdirectories)."""
XSR_MINUTES = (30.0, 20.0, 30.0)
HIR_SEGMENTS = 60
FILES = ("summary.json",) + tuple(f"{t}/" for t in TESTS)
SIM_NO_REPORT = pto.SIM_NO_REPORT


def _segments(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        from ssdlab.errors import SsdlabError

        raise SsdlabError(f"{what} must be a whole number from 1 to 100,000, got {value!r}")
    return value


def _xsr_option() -> Opt:
    from ssdlab.scenarios import pts_xsr

    o = pts_xsr.SCENARIO.option("phase_minutes")
    return Opt("xsr_minutes", "Minutes of XSR's three access groups (the spec: 480,360,480).", type=o.type,
               default=",".join(f"{m:g}" for m in XSR_MINUTES), show_default=True, metavar=o.metavar, kind="text",
               range=o.range)


OPTIONS = (
    pto.variant("PTS variant of every test: client (PTS-C) or enterprise (PTS-E)."),
    pto.rounds_max("Rounds after which a test in rounds stops when not steady (PTS: 25)."),
    pto.round_s("Seconds of each point of a round, and of each test's samples (PTS: 60)."),
    pto.write_cache(),
    _xsr_option(),
    Opt("hir_segments", "HIR's write slices per wait state ([CH]: 360).", type=cv.Checked("n", _segments, base=int),
        default=HIR_SEGMENTS, show_default=True, metavar="N", kind="whole", range="1 … 100,000"),
)


def _runs(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], xsr_minutes: Tuple[float, ...],
          hir_segments: int, seed: int) -> List[Tuple[str, Callable[[Any, Any, Any], Any]]]:
    """Each test as ``run(config, progress, device)`` (`device` None: a simulated drive of `config`)."""
    from ssdlab.scenarios import (pts_cbw, pts_dirth, pts_hir, pts_iops, pts_latency, pts_throughput, pts_wsat,
                                  pts_xsr)

    common = {"variant": variant, "write_cache": write_cache, "seed": seed}
    rounds = {"rounds_max": rounds_max, "round_s": round_s}
    return [
        ("iops", lambda cfg, p, d: pts_iops.pts_iops(cfg, **common, **rounds, progress=p, device=d)),
        ("throughput", lambda cfg, p, d: pts_throughput.pts_throughput(cfg, **common, **rounds, progress=p, device=d)),
        ("latency", lambda cfg, p, d: pts_latency.pts_latency(cfg, **common, **rounds, progress=p, device=d)),
        ("wsat", lambda cfg, p, d: pts_wsat.pts_wsat(cfg, **common, sample_s=whole_seconds(round_s), device=d)),
        ("hir", lambda cfg, p, d: pts_hir.pts_hir(cfg, **common, segments=hir_segments, round_s=round_s, device=d)),
        ("xsr", lambda cfg, p, d: pts_xsr.pts_xsr(cfg, **common, phase_minutes=xsr_minutes, sample_s=round_s,
                                                  device=d)),
        ("cbw", lambda cfg, p, d: pts_cbw.pts_cbw(cfg, **common, **rounds, progress=p, device=d)),
        ("dirth", lambda cfg, p, d: pts_dirth.pts_dirth(cfg, **common, **rounds, progress=p, device=d)),
    ]


def whole_seconds(round_s: float) -> float:
    """WSAT's sample length in `pts all`: the round length in whole seconds, at least 1 (WSAT's
    samples are whole seconds of its 1-s series)."""
    return float(max(1, round(round_s)))


def _verdict(summary: Dict[str, Any]) -> str:
    ss = summary.get("steady_state")
    if isinstance(ss, dict):
        a, b = ss["window_rounds"]
        return f"{'steady' if ss['steady'] else 'NOT steady'} in rounds {a}-{b}"
    if "block_sizes" in summary:
        return ", ".join(f"{k}: {'steady' if v['steady_state']['steady'] else 'NOT steady'}"
                         for k, v in summary["block_sizes"].items())
    if "drive_fills" in summary:
        return f"{summary['drive_fills']:.2f} drive fills, {summary['zero_iops_seconds']} s at 0 IOPS"
    if "recovery" in summary:
        s = summary["recovery"]["seconds"]
        return "no recovery in group 3" if s is None else f"recovered after {s:,.0f} s"
    return ""


def pts_all(config: Any = None, out_dir: Any = None, *, variant: str = "enterprise", rounds_max: int = 25,
            round_s: float = 60.0, write_cache: Optional[str] = None, xsr_minutes: Tuple[float, ...] = XSR_MINUTES,
            hir_segments: int = HIR_SEGMENTS, seed: int = 1, echo: Callable[[str], None] = lambda _s: None,
            device: Any = None) -> Dict[str, Any]:
    """Runs every PTS test on `config` and saves each into `out_dir`/TEST; returns the run's
    summary (each test's wall seconds and verdict), also written as `out_dir`/summary.json.

    With `device` (a `ssdlab.pts.device.DeviceDrive`, opened with the confirmations by
    `ssdlab.pts.device.open_device`) every test runs through fio on it, each from its own purge,
    with fio's files in `out_dir`/TEST/fio; `out_dir` is then the device run's staging directory,
    which the caller commits."""
    from ssdlab import procedures
    from ssdlab.results import check_output_dir, write_summary
    from ssdlab.scenarios.command import save

    from ssdlab.pts.rounds import VARIANTS
    from ssdlab.scenarios import pts_xsr

    cfg = procedures.resolve_config(config) if device is None else device.config
    # every option checked before the first test runs, so a bad one writes nothing
    if variant not in VARIANTS:
        from ssdlab.errors import SsdlabError

        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    pto.check_rounds_max(rounds_max, "rounds max")
    pto.check_round_s(round_s, "round seconds")
    if device is not None:
        pto.apply_write_cache(device, VARIANTS[variant], write_cache, on_device=True)  # refuses an override
    pto.write_cache_enabled(VARIANTS[variant], write_cache)
    xsr_minutes = pts_xsr._phase_minutes(xsr_minutes, "XSR minutes")
    _segments(hir_segments, "HIR segments")
    seed = procedures.check_seed(seed)
    out = check_output_dir(out_dir, NAME) if device is None else Path(out_dir)
    tests: List[Dict[str, Any]] = []
    started = time.perf_counter()
    runs = _runs(variant, rounds_max, round_s, write_cache, tuple(xsr_minutes), hir_segments, seed)
    for i, (name, run) in enumerate(runs):
        echo(f"[{i + 1}/{len(runs)}] pts {name} ({time.perf_counter() - started:.0f} s so far)")
        t0 = time.perf_counter()

        def each_round(r: int, *_rest: Any, name: str = name, t0: float = t0) -> None:
            echo(f"    {name} round {r} ({time.perf_counter() - t0:.0f} s)")

        if device is None:
            result = run(cfg, each_round, None)
            path = save(result, out / name, False)
        else:
            result = run(None, each_round, _fresh(device, out / name / "fio"))
            path = out / name
            result.save(path)
        wall = time.perf_counter() - t0
        tests.append({"test": name, "directory": name, "wall_seconds": wall,
                      "simulated_seconds": result.summary.get("simulated_seconds"),
                      "verdict": _verdict(result.summary), "deviations": result.summary.get("deviations", [])})
        echo(f"    {name}: {tests[-1]['verdict']} ({wall:.0f} s wall) -> {path}")
    summary = {"scenario": NAME, "label": f"{cfg.name} · PTS, every test", "drive": cfg.name, "seed": seed,
               "variant": variant, "rounds_max": rounds_max, "round_s": round_s, "write_cache_override": write_cache,
               "xsr_minutes": list(xsr_minutes), "hir_segments": hir_segments, "tests": tests,
               "wall_seconds": time.perf_counter() - started}
    if device is not None:
        summary.update({"device": device.path, "device_kind": device.target.kind})
    write_summary(out, summary)
    return summary


def _fresh(device: Any, workdir: Path) -> Any:
    """`device` as a new `DeviceDrive` for the next test: its own fio directory, purges, fio runs,
    gaps and clock (each test's summary states only its own)."""
    from dataclasses import replace

    workdir.mkdir(parents=True, exist_ok=True)
    return replace(device, workdir=workdir, notes=list(device.notes), purges=[], fio_runs=0, fio_version=None,
                   gaps=[], _now=0.0)


def command(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], xsr_minutes: Tuple[float, ...],
            hir_segments: int, drive: Optional[str], drive_file: Optional[str], capacity: Optional[int],
            op: Optional[float], gc: Optional[str], seed: int, out: Optional[str], quiet: bool,
            device: Optional[str] = None, yes_destroy_data: bool = False, force_signatures: bool = False) -> None:
    """Every SNIA PTS test in sequence on a simulated drive, into one directory.

    IOPS, throughput, latency, WSAT, HIR, XSR, CBW and DIRTH, each from its own purge, into
    OUT/TEST (docs/pts.md). XSR's access groups run --xsr-minutes and HIR --hir-segments slices
    per wait state, so that the whole stays near 20 minutes at 256 GB. Writes OUT/summary.json
    (each test's wall time and verdict) and every test's own files.
    """
    from ssdlab import preload
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import default_out, header, sim_config

    echo: Callable[[str], None] = (lambda _s: None) if quiet else (lambda s: click.echo(s, err=True))
    options = {"variant": variant, "rounds_max": rounds_max, "round_s": round_s, "write_cache": write_cache,
               "xsr_minutes": xsr_minutes, "hir_segments": hir_segments, "seed": seed, "echo": echo}
    if device is not None:
        summary = _on_device(device, out, capacity, yes_destroy_data, force_signatures, options)
        out_dir = Path(summary.pop("_path"))
    else:
        if yes_destroy_data or force_signatures:
            raise click.UsageError("--yes-destroy-data and --force-signatures apply to --device runs only")
        cfg = sim_config(drive, drive_file, capacity, op, gc)
        out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
        if not quiet:
            click.echo(header(cfg, f"PTS, every test ({', '.join(TESTS)}) into {out_dir}"), err=True)
        preload.start()
        summary = pts_all(cfg, out_dir, **options)
    if quiet:
        return
    click.echo(f"Results in {Path(out_dir)}: summary.json, {', '.join(TESTS)}")
    for t in summary["tests"]:
        click.echo(f"  {t['test']:<10} {t['wall_seconds']:>7.1f} s  {t['verdict']}")
    click.echo(f"  wall time {summary['wall_seconds']:.1f}s")


def _on_device(device: str, out: Optional[str], capacity: Optional[int], yes: bool, force: bool,
               options: Dict[str, Any]) -> Dict[str, Any]:
    """`pts all --device`: the device checked and confirmed once (`open_device`), every test on it,
    the whole result staged and moved in at the end (a failed run leaves nothing)."""
    import re

    from ssdlab.pts.device import SIM_ONLY, _given, is_nbd_uri, open_device
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import default_out

    ctx = click.get_current_context()
    given = [o for o in SIM_ONLY if _given(ctx, o)]
    if given:
        raise click.UsageError(f"--{given[0].replace('_', '-')} applies to simulated drives only; it cannot be "
                               "combined with --device")
    from ssdlab.pts.rounds import VARIANTS

    if options["variant"] in VARIANTS:  # an override of the device's write cache, before anything is opened
        pto.apply_write_cache(None, VARIANTS[options["variant"]], options["write_cache"], on_device=True)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(device).name if not is_nbd_uri(device) else "nbd").strip("-")
    out_dir = check_output_dir(out if out is not None else default_out(safe or "device", NAME), NAME)
    echo = options["echo"]
    with open_device(device, capacity=capacity, yes_destroy_data=yes, force_signatures=force, out_dir=out_dir,
                     depth=32, say=lambda line: echo(f"  {line}")) as (drive, stage):
        echo(f"ssdlab: {device} ({drive.target.kind}, {format_size(drive.user_bytes)}): PTS, every test through fio "
             f"({drive.engine}{', O_DIRECT' if drive.direct else ''})")
        top = stage.path / "fio"  # each test keeps its fio files in TEST/fio
        summary = pts_all(None, stage.path, device=drive, **options)
        if top.is_dir() and not any(top.iterdir()):
            top.rmdir()
        summary["_path"] = str(stage.commit())
    return summary


def _device_help(command: Callable[..., None]) -> Callable[..., None]:
    from ssdlab.pts.device import DEVICE_HELP

    command.__doc__ = (command.__doc__ or "").rstrip() + "\n\n" + DEVICE_HELP
    return command


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=_device_help(command),
    files=FILES,
    group="pts",
)
