"""``ssdlab pts throughput``: the SNIA PTS 2.0 throughput test on a simulated drive, in one module.

The test (docs/pts.md, *Throughput*): for each block size (1024 KiB, then 128 KiB) its own
sub-test on the same drive: purge, WIPC at that block size (twice the user capacity in sequential
writes over the active range; [CH] ``wipc($bs)``, [SSSPT] ``wipc_bssplit: cur_bssplit``), then
rounds of one ``--round-s`` (60 s) point of sequential reads and one of sequential writes at TC 1
/ QD 32 ([SSSPT] "p.36", [YF]) until the write MB/s ([CH], [YF], [TK]) is steady over 5 rounds or
``--rounds-max`` rounds ran. Reported: the read and write MB/s (10^6 bytes/s) over the window.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import click

from ssdlab import procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.pts.device import DEVICE_OPTIONS, annotate, with_device
from ssdlab.pts.report import PtsRun, report_section
from ssdlab.pts import columns, options as pto, steady
from ssdlab.pts.rounds import (ROW_COLUMNS, VARIANTS, Point, PointResult, active_bytes, derive_seed, purge_and_wipc,
                               run_rounds)
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["BLOCK_SIZES", "FILES", "OPTIONS", "SCENARIO", "PtsThroughputResult", "pts_throughput"]

NAME = "pts-throughput"
BLOCK_SIZES = (1024 * 1024, 128 * 1024)
THREADS, QUEUE_DEPTH = 1, 32
WINDOW_FILES = {1024 * 1024: "window_1024k.png", 128 * 1024: "window_128k.png"}
TABLE_COLUMNS = ("block_bytes", "steady", "first_round", "last_round", "read_mb_s", "write_mb_s")
FILES = ("rounds.csv", "throughput_table.csv", "summary.json", "convergence.png", *WINDOW_FILES.values())
SIM_NO_REPORT = pto.SIM_NO_REPORT




OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range) or enterprise (PTS-E: 100 %); both at TC 1 × "
        "QD 32."),
    pto.rounds_max("Rounds after which a block size's sub-test stops when not steady (PTS: 25)."),
    pto.round_s("Seconds of each point (sequential reads, then sequential writes) of a round (PTS: 60)."),
    pto.write_cache(),
)


def _write_mb_s(results: List[PointResult]) -> float:
    return next(r.mb_s for r in results if r.point.read_pct == 0)


def deviations(params: Dict[str, Any]) -> List[str]:
    out = []
    out.extend(pto.cache_deviations(params))
    if params["round_s"] != 60:
        out.append(f"points of {params['round_s']:g} s instead of 60 s")
    if params["rounds_max"] != steady.ROUNDS_MAX:
        out.append(f"at most {params['rounds_max']} rounds instead of 25")
    return out


def pts_throughput(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    rounds_max: int = default_of(OPTIONS, "rounds_max"),
    round_s: float = default_of(OPTIONS, "round_s"),
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: Any = None,
    label: Optional[str] = None,
    device: Any = None,
) -> PtsThroughputResult:
    """PTS 2.0's throughput test on a simulated drive: for 1024 KiB and then 128 KiB, purge, WIPC at
    that size, then rounds of sequential reads and writes at TC 1 / QD 32 until the write MB/s is
    steady. `progress(block_bytes, round, results, verdict)` is called after every round."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    v = VARIANTS[variant]
    rounds = pto.check_rounds_max(rounds_max, "rounds max")
    seconds = pto.check_round_s(round_s, "round seconds")
    seed = procedures.check_seed(seed)
    sim = Simulator(cfg, seed) if device is None else device  # a DeviceDrive: the same steps through fio
    cfg = sim.config
    cache = pto.apply_write_cache(sim, v, write_cache, on_device=device is not None)
    span = active_bytes(sim.user_bytes, v.active_range_pct, max(BLOCK_SIZES))
    started = time.perf_counter()
    subtests = []
    for bs in BLOCK_SIZES:
        purge = sim.run_steps(purge_and_wipc(sim.user_bytes, span, block_bytes=bs, queue_depth=QUEUE_DEPTH))
        hook = None if progress is None else (lambda r, res, ver, bs=bs: progress(bs, r, res, ver))
        results, verdict = run_rounds(
            sim, [Point(100, bs, "sequential"), Point(0, bs, "sequential")], threads=THREADS,
            queue_depth=QUEUE_DEPTH, span_bytes=span, round_s=seconds, rounds_max=rounds,
            tracking={"seq_write_mb_s": _write_mb_s}, seed=derive_seed(seed, bs), on_round=hook)
        subtests.append((bs, purge, results, verdict))
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "threads": THREADS, "queue_depth": QUEUE_DEPTH, "round_s": seconds, "rounds_max": rounds,
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsThroughputResult.from_run(
        label=label if label is not None else f"{cfg.name} · PTS throughput ({v.spec})", config=cfg,
        subtests=subtests, params=params, seed=seed, simulated_seconds=sim.now_s,
        wall_seconds=time.perf_counter() - started), sim)


class PtsThroughputResult(ProcedureResult):
    """A PTS throughput test (docs/pts.md, *Throughput*): `rounds` (one row per point of every
    round of both block sizes' sub-tests), `table` (per block size: steady or not, the window, read
    and write MB/s over it) and `summary` (per block size its WIPC and verdict)."""

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("rounds", "rounds.csv", ROW_COLUMNS, finite=("round", "read_pct", "block_bytes", "mb_s")),
              CsvTable("table", "throughput_table.csv", TABLE_COLUMNS, finite=("block_bytes", "read_mb_s", "write_mb_s")))

    def __init__(self, rounds: pd.DataFrame, table: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any) -> None:
        self.rounds = rounds
        self.table = table
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        parts = ", ".join(f"{format_size(int(r['block_bytes']))} {r['write_mb_s']:,.0f} MB/s write"
                          for r in self.table.to_dict("records"))
        return f"<PtsThroughputResult {self.label!r}: {parts}>"

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, subtests: List[Any], params: Dict[str, Any], seed: int,
                 simulated_seconds: float, wall_seconds: float) -> PtsThroughputResult:
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated), before each block size"
        frames, table, per_size = [], [], {}
        for bs, purge, results, verdict in subtests:
            passes = [s for s in purge if s.phase is not None]
            rows = pd.DataFrame([r.row() for r in results], columns=list(ROW_COLUMNS))
            frames.append(rows)
            inside = rows[rows["round"].between(verdict.first_round, verdict.round)]
            read = float(inside[inside["read_pct"] == 100]["mb_s"].mean())
            write = float(inside[inside["read_pct"] == 0]["mb_s"].mean())
            table.append({"block_bytes": bs, "steady": verdict.steady, "first_round": verdict.first_round,
                          "last_round": verdict.round, "read_mb_s": read, "write_mb_s": write})
            per_size[str(bs)] = {
                "wipc": {"passes": len(passes), "block_bytes": bs, "queue_depth": QUEUE_DEPTH,
                         "bytes": sum(p.phase["bytes"][1] for p in passes),
                         "mb_s": [p.phase["bytes"][1] / p.duration_s / 1e6 for p in passes]},
                "steady_state": verdict.as_dict(), "read_mb_s": read, "write_mb_s": write}
        summary["block_sizes"] = per_size
        summary["steady"] = all(t["steady"] for t in table)
        summary["simulated_seconds"] = simulated_seconds
        summary["deviations"] = deviations(params)
        return cls(pd.concat(frames, ignore_index=True), pd.DataFrame(table, columns=list(TABLE_COLUMNS)),
                   plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        how = (f"{s['spec']}: per block size purge, WIPC, rounds of SEQ read + SEQ write, {s['round_s']:g} s each, "
               f"TC 1 × QD 32, {s['active_range_pct']:g} % active range")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        from ssdlab.pts.charts import convergence_figure, window_figure

        sub = self.subtitle()
        series = {}
        for bs in BLOCK_SIZES:
            rows = self.rounds[self.rounds["block_bytes"] == bs]
            for pct, what in ((0, "write"), (100, "read")):
                series[f"SEQ {format_size(bs)} {what}"] = rows[rows["read_pct"] == pct].sort_values("round")[
                    "mb_s"].tolist()
        first = self.summary["block_sizes"][str(BLOCK_SIZES[0])]["steady_state"]
        figures: Dict[str, Figure] = {"convergence.png": convergence_figure(
            series, window=first["window_rounds"], steady=first["steady"], subtitle=sub, ylabel="MB/s", log=False,
            title=f"{self.label}: steady-state convergence, SEQ MB/s")}
        for bs in BLOCK_SIZES:
            ss = self.summary["block_sizes"][str(bs)]["steady_state"]
            w = ss["tracking"]["seq_write_mb_s"]
            figures[WINDOW_FILES[bs]] = window_figure(
                steady.check_window(w["values"], w["first_round"]), name=f"SEQ {format_size(bs)} write MB/s",
                subtitle=sub, ylabel="MB/s",
                title=f"{self.label}: measurement window, SEQ {format_size(bs)} write MB/s")
        return figures


def command(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], drive: Optional[str], drive_file: Optional[str],
            capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, out: Optional[str],
            quiet: bool) -> None:
    """SNIA PTS 2.0's throughput test on a simulated drive.

    For 1024 KiB and then 128 KiB: purge, WIPC at that block size, then rounds of --round-s of
    sequential reads and --round-s of sequential writes at TC 1 × QD 32 until the write MB/s is
    steady over 5 rounds or --rounds-max rounds ran (docs/pts.md). Writes rounds.csv,
    throughput_table.csv, summary.json and the PTS plots.
    """
    from ssdlab import preload
    from ssdlab.results import check_output_dir

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    started = time.perf_counter()

    def each_round(bs: int, r: int, results: List[PointResult], verdict: Optional[steady.Verdict]) -> None:
        if quiet:
            return
        read, write = (next(x.mb_s for x in results if x.point.read_pct == p) for p in (100, 0))
        state = "" if verdict is None else ("  steady" if verdict.steady else "  not steady")
        click.echo(f"  {format_size(bs):>8} round {r:>2}: read {read:,.0f} MB/s, write {write:,.0f} MB/s "
                   f"({time.perf_counter() - started:.0f} s){state}", err=True)

    if not quiet:
        click.echo(header(cfg, f"PTS throughput ({v.spec}): per block size purge, WIPC, rounds of {round_s:g} s SEQ "
                               f"read + write at TC 1 × QD 32 over {v.active_range_pct:g} % of the LBAs"), err=True)
    preload.start()
    result = pts_throughput(cfg, variant=variant, rounds_max=rounds_max, round_s=round_s, write_cache=write_cache, seed=seed,
                            progress=each_round)
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    for row in result.table.to_dict("records"):
        click.echo(f"  {format_size(int(row['block_bytes'])):>8}: {'steady' if row['steady'] else 'NOT steady'} in "
                   f"rounds {int(row['first_round'])}-{int(row['last_round'])}, read {row['read_mb_s']:,.1f} MB/s, "
                   f"write {row['write_mb_s']:,.1f} MB/s")
    for d in result.summary["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {result.summary['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_throughput, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsThroughputResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_throughput), figures=columns.throughput, metrics=(
        ("write_mb_s_1024k", "SEQ 1024 KiB write MB/s (window average)"),
        ("write_mb_s_128k", "SEQ 128 KiB write MB/s (window average)"),
        ("read_mb_s_1024k", "SEQ 1024 KiB read MB/s (window average)"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
