"""``ssdlab pts xsr``: the SNIA PTS cross-stimulus recovery test (XSR) on a simulated drive, in one module.

The test (docs/pts.md, *XSR*; [YF] only): purge, no WIPC, then three access groups at TC 1 / QD 32:
SEQ 1024 KiB writes, RND 8 KiB writes, SEQ 1024 KiB writes again (the spec's 8 h / 6 h / 8 h;
``--phase-minutes``), each one core step with a ``--sample-s`` (60 s) series: throughput (MB/s,
10^6 bytes/s) and average response time (ART) per sample, maximum response time (MRT) per group.
Recovery ([YF]'s definition, impl): the time into group 3 until a sample's throughput reaches the
average throughput of group 1.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import click

from ssdlab import cli_values as cv, limits, procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.pts.device import DEVICE_OPTIONS, annotate, with_device
from ssdlab.pts.report import PtsRun, report_section
from ssdlab.pts import columns, options as pto
from ssdlab.pts.rounds import VARIANTS, active_bytes, derive_seed
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["FILES", "GROUPS", "OPTIONS", "SCENARIO", "PtsXsrResult", "pts_xsr"]

NAME = "pts-xsr"
GROUPS = (("SEQ 1024 KiB W", "sequential", 1024 * 1024), ("RND 8 KiB W", "random", 8192),
          ("SEQ 1024 KiB W", "sequential", 1024 * 1024))
"""The access groups: name, pattern, block size ([YF])."""
QUEUE_DEPTH = 32
SAMPLE_COLUMNS = ("group", "sample", "time_s", "seconds", "mb_s", "iops", "mean_latency_us", "max_latency_us")
FILES = ("samples.csv", "summary.json", "xsr.png")
SIM_NO_REPORT = pto.SIM_NO_REPORT


class _Minutes(click.ParamType):
    name = "MINUTES,MINUTES,MINUTES"

    def convert(self, value: Any, param: Any, ctx: Any) -> Tuple[float, float, float]:
        try:
            return _phase_minutes(value, "phase minutes")
        except SsdlabError as err:
            self.fail(str(err), param, ctx)


def _phase_minutes(value: Any, what: str) -> Tuple[float, float, float]:
    parts = value.split(",") if isinstance(value, str) else list(value)
    if len(parts) != 3:
        raise SsdlabError(f"{what} must be three durations in minutes, e.g. 480,360,480, got {value!r}")
    out = []
    for p in parts:
        v = limits.parse_number(p, what) if isinstance(p, str) else p
        out.append(limits.minutes(v, what))
    return (out[0], out[1], out[2])


def _sample_s(value: Any, what: str) -> float:
    return limits.seconds(value, what, maximum=3600.0)


OPTIONS = (
    Opt("phase_minutes", "Minutes of each access group: SEQ 1024 KiB writes, RND 8 KiB writes, SEQ 1024 KiB "
        "writes (the spec: 480,360,480).", type=_Minutes(), default="480,360,480", show_default=True,
        metavar="A,B,C", kind="text", axis="category", range="three positive durations in minutes"),
    Opt("sample_s", "Seconds of each sample (PTS: 60).", type=cv.Checked("seconds", _sample_s), default=60.0,
        show_default="60",
        metavar="SECONDS", range="0.001 … 3600"),
    pto.variant("PTS variant: client (75 % active range) or enterprise (100 %); both at TC 1 × QD 32."),
    pto.write_cache(),
)


def steps(span: int, minutes: Tuple[float, float, float], sample_s: float, seed: int) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = [{"step": "secure_erase"}]
    for i, ((name, pattern, bs), m) in enumerate(zip(GROUPS, minutes)):
        out.append({"step": "run", "workload": {"label": f"XSR group {i + 1}: {name}", "rw": "write",
                                                "pattern": pattern, "block_bytes": bs, "queue_depth": QUEUE_DEPTH,
                                                "span_bytes": span, "duration_s": m * 60.0,
                                                "interval_ms": sample_s * 1000.0, "seed": derive_seed(seed, i)}})
    return out


def pts_xsr(
    config: procedures.Config = None,
    *,
    phase_minutes: Any = default_of(OPTIONS, "phase_minutes"),
    sample_s: float = default_of(OPTIONS, "sample_s"),
    variant: str = default_of(OPTIONS, "variant"),
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
    device: Any = None,
) -> PtsXsrResult:
    """PTS's cross-stimulus recovery test on a simulated drive: purge, then SEQ 1024 KiB, RND 8 KiB
    and SEQ 1024 KiB writes at TC 1 / QD 32 for `phase_minutes` each, in `sample_s` samples."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    minutes = _phase_minutes(phase_minutes, "phase minutes")
    sample = _sample_s(sample_s, "sample seconds")
    seed = procedures.check_seed(seed)
    v = VARIANTS[variant]
    sim = Simulator(cfg, seed) if device is None else device  # a DeviceDrive: the same steps through fio
    cfg = sim.config
    cache = pto.apply_write_cache(sim, v, write_cache, on_device=device is not None)
    span = active_bytes(sim.user_bytes, v.active_range_pct, 1024 * 1024)
    started = time.perf_counter()
    results = sim.run_steps(steps(span, minutes, sample, seed), progress)
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "threads": 1, "queue_depth": QUEUE_DEPTH, "phase_minutes": list(minutes), "sample_s": sample,
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsXsrResult.from_run(label=label if label is not None else f"{cfg.name} · PTS XSR", config=cfg,
                                 groups=results[1:], params=params, seed=seed,
                                 wall_seconds=time.perf_counter() - started), sim)


class PtsXsrResult(ProcedureResult):
    """A PTS cross-stimulus recovery test (docs/pts.md, *XSR*): `samples` (``group`` 1-3, ``sample``,
    ``time_s`` from the first group's start, ``seconds``, ``mb_s``, ``iops``, ``mean_latency_us``)
    and `summary` (per group its average MB/s, last sample's MB/s, peak sample ART and MRT; the
    recovery time into group 3)."""

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("samples", "samples.csv", SAMPLE_COLUMNS, finite=("group", "time_s", "mb_s")),)

    def __init__(self, samples: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any) -> None:
        self.samples = samples
        super().__init__(summary, **kwargs)

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, groups: List[Any], params: Dict[str, Any], seed: int,
                 wall_seconds: float) -> PtsXsrResult:
        import numpy as np
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        summary["wipc"] = None
        t0 = groups[0].start_s
        rows, per_group = [], []
        per_sample_max = all("write_latency_max_ns" in step.series for step in groups)
        for g, step in enumerate(groups, start=1):
            raw = step.series
            n = len(raw)
            starts = np.arange(n, dtype=np.float64) * step.interval_s
            covered = np.minimum(np.diff(np.append(starts, step.duration_s)), step.interval_s)
            ios = raw["write_ios"].to_numpy(np.float64)
            moved = raw["write_bytes"].to_numpy(np.float64)
            lat = raw["write_latency_sum_ns"].to_numpy(np.float64)
            top = raw["write_latency_max_ns"].to_numpy(np.float64) if per_sample_max else None
            for i in range(n):
                if covered[i] < step.interval_s / 2:  # the drain after the group's time: no sample
                    continue
                rows.append({"group": g, "sample": i + 1, "time_s": step.start_s - t0 + starts[i],
                             "seconds": float(covered[i]), "mb_s": moved[i] / covered[i] / 1e6,
                             "iops": ios[i] / covered[i],
                             "mean_latency_us": lat[i] / ios[i] / 1e3 if ios[i] else None,
                             "max_latency_us": top[i] / 1e3 if top is not None and ios[i] else None})
            phase = step.phase or {}
            w = (phase.get("latency") or [None, None, None])[1] or {}
            mine = [r for r in rows if r["group"] == g]
            per_group.append({"group": g, "workload": GROUPS[g - 1][0], "seconds": step.duration_s,
                              "mb_s": phase.get("bytes", [0, 0, 0])[1] / step.duration_s / 1e6,
                              "last_sample_mb_s": mine[-1]["mb_s"] if mine else None,
                              "peak_sample_art_us": max((r["mean_latency_us"] or 0 for r in mine), default=None),
                              "mrt_us": w.get("max_ns", 0) / 1e3 if w else None})
        samples = pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))
        summary["groups"] = per_group
        target = per_group[0]["mb_s"]
        third = samples[samples["group"] == 3]
        reached = third[third["mb_s"] >= target]
        summary["recovery"] = {
            "target_mb_s": target,
            "seconds": float(reached["time_s"].iloc[0] - third["time_s"].iloc[0] + reached["seconds"].iloc[0])
            if len(reached) else None,
            "definition": "time into group 3 until a sample's MB/s reaches group 1's average ([YF])"}
        summary["deviations"] = pto.cache_deviations(params) + ([] if per_sample_max else [
            "MRT per access group, not per sample (fio's windowed latency log gives each window's mean)"]) + (
                                 [] if params["phase_minutes"] == [480, 360, 480] else
                                                [f"access groups of {params['phase_minutes']} minutes instead of "
                                                 "480, 360, 480"])
        return cls(samples, plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        m = s["phase_minutes"]
        how = (f"purge, SEQ 1 MiB W {m[0]:g} min, RND 8 KiB W {m[1]:g} min, SEQ 1 MiB W {m[2]:g} min, TC 1 × QD 32, "
               f"{s['sample_s']:g}-s samples")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        return {"xsr.png": figure(self)}


def figure(r: PtsXsrResult) -> Figure:
    """Throughput (and ART and MRT per sample on a second axis) against time, all access groups."""
    from ssdlab.plots import new_figure
    from ssdlab.pts.charts import COLOURS

    s = r.summary
    fig, ax = new_figure(f"{r.label}: cross-stimulus recovery, MB/s against time", r.subtitle())
    art = ax.twinx()
    mrt = False
    for g in (1, 2, 3):
        rows = r.samples[r.samples["group"] == g]
        ax.plot(rows["time_s"] + rows["seconds"] / 2, rows["mb_s"], color=COLOURS[g - 1], linewidth=1.4,
                label=f"group {g}: {GROUPS[g - 1][0]}")
        art.plot(rows["time_s"] + rows["seconds"] / 2, rows["mean_latency_us"], color=COLOURS[g - 1], linewidth=0.8,
                 linestyle=":")
        if "max_latency_us" in rows and rows["max_latency_us"].notna().any():
            art.plot(rows["time_s"] + rows["seconds"] / 2, rows["max_latency_us"], color=COLOURS[g - 1],
                     linewidth=0.6, linestyle="-.", alpha=0.7)
            mrt = True
    ax.axhline(s["recovery"]["target_mb_s"], color="#6b7280", linestyle="--", linewidth=1.0,
               label=f"group 1 average {s['recovery']['target_mb_s']:,.0f} MB/s")
    rec = s["recovery"]["seconds"]
    if rec is not None:
        ax.plot([], [], " ", label=f"recovery {rec:,.0f} s into group 3")
    ax.set_ylim(0, float(r.samples["mb_s"].max()) * 1.15 if len(r.samples) else 1.0)
    if mrt:  # MRT per sample is often 10-100 x the ART: both on a log axis
        art.set_yscale("log")
        art.set_ylabel("ART (dotted) and MRT (dash-dot), µs, log")
    else:
        art.set_ylim(0, None)
        art.set_ylabel("ART (µs, dotted)")
    ax.set_ylabel("MB/s")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    return fig


def command(phase_minutes: Tuple[float, float, float], sample_s: float, variant: str, write_cache: Optional[str], drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], quiet: bool) -> None:
    """SNIA PTS's cross-stimulus recovery test (XSR) on a simulated drive.

    Purge, then SEQ 1024 KiB writes, RND 8 KiB writes and SEQ 1024 KiB writes again at TC 1 × QD 32
    for --phase-minutes each, in --sample-s samples; the recovery time into the third group
    (docs/pts.md). Writes samples.csv, summary.json and xsr.png.
    """
    from ssdlab import preload
    from ssdlab.progress import StepBars
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import Progress

    sample = sample_s
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    user = int(cfg.describe()["user_capacity_bytes"])
    plan = steps(active_bytes(user, v.active_range_pct, 1024 * 1024), phase_minutes, sample, seed)
    progress: Any = False
    if not quiet:
        progress = Progress(header(cfg, "PTS XSR: purge, SEQ 1 MiB / RND 8 KiB / SEQ 1 MiB writes of "
                                        f"{', '.join(f'{m:g}' for m in phase_minutes)} minutes"), StepBars(plan))
    preload.start()
    try:
        result = pts_xsr(cfg, phase_minutes=phase_minutes, sample_s=sample, variant=variant, write_cache=write_cache, seed=seed,
                         progress=progress)
    finally:
        if progress:
            progress.bars.close()
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    s = result.summary
    for g in s["groups"]:
        click.echo(f"  group {g['group']} {g['workload']}: {g['mb_s']:,.1f} MB/s, last sample "
                   f"{g['last_sample_mb_s']:,.1f} MB/s, peak ART {g['peak_sample_art_us']:,.0f} µs, "
                   f"MRT {g['mrt_us']:,.0f} µs")
    rec = s["recovery"]["seconds"]
    click.echo("  recovery: " + (f"{rec:,.0f} s into group 3" if rec is not None else "not within group 3"))
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_xsr, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsXsrResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_xsr), figures=columns.xsr, metrics=(
        ("group3_vs_group1", "SEQ MB/s after the random writes / before"),
        ("group2_mb_s", "RND 8 KiB write MB/s"),
        ("recovery_s", "recovery time (s)"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
