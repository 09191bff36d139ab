"""``ssdlab pts latency``: the SNIA PTS 2.0 latency test on a simulated drive, in one module.

The test (docs/pts.md, *Latency*): purge, WIPC (twice the user capacity in 128 KiB sequential
writes over the active range, at the test's QD 1), then rounds at TC 1 / QD 1 ([SSSPT] "p.43",
[CH], [TK], [YF]) of every R/W mix 100/0, 65/35, 0/100 (outer) × block size 8, 4, 0.5 KiB (inner),
random, ``--round-s`` (60 s) each, until the tracking variable, the average response time of RND
4 KiB 0/100 ([SSSPT]: "the dependent variable … is Ave 4KiB Random Write Latency"), is steady over
5 rounds (`ssdlab.pts.steady`) or ``--rounds-max`` rounds ran. Every cell reports its IOPS and its
average (ART), 99.999th percentile ("5 9s") and maximum (MRT) response times over the window, of
reads and writes as one distribution (the core's HdrHistogram, 3 significant digits, which holds
at the tail: `metrics::tests::five_nines_is_the_order_statistic_within_the_resolution`).
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
from ssdlab.pts import columns, histogram as hist, options as pto, steady
from ssdlab.pts.rounds import ROW_COLUMNS, VARIANTS, Point, PointResult, active_bytes, purge_and_wipc, run_rounds
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.scenarios.base import Scenario, SweepEntry, api_runner, default_of
from ssdlab.scenarios.command import default_out, finish, header, save, sim_config
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["BLOCK_SIZES", "FILES", "MIXES", "OPTIONS", "SCENARIO", "TRACKING", "PtsLatencyResult", "pts_latency"]

NAME = "pts-latency"
MIXES = (100, 65, 0)
BLOCK_SIZES = (8192, 4096, 512)
TRACKING = {"rnd_4k_0_100_mean": Point(0, 4096)}
"""The tracking variable: the average response time of RND 4 KiB 0/100 ([SSSPT], PTS 2.0.1)."""
THREADS, QUEUE_DEPTH = 1, 1
TABLE_COLUMNS = ("read_pct", "block_bytes", "iops", "mean_us", "p99_999_us", "max_us")
FILES = ("rounds.csv", "latency_table.csv", "histograms.csv", "summary.json", "convergence.png",
         "window_rnd_4k_0_100_mean.png", "art_2d.png", "mrt_2d.png", "histograms.png", "confidence.png")
SIM_NO_REPORT = pto.SIM_NO_REPORT
WIPC_BLOCK = 128 * 1024




OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range) or enterprise (PTS-E: 100 %); both at TC 1 × "
        "QD 1."),
    pto.rounds_max("Rounds after which the test stops when not steady (PTS: 25)."),
    pto.round_s("Seconds of each (mix, block size) point of a round (PTS: 60)."),
    pto.write_cache(),
)


def points() -> List[Point]:
    return [Point(m, b) for m in MIXES for b in BLOCK_SIZES]


def _mean_of(point: Point) -> Any:
    def value(results: List[PointResult]) -> float:
        r = next(x for x in results if x.point == point)
        return r.mean_latency_us if r.mean_latency_us is not None else 0.0
    return value


def deviations(params: Dict[str, Any]) -> List[str]:
    out = []
    out.extend(pto.cache_deviations(params))
    if params["round_s"] != 60:
        out.append(f"points of {params['round_s']:g} s instead of 60 s")
    if params["rounds_max"] != steady.ROUNDS_MAX:
        out.append(f"at most {params['rounds_max']} rounds instead of 25")
    return out


def pts_latency(
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
) -> PtsLatencyResult:
    """PTS 2.0's latency test on a simulated drive: purge, WIPC, then rounds of the 9 (mix, block
    size) points at TC 1 / QD 1 until the average 4 KiB random-write response time is steady.
    `progress(round, results, verdict)` is called after every round."""
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
    span = active_bytes(sim.user_bytes, v.active_range_pct, WIPC_BLOCK)
    started = time.perf_counter()
    purge = sim.run_steps(purge_and_wipc(sim.user_bytes, span, block_bytes=WIPC_BLOCK, queue_depth=QUEUE_DEPTH))
    results, verdict = run_rounds(sim, points(), threads=THREADS, queue_depth=QUEUE_DEPTH, span_bytes=span,
                                  round_s=seconds, rounds_max=rounds,
                                  tracking={k: _mean_of(p) for k, p in TRACKING.items()}, seed=seed,
                                  on_round=progress, histogram=True)
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "threads": THREADS, "queue_depth": QUEUE_DEPTH, "round_s": seconds, "rounds_max": rounds,
              "write_cache": cache, "write_cache_override": write_cache}
    return annotate(PtsLatencyResult.from_run(label=label if label is not None else f"{cfg.name} · PTS latency ({v.spec})",
                                     config=cfg, purge=purge, results=results, verdict=verdict, params=params,
                                     seed=seed, simulated_seconds=sim.now_s,
                                     wall_seconds=time.perf_counter() - started), sim)


def cell_name(read_pct: int, block_bytes: int) -> str:
    """A cell's name in histograms.csv: ``RND 4 KiB 65/35``."""
    return Point(read_pct, block_bytes).label


def window_histograms(results: List[PointResult], first: int, last: int) -> Dict[str, List[List[int]]]:
    """Each cell's response-time histogram over rounds `first`..`last`: its rounds' buckets added."""
    return {cell_name(m, b): hist.merge(r.histogram or [] for r in results
                                        if first <= r.round <= last and r.point == Point(m, b))
            for m in MIXES for b in BLOCK_SIZES}


def _window_table(rounds: pd.DataFrame, first: int, last: int,
                  histograms: Optional[Dict[str, List[List[int]]]] = None) -> pd.DataFrame:
    """Each cell over rounds `first`..`last`: IOPS (mean of the rounds), ART (weighted by the
    rounds' IOs, so the window's mean response time), 5 9s (from the window's histogram, the
    rounds' buckets added: the window's 99.999th percentile to the histogram's resolution; without
    histograms the largest round's) and MRT (the largest)."""
    import pandas as pd

    inside = rounds[(rounds["round"] >= first) & (rounds["round"] <= last)]
    rows = []
    for m in MIXES:
        for b in BLOCK_SIZES:
            cell = inside[(inside["read_pct"] == m) & (inside["block_bytes"] == b)]
            n = cell["read_ios"] + cell["write_ios"]
            rows.append({"read_pct": m, "block_bytes": b, "iops": float(cell["iops"].mean()),
                         "mean_us": float((cell["mean_latency_us"] * n).sum() / n.sum()) if n.sum() else 0.0,
                         "p99_999_us": (hist.percentile_us(histograms[cell_name(m, b)], 99.999)
                                        if histograms and histograms[cell_name(m, b)]
                                        else float(cell["p99_999_latency_us"].max())),
                         "max_us": float(cell["max_latency_us"].max())})
    return pd.DataFrame(rows, columns=list(TABLE_COLUMNS))


class PtsLatencyResult(ProcedureResult):
    """A PTS latency test (docs/pts.md, *Latency*): `rounds` (one row per point of every round),
    `table` (``read_pct, block_bytes, iops, mean_us, p99_999_us, max_us`` over the window) and
    `summary` (the verdict on the 4 KiB random-write ART, the WIPC, the deviations)."""

    SCENARIOS = (NAME,)
    FILES = FILES
    TABLES = (CsvTable("rounds", "rounds.csv", ROW_COLUMNS, finite=("round", "read_pct", "block_bytes", "iops")),
              CsvTable("table", "latency_table.csv", TABLE_COLUMNS, finite=TABLE_COLUMNS),
              CsvTable("histograms", "histograms.csv", hist.COLUMNS, finite=("low_us", "high_us", "count"),
                       text=("point",)))

    def __init__(self, rounds: pd.DataFrame, table: pd.DataFrame, histograms: pd.DataFrame, summary: Dict[str, Any],
                 **kwargs: Any) -> None:
        self.rounds = rounds
        self.table = table
        self.histograms = histograms
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        s = self.summary["steady_state"]
        return (f"<PtsLatencyResult {self.label!r}: {'steady' if s['steady'] else 'not steady'} in rounds "
                f"{s['window_rounds'][0]}-{s['window_rounds'][1]} of {s['rounds_run']}>")

    @classmethod
    def from_run(cls, *, label: str, config: DriveConfig, purge: List[Any], results: List[PointResult],
                 verdict: steady.Verdict, params: Dict[str, Any], seed: int, simulated_seconds: float,
                 wall_seconds: float) -> PtsLatencyResult:
        import pandas as pd

        summary = procedure_summary(scenario=NAME, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["purge"] = "secure erase (simulated)"
        passes = [s for s in purge if s.phase is not None]
        summary["wipc"] = {"passes": len(passes), "block_bytes": WIPC_BLOCK, "queue_depth": QUEUE_DEPTH,
                           "bytes": sum(p.phase["bytes"][1] for p in passes),
                           "seconds": sum(p.duration_s for p in passes)}
        summary["tracking"] = {k: {"read_pct": p.read_pct, "block_bytes": p.block_bytes,
                                   "label": f"{p.label} average response time (µs)"} for k, p in TRACKING.items()}
        summary["steady_state"] = verdict.as_dict()
        rounds = pd.DataFrame([r.row() for r in results], columns=list(ROW_COLUMNS))
        windowed = window_histograms(results, verdict.first_round, verdict.round)
        table = _window_table(rounds, verdict.first_round, verdict.round, windowed)
        summary["window"] = table.to_dict("records")
        summary["histogram_responses"] = {k: sum(b[2] for b in v) for k, v in windowed.items()}
        summary["simulated_seconds"] = simulated_seconds
        summary["deviations"] = deviations(params)
        return cls(rounds, table, hist.frame(windowed), plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        how = (f"{s['spec']}: purge, WIPC, rounds of 3 mixes × 3 sizes, random, {s['round_s']:g} s each, TC 1 × QD 1, "
               f"{s['active_range_pct']:g} % active range")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        from ssdlab.pts.charts import convergence_figure, two_d_figure, window_figure

        ss = self.summary["steady_state"]
        window = ss["window_rounds"]
        sub = self.subtitle()
        series = {}
        for m in MIXES:
            for b in BLOCK_SIZES:
                rows = self.rounds[(self.rounds["read_pct"] == m) & (self.rounds["block_bytes"] == b)]
                series[f"{format_size(b)} {m}/{100 - m}"] = rows.sort_values("round")["mean_latency_us"].tolist()
        figures: Dict[str, Figure] = {"convergence.png": convergence_figure(
            series, window=window, steady=ss["steady"], subtitle=sub, ylabel="average response time (µs)",
            title=f"{self.label}: steady-state convergence, average response time")}
        for key, w in ss["tracking"].items():
            figures[f"window_{key}.png"] = window_figure(
                steady.check_window(w["values"], w["first_round"]), name="RND 4 KiB 0/100 ART (µs)", subtitle=sub,
                ylabel="average response time (µs)",
                title=f"{self.label}: measurement window, RND 4 KiB 0/100 average response time")
        for name, column, what in (("art_2d.png", "mean_us", "average"), ("mrt_2d.png", "max_us", "maximum")):
            curves = {f"{m}/{100 - m}": {int(r["block_bytes"]): float(r[column])
                                         for r in self.table.to_dict("records") if r["read_pct"] == m} for m in MIXES}
            figures[name] = two_d_figure(curves, subtitle=sub, ylabel=f"{what} response time (µs)",
                                         title=f"{self.label}: {what} response time by block size and R/W mix")
        figures["histograms.png"] = hist.histogram_figure(
            self.histograms, [cell_name(m, 4096) for m in MIXES], subtitle=sub,
            title=f"{self.label}: response-time histograms, RND 4 KiB, measurement window")
        figures["confidence.png"] = hist.confidence_figure(
            self.histograms, [cell_name(m, b) for m in MIXES for b in BLOCK_SIZES], subtitle=sub,
            title=f"{self.label}: response-time confidence levels, measurement window")
        return figures


def command(variant: str, rounds_max: int, round_s: float, write_cache: Optional[str], drive: Optional[str], drive_file: Optional[str],
            capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, out: Optional[str],
            quiet: bool) -> None:
    """SNIA PTS 2.0's latency test on a simulated drive.

    Purge, WIPC, then rounds of every R/W mix (100/0, 65/35, 0/100) × block size (8, 4, 0.5 KiB),
    random, at TC 1 × QD 1, --round-s each, until the average 4 KiB random-write response time is
    steady over 5 rounds or --rounds-max rounds ran (docs/pts.md). Writes rounds.csv,
    latency_table.csv (IOPS, average, 99.999 % and maximum response times per cell), summary.json
    and the PTS plots.
    """
    from ssdlab import preload
    from ssdlab.results import check_output_dir

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, NAME), NAME)
    v = VARIANTS[variant]
    started = time.perf_counter()

    def each_round(r: int, results: List[PointResult], verdict: Optional[steady.Verdict]) -> None:
        if quiet:
            return
        w = next(x for x in results if x.point == TRACKING["rnd_4k_0_100_mean"])
        state = "" if verdict is None else ("  steady" if verdict.steady else "  not steady")
        click.echo(f"  round {r:>2}: RND 4 KiB 0/100 ART {w.mean_latency_us or 0:,.1f} µs "
                   f"({time.perf_counter() - started:.0f} s){state}", err=True)

    if not quiet:
        click.echo(header(cfg, f"PTS latency ({v.spec}): purge, WIPC, then rounds of 9 points of {round_s:g} s at "
                               f"TC 1 × QD 1 over {v.active_range_pct:g} % of the LBAs"), err=True)
    preload.start()
    result = pts_latency(cfg, variant=variant, rounds_max=rounds_max, round_s=round_s, write_cache=write_cache, seed=seed,
                         progress=each_round)
    path = save(result, out_dir, False)
    if not finish(result, path, False, quiet, FILES):
        return
    ss = result.summary["steady_state"]
    first, last = ss["window_rounds"]
    click.echo(f"  {'steady' if ss['steady'] else 'NOT steady'} in rounds {first}-{last} ({ss['rounds_run']} run)")
    click.echo(f"  {'mix':>6} {'size':>8} {'IOPS':>9} {'ART µs':>9} {'5 9s µs':>9} {'MRT µs':>9}")
    for row in result.table.to_dict("records"):
        click.echo(f"  {int(row['read_pct']):>3}/{100 - int(row['read_pct']):<3}{format_size(int(row['block_bytes'])):>8} "
                   f"{row['iops']:>9,.0f} {row['mean_us']:>9,.1f} {row['p99_999_us']:>9,.1f} {row['max_us']:>9,.1f}")
    for d in result.summary["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {result.summary['wall_seconds']:.1f}s")


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM_NO_REPORT, DEVICE_OPTIONS),
    command=with_device(command, pts_latency, OPTIONS, NAME, FILES, depth=lambda kw: kw.get("qd") or 32),
    result=PtsLatencyResult,
    files=FILES,
    sweep=SweepEntry(run=api_runner(pts_latency), figures=columns.latency, metrics=(
        ("rnd_4k_0_100_mean", "RND 4 KiB write ART, µs (window average)"),
        ("rnd_4k_0_100_p99_999_us", "RND 4 KiB write 99.999 % response time, µs"),
    )),
    group="pts",
    report_runs=(PtsRun,),
    report_section=report_section,
)
