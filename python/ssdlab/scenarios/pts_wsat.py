"""``ssdlab pts wsat``: the SNIA PTS write saturation test (WSAT) on a simulated drive, in one module.

The test (docs/pts.md, *WSAT*): purge (the core's secure erase), no WIPC ([CH]/[YF] ``skipWipc``,
[TK]), then 4 KiB random writes over the active range at the variant's TC × QD, in samples of
``--sample-s`` (PTS: 1 minute), until the host wrote ``--capacity-multiple`` (4) × the user capacity
or ``--time-limit`` seconds passed ([TK]: "While not written 4x User Capacity or 24h"). The core
runs it as one step of TC workloads with a 1-s series, so the samples are sums of whole seconds
and the seconds themselves are kept (`series.csv`): a drive that stalls for seconds at a time
(``clean-up-later``) shows its 0-IOPS seconds there, which a one-minute sample averages away.

This module holds its options (declared once), its API function (`pts_wsat`), its result
(`PtsWsatResult`: ``samples.csv``, ``series.csv``, ``summary.json``, ``wsat_time.png``,
``wsat_tgbw.png``) and its command, ``ssdlab pts wsat``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import click

from ssdlab import cli_values as cv, limits, procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.pts.device import DEVICE_OPTIONS, annotate, with_device
from ssdlab.pts.report import PtsRun, report_section
from ssdlab.pts import columns, options as pto, steady
from ssdlab.pts.rounds import VARIANTS, active_bytes, derive_seed
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["FILES", "OPTIONS", "SCENARIO", "PtsWsatResult", "pts_wsat"]

NAME = "pts-wsat"
BLOCK = 4096
SAMPLE_COLUMNS = ("sample", "time_s", "seconds", "iops", "mb_s", "tgbw", "drive_fills", "zero_seconds",
                  "write_amplification")
SERIES_COLUMNS = ("time_s", "iops")
FILES = ("samples.csv", "series.csv", "summary.json", "wsat_time.png", "wsat_tgbw.png")
SIM_NO_REPORT = pto.SIM_NO_REPORT
MAX_THREADS = 256


def _multiple(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if not 0 < v <= 100:
        raise SsdlabError(f"{what} must be above 0 and at most 100 (times the user capacity), got {value!r}")
    return v


def _sample_s(value: Any, what: str) -> float:
    v = limits.seconds(value, what, maximum=3600.0)
    if v != int(v):
        raise SsdlabError(f"{what} must be a whole number of seconds (samples are whole 1-s intervals), got {value!r}")
    return v


def _time_limit(value: Any, what: str) -> float:
    return limits.seconds(value, what, maximum=limits.MAX_SERIES_SECONDS)


def _threads(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise SsdlabError(f"{what} must be a whole number from 1 to {MAX_THREADS}, got {value!r}")
    return value


OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range, TC 2 × QD 16) or enterprise (PTS-E: 100 %, "
        "TC 4 × QD 32)."),
    Opt("capacity_multiple", "Stop once the host wrote this many times the user capacity (PTS: 4).",
        type=cv.Checked("x", _multiple), default=4.0, show_default="4", metavar="X", range="(0, 100]"),
    Opt("time_limit", "Stop after this many simulated seconds even if less was written. [default: none]",
        type=cv.Checked("seconds", _time_limit), metavar="SECONDS", range="0.001 … 10^7"),
    Opt("sample_s", "Seconds of each sample (PTS: 60).", type=cv.Checked("seconds", _sample_s), default=60.0,
        show_default="60", metavar="SECONDS", range="1 … 3600, whole seconds"),
    Opt("tc", "Thread count: workloads run together, each with its own queue. [default: the variant's]",
        type=cv.Checked("n", _threads, base=int), metavar="N", kind="whole", range=f"1 … {MAX_THREADS}"),
    Opt("qd", "Queue depth of each thread. [default: the variant's]", type=cv.queue_depth, metavar="N",
        kind="whole", range="1 … 65536"),
    pto.write_cache(),
)


def steps(user_bytes: int, span_bytes: int, *, threads: int, queue_depth: int, multiple: float,
          time_limit: Optional[float], seed: int) -> List[Dict[str, Any]]:
    """Purge, then `threads` workloads of 4 KiB random writes over the active range together,
    each with `queue_depth` outstanding and a share of `multiple` × the user capacity (and the
    time limit), with a 1-s series."""
    per_thread = max(int(multiple * user_bytes) // threads // BLOCK * BLOCK, BLOCK)
    workloads = []
    for t in range(threads):
        w: Dict[str, Any] = {"label": f"WSAT T{t + 1}", "rw": "write", "pattern": "random", "block_bytes": BLOCK,
                             "queue_depth": queue_depth, "span_bytes": span_bytes, "byte_limit": per_thread,
                             "interval_ms": 1000.0, "seed": derive_seed(seed, t)}
        if time_limit is not None:
            w["duration_s"] = time_limit
        workloads.append(w)
    return [{"step": "secure_erase"}, {"step": "run_together", "workloads": workloads}]


# -- the API ---------------------------------------------------------------------------------------


def pts_wsat(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    capacity_multiple: float = default_of(OPTIONS, "capacity_multiple"),
    time_limit: Optional[float] = None,
    sample_s: float = default_of(OPTIONS, "sample_s"),
    tc: Optional[int] = None,
    qd: Optional[int] = None,
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
    device: Any = None,
) -> PtsWsatResult:
    """PTS's write saturation test on a simulated drive: purge, then 4 KiB random writes at the
    variant's TC × QD over its active range until `capacity_multiple` × the user capacity is
    written or `time_limit` seconds pass, reported in samples of `sample_s` seconds."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    v = VARIANTS[variant]
    threads = _threads(v.threads if tc is None else tc, "thread count")
    depth = limits.queue_depth(v.queue_depth if qd is None else qd, "queue depth")
    multiple = _multiple(capacity_multiple, "capacity multiple")
    limit = None if time_limit is None else _time_limit(time_limit, "time limit")
    sample = _sample_s(sample_s, "sample seconds")
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed) if device is None else device  # a DeviceDrive: the same steps through fio
    cfg = sim.config
    cache = pto.apply_write_cache(sim, v, write_cache, on_device=device is not None)
    span = active_bytes(sim.user_bytes, v.active_range_pct, BLOCK)
    started = time.perf_counter()
    results = sim.run_steps(steps(sim.user_bytes, span, threads=threads, queue_depth=depth, multiple=multiple,
                                  time_limit=limit, seed=seed), progress)
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "threads": threads, "queue_depth": depth, "capacity_multiple": multiple, "time_limit_s": limit,
              "sample_s": sample, "block_bytes": BLOCK,
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsWsatResult.from_run(label=label if label is not None else f"{cfg.name} · PTS WSAT ({v.spec})",
                                  config=cfg, step=results[-1], params=params, seed=seed,
                                  user_bytes=sim.user_bytes, wall_seconds=time.perf_counter() - started), sim)


# -- the result ------------------------------------------------------------------------------------


class PtsWsatResult(ProcedureResult):
    """A PTS write saturation test (docs/pts.md, *WSAT*).

    Attributes:
        samples: DataFrame, one row per sample (`SAMPLE_COLUMNS`): its start (``time_s``) and
            length, IOPS and MB/s (10^6 bytes/s) over it, the host's writes so far in GB
            (``tgbw``, 10^9 bytes, at the sample's end) and in drive fills (× user capacity), the
            0-IOPS seconds in it, and its write amplification.
        series: DataFrame ``time_s, iops``: every simulated second.
        summary: ``summary.json``: the parameters, samples, host and NAND bytes, first and last
            samples' IOPS, the 0-IOPS seconds, and the steady-state rule applied to the last 5
            samples (information only: PTS's WSAT has no steady-state stop).
    """

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("samples", "samples.csv", SAMPLE_COLUMNS, finite=("sample", "time_s", "iops", "tgbw")),
              CsvTable("series", "series.csv", SERIES_COLUMNS, finite=SERIES_COLUMNS))

    def __init__(self, samples: pd.DataFrame, series: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any) -> None:
        self.samples = samples
        self.series = series
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        s = self.summary
        return (f"<PtsWsatResult {self.label!r}: {s['samples']} samples, {s['drive_fills']:.2f} drive fills, "
                f"{s['zero_iops_seconds']} seconds at 0 IOPS>")

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, step: Any, params: Dict[str, Any], seed: int,
                 user_bytes: int, wall_seconds: float) -> PtsWsatResult:
        import numpy as np
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        summary["wipc"] = None
        raw = step.series
        ios = raw["write_ios"].to_numpy(np.int64)
        host = raw["host_bytes"].to_numpy(np.float64) if "host_bytes" in raw else ios * float(BLOCK)
        nand = raw["nand_units"].to_numpy(np.float64)
        d = config.describe()
        unit_bytes = d["physical_capacity_bytes"] // (d["dies"] * d["blocks_per_die"] * d["units_per_block"])
        seconds = len(ios)
        covered = np.minimum(np.diff(np.append(np.arange(seconds, dtype=np.float64), step.duration_s)), 1.0)
        series = pd.DataFrame({"time_s": np.arange(seconds, dtype=np.float64),
                               "iops": ios / np.where(covered > 0, covered, 1.0)})
        written = np.cumsum(ios) * float(BLOCK)
        n = int(params["sample_s"])
        rows = []
        for i, start in enumerate(range(0, seconds, n)):
            end = min(start + n, seconds)
            length = float(covered[start:end].sum())
            count = int(ios[start:end].sum())
            h = float(host[start:end].sum())
            rows.append({"sample": i + 1, "time_s": float(start), "seconds": length,
                         "iops": count / length if length > 0 else 0.0,
                         "mb_s": count * BLOCK / length / 1e6 if length > 0 else 0.0,
                         "tgbw": float(written[end - 1]) / 1e9, "drive_fills": float(written[end - 1]) / user_bytes,
                         "zero_seconds": int((ios[start:end] == 0).sum()),
                         "write_amplification": float(nand[start:end].sum()) * unit_bytes / h if h else None})
        samples = pd.DataFrame(rows, columns=list(SAMPLE_COLUMNS))
        phase = step.phase or {}
        counters = phase.get("counters", {})
        summary["samples"] = len(samples)
        summary["simulated_seconds"] = step.duration_s
        summary["host_write_bytes"] = int(phase.get("bytes", [0, 0, 0])[1])
        summary["drive_fills"] = summary["host_write_bytes"] / user_bytes
        summary["write_amplification"] = (counters.get("nand_write_units", 0) * unit_bytes /
                                          counters["host_write_bytes"]) if counters.get("host_write_bytes") else None
        summary["first_sample_iops"] = float(samples["iops"].iloc[0]) if len(samples) else None
        summary["last_sample_iops"] = float(samples["iops"].iloc[-1]) if len(samples) else None
        summary["zero_iops_seconds"] = int((ios[covered >= 1.0] == 0).sum())
        summary["stopped_by"] = ("time limit" if params["time_limit_s"] is not None and
                                 summary["host_write_bytes"] < params["capacity_multiple"] * user_bytes * 0.999
                                 else "capacity")
        whole = samples[samples["seconds"] >= n]
        summary["last_window"] = (steady.check_window(whole["iops"].tolist()[-steady.WINDOW:],
                                                      int(whole["sample"].iloc[-steady.WINDOW])).as_dict()
                                  if len(whole) >= steady.WINDOW else None)
        summary["deviations"] = deviations(params)
        return cls(samples, series, plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        how = (f"{s['spec']}: purge, RND 4 KiB writes at TC {s['threads']} × QD {s['queue_depth']} over "
               f"{s['active_range_pct']:g} % of the LBAs, {s['sample_s']:g}-s samples")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        return {"wsat_time.png": time_figure(self), "wsat_tgbw.png": tgbw_figure(self)}


def deviations(params: Dict[str, Any]) -> List[str]:
    out = []
    out.extend(pto.cache_deviations(params))
    if params["sample_s"] != 60:
        out.append(f"samples of {params['sample_s']:g} s instead of 60 s")
    v = VARIANTS[params["variant"]]
    if (params["threads"], params["queue_depth"]) != (v.threads, v.queue_depth):
        out.append(f"TC {params['threads']} × QD {params['queue_depth']} instead of {v.threads} × {v.queue_depth}")
    if params["capacity_multiple"] != 4:
        out.append(f"{params['capacity_multiple']:g} × the user capacity instead of 4 ×")
    return out


# -- the charts ------------------------------------------------------------------------------------


def time_figure(r: PtsWsatResult) -> Figure:
    """IOPS against time: every second (dots) and every sample (line)."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import new_figure, thousands

    s = r.summary
    fig, ax = new_figure(f"{r.label}: write saturation, IOPS against time", r.subtitle())
    ax.scatter(r.series["time_s"], r.series["iops"], s=2, color="#93c5fd", linewidths=0, label="each second",
               rasterized=True)
    mid = r.samples["time_s"] + r.samples["seconds"] / 2
    ax.plot(mid, r.samples["iops"], color="#1d4ed8", linewidth=1.6, marker="o", markersize=2.5,
            label=f"{s['sample_s']:g}-s samples")
    zeros = s["zero_iops_seconds"]
    if zeros:
        ax.plot([], [], " ", label=f"{zeros:,} seconds at 0 IOPS")
    ax.set_ylim(0, max(float(r.series["iops"].max()) if len(r.series) else 1.0, 1.0) * 1.08)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_ylabel("IOPS")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9, markerscale=3)
    return fig


def tgbw_figure(r: PtsWsatResult) -> Figure:
    """IOPS of every sample against the host's writes so far (GB), with drive fills on top."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import new_figure, thousands

    s = r.summary
    fig, ax = new_figure(f"{r.label}: write saturation, IOPS against GB written", r.subtitle())
    ax.plot(r.samples["tgbw"], r.samples["iops"], color="#1d4ed8", linewidth=1.5, marker="o", markersize=2.5)
    ax.set_xlabel("Total GB written by the host (10^9 bytes)")
    ax.set_ylabel("IOPS")
    ax.set_ylim(0, max(float(r.samples["iops"].max()) if len(r.samples) else 1.0, 1.0) * 1.08)
    ax.set_xlim(0, None)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    user_gb = s["user_capacity_bytes"] / 1e9
    top = ax.secondary_xaxis("top", functions=(lambda gb: gb / user_gb, lambda f: f * user_gb))
    top.set_xlabel("Drive fills (× user capacity)", fontsize=9)
    return fig


# -- the command -----------------------------------------------------------------------------------


def command(variant: str, capacity_multiple: float, time_limit: Optional[float], sample_s: float, tc: Optional[int],
            qd: Optional[int], write_cache: Optional[str], drive: Optional[str], drive_file: Optional[str], capacity: Optional[int],
            op: Optional[float], gc: Optional[str], seed: int, out: Optional[str], quiet: bool) -> None:
    """SNIA PTS's write saturation test (WSAT) on a simulated drive.

    Purge, then 4 KiB random writes over the active range at the variant's TC × QD until
    --capacity-multiple (4) × the user capacity is written or --time-limit passes, in samples of
    --sample-s (60) seconds (docs/pts.md). Writes samples.csv, series.csv (every second),
    summary.json, wsat_time.png and wsat_tgbw.png.
    """
    from ssdlab import preload
    from ssdlab.progress import StepBars
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import Progress

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    threads, depth = v.threads if tc is None else tc, v.queue_depth if qd is None else qd
    user = int(cfg.describe()["user_capacity_bytes"])
    plan = steps(user, active_bytes(user, v.active_range_pct, BLOCK), threads=threads, queue_depth=depth,
                 multiple=capacity_multiple, time_limit=time_limit, seed=seed)
    progress: Any = False
    if not quiet:
        limit = f" or {time_limit:g} s" if time_limit is not None else ""
        progress = Progress(header(cfg, f"PTS WSAT ({v.spec}): purge, then 4 KiB random writes at TC {threads} × "
                                        f"QD {depth} until {capacity_multiple:g} × {format_size(user)}{limit}"),
                            StepBars(plan))
    preload.start()
    try:
        result = pts_wsat(cfg, variant=variant, capacity_multiple=capacity_multiple, time_limit=time_limit,
                          sample_s=sample_s, tc=tc, qd=qd, write_cache=write_cache, seed=seed, progress=progress)
    finally:
        if progress:
            progress.bars.close()
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    s = result.summary
    click.echo(f"  {s['samples']} samples over {s['simulated_seconds']:,.0f} s, {s['drive_fills']:.2f} drive fills "
               f"(stopped by the {s['stopped_by']}), WA {s['write_amplification'] or 0:.2f}")
    click.echo(f"  first sample {s['first_sample_iops']:,.0f} IOPS, last {s['last_sample_iops']:,.0f} IOPS, "
               f"{s['zero_iops_seconds']:,} seconds at 0 IOPS")
    for d in s["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_wsat, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsWsatResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_wsat), figures=columns.wsat, metrics=(
        ("saturated_iops", "IOPS of the last 5 samples"),
        ("zero_iops_seconds", "0-IOPS seconds"),
        ("write_amplification", "write amplification at the end"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
