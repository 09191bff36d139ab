"""What CBW and DIRTH share on top of the sweep (`ssdlab.pts.sweep`): the run (purge, the write
cache, preconditioning, the rounds, the histogram points), the result with its files and the
plots: the convergence and measurement-window plots of IOPS at TC 32 × QD 32, demand variation
(IOPS against QD, one line per TC), demand intensity (average response time against IOPS, one
line per TC) and the response-time histograms at the maximum, middle and minimum IOPS points.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import click

from ssdlab import procedures
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.pts import histogram as hist, options as pto, steady, sweep
from ssdlab.pts.rounds import VARIANTS, active_bytes
from ssdlab.results import CsvTable, ProcedureResult, plain, procedure_summary, subtitle
from ssdlab.sizes import format_size

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["FILES", "OPTIONS", "DemandResult", "print_result", "run"]

FILES = ("rounds.csv", "histograms.csv", "summary.json", "convergence.png", "window_iops_t32q32.png",
         "demand_variation.png", "demand_intensity.png", "histograms.png", "confidence.png")
ALIGN = 1024 * 1024
"""The active range is whole MiB (the largest request of any PTS test)."""

# The options CBW and DIRTH share: they differ only in their stimulus.
OPTIONS = (
    pto.variant("PTS variant: client (PTS-C: 75 % active range, write cache on) or enterprise (PTS-E: 100 %, "
                "write cache off)."),
    pto.rounds_max("Rounds of the 49-point sweep after which the test stops when not steady (PTS: 25)."),
    pto.round_s("Seconds of each (TC, QD) point of a round (PTS: 60)."),
    pto.write_cache(),
)


def run(name: str, stimulus: sweep.Stimulus, what: str, config: procedures.Config, *, variant: str, rounds_max: int,
        round_s: float, write_cache: Optional[str], seed: int, progress: Any, label: Optional[str],
        device: Any = None) -> DemandResult:
    """The test on a simulated drive of `config`, or with `device` (a `ssdlab.pts.device.DeviceDrive`)
    the same steps through fio."""
    from ssdlab.pts.device import annotate
    from ssdlab.simulate import Simulator

    cfg = procedures.resolve_config(config)
    if variant not in VARIANTS:
        raise SsdlabError(f"variant must be client or enterprise, got {variant!r}")
    v = VARIANTS[variant]
    rounds = pto.check_rounds_max(rounds_max, "rounds max")
    seconds = pto.check_round_s(round_s, "round seconds")
    seed = procedures.check_seed(seed)
    if device is None:
        cache: Optional[bool] = pto.write_cache_enabled(v, write_cache)
        cache_label = pto.cache_label(bool(cache))
        sim = Simulator(cfg, seed)
    else:  # a device keeps its own write cache (an override is refused before anything runs)
        cache, cache_label = None, pto.apply_write_cache(device, v, write_cache, on_device=True)
        sim = device
        cfg = sim.config
    span = active_bytes(sim.user_bytes, v.active_range_pct, ALIGN)
    started = time.perf_counter()
    pre = sim.run_steps(sweep.precondition_steps(stimulus, user_bytes=sim.user_bytes, span_bytes=span,
                                                 write_cache=cache, seed=derive(seed)))
    rows, verdict = sweep.run_sweep(sim, stimulus, span_bytes=span, round_s=seconds, rounds_max=rounds, seed=seed,
                                    on_round=progress)
    last = [r for r in rows if r["round"] == verdict.round]
    chosen = sweep.extremes(last)
    runs = sweep.histogram_runs(sim, stimulus, chosen, span_bytes=span, seconds=seconds, seed=seed)
    params = {"variant": variant, "spec": v.spec, "active_range_pct": v.active_range_pct, "active_bytes": span,
              "round_s": seconds, "rounds_max": rounds, "read_pct": stimulus.read_pct,
              "block_bytes": stimulus.block_bytes, "block_sizes": [list(b) for b in stimulus.block_sizes],
              "zones": [list(z) for z in stimulus.zones], "write_cache": cache_label,
              "write_cache_override": write_cache}
    return annotate(DemandResult.from_run(name=name, what=what, label=label if label is not None else
                                          f"{cfg.name} · PTS {what} ({v.spec})", config=cfg, pre=pre, rows=rows,
                                          verdict=verdict, runs=runs, params=params, seed=seed,
                                          simulated_seconds=sim.now_s, wall_seconds=time.perf_counter() - started),
                    sim)


def derive(seed: int) -> int:
    return sweep.derive_seed(seed, 999_999)


def deviations(params: Dict[str, Any]) -> List[str]:
    out = pto.cache_deviations(params)
    if params["round_s"] != 60:
        out.append(f"points of {params['round_s']:g} s instead of 60 s")
    if params["rounds_max"] != steady.ROUNDS_MAX:
        out.append(f"at most {params['rounds_max']} rounds instead of 25")
    out.append("preconditioning: twice the user capacity of the stimulus's writes at TC 32 × QD 32, not rounds to "
               "steady state ([YF]); no 5-minute pre-writes between rounds")
    out.append("histogram points: one more point of the round's length each, not [YF]'s 60 minutes of pre-writes "
               "and 10 minutes with a latency log")
    return out


class DemandResult(ProcedureResult):
    """A CBW or DIRTH test: `rounds` (one row per (TC, QD) point of every round, `sweep.ROW_COLUMNS`),
    `histograms` (``point, low_us, high_us, count, cumulative_pct``: the max, mid and min IOPS
    points' response-time buckets) and `summary` (the verdict on IOPS at TC 32 × QD 32, the
    window's table, the chosen points, the deviations)."""

    SCENARIOS = ("pts-cbw", "pts-dirth")
    FILES = FILES
    TABLES = (CsvTable("rounds", "rounds.csv", sweep.ROW_COLUMNS,
                       finite=("round", "threads", "queue_depth", "oio", "iops")),
              CsvTable("histograms", "histograms.csv", hist.COLUMNS, finite=("low_us", "high_us", "count"),
                       text=("point",)))

    def __init__(self, rounds: pd.DataFrame, histograms: pd.DataFrame, summary: Dict[str, Any], **kwargs: Any
                 ) -> None:
        self.rounds = rounds
        self.histograms = histograms
        super().__init__(summary, **kwargs)

    def __repr__(self) -> str:
        s = self.summary["steady_state"]
        return (f"<DemandResult {self.label!r}: {'steady' if s['steady'] else 'not steady'} in rounds "
                f"{s['window_rounds'][0]}-{s['window_rounds'][1]} of {s['rounds_run']}>")

    @classmethod
    def from_run(cls, *, name: str, what: str, label: str, config: DriveConfig, pre: List[Any],
                 rows: List[Dict[str, Any]], verdict: steady.Verdict, runs: Dict[str, Any], params: Dict[str, Any],
                 seed: int, simulated_seconds: float, wall_seconds: float) -> DemandResult:
        import pandas as pd

        summary = procedure_summary(scenario=name, label=label, config=config, seed=seed, wall_seconds=wall_seconds,
                                    params=params)
        summary["test"] = what
        summary["purge"] = "secure erase (simulated)"
        summary["wipc"] = None
        writes = pre[-1]
        summary["precondition"] = {"bytes": int((writes.phase or {}).get("bytes", [0, 0, 0])[1]),
                                   "seconds": writes.duration_s, "threads": 32, "queue_depth": 32}
        summary["tracking"] = {sweep.TRACKING_KEY: {"threads": 32, "queue_depth": 32, "label": "IOPS at TC 32 × QD 32"}}
        summary["steady_state"] = verdict.as_dict()
        rounds = pd.DataFrame(rows, columns=list(sweep.ROW_COLUMNS))
        first, last = verdict.first_round, verdict.round
        inside = rounds[(rounds["round"] >= first) & (rounds["round"] <= last)]
        window = []
        for (t, q), cell in inside.groupby(["threads", "queue_depth"], sort=False):
            n = cell["read_ios"] + cell["write_ios"]
            window.append({"threads": int(t), "queue_depth": int(q), "oio": int(t) * int(q),
                           "iops": float(cell["iops"].mean()),
                           "mean_latency_us": float((cell["mean_latency_us"] * n).sum() / n.sum()) if n.sum() else 0.0,
                           "max_latency_us": float(cell["max_latency_us"].max())})
        summary["window"] = window
        summary["histogram_points"] = {
            k: {"threads": row["threads"], "queue_depth": row["queue_depth"], "iops": row["iops"],
                "mean_latency_us": row["mean_latency_us"], "p99_999_latency_us": row["p99_999_latency_us"],
                "max_latency_us": row["max_latency_us"], "responses": sum(b[2] for b in buckets),
                "p99_999_from_histogram_us": hist.percentile_us(buckets, 99.999)}
            for k, (row, buckets) in runs.items()}
        histograms = hist.frame({f"{k} IOPS (T{r['threads']}Q{r['queue_depth']})": b for k, (r, b) in runs.items()})
        summary["simulated_seconds"] = simulated_seconds
        summary["deviations"] = deviations(params)
        return cls(rounds, histograms, plain(summary), config=config)

    def subtitle(self) -> str:
        s = self.summary
        sizes = "composite sizes" if s["block_sizes"] else format_size(int(s["block_bytes"]))
        zoned = ", zoned" if s["zones"] else ""
        how = (f"{s['spec']}: RND {sizes} {s['read_pct']}/{100 - s['read_pct']}{zoned}, TC × QD 32×32 … 1×1, "
               f"{s['round_s']:g} s each, {s['active_range_pct']:g} % active range, write cache {s['write_cache']}")
        return subtitle(s, how)

    def charts(self) -> Dict[str, Figure]:
        from ssdlab.pts.charts import convergence_figure, window_figure

        s = self.summary
        ss = s["steady_state"]
        sub = self.subtitle()
        what = s["test"]
        series = {}
        for q in sweep.DEPTHS:
            rows = self.rounds[(self.rounds["threads"] == 32) & (self.rounds["queue_depth"] == q)]
            series[f"TC 32 × QD {q}"] = rows.sort_values("round")["iops"].tolist()
        w = ss["tracking"][sweep.TRACKING_KEY]
        names = list(self.histograms["point"].drop_duplicates())
        return {
            "convergence.png": convergence_figure(series, window=ss["window_rounds"], steady=ss["steady"], subtitle=sub,
                                                  title=f"{self.label}: steady-state convergence, TC 32"),
            "window_iops_t32q32.png": window_figure(steady.check_window(w["values"], w["first_round"]),
                                                    name="IOPS at T32Q32", subtitle=sub,
                                                    title=f"{self.label}: measurement window, IOPS at TC 32 × QD 32"),
            "demand_variation.png": variation_figure(self, title=f"{self.label}: {what} demand variation", subtitle=sub),
            "demand_intensity.png": intensity_figure(self, title=f"{self.label}: {what} demand intensity", subtitle=sub),
            "histograms.png": hist.histogram_figure(self.histograms, names, subtitle=sub,
                                                    title=f"{self.label}: response-time histograms"),
            "confidence.png": hist.confidence_figure(self.histograms, names, subtitle=sub,
                                                     title=f"{self.label}: response-time confidence levels"),
        }


def _window(r: DemandResult) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(r.summary["window"])


def variation_figure(r: DemandResult, *, title: str, subtitle: str) -> Figure:
    """IOPS (window averages) against QD, one line per TC."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    from ssdlab.plots import new_figure, thousands
    from ssdlab.pts.charts import COLOURS

    fig, ax = new_figure(title, subtitle)
    w = _window(r)
    for i, t in enumerate(sweep.THREADS):
        cell = w[w["threads"] == t].sort_values("queue_depth")
        ax.plot(cell["queue_depth"], cell["iops"], marker="o", markersize=3.5, linewidth=1.3,
                color=COLOURS[i % len(COLOURS)], label=f"TC {t}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(sweep.DEPTHS)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_ylim(0, float(w["iops"].max()) * 1.1 if len(w) else 1.0)
    ax.yaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("Queue depth per thread")
    ax.set_ylabel("IOPS")
    ax.legend(title="threads", loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.9)
    return fig


def intensity_figure(r: DemandResult, *, title: str, subtitle: str) -> Figure:
    """Average response time against IOPS (window averages), one line per TC, QD rising along it;
    the histogram points marked."""
    from matplotlib.ticker import FuncFormatter

    from ssdlab.plots import new_figure, thousands
    from ssdlab.pts.charts import COLOURS

    fig, ax = new_figure(title, subtitle)
    w = _window(r)
    for i, t in enumerate(sweep.THREADS):
        cell = w[w["threads"] == t].sort_values("queue_depth")
        ax.plot(cell["iops"], cell["mean_latency_us"], marker="o", markersize=3.5, linewidth=1.3,
                color=COLOURS[i % len(COLOURS)], label=f"TC {t}")
    for k, p in r.summary["histogram_points"].items():
        cell = w[(w["threads"] == p["threads"]) & (w["queue_depth"] == p["queue_depth"])]
        if len(cell):
            ax.annotate(f"{k} IOPS", (float(cell["iops"].iloc[0]), float(cell["mean_latency_us"].iloc[0])),
                        textcoords="offset points", xytext=(6, -10), fontsize=8)
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(thousands))
    ax.set_xlabel("IOPS")
    ax.set_ylabel("average response time (µs, log)")
    ax.legend(title="threads", loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, framealpha=0.9)
    return fig


def print_result(result: DemandResult) -> None:
    s = result.summary
    ss = s["steady_state"]
    first, last = ss["window_rounds"]
    t = ss["tracking"][sweep.TRACKING_KEY]
    click.echo(f"  {'steady' if ss['steady'] else 'NOT steady'} in rounds {first}-{last} ({ss['rounds_run']} run): "
               f"IOPS at TC 32 × QD 32 {t['average']:,.0f}")
    for k, p in s["histogram_points"].items():
        click.echo(f"  {k:>3} IOPS: T{p['threads']}Q{p['queue_depth']} {p['iops']:>10,.0f} IOPS, ART "
                   f"{p['mean_latency_us']:,.1f} µs, 5 9s {p['p99_999_latency_us']:,.1f} µs, MRT "
                   f"{p['max_latency_us']:,.1f} µs")
    for d in s["deviations"]:
        click.echo(f"  deviation: {d}")
    click.echo(f"  wall time {s['wall_seconds']:.1f}s")


def command(name: str, stimulus: sweep.Stimulus, what: str, files: Any, *, variant: str, rounds_max: int,
            round_s: float, write_cache: Optional[str], drive: Optional[str], drive_file: Optional[str],
            capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int, out: Optional[str],
            quiet: bool) -> None:
    """The body of ``ssdlab pts cbw`` and ``ssdlab pts dirth``."""
    from ssdlab import preload
    from ssdlab.results import check_output_dir
    from ssdlab.scenarios.command import default_out, finish, header, save, sim_config

    cfg = sim_config(drive, drive_file, capacity, op, gc)
    out_dir = check_output_dir(out if out is not None else default_out(cfg.name, name), name)
    v = VARIANTS[variant]
    cache = pto.write_cache_enabled(v, write_cache)
    started = time.perf_counter()

    def each_round(r: int, rows: List[Dict[str, Any]], verdict: Optional[steady.Verdict]) -> None:
        if quiet:
            return
        top = next(x for x in rows if (x["threads"], x["queue_depth"]) == (32, 32))
        state = "" if verdict is None else ("  steady" if verdict.steady else "  not steady")
        click.echo(f"  round {r:>2}: IOPS at TC 32 × QD 32 {top['iops']:,.0f} "
                   f"({time.perf_counter() - started:.0f} s){state}", err=True)

    if not quiet:
        click.echo(header(cfg, f"PTS {what} ({v.spec}): purge, precondition, then rounds of 49 TC × QD points of "
                               f"{round_s:g} s over {v.active_range_pct:g} % of the LBAs, write cache "
                               f"{'on' if cache else 'off'}"), err=True)
    preload.start()
    result = run(name, stimulus, what, cfg, variant=variant, rounds_max=rounds_max, round_s=round_s,
                 write_cache=write_cache, seed=seed, progress=each_round, label=None)
    path = save(result, out_dir, False)
    if finish(result, path, False, quiet, files):
        print_result(result)
