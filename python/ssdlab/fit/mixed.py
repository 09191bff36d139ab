"""The GC mode from PTS's mixed points: the IOPS test's 95/5 ... 5/95 cells at 4 and 8 KiB.

A consistency run's steady state reads the GC mode from its scatter (docs/fit.md, "What each
measurement determines"), and a tight band is ambiguous: active GC and a drive that collects on
demand while an SLC cache or ample spare area smooths it look alike under writes alone. Reads
mixed with the writes do not: active GC's background copies hold the dies the reads want, and a
drive that collects only on demand leaves them free between its bursts. So where a PTS IOPS run
was measured, each GC mode's twin, after two staged passes (the mixed cells need its program time
and OP close: from the stages' starting knobs the choice went wrong on two validation drives),
runs the same test (the measured variant, TC x QD, active range and rounds of 5), and the mode
whose small-block mixed cells come closest wins. Checked on 18 drawn drives before it was built
in, with each mode's fitted twin: the nearest mode was the true one on every drive whose 0-IOPS
stalls had not already named clean-up-later (docs/fit.md, Validation).

The twin runs the test where the write procedures run: at the measured capacity and point length
up to `engine.MAX_SIM_BYTES`, and beyond it at that capacity with its points shortened by the
capacity rule. Not smaller: the mixed cells do not keep their values when capacity and point
length shrink together (a cached drive's 4 KiB 65/35 cell: 39,000 IOPS at 32 GiB with 1-s points,
59,000 at 16 GiB with 0.5-s points), so a small twin would misjudge the modes.
"""

from __future__ import annotations

import math
from typing import Dict, Optional, Tuple

from ssdlab.fit.measurements import Measurements, Pts
from ssdlab.fit.twin import Knobs

__all__ = ["SMALL_BLOCKS", "cells_error", "measured_cells", "twin_cells"]

SMALL_BLOCKS = (4096, 8192)
"""The block sizes whose mixed cells are compared: larger requests are bound by the link and the
channels, not by what GC does to the dies."""
ROUNDS = 5
DEFAULT_ROUND_S = 60.0
"""PTS's point length, for a run whose summary does not say."""

Cells = Dict[Tuple[int, int], float]


def measured_cells(m: Measurements) -> Tuple[Optional[Pts], Cells]:
    """The IOPS test and its small-block mixed cells ((read %, block size) -> IOPS), or (None, {})."""
    p = m.pts_test("iops")
    if p is None:
        return None, {}
    cells = {k: v for k, v in p.mixed.items() if k[1] in SMALL_BLOCKS}
    return (p, cells) if cells else (None, {})


def twin_cells(k: Knobs, p: Pts, cells: Cells, cap: int, seed: int = 1) -> Cells:
    """The twin's IOPS test at capacity `cap`, run as `p` was: its cells at the keys of `cells`."""
    from ssdlab.scenarios.pts_iops import pts_iops

    round_s = p.round_s if p.round_s is not None and math.isfinite(p.round_s) else DEFAULT_ROUND_S
    seconds = max(round_s * cap / p.capacity_bytes, 0.05)
    r = pts_iops(k.config(cap), variant=p.variant, rounds_max=ROUNDS, round_s=seconds,
                 active_range=p.active_range_pct, tc=p.threads, qd=p.qd, seed=seed)
    table = r.table.set_index("block_bytes")
    return {(pct, bs): float(table.loc[bs, f"{pct}/{100 - pct}"]) for pct, bs in cells
            if bs in table.index and f"{pct}/{100 - pct}" in table.columns}


def cells_error(twin: Cells, measured: Cells) -> Optional[float]:
    """The mean absolute log error (twin / measured) over the cells both have, or None."""
    both = [(twin[c], v) for c, v in measured.items() if c in twin and twin[c] > 0 and v > 0]
    if not both:
        return None
    return sum(abs(math.log(t / v)) for t, v in both) / len(both)
