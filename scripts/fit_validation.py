"""Validation of `ssdlab fit`: drives with knobs the fit does not know, measured, fitted, predicted.

For each drawn drive (random knobs within docs/fit.md's ranges; several GC modes; with and without
an SLC cache; hidden dies and read time):

1. "measure" it: a native consistency run and a saturation run at --capacity, and (unless
   --no-pts) PTS's latency, IOPS and throughput tests (points of --pts-round-s, 5 rounds), with
   measurement-like noise (log-normal, sigma 3 %, on each second's IOPS, each saturation point and
   each cell of a PTS table), written as a device run would write them (iops.csv, saturation.csv,
   the PTS tables, and a summary.json holding only the procedure, its settings and the capacity);
2. fit a twin from those directories (`ssdlab.fit.fit`, --budget seconds);
3. predict held-out workloads on truth and twin at --predict-capacity: random 70/30 at QD 8, zipf
   1.2 writes, a block trace (MSR Cambridge format, made here), 4 KiB random writes with 25 % spare
   area; and compare the fitted figures: cliff time (consistency) and cache size (saturation),
   twin against the noise-free truth.

One JSON line per drive goes to OUT/results.jsonl as it finishes (a killed run keeps what it did);
`--table` prints docs/fit.md's table from it.

    .venv/bin/python scripts/fit_validation.py --drives 20 --out runs/fit-validation
    .venv/bin/python scripts/fit_validation.py --table --out runs/fit-validation
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

from ssdlab.config import DriveConfig, load_preset
from ssdlab.fit import fit
from ssdlab.fit.figures import consistency_figures, saturation_figures
from ssdlab.fit.predict import Workload, predict, predict_trace
from ssdlab.scenarios.consistency import consistency
from ssdlab.scenarios.saturation import saturation

GiB = 2**30
NOISE_SIGMA = 0.03
HELD_OUT = {
    "randrw70_qd8": Workload(rw="randrw", read_pct=70, qd=8, duration_s=300),
    "zipf_writes": Workload(zipf=1.2, duration_s=300),
    "spare25": Workload(spare_area_pct=25, duration_s=300),
}


def draw(i: int) -> Dict[str, Any]:
    """The hidden drive number `i`: a drive file's dict and what was drawn."""
    rng = np.random.default_rng(7000 + i)
    cache = i % 3 == 2  # a third of the drives have an SLC cache
    if cache:
        d = load_preset("tlc-dynamic-cache").to_dict()
        d["timing"]["program_us"] = float(rng.uniform(350, 800))
        d["timing"]["pslc_program_us"] = float(rng.uniform(150, 350))
        d["timing"]["read_us"] = float(rng.uniform(30, 70))
        d["geometry"]["dies_per_channel"] = int(rng.choice([2, 4]))
        d["ftl"]["op"] = float(math.exp(rng.uniform(math.log(0.07), math.log(0.2))))
        sc = d["ftl"]["slc_cache"]
        sc["static_pct"] = 0.0  # the twin has no static part; the drives stay those the table measured
        sc["dynamic_share"] = float(rng.uniform(0.1, 0.6))
        sc["fold_while_writing"] = 0.0 if rng.random() < 0.5 else float(rng.uniform(0.1, 0.5))
        mode = "on-demand"
    else:
        d = load_preset("mlc-256").to_dict()
        d["timing"]["program_us"] = float(math.exp(rng.uniform(math.log(800), math.log(2500))))
        d["timing"]["read_us"] = float(rng.uniform(35, 90))
        d["geometry"]["channels"] = int(rng.choice([4, 8]))
        d["geometry"]["dies_per_channel"] = int(rng.choice([4, 8]))
        d["ftl"]["op"] = float(math.exp(rng.uniform(math.log(0.07), math.log(0.4))))
        mode = ["on-demand", "active", "clean-up-later"][i % 3 if i % 3 < 2 else 0]
        if i % 6 == 4:
            mode = "clean-up-later"
        src = load_preset({"on-demand": "mlc-256", "active": "active-gc", "clean-up-later": "clean-up-later"}[mode])
        for k in ("gc_mode", "gc_low_free_blocks", "gc_high_free_blocks", "active_gc_free_blocks", "gc_catch_up",
                  "gc_copies_between_stalls"):
            d["ftl"][k] = src.to_dict()["ftl"].get(k)
    d["name"] = f"hidden-{i}"
    d["description"] = "drawn for the fit's validation"
    truth = {"cache": cache, "gc_mode": mode, "op": d["ftl"]["op"], "program_us": d["timing"]["program_us"],
             "dies": d["geometry"]["channels"] * d["geometry"]["dies_per_channel"], "read_us": d["timing"]["read_us"]}
    if cache:
        truth.update({k: d["ftl"]["slc_cache"][k] for k in ("dynamic_share", "fold_while_writing")},
                     pslc_program_us=d["timing"]["pslc_program_us"])
    return {"drive": d, "truth": truth}


def noisy(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return values * np.exp(rng.normal(0.0, NOISE_SIGMA, len(values)))


def measure(cfg: DriveConfig, out: Path, rng: np.random.Generator, duration_s: float) -> Dict[str, Any]:
    """The device-visible files of a consistency and a saturation run; the noise-free figures."""
    cap = int(cfg.describe()["user_capacity_bytes"])
    c = consistency(cfg, duration_s=duration_s)
    iops = c.iops["iops"].to_numpy(float)
    (out / "consistency").mkdir(parents=True, exist_ok=True)
    import pandas as pd

    pd.DataFrame({"time_s": np.arange(len(iops)), "iops": np.round(noisy(iops, rng)).astype(int)}).to_csv(
        out / "consistency" / "iops.csv", index=False)
    (out / "consistency" / "summary.json").write_text(json.dumps({
        "scenario": "consistency", "device": "hidden", "user_capacity_bytes": cap, "spare_area_pct": 0.0,
        "duration_s": duration_s, "qd": 32, "block_size": 4096}))
    s = saturation(cfg, points=200)
    w = s.curve[s.curve["phase"] == "write"]
    (out / "saturation").mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"phase": "write", "gb_written": w["gb_written"], "mb_s": noisy(w["mb_s"].to_numpy(float), rng)}
                 ).to_csv(out / "saturation" / "saturation.csv", index=False)
    (out / "saturation" / "summary.json").write_text(json.dumps({
        "scenario": "saturation", "device": "hidden", "user_capacity_bytes": cap, "pattern": "sequential",
        "block_bytes": 131072, "queue_depth": 32, "fill_pct": 100.0, "idle_minutes": 0.0}))
    cf = consistency_figures(iops, 4096)
    sf = saturation_figures(w["gb_written"].to_numpy(float), w["mb_s"].to_numpy(float))
    return {"consistency": cf.as_dict(), "saturation": sf.as_dict(),
            "steady_wa": c.summary.get("steady_write_amplification")}


PTS_KEEP = ("scenario", "user_capacity_bytes", "variant", "active_range_pct", "threads", "queue_depth", "round_s",
            "rounds_max")
PTS_NOISY = {"latency_table.csv": ("iops", "mean_us", "p99_999_us", "max_us"),
             "iops_table.csv": ("100/0", "95/5", "65/35", "50/50", "35/65", "5/95", "0/100"),
             "throughput_table.csv": ("read_mb_s", "write_mb_s")}


def measure_pts(cfg: DriveConfig, out: Path, rng: np.random.Generator, round_s: float) -> Dict[str, Any]:
    """PTS's latency, IOPS and throughput tests as a device run records them: the tables (noisy),
    and a summary of the test's settings and the capacity only."""
    import pandas as pd

    from ssdlab.scenarios.pts_iops import pts_iops
    from ssdlab.scenarios.pts_latency import pts_latency
    from ssdlab.scenarios.pts_throughput import pts_throughput

    clean: Dict[str, Any] = {}
    for name, run in (("pts-latency", pts_latency), ("pts-iops", pts_iops), ("pts-throughput", pts_throughput)):
        d = out / name
        r = run(cfg, round_s=round_s, rounds_max=5)
        r.save(d)
        s = json.loads((d / "summary.json").read_text())
        (d / "summary.json").write_text(json.dumps({**{k: s.get(k) for k in PTS_KEEP}, "device": "hidden"}))
        for f in d.iterdir():
            if f.name not in PTS_NOISY and f.name != "summary.json":
                f.unlink()
        for table, cols in PTS_NOISY.items():
            if (d / table).exists():
                t = pd.read_csv(d / table)
                clean[table] = t.to_dict("list")
                for c in cols:
                    t[c] = noisy(t[c].to_numpy(float), rng)
                t.to_csv(d / table, index=False)
    return clean


def make_trace(path: Path) -> None:
    """A block trace in MSR Cambridge's format: 60 % writes, 80 % of requests on a hot 1 GiB,
    4-64 KiB requests (fit="wrap" folds it onto any capacity)."""
    rng = np.random.default_rng(3)
    t = 128166372000000000
    lines = []
    for _ in range(150_000):
        t += int(rng.exponential(2000))
        write = rng.random() < 0.6
        hot = rng.random() < 0.8
        off = int(rng.integers(0, 2**18) if hot else rng.integers(0, 2**23)) * 4096
        size = int(rng.choice([4096, 8192, 16384, 65536], p=[0.6, 0.2, 0.1, 0.1]))
        lines.append(f"{t},host,0,{'Write' if write else 'Read'},{off},{size},100")
    path.write_text("\n".join(lines) + "\n")


def err(twin: Any, truth: Any) -> Any:
    if twin is None or truth is None or truth == 0:
        return None
    return float(twin) / float(truth) - 1.0


def one(i: int, args: argparse.Namespace, trace: Path) -> Dict[str, Any]:
    drawn = draw(i)
    cfg = DriveConfig.from_dict(drawn["drive"]).with_user_capacity(args.capacity)
    rng = np.random.default_rng(90_000 + i)
    d = Path(args.out) / f"drive-{i:02d}"
    t0 = time.perf_counter()
    measured = measure(cfg, d, rng, args.duration)
    dirs = [d / "consistency", d / "saturation"]
    if not args.no_pts:
        measure_pts(cfg, d, rng, args.pts_round_s)
        dirs += [d / "pts-latency", d / "pts-iops", d / "pts-throughput"]
    t1 = time.perf_counter()
    r = fit(dirs, budget_s=args.budget)
    t2 = time.perf_counter()
    twin_cfg = r.knobs.config(args.predict_capacity)
    truth_cfg = DriveConfig.from_dict(drawn["drive"]).with_user_capacity(args.predict_capacity)
    row: Dict[str, Any] = {"drive": i, "truth": drawn["truth"], "twin": r.knobs.as_dict(), "fit_wall_s": t2 - t1,
                           "evaluations": r.evaluations, "fit_errors": r.errors, "pts": not args.no_pts,
                           "knob_status": {n: k.status for n, k in r.table.items()}}
    tc = r.twin.consistency
    mc = measured["consistency"]
    row["cliff_s"] = {"truth": mc["cliff_s"], "twin": None if tc is None or tc.cliff_s is None else
                      tc.cliff_s * r.twin.consistency_time_scale}
    row["steady_consistency"] = {"truth": mc["steady_mean"], "twin": None if tc is None else tc.steady_mean}
    ts = r.twin.saturation
    row["cache_gb"] = {"truth": measured["saturation"]["cache_gb"], "twin": None if ts is None else ts.cache_gb}
    pred: Dict[str, Any] = {}
    for name, w in HELD_OUT.items():
        a, b = predict(truth_cfg, w), predict(twin_cfg, w)
        pred[name] = {"truth": a.as_dict(), "twin": b.as_dict()}
    a, b = predict_trace(truth_cfg, trace), predict_trace(twin_cfg, trace)
    pred["trace"] = {"truth": a.as_dict(), "twin": b.as_dict()}
    row["predictions"] = pred
    row["wall_s"] = time.perf_counter() - t0
    row["measure_wall_s"] = t1 - t0
    return row


def table(out: Path) -> str:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    lines = [f"{len(rows)} drawn drives ({sum(r['truth']['cache'] for r in rows)} with an SLC cache; GC modes "
             + ", ".join(f"{m} {sum(r['truth']['gc_mode'] == m for r in rows)}"
                         for m in ("on-demand", "active", "clean-up-later")) + ")", "",
             "| figure | median abs. error | 80th percentile | max | drives | goal |", "|---|---|---|---|---|---|"]

    def stat(name: str, vals: List[float], goal: str) -> None:
        v = np.abs([x for x in vals if x is not None and math.isfinite(x)])
        if len(v) == 0:
            lines.append(f"| {name} | n/a | | | 0 | {goal} |")
            return
        lines.append(f"| {name} | {100 * np.median(v):.1f} % | {100 * np.percentile(v, 80):.1f} % | "
                     f"{100 * v.max():.1f} % | {len(v)} | {goal} |")

    for key, label in (("randrw70_qd8", "70/30 random at QD 8"), ("zipf_writes", "zipf 1.2 random writes"),
                       ("trace", "block trace (MSR format, QD 32)"), ("spare25", "random writes, 25 % spare area")):
        stat(f"{label}: steady IOPS", [err(r["predictions"][key]["twin"]["iops"], r["predictions"][key]["truth"]["iops"])
                                      for r in rows], "≤ 10 %")
        stat(f"{label}: WA", [err(r["predictions"][key]["twin"]["write_amplification"],
                                  r["predictions"][key]["truth"]["write_amplification"]) for r in rows], "≤ 10 %")
    stat("consistency steady IOPS (fitted)", [err(r["steady_consistency"]["twin"], r["steady_consistency"]["truth"])
                                             for r in rows], "")
    stat("cliff time (fitted)", [err(r["cliff_s"]["twin"], r["cliff_s"]["truth"]) for r in rows], "≤ 15 %")
    stat("cache size (fitted, drives with a cache)", [err(r["cache_gb"]["twin"], r["cache_gb"]["truth"])
                                                     for r in rows if r["truth"]["cache"]], "≤ 15 %")
    stat("OP recovered", [err(r["twin"]["op"], r["truth"]["op"]) for r in rows], "")
    stat("read time recovered (PTS latency)", [err(r["twin"].get("read_us"), r["truth"]["read_us"]) for r in rows], "")
    stat("dies recovered (PTS IOPS)", [err(r["twin"].get("dies"), r["truth"]["dies"]) for r in rows], "")
    for key, label in (("pts_read_latency_us", "PTS QD 1 read latency (fitted)"),
                       ("pts_read_iops_512", "PTS 0.5 KiB read IOPS at TC x QD (fitted)"),
                       ("pts_seq_read_mb_s", "PTS sequential read MB/s (fitted)")):
        stat(label, [r["fit_errors"].get(key) for r in rows if key in r["fit_errors"]], "")
    walls = [r["fit_wall_s"] for r in rows]
    lines += ["", f"fit wall time: median {np.median(walls):.0f} s, max {max(walls):.0f} s; "
              f"GC mode recovered on {sum(r['twin']['gc_mode'] == r['truth']['gc_mode'] for r in rows)} of {len(rows)}"]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drives", type=int, default=20)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--capacity", type=int, default=32 * GiB, help="measured capacity, bytes")
    ap.add_argument("--predict-capacity", type=int, default=16 * GiB)
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--budget", type=float, default=100.0)
    ap.add_argument("--no-pts", action="store_true", help="measure and fit without the PTS tests (writes only)")
    ap.add_argument("--pts-round-s", type=float, default=1.0, help="seconds of each PTS point")
    ap.add_argument("--out", default="runs/fit-validation")
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    out = Path(args.out)
    if args.table:
        print(table(out))
        return 0
    out.mkdir(parents=True, exist_ok=True)
    trace = out / "trace.csv"
    if not trace.exists():
        make_trace(trace)
    for i in range(args.first, args.first + args.drives):
        row = one(i, args, trace)
        with open(out / "results.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"drive {i}: fit {row['fit_wall_s']:.0f} s, total {row['wall_s']:.0f} s; truth {row['truth']}; "
              f"twin op {row['twin']['op']:.3f} tPROG {row['twin']['program_us']:.0f} {row['twin']['gc_mode']}",
              flush=True)
    print(table(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
