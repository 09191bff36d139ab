"""Fit a twin to a review's published figures, and ask it what the review did not publish.

The Samsung 980 Pro 1 TB (TechPowerUp, docs/calibration.md): a whole-drive write at ~4 GB/s for the
first 113 GB, then ~1.5 GB/s while the drive flushes its SLC cache into TLC, 1.9 GB/s on average.
Those three figures make a saturation curve (4000 MB/s to 113 GB; 1500 MB/s up to the point where
the rest at 2000 MB/s, native TLC, gives the 1.9 GB/s average: 438 GB), written as a device run
writes `saturation.csv`, with no noise. The fit finds the cache; the twin then predicts 4 KiB
random writes (clean and steady), a 70/30 mix at QD 8 and 25 % spare area, which the review did not
measure. No consistency run was published, so OP and the GC mode stay undetermined.

    .venv/bin/python scripts/fit_seed.py OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ssdlab.fit import fit
from ssdlab.fit.predict import Workload, predict
from ssdlab.fit.report import save_report
from ssdlab.fit.twin import to_toml

CAPACITY = 1_000_000_000_000


def published_curve(points: int = 200) -> pd.DataFrame:
    gb = np.linspace(1000 / points, 1000, points)
    mb_s = np.where(gb <= 113, 4000.0, np.where(gb <= 438, 1500.0, 2000.0))
    return pd.DataFrame({"phase": "write", "gb_written": gb, "mb_s": mb_s})


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "runs/fit-seed")
    d = out / "980pro-saturation"
    d.mkdir(parents=True, exist_ok=True)
    published_curve().to_csv(d / "saturation.csv", index=False)
    (d / "summary.json").write_text(json.dumps({
        "scenario": "saturation", "device": "Samsung 980 Pro 1 TB (TechPowerUp's published figures)",
        "user_capacity_bytes": CAPACITY, "pattern": "sequential", "block_bytes": 131072, "queue_depth": 32,
        "fill_pct": 100.0, "idle_minutes": 0.0}))
    r = fit([d], budget_s=600, say=lambda t: print(t, flush=True))
    (out / "twin.toml").write_text(to_toml(r.config(), "twin of the 980 Pro 1 TB from TechPowerUp's figures"))
    save_report(r, out / "twin-fit", str(out / "twin.toml"))
    print(json.dumps({n: [k.value, k.status] for n, k in r.table.items()}, indent=1))
    print("errors:", {k: round(v, 4) for k, v in r.errors.items() if v is not None})
    small = r.knobs.config(64 * 2**30)  # predictions at 64 GiB: speeds stay, times scale
    for name, w in (("4 KiB random writes, QD32", Workload(duration_s=600)),
                    ("70/30 random, QD8", Workload(rw="randrw", read_pct=70, qd=8, duration_s=600)),
                    ("4 KiB random writes, 25 % spare area", Workload(spare_area_pct=25, duration_s=600))):
        p = predict(small, w)
        print(f"{name}: steady {p.iops:,.0f} IOPS, WA {p.write_amplification:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
