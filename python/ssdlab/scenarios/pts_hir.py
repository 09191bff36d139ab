"""``ssdlab pts hir``: the SNIA PTS host idle recovery test (HIR) on a simulated drive, in one module.

The test (docs/pts.md, *HIR*; [CH] ``BlockStorageTestHir``, kept in [YF]): purge, no WIPC, then
preconditioning: 4 KiB random writes at the variant's TC × QD, first twice the user capacity
(ssdlab's choice: without it the clean drive's first minutes pass as a steady state), then rounds
of ``--round-s`` (60 s) until their IOPS are steady over 5 rounds (`ssdlab.pts.steady`) or ``--rounds-max`` (30, [CH])
rounds ran. Then, for each wait state (idle 5, 10, 15, 25 and 50 s, [CH]'s "Wait States 1, 2, 3,
5, 10"): ``--segments`` (360) segments of a ``--slice-s`` (5 s) slice of the same writes followed
by that idle time, then a return to baseline of ``--segments`` × 5 s of continuous writes. Tracked:
the IOPS of every 5-s slice, against time, all wait states. A drive that cleans while idle writes
faster after each idle gap than its steady state; one that does nothing while idle does not.
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
from ssdlab.pts.rounds import ROW_COLUMNS, VARIANTS, Point, PointResult, active_bytes, derive_seed, run_rounds
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["FILES", "OPTIONS", "SCENARIO", "WAIT_STATES", "PtsHirResult", "pts_hir"]

NAME = "pts-hir"
WAIT_STATES = (5.0, 10.0, 15.0, 25.0, 50.0)
"""Idle seconds after each 5-s write slice, per wait state ([CH]: "Wait States 1,2,3,5,10" × 5 s)."""
BLOCK = 4096
SLICE_COLUMNS = ("phase", "wait_s", "slice", "time_s", "seconds", "iops")
FILES = ("slices.csv", "precondition.csv", "summary.json", "hir.png")
SIM_NO_REPORT = pto.SIM_NO_REPORT


def _whole(low: int, high: int) -> Any:
    def check(value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise SsdlabError(f"{what} must be a whole number from {low} to {high}, got {value!r}")
        return value
    return check


def _seconds(value: Any, what: str) -> float:
    return limits.seconds(value, what, maximum=3600.0)


OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range, TC 2 × QD 16) or enterprise (PTS-E: 100 %, "
        "TC 4 × QD 32)."),
    Opt("segments", "Write slices (each followed by the wait state's idle time) per wait state, and 5-s slices of "
        "each return to baseline ([CH]: 360).", type=cv.Checked("n", _whole(1, 100_000), base=int), default=360,
        show_default=True, metavar="N", kind="whole", range="1 … 100,000"),
    Opt("slice_s", "Seconds of writes in each slice (PTS: 5).", type=cv.Checked("seconds", _seconds), default=5.0,
        show_default="5", metavar="SECONDS", range="0.001 … 3600"),
    Opt("rounds_max", "Preconditioning rounds at most ([CH]: 30).", type=cv.Checked("n", _whole(steady.WINDOW, 100),
        base=int), default=30, show_default=True, metavar="N", kind="whole", range=f"{steady.WINDOW} … 100"),
    Opt("round_s", "Seconds of each preconditioning round (PTS: 60).", type=cv.Checked("seconds", _seconds),
        default=60.0, show_default="60", metavar="SECONDS", range="0.001 … 3600"),
    pto.write_cache(),
)


def _writes(label: str, *, threads: int, depth: int, span: int, seconds: float, interval_s: float, seed: int
            ) -> Dict[str, Any]:
    return {"step": "run_together", "workloads": [
        {"label": f"{label} T{t + 1}", "rw": "write", "pattern": "random", "block_bytes": BLOCK, "queue_depth": depth,
         "span_bytes": span, "duration_s": seconds, "interval_ms": interval_s * 1000.0, "seed": derive_seed(seed, t)}
        for t in range(threads)]}


def wait_state_steps(wait_s: float, *, segments: int, slice_s: float, threads: int, depth: int, span: int, seed: int
                     ) -> List[Dict[str, Any]]:
    """One wait state: `segments` × (`slice_s` of writes, `wait_s` idle), then the return to baseline:
    `segments` × `slice_s` of continuous writes (one step, one series interval per slice)."""
    out: List[Dict[str, Any]] = []
    for i in range(segments):
        out.append(_writes(f"wait {wait_s:g} s slice {i + 1}", threads=threads, depth=depth, span=span,
                           seconds=slice_s, interval_s=slice_s, seed=derive_seed(seed, i)))
        out.append({"step": "idle", "seconds": wait_s})
    out.append(_writes(f"baseline after {wait_s:g} s", threads=threads, depth=depth, span=span,
                       seconds=segments * slice_s, interval_s=slice_s, seed=derive_seed(seed, segments)))
    return out


def pts_hir(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    segments: int = default_of(OPTIONS, "segments"),
    slice_s: float = default_of(OPTIONS, "slice_s"),
    rounds_max: int = default_of(OPTIONS, "rounds_max"),
    round_s: float = default_of(OPTIONS, "round_s"),
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: Any = None,
    label: Optional[str] = None,
    device: Any = None,
) -> PtsHirResult:
    """PTS's host idle recovery test on a simulated drive: purge, random 4 KiB writes to steady
    state, then the wait states (`WAIT_STATES` idle after every `slice_s` of writes, `segments`
    times, then `segments` slices of continuous writes). `progress(what)` gets a line per phase."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    v = VARIANTS[variant]
    n = _whole(1, 100_000)(segments, "segments")
    slice_seconds = _seconds(slice_s, "slice seconds")
    rounds = _whole(steady.WINDOW, 100)(rounds_max, "rounds max")
    round_seconds = _seconds(round_s, "round seconds")
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed) if device is None else device  # a DeviceDrive: the same steps through fio
    cfg = sim.config
    cache = pto.apply_write_cache(sim, v, write_cache, on_device=device is not None)
    span = active_bytes(sim.user_bytes, v.active_range_pct, BLOCK)
    say = progress if callable(progress) else (lambda _what: None)
    started = time.perf_counter()
    # Purge, then twice the user capacity of the same random writes before the rounds: from a
    # purged drive the first minutes run at the clean drive's speed, and five of them are "steady"
    # (on a 256 GB drive the first fill alone takes ~12 minutes), a false steady state.
    fill = max(2 * sim.user_bytes // v.threads // BLOCK * BLOCK, BLOCK)
    sim.run_steps([{"step": "secure_erase"}, {"step": "run_together", "workloads": [
        {"label": f"HIR fill T{t + 1}", "rw": "write", "pattern": "random", "block_bytes": BLOCK,
         "queue_depth": v.queue_depth, "span_bytes": span, "byte_limit": fill, "interval_ms": 60_000.0,
         "seed": derive_seed(derive_seed(seed, 99), t)} for t in range(v.threads)]}])
    pre, verdict = run_rounds(sim, [Point(0, BLOCK)], threads=v.threads, queue_depth=v.queue_depth, span_bytes=span,
                              round_s=round_seconds, rounds_max=rounds, tracking={"rnd_4k_0_100": lambda r: r[0].iops},
                              seed=derive_seed(seed, 0))
    say(f"preconditioned: {'steady' if verdict.steady else 'not steady'} in rounds {verdict.first_round}-"
        f"{verdict.round}, {verdict.windows['rnd_4k_0_100'].average:,.0f} IOPS")
    slices: List[Dict[str, Any]] = []
    t0 = sim.now_s
    for k, wait in enumerate(WAIT_STATES, start=1):
        done = sim.run_steps(wait_state_steps(wait, segments=n, slice_s=slice_seconds, threads=v.threads,
                                              depth=v.queue_depth, span=span, seed=derive_seed(seed, k)))
        runs = [s for s in done if s.kind == "run_together"]
        for i, s in enumerate(runs[:-1]):
            ios = sum(s.phase["ios"][:2])
            slices.append({"phase": "wait", "wait_s": wait, "slice": i + 1, "time_s": s.start_s - t0,
                           "seconds": s.duration_s, "iops": ios / s.duration_s if s.duration_s > 0 else 0.0})
        base = runs[-1]
        ios = (base.series["read_ios"] + base.series["write_ios"]).to_numpy()
        for i, count in enumerate(ios):
            start = i * slice_seconds
            length = min(slice_seconds, base.duration_s - start)
            if length < slice_seconds / 2:  # the drain after the last slice: a sliver, no sample
                continue
            slices.append({"phase": "baseline", "wait_s": wait, "slice": i + 1, "time_s": base.start_s - t0 + start,
                           "seconds": length, "iops": float(count) / length if length > 0 else 0.0})
        say(f"wait state {wait:g} s done")
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "threads": v.threads, "queue_depth": v.queue_depth, "segments": n, "slice_s": slice_seconds,
              "rounds_max": rounds, "round_s": round_seconds, "wait_states_s": list(WAIT_STATES),
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsHirResult.from_run(label=label if label is not None else f"{cfg.name} · PTS HIR ({v.spec})", config=cfg,
                                 pre=pre, verdict=verdict, slices=slices, params=params, seed=seed,
                                 simulated_seconds=sim.now_s, wall_seconds=time.perf_counter() - started), sim)


class PtsHirResult(ProcedureResult):
    """A PTS host idle recovery test (docs/pts.md, *HIR*): `slices` (``phase`` wait or baseline,
    ``wait_s``, ``slice``, ``time_s`` from the first wait state's start, ``seconds``, ``iops``),
    `precondition` (the preconditioning rounds, as the IOPS test's ``rounds.csv``) and `summary`
    (the steady state reached, and per wait state the mean IOPS of its write slices and of its
    return to baseline, and their ratio to the steady state)."""

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("slices", "slices.csv", SLICE_COLUMNS, finite=("wait_s", "slice", "time_s", "seconds", "iops")),
              CsvTable("precondition", "precondition.csv", ROW_COLUMNS, finite=("round", "iops")))

    def __init__(self, slices: pd.DataFrame, precondition: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any
                 ) -> None:
        self.slices = slices
        self.precondition = precondition
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        ratios = ", ".join(f"{w['wait_s']:g} s: {w['wait_vs_steady']:.2f}x" for w in self.summary["wait_states"])
        return f"<PtsHirResult {self.label!r}: {ratios}>"

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, pre: List[PointResult], verdict: steady.Verdict,
                 slices: List[Dict[str, Any]], params: Dict[str, Any], seed: int, simulated_seconds: float,
                 wall_seconds: float) -> PtsHirResult:
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        summary["wipc"] = None
        summary["precondition_fill"] = "2 x the user capacity of the test's random writes, then rounds to steady state"
        summary["steady_state"] = verdict.as_dict()
        base = verdict.windows["rnd_4k_0_100"].average
        summary["steady_iops"] = base
        frame = pd.DataFrame(slices, columns=list(SLICE_COLUMNS))
        states = []
        for wait in params["wait_states_s"]:
            w = frame[(frame["wait_s"] == wait) & (frame["phase"] == "wait")]
            b = frame[(frame["wait_s"] == wait) & (frame["phase"] == "baseline") & (frame["seconds"] > 0)]
            wait_iops = float((w["iops"] * w["seconds"]).sum() / w["seconds"].sum())
            base_iops = float((b["iops"] * b["seconds"]).sum() / b["seconds"].sum())
            states.append({"wait_s": wait, "wait_iops": wait_iops, "baseline_iops": base_iops,
                           "wait_vs_steady": wait_iops / base if base else None,
                           "baseline_vs_steady": base_iops / base if base else None})
        summary["wait_states"] = states
        summary["simulated_seconds"] = simulated_seconds
        dev = []
        dev.extend(pto.cache_deviations(params))
        if params["segments"] != 360:
            dev.append(f"{params['segments']} segments per wait state instead of [CH]'s 360")
        if params["round_s"] != 60:
            dev.append(f"preconditioning rounds of {params['round_s']:g} s instead of 60 s")
        summary["deviations"] = dev
        precondition = pd.DataFrame([r.row() for r in pre], columns=list(ROW_COLUMNS))
        return cls(frame, precondition, plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        how = (f"{s['spec']}: purge, RND 4 KiB writes to steady state, then {s['segments']} × ({s['slice_s']:g} s of "
               f"writes + idle) per wait state, TC {s['threads']} × QD {s['queue_depth']}")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        return {"hir.png": figure(self)}


def figure(r: PtsHirResult) -> Figure:
    """IOPS of every slice against time, all wait states; the steady state dashed."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import new_figure, thousands
    from ssdlab.pts.charts import COLOURS

    s = r.summary
    fig, ax = new_figure(f"{r.label}: host idle recovery, IOPS of every {s['slice_s']:g}-s slice", r.subtitle())
    for i, wait in enumerate(s["wait_states_s"]):
        w = r.slices[(r.slices["wait_s"] == wait) & (r.slices["phase"] == "wait")]
        b = r.slices[(r.slices["wait_s"] == wait) & (r.slices["phase"] == "baseline")]
        colour = COLOURS[i % len(COLOURS)]
        ax.scatter(w["time_s"], w["iops"], s=5, color=colour, linewidths=0, label=f"wait state {wait:g} s idle")
        ax.scatter(b["time_s"], b["iops"], s=5, color="#9ca3af", linewidths=0,
                   label="return to baseline" if i == 0 else None)
    ax.axhline(s["steady_iops"], color="#111827", linestyle="--", linewidth=1.0,
               label=f"steady state {s['steady_iops']:,.0f} IOPS")
    ax.set_ylim(0, max(float(r.slices["iops"].max()), s["steady_iops"]) * 1.1)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("Time since the first wait state (s; idle time included)")
    ax.set_ylabel("IOPS")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, markerscale=3, framealpha=0.9)
    return fig


def command(variant: str, segments: int, slice_s: float, rounds_max: int, round_s: float, write_cache: Optional[str], drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], quiet: bool) -> None:
    """SNIA PTS's host idle recovery test (HIR) on a simulated drive.

    Purge, 4 KiB random writes to steady state, then per wait state (5, 10, 15, 25, 50 s idle)
    --segments × (--slice-s of writes + idle), then as many slices of continuous writes; IOPS of
    every slice (docs/pts.md). Writes slices.csv, precondition.csv, summary.json and hir.png.
    """
    from ssdlab import preload
    from ssdlab.results import check_output_dir

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    started = time.perf_counter()
    if not quiet:
        click.echo(header(cfg, f"PTS HIR ({v.spec}): purge, writes to steady state, then {segments} × ({slice_s:g} s "
                               "writes + 5/10/15/25/50 s idle)"), err=True)

    def say(what: str) -> None:
        if not quiet:
            click.echo(f"  {what} ({time.perf_counter() - started:.0f} s)", err=True)

    preload.start()
    result = pts_hir(cfg, variant=variant, segments=segments, slice_s=slice_s, rounds_max=rounds_max,
                     round_s=round_s, write_cache=write_cache, seed=seed, progress=say)
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    s = result.summary
    click.echo(f"  steady state {s['steady_iops']:,.0f} IOPS")
    for w in s["wait_states"]:
        click.echo(f"  wait {w['wait_s']:>4g} s: {w['wait_iops']:>10,.0f} IOPS ({w['wait_vs_steady']:.2f}x steady), "
                   f"return to baseline {w['baseline_iops']:>10,.0f} IOPS")
    for d in s["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_hir, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsHirResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_hir), figures=columns.hir, metrics=(
        ("wait_50s_vs_steady", "IOPS after 50-s idle gaps / steady state"),
        ("steady_iops", "steady-state IOPS"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
