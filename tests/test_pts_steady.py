"""PTS's steady-state rule (ssdlab.pts.steady) against hand-computed windows, and its invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from ssdlab.errors import SsdlabError
from ssdlab.pts.steady import ROUNDS_MAX, WINDOW, assess, check_window


def test_a_flat_noisy_window_is_steady() -> None:
    # sum 500, average 100; range 102 - 98 = 4 <= 20; Sxy = -2*100 - 102 + 0 + 101 + 2*99 = -3,
    # Sxx = 10, slope -0.3, excursion 1.2 <= 10
    w = check_window([100, 102, 98, 101, 99])
    assert (w.average, w.range, w.range_limit) == (100, 4, 20)
    assert w.slope == pytest.approx(-0.3) and w.excursion == pytest.approx(1.2) and w.excursion_limit == 10
    assert w.range_ok and w.slope_ok and w.steady


def test_steady_on_range_but_not_on_slope() -> None:
    # range 16 <= 20 % of 100; Sxy = -184 - 96 + 104 + 216 = 40, slope 4, excursion 16 > 10
    w = check_window([92, 96, 100, 104, 108])
    assert w.range == 16 and w.range_ok
    assert w.slope == pytest.approx(4.0) and w.excursion == pytest.approx(16.0)
    assert not w.slope_ok and not w.steady


def test_steady_on_slope_but_not_on_range() -> None:
    # symmetric about the middle round: Sxy = -230 - 85 + 85 + 230 = 0, a flat fit; range 30 > 20
    w = check_window([115, 85, 100, 85, 115])
    assert w.slope == 0 and w.excursion == 0 and w.slope_ok
    assert w.range == 30 and not w.range_ok and not w.steady


def test_a_window_on_either_bound_is_steady() -> None:
    # range exactly 20 % of the average (the spec: "no more than 20 %")
    on_range = check_window([110, 90, 100, 90, 110])
    assert on_range.range == on_range.range_limit == 20 and on_range.range_ok
    # excursion exactly 10 % of the average: slope 5 over 4 rounds = 20 = 10 % of 200 ("within 10 %")
    on_slope = check_window([190, 195, 200, 205, 210])
    assert on_slope.excursion == on_slope.excursion_limit == 20 and on_slope.slope_ok and on_slope.steady
    # just past it: Sxy = -380 - 195 + 205 + 422 = 52, excursion 20.8 > 10 % of 200.2
    assert not check_window([190, 195, 200, 205, 211]).slope_ok
    assert not check_window([110, 90, 100, 89, 111]).range_ok  # range 22 > 20


def test_the_fit_is_over_the_round_numbers() -> None:
    # the same values in rounds 3..7: slope -0.3 as before, intercept 100 + 0.3 * 5 = 101.5
    w = check_window([100, 102, 98, 101, 99], first_round=3)
    assert (w.first_round, w.last_round, w.rounds) == (3, 7, [3, 4, 5, 6, 7])
    assert w.intercept == pytest.approx(101.5) and w.fit(3) == pytest.approx(100.6)
    assert w.fit(7) - w.fit(3) == pytest.approx(-w.excursion)


def test_the_first_steady_round_ends_the_test() -> None:
    ramp = [50, 80, 95, 100, 101, 99, 100, 100]
    # rounds 1-5: range 51; 2-6: average 95, range 21 > 19; 3-7: [95, 100, 101, 99, 100] average 99,
    # range 6, Sxy = -190 - 100 + 99 + 200 = 9, excursion 3.6 <= 9.9
    verdict = assess({"iops": ramp})
    assert verdict is not None and verdict.steady and verdict.round == 7 and verdict.first_round == 3
    assert verdict.rounds_run == 8 and verdict.windows["iops"].values == (95, 100, 101, 99, 100)
    assert assess({"iops": ramp[:6]}) is None  # not steady yet, rounds to go
    assert assess({"iops": ramp[:4]}) is None  # fewer than five rounds


def test_every_tracking_variable_must_be_steady_in_the_same_window() -> None:
    a = [50, 80, 95, 100, 101, 99, 100, 100, 100]
    b = [10, 10, 10, 10, 10, 10, 30, 10, 10]  # round 7's spike keeps b unsteady until round 12
    assert assess({"a": a, "b": b}) is None
    b_long = b + [10, 10, 10]
    a_long = a + [100, 100, 100]
    verdict = assess({"a": a_long, "b": b_long})
    assert verdict is not None and verdict.steady and verdict.round == 12
    assert set(verdict.as_dict()["tracking"]) == {"a", "b"}


def test_not_steady_by_the_last_round_reports_the_last_five() -> None:
    saw = [50.0 if i % 2 else 150.0 for i in range(ROUNDS_MAX)]
    verdict = assess({"iops": saw})
    assert verdict is not None and not verdict.steady
    assert (verdict.first_round, verdict.round, verdict.rounds_run) == (21, 25, 25)
    d = verdict.as_dict()
    assert d["window_rounds"] == [21, 25] and d["tracking"]["iops"]["steady"] is False
    assert d["tracking"]["iops"]["range_pct"] == pytest.approx(100 * 100 / 110)
    assert assess({"iops": saw[:10]}, rounds_max=10).round == 10
    assert assess({"iops": saw[:10]}) is None


def test_bad_windows_are_refused() -> None:
    with pytest.raises(SsdlabError, match="at least 2 rounds"):
        check_window([1.0])
    with pytest.raises(SsdlabError, match="not negative"):
        check_window([1.0, -1.0, 1.0])
    with pytest.raises(SsdlabError, match="different numbers of rounds"):
        assess({"a": [1] * 5, "b": [1] * 6})


values = st.integers(min_value=0, max_value=10**6)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, max_value=1e9, allow_nan=False), st.integers(min_value=1, max_value=30))
def test_a_constant_series_is_steady(c: float, first: int) -> None:
    w = check_window([c] * WINDOW, first)
    assert w.steady and w.range == 0 and w.excursion == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(values, min_size=WINDOW, max_size=WINDOW), st.integers(min_value=1, max_value=1000))
def test_scaling_the_variable_keeps_the_verdict(ys: list, k: int) -> None:
    # whole numbers scaled by a whole number stay exact, so even a window on a bound keeps its verdict
    w, scaled = check_window(ys), check_window([k * y for y in ys])
    assert (scaled.range_ok, scaled.slope_ok) == (w.range_ok, w.slope_ok)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=1, max_value=10**5),
       st.lists(st.integers(min_value=-1, max_value=1), min_size=WINDOW, max_size=WINDOW))
def test_a_strong_trend_is_not_steady(c: int, extra: int, noise: list) -> None:
    # y = c + d*x over rounds 1..5 with 37 d > c: excursion 4 d > 10 % of the average c + 3 d
    d = c // 37 + extra + 2
    w = check_window([c + d * x + e for x, e in zip(range(1, WINDOW + 1), noise)])
    assert not w.slope_ok and not w.steady


@settings(max_examples=300, deadline=None)
@given(st.lists(values, min_size=WINDOW, max_size=WINDOW))
def test_the_exact_tests_agree_with_the_definition(ys: list) -> None:
    w = check_window(ys)
    if abs(w.range - w.range_limit) > 1e-6 * max(w.average, 1):
        assert w.range_ok == (w.range <= w.range_limit)
    if abs(w.excursion - w.excursion_limit) > 1e-6 * max(w.average, 1):
        assert w.slope_ok == (w.excursion <= w.excursion_limit)
