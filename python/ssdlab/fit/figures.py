"""The figures a fit compares, computed the same way from a measured run and from the twin's run.

Consistency (IOPS per second after a sequential fill): the clean IOPS (mean of the burst, at most
its first 10 s), the cliff (the first second below half the best of the first three, as the
procedure's summary defines ``burst_s``, if the seconds after it average below 60 % of the burst), the bytes written before it, the steady state's mean,
its scatter (coefficient of variation), its share of 0-IOPS seconds and its min / mean. Saturation
(MB/s against GB written): the initial speed (median of the first five points), the cache size
(GB written before the speed first fell below half the initial speed), the speed in the cache
(median before the cliff), right after it (median of the first fifth of the rest) and at the end
(median of the last fifth: native writes once folding is done), and the after-idle recovery.
HD Tach: each pass's mean as a percentage of the clean pass.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

import numpy as np

__all__ = ["ConsistencyFigures", "SaturationFigures", "consistency_figures", "saturation_figures", "steady_start"]


def steady_start(seconds: int) -> int:
    """The steady window's first second: the procedure's zoom rule (1400 s of 2000, else 70 %)."""
    return 1400 if seconds >= 2000 else int(math.floor(0.7 * seconds))


def burst_seconds(iops: np.ndarray) -> int:
    """Seconds to the cliff: the first second below half the best of the first three."""
    if len(iops) == 0:
        return 0
    best = float(np.max(iops[:3]))
    below = np.nonzero(iops < 0.5 * best)[0]
    return int(below[0]) if len(below) else len(iops)


@dataclass(frozen=True)
class ConsistencyFigures:
    clean_iops: float
    cliff_s: Optional[float]  # None: no cliff within the run
    cliff_bytes: Optional[float]
    steady_mean: float
    steady_cv: float
    zero_share: float
    min_over_mean: float
    seconds: int

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def consistency_figures(iops: np.ndarray, block_bytes: int) -> ConsistencyFigures:
    iops = np.asarray(iops, dtype=float)
    n = len(iops)
    burst = burst_seconds(iops)
    clean = float(iops[: max(1, min(10, burst))].mean()) if n else 0.0
    # a cliff is a fall that lasts: the seconds after it average below 60 % of the burst (a dip of a
    # noisy device, such as a file on a busy host, is not taken for one)
    sustained = burst < n and float(iops[burst:].mean()) < 0.6 * clean
    cliff = burst if sustained else None
    if not sustained:
        clean = float(iops[: min(10, n)].mean()) if n else 0.0
    cliff_bytes = float(iops[:burst].sum()) * block_bytes if cliff is not None else None
    steady = iops[steady_start(n):] if n else iops
    mean = float(steady.mean()) if len(steady) else 0.0
    cv = float(steady.std() / mean) if mean > 0 else 0.0
    zero = float(np.mean(steady == 0)) if len(steady) else 0.0
    mom = float(steady.min() / mean) if mean > 0 else 0.0
    return ConsistencyFigures(clean, None if cliff is None else float(cliff), cliff_bytes, mean, cv, zero, mom, n)


@dataclass(frozen=True)
class SaturationFigures:
    initial_mb_s: float
    cache_gb: Optional[float]  # None: no cliff
    in_cache_mb_s: float
    after_cache_mb_s: Optional[float]  # right after the cliff (folding while writing, if any)
    end_mb_s: float  # the last fifth of the write
    written_gb: float
    after_idle_mb_s: Optional[float] = None

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)


def saturation_figures(gb: np.ndarray, mb_s: np.ndarray, after_idle_mb_s: Optional[np.ndarray] = None,
                       ) -> SaturationFigures:
    gb = np.asarray(gb, dtype=float)
    mb_s = np.asarray(mb_s, dtype=float)
    initial = float(np.median(mb_s[:5]))
    reached = np.nonzero(mb_s >= initial)[0]
    start = int(reached[0]) if len(reached) else 0
    below = np.nonzero(mb_s[start:] < 0.5 * initial)[0]
    n = len(mb_s)
    end = float(np.median(mb_s[-max(1, n // 5):]))
    idle = float(np.median(after_idle_mb_s[:3])) if after_idle_mb_s is not None and len(after_idle_mb_s) else None
    if not len(below):
        return SaturationFigures(initial, None, float(np.median(mb_s)), None, end, float(gb[-1]), idle)
    cut = start + int(below[0])
    cache_gb = float(gb[cut - 1]) if cut > 0 else 0.0
    rest = mb_s[cut:]
    after = float(np.median(rest[: max(1, len(rest) // 5)]))
    return SaturationFigures(initial, cache_gb, float(np.median(mb_s[:cut])) if cut else initial, after, end,
                             float(gb[-1]), idle)
