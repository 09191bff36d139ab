"""The simulation API: `Simulator`, step results, and `consistency`."""

from __future__ import annotations

import math
from typing import Dict, List, Tuple

import numpy as np
import pandas as pd
import pytest

import ssdlab
from ssdlab.scenarios.consistency import CONSISTENCY_DEFAULTS, consistency_steps
from ssdlab.scenarios.consistency_result import (
    IOPS_COLUMNS,
    LATENCY_KEYS,
    SERIES_COLUMNS,
    SUMMARY_KEYS,
    burst_seconds,
)


def test_defaults_come_from_the_core() -> None:
    d = CONSISTENCY_DEFAULTS
    assert (d.spare_area_pct, d.duration_s, d.queue_depth, d.block_bytes) == (0.0, 2000.0, 32, 4096)
    explicit = consistency_steps(spare_area_pct=0, duration_s=2000, qd=32, block_size="4k")
    assert explicit == consistency_steps()


# -- Simulator ---------------------------------------------------------------------------------------


def test_simulator_runs_steps(small_drive: ssdlab.DriveConfig) -> None:
    sim = ssdlab.Simulator(small_drive, seed=3)
    assert sim.user_bytes == 2 * 2**30 and sim.now_s == 0.0
    assert sim.counters()["host_write_units"] == 0
    steps = [
        {"step": "secure_erase"},
        {"step": "run", "workload": {"label": "w", "rw": "write", "pattern": "random", "duration_s": 3}},
        {"step": "idle", "seconds": 2.5},
        {"step": "trim", "offset_bytes": 0, "length_bytes": 0},
    ]
    results = sim.run_steps(steps)
    assert [r.kind for r in results] == ["secure_erase", "run", "idle", "trim"]
    assert [r.index for r in results] == [0, 1, 2, 3]
    run = results[1]
    assert run.label == "w" and run.phase is not None and run.series is not None
    assert run.interval_s == 1.0
    assert list(run.series.columns[:1]) == ["time_s"]
    assert run.series["time_s"].tolist() == [float(i) for i in range(len(run.series))]
    assert run.series["write_ios"].sum() == run.phase["ios"][1]
    assert results[2].duration_s == pytest.approx(2.5)
    assert results[0].series is None and results[2].phase is None
    for a, b in zip(results, results[1:]):
        assert a.end_s == pytest.approx(b.start_s)
    assert sim.now_s == pytest.approx(results[-1].end_s)
    assert results[-1].counters["trim_units"] > 0
    sim.check_invariants()
    counts = sim.erase_counts()
    assert isinstance(counts, np.ndarray) and counts.dtype == np.uint32 and len(counts) > 0
    assert "mlc-256" in repr(sim)


def test_simulator_takes_a_preset_name() -> None:
    with pytest.raises(ssdlab.SsdlabError, match="unknown drive"):
        ssdlab.Simulator("nope")


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True, "1"])
def test_bad_seeds(small_drive: ssdlab.DriveConfig, seed: object) -> None:
    with pytest.raises(ssdlab.SsdlabError, match="seed"):
        ssdlab.Simulator(small_drive, seed=seed)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "steps",
    [
        [{"step": "warp"}],
        [{"step": "idle", "seconds": 0}],
        [{"step": "run", "workload": {"queue_depth": 0}}],
        [{"step": "run", "workload": {"block_bytes": 1000}}],
        [{"step": "run", "workload": {"duration_s": float("nan")}}],
        [{"step": "run", "workload": {"bogus": 1}}],
        "secure_erase",
        [object()],
    ],
)
def test_bad_steps_raise_before_running(small_drive: ssdlab.DriveConfig, steps: object) -> None:
    sim = ssdlab.Simulator(small_drive)
    with pytest.raises(ssdlab.SsdlabError) as err:
        sim.run_steps(steps)  # type: ignore[arg-type]
    assert "\n" not in str(err.value)
    assert sim.now_s == 0.0


def test_progress_callable_and_cancel(small_drive: ssdlab.DriveConfig) -> None:
    calls: List[Tuple[int, float, float]] = []
    sim = ssdlab.Simulator(small_drive)
    steps = [{"step": "secure_erase"}, {"step": "run", "workload": {"duration_s": 5}}]
    sim.run_steps(steps, progress=lambda *a: calls.append(a))
    assert {c[0] for c in calls} == {0, 1}
    assert calls[-1][1] == 1.0 and calls[-1][2] >= 5.0

    with pytest.raises(KeyboardInterrupt):
        ssdlab.Simulator(small_drive).run_steps(steps, progress=lambda *a: False)

    class Stop(Exception):
        pass

    def boom(*_: object) -> None:
        raise Stop

    with pytest.raises(Stop):
        ssdlab.Simulator(small_drive).run_steps(steps, progress=boom)
    with pytest.raises(ssdlab.SsdlabError, match="progress"):
        ssdlab.Simulator(small_drive).run_steps(steps, progress="yes")  # type: ignore[arg-type]


# -- consistency -----------------------------------------------------------------------------------


def test_consistency_shape(short_run: ssdlab.ConsistencyResult, small_drive: ssdlab.DriveConfig) -> None:
    r = short_run
    assert list(r.iops.columns) == list(IOPS_COLUMNS)
    assert len(r.iops) == 30
    assert r.iops["time_s"].tolist() == list(range(30))
    assert list(r.series.columns) == list(SERIES_COLUMNS)
    assert len(r.series) == 30
    assert (r.series["iops"] == r.iops["iops"]).all()
    assert list(r.summary) == list(SUMMARY_KEYS)
    assert list(r.summary["latency_us"]) == list(LATENCY_KEYS)
    s = r.summary
    assert s["scenario"] == "consistency" and s["device"] is None and s["seed"] == 1
    assert s["drive"] == "mlc-256" and s["label"] == "mlc-256 · 0% spare area"
    assert s["ssdlab_version"] == ssdlab.__version__
    assert s["user_capacity_bytes"] == 2 * 2**30
    assert s["op"] == small_drive.describe()["op"]
    assert (s["duration_s"], s["qd"], s["block_size"], s["gc_policy"]) == (30.0, 32, 4096, "greedy")
    assert s["zoom_start_s"] == 21.0
    assert s["fill_seconds"] > 0 and s["wall_seconds"] > 0
    assert s["nand_write_bytes"] >= s["host_write_bytes"] > 0
    burst = burst_seconds(r.iops["iops"].tolist())
    assert s["burst_s"] == burst
    assert s["iops_clean"] == pytest.approx(r.iops["iops"][: max(1, min(10, burst))].mean())
    assert s["iops_steady_mean"] == pytest.approx(r.iops["iops"][21:].mean())
    assert s["iops_steady_min"] == r.iops["iops"][21:].min()
    assert s["host_write_bytes"] == pytest.approx(r.series["host_mib"].sum() * 2**20)
    assert [st.kind for st in r.steps] == ["secure_erase", "run", "run"]
    assert "ConsistencyResult" in repr(r)


def test_fractional_duration_rounds_rows_up(small_drive: ssdlab.DriveConfig) -> None:
    r = ssdlab.consistency(small_drive, duration_s=5.5)
    assert len(r.iops) == 6 == len(r.series)


def test_burst_then_cliff(runs_120s: Dict[int, ssdlab.ConsistencyResult]) -> None:
    r = runs_120s[0]
    # A 2 GiB drive of the default design keeps its 32 dies: the burst lasts about a second.
    assert r.summary["burst_s"] >= 1
    assert r.summary["iops_clean"] > 3 * r.summary["iops_steady_mean"]
    bound = r.config.describe()["clean_write_iops_bound"] if r.config else math.inf
    assert r.summary["iops_clean"] <= bound * 1.02


def test_spare_area_helps(runs_120s: Dict[int, ssdlab.ConsistencyResult]) -> None:
    none, quarter = runs_120s[0].summary, runs_120s[25].summary
    assert quarter["iops_steady_mean"] > 2 * none["iops_steady_mean"]
    assert quarter["write_amplification"] < none["write_amplification"]
    assert quarter["steady_write_amplification"] < none["steady_write_amplification"]
    assert quarter["label"] == "mlc-256 · 25% spare area"


def _without_wall(summary: Dict[str, object]) -> Dict[str, object]:
    return {k: v for k, v in summary.items() if k != "wall_seconds"}


def test_determinism(small_drive: ssdlab.DriveConfig, short_run: ssdlab.ConsistencyResult) -> None:
    again = ssdlab.consistency(small_drive, duration_s=30, seed=1)
    pd.testing.assert_frame_equal(again.iops, short_run.iops)
    pd.testing.assert_frame_equal(again.series, short_run.series)
    assert _without_wall(again.summary) == _without_wall(short_run.summary)
    other = ssdlab.consistency(small_drive, duration_s=30, seed=2)
    # (Per-second IOPS of a one-die drive can coincide over 30 s; the GC traffic does not.)
    assert not other.series.equals(short_run.series)
    assert _without_wall(other.summary) != _without_wall(short_run.summary)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"qd": 0}, "queue depth"),
        ({"qd": -1}, "queue depth"),
        ({"qd": 1.5}, "queue depth"),
        ({"duration_s": 0}, "duration"),
        ({"duration_s": -1}, "duration"),
        ({"duration_s": float("inf")}, "duration"),
        ({"spare_area_pct": 100}, "spare area"),
        ({"spare_area_pct": -1}, "spare area"),
        ({"spare_area_pct": float("nan")}, "spare area"),
        ({"block_size": 4100}, "block size"),
        ({"block_size": "lots"}, "block size"),
        ({"seed": -5}, "seed"),
        ({"progress": 3}, "progress"),
    ],
)
def test_consistency_refuses_bad_parameters(small_drive: ssdlab.DriveConfig, kwargs: dict, match: str) -> None:
    with pytest.raises(ssdlab.SsdlabError, match=match) as err:
        ssdlab.consistency(small_drive, duration_s=kwargs.pop("duration_s", 5), **kwargs)
    assert "\n" not in str(err.value)


def test_consistency_takes_preset_names_and_custom_labels() -> None:
    with pytest.raises(ssdlab.SsdlabError, match="unknown drive"):
        ssdlab.consistency("nope", duration_s=5)
    steps = consistency_steps("mlc-256", duration_s=5, block_size="8k", qd=4)
    random = steps[-1]["workload"]
    assert (random["duration_s"], random["block_bytes"], random["queue_depth"]) == (5.0, 8192, 4)


@pytest.mark.slow
def test_the_default_drive_reproduces_the_review_shape() -> None:
    """The 256 GB default over the reviews' full 2000 s: burst near the NAND ceiling, a cliff, and a
    steady state several times lower, with WA well above 1 (about 30 s of wall time)."""
    r = ssdlab.consistency(duration_s=2000)
    s = r.summary
    bound = ssdlab.load_preset("mlc-256").describe()["clean_write_iops_bound"]
    assert 0.8 * bound < s["iops_clean"] <= 1.02 * bound
    assert s["iops_steady_mean"] < s["iops_clean"] / 4
    assert s["zoom_start_s"] == 1400.0 and len(r.iops) == 2000
    assert s["steady_write_amplification"] > 2
