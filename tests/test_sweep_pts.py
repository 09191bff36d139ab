"""The PTS tests in sweeps (`ssdlab.pts.columns`): each is a sweep scenario whose point equals the
single run and whose columns are the summary's figures; a tiny sweep over a 512 MiB drive."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

import ssdlab
from ssdlab.scenarios import get
from ssdlab.sweep.execute import Task, run_point

CASES = [  # (scenario, options: the shortest settings that run the whole test, a column and its summary value)
    # the TC x QD sweeps and the IOPS test take seconds a run: their point is not run twice
    ("pts-iops", {"rounds_max": 5, "round_s": 0.05},
     "rnd_4k_0_100", lambda s: s["steady_state"]["tracking"]["rnd_4k_0_100"]["average"]),
    ("pts-latency", {"rounds_max": 5, "round_s": 0.2},
     "rnd_4k_0_100_mean", lambda s: s["steady_state"]["tracking"]["rnd_4k_0_100_mean"]["average"]),
    ("pts-throughput", {"rounds_max": 5, "round_s": 0.2},
     "write_mb_s_1024k", lambda s: s["block_sizes"]["1048576"]["write_mb_s"]),
    ("pts-wsat", {"capacity_multiple": 1.0, "sample_s": 1.0},
     "saturated_iops", lambda s: s["last_window"]["average"]),
    ("pts-hir", {"segments": 1, "round_s": 0.5, "slice_s": 0.5},
     "wait_50s_vs_steady", lambda s: s["wait_states"][-1]["wait_vs_steady"]),
    ("pts-xsr", {"phase_minutes": "0.05,0.05,0.05", "sample_s": 1.0},
     "group3_vs_group1", lambda s: s["groups"][2]["mb_s"] / s["groups"][0]["mb_s"]),
    ("pts-cbw", {"rounds_max": 5, "round_s": 0.01},
     "iops_t32q32", lambda s: s["steady_state"]["tracking"]["iops_t32q32"]["average"]),
    ("pts-dirth", {"rounds_max": 5, "round_s": 0.01},
     "iops_t32q32", lambda s: s["steady_state"]["tracking"]["iops_t32q32"]["average"]),
]


@pytest.mark.parametrize("scenario, options, column, value", CASES, ids=[c[0] for c in CASES])
def test_a_pts_point_is_the_single_run_and_its_columns_are_its_figures(scenario: str, options: Dict[str, Any],
                                                                       column: str, value: Any) -> None:
    spec = ssdlab.sweep.load_spec({"scenario": scenario, "base": {"capacity": "512MiB", "seed": 3, **options},
                                   "grid": {"drive": ["mlc-256"]}})
    point = spec.points[0]
    outcome = run_point(Task(spec.scenario, point.name, point.prepared, point.label, ssdlab.__version__))
    assert outcome.error is None
    entry = get(scenario)
    summary = json.loads(outcome.files["summary.json"])
    if scenario not in ("pts-iops", "pts-cbw", "pts-dirth"):
        api = {o.key: o.api_name for o in entry.options}
        single = entry.sweep.run(ssdlab.load_preset("mlc-256").with_user_capacity("512MiB"),
                                 {"seed": 3, **{api[k]: v for k, v in point.prepared.items() if k in api}})
        assert {k: v for k, v in summary.items() if k not in ("label", "wall_seconds")} == \
            {k: v for k, v in json.loads(json.dumps(single.summary)).items() if k not in ("label", "wall_seconds")}
    figures = outcome.figures
    assert figures[column] == pytest.approx(value(summary), rel=1e-12) and figures[column] > 0
    assert figures["variant"] == "enterprise" and figures["write_cache"] == "disabled (WCD)"
    for key, _title in entry.sweep.metrics:  # every charted column is a number (None only for "not reached")
        assert key in figures and (figures[key] is None or isinstance(figures[key], (int, float))), key
    assert all(v is None or isinstance(v, (bool, int, float, str)) for v in figures.values())


def test_a_wsat_sweep_over_the_write_cache(tmp_path: Path) -> None:
    spec = {"scenario": "pts-wsat", "base": {"drive": "mlc-256", "capacity": "1GiB", "capacity_multiple": 2.0,
                                             "sample_s": 1.0},
            "grid": {"write_cache": ["on", "off"]}}
    result = ssdlab.sweep(spec, tmp_path / "study", workers=1)
    table = result.table.set_index("write_cache")
    assert len(table) == 2 and table["error"].isna().all()
    on, off = table.loc["on"], table.loc["off"]
    # write-through programs a padded page per 4 KiB write: the saturated drive writes slower
    assert 0 < off["saturated_iops"] < 0.8 * on["saturated_iops"]
    for row in (on, off):
        assert row["saturated_iops"] < row["first_sample_iops"] and row["saturated_vs_first"] < 1
        assert row["drive_fills"] == pytest.approx(2.0) and row["zero_iops_seconds"] == 0
        assert row["write_amplification"] > 1 and row["stopped_by"] == "capacity"
    assert (tmp_path / "study" / "charts").is_dir() and any((tmp_path / "study" / "charts").glob("*.png"))
