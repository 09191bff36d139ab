"""A job's interval series (`JobResult.series`) in fio's terms: the directions its columns are named
by (`DIRS`), the length of each window (the last ends with the job), and which windows are whole --
fio samples bandwidth and IOPS, for its JSON and its logs alike, only in full windows.
"""

from __future__ import annotations

import numpy as np

DIRS = ("read", "write", "trim")


def interval_lengths_ms(n: int, interval_ms: float, runtime_ms: float) -> np.ndarray:
    """Length of each of `n` series intervals; the last one ends with the job."""
    lengths = np.full(n, float(interval_ms))
    if n:
        lengths[-1] = max(runtime_ms - interval_ms * (n - 1), 1.0)
    return lengths


def whole_windows(spent: np.ndarray, interval_ms: float) -> np.ndarray:
    """Which windows fio samples for bandwidth and IOPS: all but a last one cut short (fio takes a
    sample only once a window is full, to within LOG_MSEC_SLACK = 1 ms)."""
    keep = np.ones(len(spent), dtype=bool)
    if len(spent) and spent[-1] < interval_ms - 1.0:
        keep[-1] = False
    return keep
