"""``ssdlab pts iops``: the SNIA PTS 2.0 IOPS test on a simulated drive, the scenario in one module.

The test (docs/pts.md, *IOPS*): purge (the core's secure erase), the workload-independent
preconditioning (twice the user capacity in 128 KiB sequential writes over the active range, at
the test's TC × QD outstanding; `ssdlab.pts.rounds.purge_and_wipc`), then rounds until steady state: each round runs
every R/W mix (100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100, outer loop) × block size (1024, 128,
64, 32, 16, 8, 4, 0.5 KiB, inner loop), random over the active range at TC threads × QD each, for
``--round-s`` (60 s) each, on the same drive without refilling it between points or rounds. The
tracking variables (PTS 2.0) are the IOPS of 4 KiB 0/100, 64 KiB 65/35 and 1024 KiB 100/0; the test
stops at the first round from 5 on where all three are steady over the last 5 rounds
(`ssdlab.pts.steady`), or after ``--rounds-max`` (25) rounds. The reported figures are the
averages over the measurement window.

This module holds its options (declared once), its API function (`pts_iops`), its result
(`PtsIopsResult`: ``rounds.csv``, ``iops_table.csv``, ``summary.json`` and the plots) and its
command, ``ssdlab pts iops``.
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
from ssdlab.pts.rounds import ROW_COLUMNS, VARIANTS, Point, PointResult, active_bytes, purge_and_wipc, run_rounds
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["BLOCK_SIZES", "FILES", "MIXES", "OPTIONS", "SCENARIO", "TRACKING", "PtsIopsResult", "pts_iops"]

NAME = "pts-iops"
MIXES = (100, 95, 65, 50, 35, 5, 0)
"""Read percentages of the R/W mixes, in PTS's order (the outer loop)."""
BLOCK_SIZES = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8 * 1024, 4096, 512)
"""Block sizes in bytes, in PTS's order (the inner loop)."""
TRACKING = {
    "rnd_4k_0_100": Point(0, 4096),
    "rnd_64k_65_35": Point(65, 64 * 1024),
    "rnd_1m_100_0": Point(100, 1024 * 1024),
}
"""PTS 2.0's tracking variables of the IOPS test (py-sss-pts citing §3.2.1.2.2): their IOPS."""
WINDOW_FILES = {key: f"window_{key}.png" for key in TRACKING}
ROUNDS_COLUMNS = ROW_COLUMNS
TABLE_COLUMNS = ("block_bytes",) + tuple(f"{m}/{100 - m}" for m in MIXES)
FILES = ("rounds.csv", "iops_table.csv", "summary.json", "convergence.png", *WINDOW_FILES.values(), "iops_2d.png",
         "iops_3d.png")
SIM_NO_REPORT = pto.SIM_NO_REPORT
MAX_THREADS = 256
WIPC_BLOCK = 128 * 1024




def _threads(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise SsdlabError(f"{what} must be a whole number from 1 to {MAX_THREADS}, got {value!r}")
    return value


def _active_range(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if not 0 < v <= 100:
        raise SsdlabError(f"{what} must be above 0 and at most 100 percent, got {value!r}")
    return v


OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range, TC 2 × QD 16) or enterprise (PTS-E: 100 %, "
        "TC 4 × QD 32)."),
    pto.rounds_max("Rounds after which the test stops when not steady (PTS: 25)."),
    pto.round_s("Seconds of each (mix, block size) point of a round (PTS: 60)."),
    Opt("active_range", "Percent of the LBAs tested (and preconditioned), from LBA 0, in (0, 100]. "
        "[default: the variant's]", type=cv.Checked("pct", _active_range), metavar="PCT", range="(0, 100]"),
    Opt("tc", "Thread count: workloads run together, each with its own queue. [default: the variant's]",
        type=cv.Checked("n", _threads, base=int), metavar="N", kind="whole", range=f"1 … {MAX_THREADS}"),
    Opt("qd", "Queue depth of each thread. [default: the variant's]", type=cv.queue_depth, metavar="N",
        kind="whole", range="1 … 65536"),
    pto.write_cache(),
)


def points() -> List[Point]:
    """A round's points in PTS's order: every mix (outer) × every block size (inner), random."""
    return [Point(m, b) for m in MIXES for b in BLOCK_SIZES]


def _tracker(point: Point) -> Any:
    def value(results: List[PointResult]) -> float:
        return next(r.iops for r in results if r.point == point)
    return value


def deviations(params: Dict[str, Any]) -> List[str]:
    """What this run does differently from PTS 2.0's IOPS test (docs/pts.md, *Deviations*)."""
    out = []
    out.extend(pto.cache_deviations(params))
    if params["round_s"] != 60:
        out.append(f"points of {params['round_s']:g} s instead of 60 s")
    if params["rounds_max"] != steady.ROUNDS_MAX:
        out.append(f"at most {params['rounds_max']} rounds instead of 25")
    variant = VARIANTS[params["variant"]]
    if params["active_range_pct"] != variant.active_range_pct:
        out.append(f"active range {params['active_range_pct']:g} % instead of {variant.active_range_pct:g} %")
    if (params["threads"], params["queue_depth"]) != (variant.threads, variant.queue_depth):
        out.append(f"TC {params['threads']} × QD {params['queue_depth']} instead of the recommended "
                   f"{variant.threads} × {variant.queue_depth}")
    return out


# -- the API ---------------------------------------------------------------------------------------


def pts_iops(
    config: procedures.Config = None,
    *,
    variant: str = default_of(OPTIONS, "variant"),
    rounds_max: int = default_of(OPTIONS, "rounds_max"),
    round_s: float = default_of(OPTIONS, "round_s"),
    active_range: Optional[float] = None,
    tc: Optional[int] = None,
    qd: Optional[int] = None,
    write_cache: Optional[str] = None,
    seed: int = 1,
    progress: Any = None,
    label: Optional[str] = None,
    device: Any = None,
) -> PtsIopsResult:
    """PTS 2.0's IOPS test on a simulated drive: purge, WIPC, then rounds of the 56 (mix, block
    size) points of `round_s` seconds each until the three tracking variables are steady or
    `rounds_max` rounds ran. `variant` sets the active range and TC × QD unless `active_range`,
    `tc`, `qd` are given. `progress(round, results, verdict)` is called after every round."""
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    v = VARIANTS[variant]
    pct = _active_range(v.active_range_pct if active_range is None else active_range, "active range")
    threads = _threads(v.threads if tc is None else tc, "thread count")
    depth = limits.queue_depth(v.queue_depth if qd is None else qd, "queue depth")
    rounds = pto.check_rounds_max(rounds_max, "rounds max")
    seconds = pto.check_round_s(round_s, "round seconds")
    seed = procedures.check_seed(seed)
    if progress is not None and not callable(progress):
        raise SsdlabError(f"progress must be a function of (round, results, verdict), got {progress!r}")
    sim = Simulator(cfg, seed) if device is None else device  # a DeviceDrive: the same steps through fio
    cfg = sim.config
    cache = pto.apply_write_cache(sim, v, write_cache, on_device=device is not None)
    span = active_bytes(sim.user_bytes, pct, max(BLOCK_SIZES))
    started = time.perf_counter()
    purge = sim.run_steps(purge_and_wipc(sim.user_bytes, span, block_bytes=WIPC_BLOCK, queue_depth=threads * depth))
    results, verdict = run_rounds(sim, points(), threads=threads, queue_depth=depth, span_bytes=span,
                                  round_s=seconds, rounds_max=rounds,
                                  tracking={k: _tracker(p) for k, p in TRACKING.items()}, seed=seed,
                                  on_round=progress)
    params = {"variant": variant, "spec": v.spec, "active_range_pct": pct, "active_bytes": span, "threads": threads,
              "queue_depth": depth, "round_s": seconds, "rounds_max": rounds,
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsIopsResult.from_run(label=label if label is not None else f"{cfg.name} · PTS IOPS ({v.spec})",
                                  config=cfg, purge=purge, results=results, verdict=verdict, params=params,
                                  seed=seed, simulated_seconds=sim.now_s,
                                  wall_seconds=time.perf_counter() - started), sim)


# -- the result ------------------------------------------------------------------------------------


def _mix(read_pct: int) -> str:
    return f"{read_pct}/{100 - read_pct}"


class PtsIopsResult(ProcedureResult):
    """A PTS IOPS test (docs/results.md, *pts-iops*).

    Attributes:
        rounds: DataFrame, one row per point of every round (`ROUNDS_COLUMNS`): IOPS, MB/s
            (10^6 bytes/s), completions by direction, mean, 99.999th percentile and largest
            response time of reads and writes together (µs) and the write amplification.
        table: DataFrame ``block_bytes, 100/0, 95/5, ...``: each point's IOPS averaged over the
            measurement window's rounds (PTS's "tabular data, block size × R/W mix").
        summary: ``summary.json``: the parameters, the purge and WIPC, the steady-state verdict
            (``steady_state``: steady or not, the window's rounds, and per tracking variable its
            values, average, range and fit-line excursion with their limits, and the fit), the
            deviations from the spec.
    """

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("rounds", "rounds.csv", ROUNDS_COLUMNS, finite=("round", "read_pct", "block_bytes", "iops")),
              CsvTable("table", "iops_table.csv", TABLE_COLUMNS, finite=TABLE_COLUMNS))

    def __init__(self, rounds: pd.DataFrame, table: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any) -> None:
        self.rounds = rounds
        self.table = table
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        s = self.summary["steady_state"]
        first, last = s["window_rounds"]
        how = "steady" if s["steady"] else "not steady"
        return f"<PtsIopsResult {self.label!r}: {how} in rounds {first}-{last} of {s['rounds_run']}>"

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, purge: List[Any], results: List[PointResult],
                 verdict: steady.Verdict, params: Dict[str, Any], seed: int, simulated_seconds: float,
                 wall_seconds: float) -> PtsIopsResult:
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        passes = [s for s in purge if s.phase is not None]
        summary["wipc"] = {"passes": len(passes), "block_bytes": WIPC_BLOCK, "queue_depth": params["threads"] *
                           params["queue_depth"], "bytes": sum(p.phase["bytes"][1] for p in passes),
                           "mb_s": [p.phase["bytes"][1] / p.duration_s / 1e6 for p in passes],
                           "seconds": sum(p.duration_s for p in passes)}
        summary["mixes"] = [_mix(m) for m in MIXES]
        summary["block_sizes"] = list(BLOCK_SIZES)
        summary["tracking"] = {k: {"read_pct": p.read_pct, "block_bytes": p.block_bytes, "label": p.label}
                               for k, p in TRACKING.items()}
        summary["steady_state"] = verdict.as_dict()
        rounds = pd.DataFrame([r.row() for r in results], columns=list(ROUNDS_COLUMNS))
        table = _window_table(rounds, verdict.first_round, verdict.round)
        summary["window_iops"] = {str(int(row["block_bytes"])): {m: row[m] for m in TABLE_COLUMNS[1:]}
                                  for row in table.to_dict("records")}
        summary["simulated_seconds"] = simulated_seconds
        summary["deviations"] = deviations(params)
        return cls(rounds, table, plain(summary), config=config)

    def verdict_windows(self) -> Dict[str, steady.Window]:
        s = self.summary["steady_state"]
        return {k: steady.check_window(w["values"], w["first_round"]) for k, w in s["tracking"].items()}

    def subtitle(self) -> str:
        s = self.summary
        how = (f"{s['spec']}: purge, WIPC, rounds of 7 mixes × 8 sizes, random, {s['round_s']:g} s each, "
               f"TC {s['threads']} × QD {s['queue_depth']}, {s['active_range_pct']:g} % active range")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        from ssdlab.pts.charts import convergence_figure, three_d_figure, two_d_figure, window_figure

        s = self.summary
        ss = s["steady_state"]
        window = ss["window_rounds"]
        sub = self.subtitle()
        writes = self.rounds[self.rounds["read_pct"] == 0]
        series = {format_size(int(b)): writes[writes["block_bytes"] == b].sort_values("round")["iops"].tolist()
                  for b in BLOCK_SIZES}
        figures: Dict[str, Figure] = {
            "convergence.png": convergence_figure(
                series, window=window, steady=ss["steady"], subtitle=sub,
                title=f"{self.label}: steady-state convergence, 0/100 (100 % write), every block size")}
        for key, w in self.verdict_windows().items():
            point = TRACKING[key]
            figures[WINDOW_FILES[key]] = window_figure(
                w, name=f"{point.label} IOPS", subtitle=sub,
                title=f"{self.label}: steady-state measurement window, {point.label}")
        curves = {m: {int(row["block_bytes"]): float(row[m]) for row in self.table.to_dict("records")}
                  for m in TABLE_COLUMNS[1:]}
        figures["iops_2d.png"] = two_d_figure(
            curves, subtitle=sub,
            title=f"{self.label}: IOPS by block size and R/W mix, average of rounds {window[0]}-{window[1]}")
        figures["iops_3d.png"] = three_d_figure(
            curves, subtitle=sub,
            title=f"{self.label}: IOPS, block size × R/W mix, average of rounds {window[0]}-{window[1]}")
        return figures


def _window_table(rounds: pd.DataFrame, first: int, last: int) -> pd.DataFrame:
    """Each point's IOPS averaged over rounds `first`..`last`: block sizes (rows) × mixes."""
    import pandas as pd

    inside = rounds[(rounds["round"] >= first) & (rounds["round"] <= last)]
    means = inside.groupby(["block_bytes", "read_pct"])["iops"].mean()
    rows = [{"block_bytes": b, **{_mix(m): float(means[(b, m)]) for m in MIXES}} for b in BLOCK_SIZES]
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


# -- the command -----------------------------------------------------------------------------------


def command(variant: str, rounds_max: int, round_s: float, active_range: Optional[float], tc: Optional[int],
            qd: Optional[int], write_cache: Optional[str], drive: Optional[str], drive_file: Optional[str], capacity: Optional[int],
            op: Optional[float], gc: Optional[str], seed: int, out: Optional[str], quiet: bool) -> None:
    """SNIA PTS 2.0's IOPS test on a simulated drive.

    Purge, the WIPC (twice the user capacity in 128 KiB sequential writes over the active
    range), then rounds
    of every R/W mix (100/0 … 0/100) × block size (1024 KiB … 0.5 KiB), random, --round-s each,
    until the IOPS of 4 KiB 0/100, 64 KiB 65/35 and 1024 KiB 100/0 are steady over 5 rounds
    (range ≤ 20 % and fit-line excursion ≤ 10 % of the average) or --rounds-max rounds ran
    (docs/pts.md). Writes rounds.csv, iops_table.csv, summary.json and the PTS plots.
    """
    from ssdlab import preload
    from ssdlab.results import check_output_dir

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    threads, depth = v.threads if tc is None else tc, v.queue_depth if qd is None else qd
    pct = v.active_range_pct if active_range is None else active_range
    started = time.perf_counter()

    def each_round(r: int, results: List[PointResult], verdict: Optional[steady.Verdict]) -> None:
        if quiet:
            return
        tracked = "  ".join(f"{p.label} {next(x.iops for x in results if x.point == p):,.0f}"
                            for p in TRACKING.values())
        state = "" if verdict is None else ("  steady" if verdict.steady else "  not steady")
        click.echo(f"  round {r:>2}: {tracked} IOPS ({time.perf_counter() - started:.0f} s){state}", err=True)

    if not quiet:
        click.echo(header(cfg, f"PTS IOPS ({v.spec}): purge, WIPC, then rounds of 56 points of {round_s:g} s at "
                               f"TC {threads} × QD {depth} over {pct:g} % of the LBAs"), err=True)
    preload.start()
    result = pts_iops(cfg, variant=variant, rounds_max=rounds_max, round_s=round_s, active_range=active_range,
                      tc=tc, qd=qd, write_cache=write_cache, seed=seed, progress=each_round)
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    s = result.summary
    ss = s["steady_state"]
    first, last = ss["window_rounds"]
    click.echo(f"  {'steady' if ss['steady'] else 'NOT steady'} in rounds {first}-{last} ({ss['rounds_run']} run)")
    for key, w in ss["tracking"].items():
        click.echo(f"  {TRACKING[key].label:>20}: {w['average']:>10,.0f} IOPS, range {w['range_pct']:.1f} % "
                   f"(≤ 20), excursion {w['excursion_pct']:.1f} % (≤ 10)")
    click.echo("  window average IOPS, block size × R/W mix:")
    click.echo("  " + f"{'':>8}" + "".join(f"{m:>9}" for m in TABLE_COLUMNS[1:]))
    for row in result.table.to_dict("records"):
        click.echo("  " + f"{format_size(int(row['block_bytes'])):>8}" +
                   "".join(f"{row[m]:>9,.0f}" for m in TABLE_COLUMNS[1:]))
    for d in s["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_iops, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsIopsResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_iops), figures=columns.iops, metrics=(
        ("rnd_4k_0_100", "RND 4 KiB write IOPS (window average)"),
        ("rnd_64k_65_35", "RND 64 KiB 65/35 IOPS (window average)"),
        ("rnd_1m_100_0", "RND 1 MiB read IOPS (window average)"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
