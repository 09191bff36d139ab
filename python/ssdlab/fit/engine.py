"""The fit: from measurements to a twin's knobs, staged as an engineer reads the curves, then refined
jointly with scipy's Nelder-Mead (docs/fit.md).

Stages (each from the measurement that shows the knob, with a few simulations of the twin to turn
the reading into the knob, since the simulator and not a formula says what a knob does):

1. capacity: the tested capacity; link: the slowest standard link that carries the fastest speed
   measured;
2. clean burst (consistency): the program time, by the ratio of measured to twin clean IOPS (the
   array's write rate; the dies and the program time apart stay undetermined);
3. cliff (consistency): the over-provisioning, by the bytes written before the cliff as a share of
   the capacity;
4. steady state (consistency): its scatter picks the GC mode (0-IOPS seconds: clean-up-later; a
   tight band: active; else on-demand); its level enters the joint refinement (WA is what the twin
   then predicts: a device does not report it). With a PTS IOPS run and no 0-IOPS stalls, the
   mixed points decide instead (``fit.mixed``): every mode is staged (two passes), each mode's best
   twin runs the same test, and the mode whose 4 and 8 KiB mixed cells come closest is staged on
   and refined;
5. HD Tach after idle: idle GC present if a pass after idle time is back near the clean pass;
6. PTS (``fit.reads``): the read time from the latency test's QD 1 reads, the dies from the IOPS
   test's 0.5 KiB reads at TC x QD, the link from the throughput test's sequential reads; first,
   since the dies scale the program times the write stages then fit;
7. saturation: the SLC cache (seen if the speed falls below half before the end), its size
   (dynamic share), the speed in it (pSLC program time), after it (folding while writing) and at
   the end (native program time, if no consistency run gave it), and folding while idle (the write
   after idle is fast again).

Then a joint refinement of the continuous knobs (log program time, log OP, and for a cache its
log share, log pSLC time and folding rate) minimising the squared log errors of every figure, with
`scipy.optimize.minimize(method="Nelder-Mead")`: derivative-free (the simulated figures are
piecewise constant in the knobs: a cliff moves by whole seconds), deterministic, and bounded by
`maxfev` and the time budget. The twin runs at the measured capacity up to 64 GiB and at 64 GiB
beyond, with the procedure's time scaled by the capacity (the capacity rule keeps the dies, so
speeds stay and times scale).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.fit.figures import (ConsistencyFigures, SaturationFigures, consistency_figures, saturation_figures,
                                steady_start)
from ssdlab.fit.measurements import Consistency, Measurements, Pts, Saturation, read_measurements
from ssdlab.fit.mixed import cells_error, measured_cells, twin_cells
from ssdlab.fit.reads import ReadFigures, fit_reads, read_errors, read_figures
from ssdlab.fit.twin import GC_MODES, Knobs, standard_link

__all__ = ["FitResult", "fit", "MAX_SIM_BYTES"]

MAX_SIM_BYTES = 64 * 2**30
"""The largest capacity the twin is simulated at during the fit (larger drives: scaled down)."""

MIN_CONSISTENCY_SECONDS = 20
MIN_STEADY_SECONDS = 10

SIM_SEED = 1

GOOD_ENOUGH = 3e-4
"""A loss below this (every figure within about 1 %, the run-to-run scatter of a simulated figure)
ends the fit after the staged corrections."""

# Figures' weights in the joint refinement's loss (squared log errors).
WEIGHTS = {"clean_iops": 1.0, "cliff_bytes": 1.0, "steady_mean": 1.0, "cache_gb": 1.0, "in_cache_mb_s": 1.0,
           "after_cache_mb_s": 0.5, "end_mb_s": 0.5}


@dataclass
class Knob:
    value: Any
    status: str  # "determined", "undetermined", "assumed"
    by: str  # the measurement and figure, or why not


@dataclass
class TwinRun:
    """The twin's figures for one evaluation, and its curves (for the report)."""

    knobs: Knobs
    consistency: Optional[ConsistencyFigures] = None
    consistency_iops: Optional[np.ndarray] = None
    consistency_time_scale: float = 1.0
    saturation: Optional[SaturationFigures] = None
    saturation_curve: Optional[Tuple[np.ndarray, np.ndarray]] = None
    saturation_gb_scale: float = 1.0
    loss: float = float("inf")
    reads: Optional[ReadFigures] = None  # the PTS read points (fit.reads), when PTS runs were given


@dataclass
class FitResult:
    knobs: Knobs
    table: Dict[str, Knob]
    measured: Dict[str, Any]
    twin: TwinRun
    errors: Dict[str, Optional[float]]
    evaluations: int
    wall_seconds: float
    sim_capacity_bytes: int
    history: List[Dict[str, Any]] = field(default_factory=list)
    measurements: Optional[Measurements] = None

    def config(self) -> Any:
        return self.knobs.config()


# -- what the measurements say ---------------------------------------------------------------------


def _gc_mode(f: ConsistencyFigures) -> str:
    if f.zero_share >= 0.03:
        return "clean-up-later"
    if f.min_over_mean >= 0.75 and f.steady_cv <= 0.08:
        return "active"
    return "on-demand"


def _mode_from_mixed(twins: Dict[str, Knobs], run: Pts, cells: Dict[Tuple[int, int], float], sim_cap: int,
                     deadline: float, seed: int, say: Callable[[str], None]) -> Optional[Tuple[str, str]]:
    """The GC mode whose twin's PTS IOPS mixed cells come closest to the measured ones, and why;
    None if the budget ran out before every mode's twin ran the test."""
    errors: Dict[str, float] = {}
    for mode, twin in twins.items():
        if time.perf_counter() > deadline:
            say("fit: the budget is spent before the PTS mixed points decided the GC mode")
            return None
        try:
            err = cells_error(twin_cells(twin, run, cells, sim_cap, seed), cells)
        except SsdlabError as e:  # knobs the core refuses in this mode: not a candidate
            say(f"fit: PTS IOPS mixed points, {mode} GC: refused by the simulator ({e})")
            continue
        if err is not None:
            errors[mode] = err
            say(f"fit: PTS IOPS mixed points, {mode} GC: mean error {100 * (math.exp(err) - 1):.1f} %")
    if len(errors) < 2:
        return None
    mode = min(errors, key=lambda k: errors[k])
    shown = ", ".join(f"{k} {100 * (math.exp(v) - 1):.1f} %" for k, v in sorted(errors.items(), key=lambda kv: kv[1]))
    return mode, (f"PTS IOPS mixed points (95/5 ... 5/95 at 4 and 8 KiB, {len(cells)} cells), each mode's twin "
                  f"running the same test: mean error {shown}")


def _idle_gc(passes: Sequence[Tuple[str, float]]) -> Optional[bool]:
    """True if a pass after idle time is within 10 % of the clean pass while some pass after the
    torture was below 80 % of it; None if the passes do not tell (no idle pass, no slow pass)."""
    if not passes:
        return None
    clean = passes[0][1]
    slow = [mb for name, mb in passes[1:] if "idle" not in name and mb < 0.8 * clean]
    idle = [mb for name, mb in passes[1:] if "idle" in name and "trim" not in name.lower()]
    if not slow or not idle:
        return None
    return max(idle) >= 0.9 * clean


# -- running the twin ------------------------------------------------------------------------------


def _sim_capacity(cap: int) -> int:
    return int(min(cap, MAX_SIM_BYTES)) // 4096 * 4096


def run_twin(knobs: Knobs, cons: Optional[Consistency], sat: Optional[Saturation], sim_cap: int,
             seed: int = SIM_SEED) -> TwinRun:
    """The twin through the measured procedures, at `sim_cap` with times scaled."""
    from ssdlab.scenarios.consistency import consistency
    from ssdlab.scenarios.saturation import saturation

    scale = sim_cap / knobs.capacity_bytes
    cfg = knobs.config(sim_cap)
    out = TwinRun(knobs)
    if cons is not None:
        seconds = max(int(round(len(cons.iops) * scale)), MIN_CONSISTENCY_SECONDS)
        r = consistency(cfg, spare_area_pct=cons.spare_area_pct, duration_s=float(seconds), qd=cons.qd,
                        block_size=cons.block_bytes, seed=seed)
        iops = r.iops["iops"].to_numpy(float)
        out.consistency_iops = iops
        out.consistency_time_scale = 1.0 / scale
        out.consistency = consistency_figures(iops, cons.block_bytes)
    if sat is not None:
        rs = saturation(cfg, pattern=sat.pattern, block_size=sat.block_bytes, qd=sat.qd, fill_pct=sat.fill_pct,
                       idle_minutes=sat.idle_minutes * scale, points=max(len(sat.mb_s), 50), seed=seed)
        c = rs.curve
        w = c[c["phase"] == "write"]
        a = c[c["phase"] == "after idle"]
        gb = w["gb_written"].to_numpy(float)
        mb = w["mb_s"].to_numpy(float)
        out.saturation_curve = (gb / scale, mb)
        out.saturation_gb_scale = 1.0 / scale
        f = saturation_figures(gb, mb, a["mb_s"].to_numpy(float) if len(a) else None)
        if f.cache_gb is not None:
            f = SaturationFigures(f.initial_mb_s, f.cache_gb / scale, f.in_cache_mb_s, f.after_cache_mb_s,
                                  f.end_mb_s, f.written_gb / scale, f.after_idle_mb_s)
        out.saturation = f
    return out


def _log_err(twin: Optional[float], meas: Optional[float]) -> Optional[float]:
    if twin is None or meas is None or meas <= 0:
        return None
    return math.log(max(twin, 1e-9) / meas)


def figure_errors(run: TwinRun, mc: Optional[ConsistencyFigures], ms: Optional[SaturationFigures]) -> Dict[str, Any]:
    """Log errors (twin / measured) of the figures both have."""
    e: Dict[str, Any] = {}
    if mc is not None and run.consistency is not None:
        t = run.consistency
        e["clean_iops"] = _log_err(t.clean_iops, mc.clean_iops)
        if mc.cliff_bytes is not None:
            # the twin's cliff bytes are at the simulated capacity: compare shares of the capacity
            tb = None if t.cliff_bytes is None else t.cliff_bytes * run.consistency_time_scale
            e["cliff_bytes"] = _log_err(tb, mc.cliff_bytes) if tb is not None else math.log(2.0)
        if mc.steady_mean > 0:
            e["steady_mean"] = _log_err(t.steady_mean, mc.steady_mean)
    if ms is not None and run.saturation is not None:
        t2 = run.saturation
        e["in_cache_mb_s"] = _log_err(t2.in_cache_mb_s, ms.in_cache_mb_s)
        e["end_mb_s"] = _log_err(t2.end_mb_s, ms.end_mb_s)
        if ms.cache_gb is not None:
            e["cache_gb"] = _log_err(t2.cache_gb, ms.cache_gb) if t2.cache_gb is not None else math.log(2.0)
            e["after_cache_mb_s"] = _log_err(t2.after_cache_mb_s, ms.after_cache_mb_s)
    return e


def _loss(errors: Dict[str, Any]) -> float:
    return float(sum(WEIGHTS.get(k, 1.0) * v * v for k, v in errors.items() if v is not None))


# -- the fit ---------------------------------------------------------------------------------------


class _Budget(Exception):
    pass


def fit(source: Any, *, budget_s: float = 600.0, refine: bool = True, seed: int = SIM_SEED,
        say: Callable[[str], None] = lambda _: None, max_evaluations: int = 60) -> FitResult:
    """Fits a twin to the measurements in `source` (result directories, or `Measurements`)."""
    started = time.perf_counter()
    m = source if isinstance(source, Measurements) else read_measurements(source)
    if not m.consistency and not m.saturation:
        raise SsdlabError("the fit needs a consistency or a saturation run (HD Tach passes alone determine only idle "
                          "GC, PTS runs only the reads); measure one with `ssdlab consistency --device` or fio "
                          "(docs/fit.md)")
    cons = m.consistency[0] if m.consistency else None
    sat = m.saturation[0] if m.saturation else None
    if len(m.consistency) > 1 or len(m.saturation) > 1:
        say("note: more than one run of a procedure; the fit uses the first of each")
    cap = m.capacity_bytes
    sim_cap = _sim_capacity(cap)
    table: Dict[str, Knob] = {}
    mc = ms = None
    if cons is not None:
        if len(cons.iops) < MIN_CONSISTENCY_SECONDS:
            raise SsdlabError(f"{cons.source}: {len(cons.iops)} s of random writes are too few to fit (at least "
                              f"{MIN_CONSISTENCY_SECONDS} s, and a cliff before the last 30 %)")
        mc = consistency_figures(cons.iops, cons.block_bytes)
        if mc.clean_iops <= 0:
            raise SsdlabError(f"{cons.source}: the random writes have no IOPS in the clean burst; nothing to fit")
    if sat is not None:
        ms = saturation_figures(sat.gb_written, sat.mb_s, sat.after_idle_mb_s)

    # 1. capacity and link
    seen = [0.0]
    if mc is not None:
        seen.append(mc.clean_iops * cons.block_bytes / 1e6)  # type: ignore[union-attr]
    if ms is not None:
        seen.append(float(np.max(sat.mb_s)))  # type: ignore[union-attr]
    link = standard_link(max(seen))
    table["capacity_bytes"] = Knob(cap, "determined", "the tested capacity (summary.json user_capacity_bytes)")
    table["link_mb_s"] = Knob(link, "assumed", f"lower bound {max(seen):,.0f} MB/s (fastest speed measured); the "
                                               f"slowest standard link above it")
    knobs = Knobs(capacity_bytes=cap, link_mb_s=link)

    # PTS: the read time, the dies (read parallelism) and the link, before the write stages (the
    # dies scale the program times those fit: `dies_scale`)
    cache = ms is not None and ms.cache_gb is not None and ms.cache_gb < 0.9 * ms.written_gb
    steady_seen = max([seen[0]] + ([] if mc is None else [seen[1]]) +  # medians, not the noisiest point
                      ([] if ms is None else [ms.initial_mb_s, ms.in_cache_mb_s]))
    rf = fit_reads(knobs.with_(cache=cache), m, say=say, seed=seed, seen_mb_s=steady_seen)
    if rf is not None:
        knobs = rf.knobs
        for name, (value, status, by) in rf.notes.items():
            table[name] = Knob(value, status, by)
    dies_scale = knobs.dies / Knobs(capacity_bytes=cap).dies

    # 7 (before the write stages: it picks the design). SLC cache
    if ms is not None:
        if cache:
            share = min(max(3.0 * ms.cache_gb * 1e9 / cap, 0.01), 1.0)  # type: ignore[operator]
            pslc = 222.0 * 4095.0 / max(ms.in_cache_mb_s, 1.0) * dies_scale
            native = 470.0 * 2000.0 / max(ms.end_mb_s, 1.0) * dies_scale
            fold = 0.0
            if ms.after_cache_mb_s is not None and ms.after_cache_mb_s < 0.85 * ms.end_mb_s:
                fold = min(max(ms.end_mb_s / ms.after_cache_mb_s - 1.0, 0.05), 4.0)
            idle_fold = ms.after_idle_mb_s is not None and ms.after_idle_mb_s >= 0.5 * ms.in_cache_mb_s
            knobs = knobs.with_(cache=True, dynamic_share=share, pslc_program_us=pslc, program_us=native,
                                fold_while_writing=fold, idle_fold=idle_fold)
            table["slc_cache"] = Knob(True, "determined", f"saturation: the speed fell below half after "
                                                          f"{ms.cache_gb:.2f} GB")
        else:
            table["slc_cache"] = Knob(False, "determined", "saturation: no cliff in the whole-drive write")
    else:
        table["slc_cache"] = Knob(False, "undetermined", "no saturation run: the twin has no SLC cache")

    # 2. program time from the clean burst
    if mc is not None and not cache:
        knobs = knobs.with_(program_us=1300.0 * 88_440.0 / mc.clean_iops * dies_scale)
    # 3. OP from the cliff
    modes = ["on-demand"]
    if mc is not None:
        if mc.cliff_bytes is not None:
            frac = mc.cliff_bytes / cons.tested_bytes  # type: ignore[union-attr]
            op0 = min(max(1.1 * frac, 0.02), 3.0)
            knobs = knobs.with_(op=op0)
        # 4. GC mode from the steady scatter
        steady_n = mc.seconds - steady_start(mc.seconds)
        if mc.cliff_s is not None and mc.cliff_s < steady_start(mc.seconds) and steady_n >= MIN_STEADY_SECONDS:
            mode = _gc_mode(mc)
            modes = ["active", "clean-up-later"] if mode == "active" else [mode]
            knobs = knobs.with_(gc_mode=mode)
            table["gc_mode"] = Knob(mode, "determined",
                                    f"consistency steady scatter: CV {mc.steady_cv:.2f}, 0-IOPS seconds "
                                    f"{100 * mc.zero_share:.1f} %, min/mean {mc.min_over_mean:.2f}"
                                    + (" (a tight band: active or clean-up-later between stalls; the steady level "
                                       "chose)" if len(modes) > 1 else ""))
        else:
            table["gc_mode"] = Knob("on-demand", "undetermined", "the run reached no steady state after its cliff")
    else:
        table["gc_mode"] = Knob("on-demand", "undetermined", "no consistency run")
    # A PTS IOPS run's mixed points tell the modes apart where the scatter cannot (fit/mixed.py):
    # every mode is a candidate unless 0-IOPS stalls named clean-up-later.
    iops_run, mixed_cells = measured_cells(m)
    # (the scatter names clean-up-later only for its 0-IOPS stalls: `_gc_mode`)
    stalls = table["gc_mode"].status == "determined" and table["gc_mode"].value == "clean-up-later"
    if mixed_cells and not stalls:
        modes = list(dict.fromkeys([*modes, *GC_MODES]))

    # 5. idle GC
    hd = _idle_gc(m.hdtach[0].passes) if m.hdtach else None
    if hd is None:
        table["idle_gc"] = Knob(False, "undetermined", "no HD Tach pass after torture and idle time" if not m.hdtach
                                else "the HD Tach passes show no slow pass and a pass after idle")
    else:
        knobs = knobs.with_(idle_gc=hd)
        table["idle_gc"] = Knob(hd, "determined", "HD Tach: the pass after idle time "
                                                  f"{'is' if hd else 'is not'} back within 10 % of the clean pass")

    # staged refinement by ratios, then joint Nelder-Mead
    history: List[Dict[str, Any]] = []
    best: List[TwinRun] = []
    by_mode: Dict[str, TwinRun] = {}  # the best twin of each GC mode
    deadline = started + budget_s

    def evaluate(k: Knobs) -> TwinRun:
        if len(history) >= max_evaluations or time.perf_counter() > deadline:
            raise _Budget()
        k = k.with_(op=_buildable_op(k, k.op))  # a mode whose reserve the OP cannot hold: the least OP that can
        try:
            run = run_twin(k, cons, sat, sim_cap, seed)
        except SsdlabError as err:  # knobs the core refuses (GC cannot free a block): not a twin
            history.append({"knobs": k.as_dict(), "loss": None, "refused": str(err)})
            say(f"fit: evaluation {len(history)}: refused by the simulator ({err})")
            return TwinRun(k)
        errs = figure_errors(run, mc, ms)
        run.loss = _loss(errs)
        history.append({"knobs": k.as_dict(), "loss": run.loss,
                        "errors": {a: b for a, b in errs.items() if b is not None}})
        if not best or run.loss < best[0].loss:
            best[:] = [run]
        if k.gc_mode not in by_mode or run.loss < by_mode[k.gc_mode].loss:
            by_mode[k.gc_mode] = run
        say(f"fit: evaluation {len(history)}: loss {run.loss:.4f} ({_knob_text(k)})")
        return run

    def prepared(k: Knobs) -> Knobs:
        if mc is not None and mc.cliff_bytes is not None:  # the mode's own reserve: OP for that spare
            k = k.with_(op=_op_for_spare(k, mc.cliff_bytes / cons.tested_bytes))  # type: ignore[union-attr]
        return k

    def staged(k: Knobs, passes: int = 4, fresh: bool = True) -> None:
        k = prepared(k) if fresh else k
        for _ in range(passes):  # the staged, one-figure-per-knob corrections
            run = evaluate(k)
            e = figure_errors(run, mc, ms)
            ch: Dict[str, Any] = {}
            burst_ok = run.consistency is not None and (run.consistency.cliff_s is None or run.consistency.cliff_s >= 3)
            if e.get("clean_iops") is not None and not k.cache and burst_ok:
                ch["program_us"] = k.program_us * math.exp(e["clean_iops"])
            elif e.get("end_mb_s") is not None and not k.cache:
                ch["program_us"] = k.program_us * math.exp(e["end_mb_s"])
            if e.get("cliff_bytes") is not None:
                ch["op"] = _op_for_spare(k, _effective(k) * math.exp(-0.6 * e["cliff_bytes"]))
            if k.cache:
                if e.get("cache_gb") is not None:
                    ch["dynamic_share"] = min(k.dynamic_share * math.exp(-e["cache_gb"]), 1.0)
                if e.get("in_cache_mb_s") is not None:
                    ch["pslc_program_us"] = k.pslc_program_us * math.exp(e["in_cache_mb_s"])
                if e.get("end_mb_s") is not None and mc is None:
                    ch["program_us"] = k.program_us * math.exp(e["end_mb_s"])
                if e.get("clean_iops") is not None:
                    ch["program_us"] = k.program_us * math.exp(e["clean_iops"])
                if e.get("after_cache_mb_s") is not None and k.fold_while_writing > 0:
                    ch["fold_while_writing"] = min(max(k.fold_while_writing * math.exp(2.0 * e["after_cache_mb_s"]),
                                                       0.01), 8.0)
            if not ch or max(abs(v) for v in e.values() if v is not None) < 0.01:
                break
            k = _bounded(k, k.with_(**ch))

    try:
        # A tight steady band is active GC or clean-up-later between its stalls (a run too short or a
        # drive with too much spare area to reach a stall): the level decides between them.
        if iops_run is not None and len(modes) > 1:
            # Every mode staged (two passes: the mixed cells need the program time and OP close),
            # then each mode's best twin runs the PTS IOPS test; the nearest mode is staged on.
            for mode in modes:
                staged(knobs.with_(gc_mode=mode), passes=2)
            picked = _mode_from_mixed({mode: run.knobs for mode, run in by_mode.items()}, iops_run, mixed_cells,
                                      sim_cap, deadline, seed, say)
            if picked is not None:
                best[:] = [by_mode[picked[0]]]
                table["gc_mode"] = Knob(picked[0], "determined", picked[1])
                staged(best[0].knobs, passes=2, fresh=False)
        else:
            for mode in modes:
                staged(knobs.with_(gc_mode=mode))
        if refine and best[0].loss > GOOD_ENOUGH:
            _joint(best[0].knobs, evaluate)
    except _Budget:
        say("fit: the budget is spent; the best twin so far is kept")
    if not best:
        raise SsdlabError(f"no twin within the budget of {budget_s:g} s and {max_evaluations} simulations "
                          f"({len(history)} tried, none the simulator could run); raise --budget")
    twin = best[0]
    k = twin.knobs
    table["gc_mode"].value = k.gc_mode
    errors = {a: (None if b is None else math.exp(b) - 1.0) for a, b in figure_errors(twin, mc, ms).items()}
    if mc is not None:
        table["program_us"] = Knob(round(k.program_us, 2), "determined",
                                   f"consistency clean IOPS {mc.clean_iops:,.0f} (for the twin's dies: only "
                                   f"dies x page / program time is determined)")
        if mc.cliff_bytes is not None:
            table["op"] = Knob(round(k.op, 5), "determined", f"consistency cliff after {mc.cliff_bytes / 1e9:.2f} GB "
                                                            f"({mc.cliff_s:.0f} s), and the steady level")
        else:
            table["op"] = Knob(round(k.op, 5), "undetermined", "no cliff within the consistency run: OP is at least "
                                                              "what the burst wrote; the twin keeps a guess")
    elif cache:
        table["program_us"] = Knob(round(k.program_us, 2), "determined", "saturation: speed at the end of the write")
        table["op"] = Knob(round(k.op, 5), "undetermined", "no consistency run (the cliff of random writes gives OP)")
    else:
        table["program_us"] = Knob(round(k.program_us, 2), "undetermined", "no consistency run")
        table["op"] = Knob(round(k.op, 5), "undetermined", "no consistency run")
    if cache:
        table["dynamic_share"] = Knob(round(k.dynamic_share, 4), "determined",
                                      "saturation cache size (as a TLC drive: share / 3 of the free space)")
        table["pslc_program_us"] = Knob(round(k.pslc_program_us, 2), "determined", "saturation in-cache speed")
        table["fold_while_writing"] = Knob(round(k.fold_while_writing, 3), "determined",
                                           "saturation speed after the cache against the end speed")
        table["idle_fold"] = Knob(k.idle_fold, "determined" if sat.idle_minutes > 0 else "undetermined",  # type: ignore[union-attr]
                                  "saturation write after idle" if sat.idle_minutes > 0 else  # type: ignore[union-attr]
                                  "no write after idle time in the saturation run; the twin folds after 1 s idle")
        table["cell"] = Knob("tlc", "assumed", "bits per cell: only the cache size (share / bits) is determined")
    made = k.config()
    dies = made.geometry.channels * made.geometry.dies_per_channel
    if "dies" not in table:
        table["dies"] = Knob(dies, "undetermined", f"the design's {made.geometry.channels} channels x "
                                                  f"{made.geometry.dies_per_channel} dies: writes show only the array's "
                                                  f"rate (a PTS IOPS run's small reads show the dies)")
    if "read_us" not in table:
        table["read_us"] = Knob(made.timing.read_us, "undetermined", "no read measurement: the design's read time (a "
                                                                     "PTS latency run's QD 1 reads show it)")
    if rf is not None:  # the final twin's read points, against the measured ones
        twin.reads = read_figures(k, m, seed)
        errors.update(read_errors(twin.reads, rf.measured))
    table["program_us"].value = round(made.timing.program_us, 2)  # at the twin's dies (fewer on a tiny drive)
    if k.cache:
        table["pslc_program_us"].value = round(made.timing.pslc_program_us, 2)
    measured = {"consistency": None if mc is None else mc.as_dict(), "saturation": None if ms is None else ms.as_dict(),
                "hdtach": None if not m.hdtach else [{"name": n, "mb_s": v} for n, v in m.hdtach[0].passes],
                "pts": None if rf is None else rf.measured.as_dict(),
                "sources": m.describe()}
    return FitResult(knobs=k, table=table, measured=measured, twin=twin, errors=errors,
                     evaluations=len(history) + (0 if rf is None else rf.evaluations + 1),
                     wall_seconds=time.perf_counter() - started, sim_capacity_bytes=sim_cap, history=history,
                     measurements=m)


BOUNDS = {"program_us": (20.0, 50_000.0), "op": (0.01, 3.0), "dynamic_share": (0.005, 1.0),
          "pslc_program_us": (10.0, 10_000.0), "fold_while_writing": (0.0, 8.0)}
"""The knobs' plausible ranges (the staged corrections and the refinement stay inside them)."""


def _effective(k: Knobs) -> float:
    """The effective spare factor of the twin at its capacity (the spare the data really gets: OP
    less the free pool GC keeps and bad blocks; docs/results.md)."""
    return float(k.config().spare()["effective_spare_factor"])


def _op_for_spare(k: Knobs, spare: float) -> float:
    """The OP whose effective spare factor is `spare` under `k`'s GC mode (two secant steps)."""
    spare = max(spare, 0.002)
    op = k.op
    for _ in range(2):
        op = min(max(op + (spare - _effective(k.with_(op=_buildable_op(k, op)))), BOUNDS["op"][0]), BOUNDS["op"][1])
    return _buildable_op(k, op)


def _buildable_op(k: Knobs, op: float) -> float:
    """`op`, or the smallest OP above it (in steps of 25 %) that leaves the GC mode its free-block
    reserve (clean-up-later keeps tens of blocks per die; a low OP cannot hold them)."""
    for _ in range(12):
        try:
            k.with_(op=op).config()
            return op
        except SsdlabError:
            op = min(op * 1.25, BOUNDS["op"][1])
    return op


def _bounded(old: Knobs, new: Knobs) -> Knobs:
    """`new` with each knob's step from `old` at most a factor of 2 and inside `BOUNDS` (a figure
    far off, such as a stall in the burst, must not throw a knob across its range in one step)."""
    ch = {}
    for name, (lo, hi) in BOUNDS.items():
        a, b = getattr(old, name), getattr(new, name)
        if a > 0:
            b = min(max(b, a / 2.0), a * 2.0)
        ch[name] = min(max(b, lo), hi)
    return new.with_(**ch)


def _knob_text(k: Knobs) -> str:
    text = f"tPROG {k.program_us:.0f} us, OP {100 * k.op:.1f} %, {k.gc_mode}"
    if k.cache:
        text += f", share {k.dynamic_share:.3f}, pSLC {k.pslc_program_us:.0f} us, fold {k.fold_while_writing:.2f}"
    return text


def _joint(start: Knobs, evaluate: Callable[[Knobs], TwinRun]) -> None:
    """Nelder-Mead over the continuous knobs in log space, from the staged answer."""
    from scipy.optimize import minimize

    names = ["program_us", "op"] + (["dynamic_share", "pslc_program_us"] if start.cache else [])
    if start.cache and start.fold_while_writing > 0:
        names.append("fold_while_writing")
    x0 = np.log([getattr(start, n) for n in names])
    cache: Dict[Tuple[float, ...], float] = {}

    def knobs_of(x: np.ndarray) -> Knobs:
        vals = {n: float(math.exp(v)) for n, v in zip(names, x)}
        if "dynamic_share" in vals:
            vals["dynamic_share"] = min(vals["dynamic_share"], 1.0)
        for n in names:
            lo, hi = BOUNDS[n]
            vals[n] = min(max(vals[n], lo), hi)
        return start.with_(**vals)

    def objective(x: np.ndarray) -> float:
        key = tuple(np.round(x, 4))
        if key not in cache:
            cache[key] = evaluate(knobs_of(x)).loss
        return cache[key]

    simplex = [x0] + [x0 + 0.06 * np.eye(len(names))[i] for i in range(len(names))]
    minimize(objective, x0, method="Nelder-Mead",
             options={"initial_simplex": np.array(simplex), "xatol": 0.005, "fatol": 1e-4, "maxfev": 30})
