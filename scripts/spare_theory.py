"""The README's theory table at the user level: `ssdlab wa` on a preset drive at several spare
factors and both victim policies, its steady-state WA beside the analytic models (FIFO:
Desnoyers 2012; greedy: Bux & Iliadis 2010 / Van Houdt 2013 via Desnoyers' approximation, with
b = the drive's units per block) at the nominal `op` and at the `effective_spare_factor` its
summary.json states (the spare after factory bad blocks, the GC's free pool and the open blocks).

Usage: python scripts/spare_theory.py [--drive mlc-256] [--capacity 8GiB] [--minutes 40]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from ssdlab.config import load_preset

SSDLAB = str(Path(sys.executable).with_name("ssdlab"))


def wa_fifo(alpha: float) -> float:
    x = 0.5
    for _ in range(300):
        x = math.exp(-alpha * (1.0 - x))
    return 1.0 / (1.0 - x)


def wa_greedy(alpha: float, b: float) -> float:
    k = 1.0 + 1.0 / (2.0 * b)
    return wa_fifo(k * alpha) / k


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drive", default="mlc-256")
    ap.add_argument("--capacity", default="8GiB")
    ap.add_argument("--minutes", type=float, default=40.0, help="--torture-minutes of each run")
    args = ap.parse_args()
    print("| op | policy | effective spare | steady WA | theory at op | error | theory at effective | error |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for op in (0.07, 0.10, 0.25, 0.50):
            for policy in ("fifo", "greedy"):
                out = Path(tmp) / f"{op}-{policy}"
                subprocess.run([SSDLAB, "wa", "-q", "--drive", args.drive, "--capacity", args.capacity, "--op", str(op),
                                "--gc", policy, "--torture-minutes", str(args.minutes), "--out", str(out)], check=True)
                s = json.loads((out / "summary.json").read_text())
                b = float(_units_per_block(args.drive, args.capacity, op))
                model = wa_fifo if policy == "fifo" else (lambda a: wa_greedy(a, b))
                wa = s["steady_write_amplification"] or s["write_amplification"]
                nominal, effective = model(1 + s["op"]), model(1 + s["effective_spare_factor"])
                print(f"| {s['op']:.4f} | {policy} | {s['effective_spare_factor']:.4f} | {wa:.3f} | {nominal:.3f} | "
                      f"{(wa / nominal - 1) * 100:+.1f}% | {effective:.3f} | {(wa / effective - 1) * 100:+.1f}% |",
                      flush=True)
    return 0


def _units_per_block(drive: str, capacity: str, op: float) -> int:
    cfg = load_preset(drive).with_op(op).with_user_capacity(capacity)
    return int(cfg.describe()["units_per_block"])


if __name__ == "__main__":
    sys.exit(main())
