"""PTS's steady-state rule (SNIA SSS PTS 2.0.2 §2.1.24), for any tracked variable.

A device is in steady state when, over a measurement window of `WINDOW` (5) rounds with x the
round number, for every tracking variable y:

a) the range of y, max(y) − min(y), is no more than 20 % of the window's average of y; and
b) the excursion of the least-squares line fitted to (x, y), its value at the last round minus
   its value at the first (|slope| × (5 − 1)), is within 10 % of that average.

The window is checked after every round from round 5 on; the test stops at the first steady
window, or after `ROUNDS_MAX` (25) rounds, when the last 5 rounds are reported as not steady.

**≤, not <.** The spec's text (quoted in ccrssaa/py-sss-pts ``run.py`` and ljishen/SSSPT
``verify_ss.py``, both from the PTS 2.0.x PDF) says the range "is no more than 20 %" and the fit's
excursion "is within 10 %" of the average: both bounds are included. cloudharmony/block-storage
(``<=`` against ``maxDataExcursion``) and TKperf (fails only on ``>``) read it so; py-sss-pts uses
a strict ``<`` (from the headings "less than 20 %"). A window exactly on a bound is steady here.

Both tests are done in exact arithmetic for whole-number data: with n rounds, s = Σy and
Sxy = Σ(x − x̄)·y, Sxx = Σ(x − x̄)², the range test is 100·n·range ≤ 20·s and the slope test is
10·n·(n − 1)·|Sxy| ≤ s·Sxx, so a window on a bound is not decided by rounding. (Round numbers
are consecutive, so x̄ is a half or whole number and Sxx, n·Sxy are exact in binary.)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ssdlab.errors import SsdlabError

__all__ = ["RANGE_PCT", "ROUNDS_MAX", "SLOPE_PCT", "WINDOW", "Verdict", "Window", "assess", "check_window"]

WINDOW = 5
"""Rounds in a measurement window (PTS 2.0.2 §2.1.24 and every open implementation)."""
ROUNDS_MAX = 25
"""Rounds after which a test stops even when not steady (PTS 2.0.2, IOPS test §3.2.1.2.3: 25)."""
RANGE_PCT = 20
"""The largest range of the tracking variable in the window, in percent of its window average."""
SLOPE_PCT = 10
"""The largest excursion of the fit line across the window, in percent of the window average."""


@dataclass(frozen=True)
class Window:
    """One tracking variable over one measurement window.

    `first_round`..`last_round` are the window's rounds (numbered from 1); `values` the variable
    in each; `average`, `range` (max − min) and its limit (20 % of the average); the least-squares
    line ``y = slope·x + intercept`` over the round numbers and its `excursion` (|slope| × (n − 1))
    with its limit (10 % of the average); whether each test holds, and both (`steady`).
    """

    first_round: int
    last_round: int
    values: tuple
    average: float
    range: float
    range_limit: float
    slope: float
    intercept: float
    excursion: float
    excursion_limit: float
    range_ok: bool
    slope_ok: bool

    @property
    def steady(self) -> bool:
        return self.range_ok and self.slope_ok

    @property
    def rounds(self) -> List[int]:
        return list(range(self.first_round, self.last_round + 1))

    def fit(self, x: float) -> float:
        """The fit line's value at round `x`."""
        return self.slope * x + self.intercept

    def as_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        d["values"] = list(self.values)
        d["steady"] = self.steady
        d["range_pct"] = 100.0 * self.range / self.average if self.average else None
        d["excursion_pct"] = 100.0 * self.excursion / self.average if self.average else None
        return d


def check_window(values: Sequence[float], first_round: int = 1) -> Window:
    """The steady-state tests on `values`, the tracking variable in consecutive rounds starting at
    round `first_round`."""
    ys = [float(v) for v in values]
    n = len(ys)
    if n < 2:
        raise SsdlabError(f"a measurement window needs at least 2 rounds, got {n}")
    if not all(math.isfinite(y) and y >= 0 for y in ys):
        raise SsdlabError(f"a tracking variable must be finite and not negative, got {list(values)!r}")
    if isinstance(first_round, bool) or not isinstance(first_round, int) or first_round < 1:
        raise SsdlabError(f"the first round must be a whole number from 1, got {first_round!r}")
    xs = range(first_round, first_round + n)
    total = math.fsum(ys)
    average = total / n
    x_mean = first_round + (n - 1) / 2
    sxx = math.fsum((x - x_mean) ** 2 for x in xs)
    sxy = math.fsum((x - x_mean) * y for x, y in zip(xs, ys))
    slope = sxy / sxx
    spread = max(ys) - min(ys)
    excursion = abs(slope) * (n - 1)
    return Window(
        first_round=first_round, last_round=first_round + n - 1, values=tuple(ys), average=average, range=spread,
        range_limit=RANGE_PCT / 100 * average, slope=slope, intercept=average - slope * x_mean, excursion=excursion,
        excursion_limit=SLOPE_PCT / 100 * average,
        range_ok=100 * n * spread <= RANGE_PCT * total,
        slope_ok=100 * n * (n - 1) * abs(sxy) <= SLOPE_PCT * total * sxx,
    )


@dataclass(frozen=True)
class Verdict:
    """Where a test in rounds ended: `steady` or not, at `round` (the window's last), with each
    tracking variable's `windows` over rounds ``round − 4 … round``; `rounds_run` rounds were run.
    When not steady, `round` is the last round the rule allows (`rounds_max`)."""

    steady: bool
    round: int
    rounds_run: int
    windows: Dict[str, Window]

    @property
    def first_round(self) -> int:
        return next(iter(self.windows.values())).first_round

    def as_dict(self) -> Dict[str, Any]:
        return {"steady": self.steady, "rounds_run": self.rounds_run,
                "window_rounds": [self.first_round, self.round],
                "tracking": {name: w.as_dict() for name, w in self.windows.items()}}


def steady_at(series: Mapping[str, Sequence[float]], last_round: int, window: int = WINDOW) -> Dict[str, Window]:
    """Every tracking variable's window ending at round `last_round` (numbered from 1)."""
    first = last_round - window + 1
    return {name: check_window(list(ys)[first - 1:last_round], first) for name, ys in series.items()}


def assess(series: Mapping[str, Sequence[float]], rounds_max: int = ROUNDS_MAX, window: int = WINDOW
           ) -> Optional[Verdict]:
    """The verdict on the rounds so far: `series` maps each tracking variable to its value in
    rounds 1, 2, …; all have as many rounds. The first round from `window` on where every variable
    is steady gives a steady verdict; failing that, once `rounds_max` rounds were run, the last
    `window` rounds are the (not steady) verdict. None: fewer than `window` rounds, or none steady
    yet and more rounds to go (the test runs another round)."""
    if not series:
        raise SsdlabError("steady state needs at least one tracking variable")
    lengths = {len(ys) for ys in series.values()}
    if len(lengths) != 1:
        raise SsdlabError(f"the tracking variables have different numbers of rounds: {sorted(lengths)}")
    if not 2 <= window <= rounds_max:
        raise SsdlabError(f"the window ({window} rounds) must be from 2 rounds to the most rounds ({rounds_max})")
    run = lengths.pop()
    for last in range(window, min(run, rounds_max) + 1):
        windows = steady_at(series, last, window)
        if all(w.steady for w in windows.values()):
            return Verdict(steady=True, round=last, rounds_run=run, windows=windows)
    if run >= rounds_max:
        return Verdict(steady=False, round=rounds_max, rounds_run=run, windows=steady_at(series, rounds_max, window))
    return None
