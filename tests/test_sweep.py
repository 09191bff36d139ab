"""Sweeps on an embedded LocalCluster of two workers: the table, error rows, point directories
equal to single runs, determinism across workers and order, resume, refusal of a changed spec,
charts and the report. Small drives and short runs: the whole file takes well under a minute."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pandas as pd
import pytest

import ssdlab
from ssdlab.errors import SsdlabError
from ssdlab.sweep.execute import Task, run_point
from ssdlab.sweep.table import MANIFEST, POINT_RECORD, TABLE

SPEC: Dict[str, Any] = {
    "scenario": "consistency",
    "base": {"capacity": "2GiB", "duration": 30},
    "grid": {"drive": ["mlc-256", "active-gc"], "spare_area": [0, 25, 99.99999], "gc": ["greedy", "fifo"]},
}
VARYING_FIGURES = ["iops_steady_mean", "write_amplification", "steady_write_amplification", "latency_p99_us"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> ssdlab.sweep.SweepResult:
    out = tmp_path_factory.mktemp("sweep") / "study"
    return ssdlab.sweep(SPEC, out, workers=2)


def _summary(path: Path) -> Dict[str, Any]:
    return json.loads((path / "summary.json").read_text(encoding="utf-8"))


def test_one_row_per_point_with_the_failed_ones_in_the_error_column(swept: Any) -> None:
    table = pd.read_parquet(swept.out / TABLE)
    assert len(table) == 12 and swept.ran == 12 and swept.skipped == 0 and swept.workers == 2
    assert list(table.columns[:4]) == ["point", "drive", "spare_area", "gc"]
    assert list(table.columns[-2:]) == ["wall_seconds", "error"]
    failed = table[table["error"].notna()]
    assert sorted(failed["spare_area"]) == [99.99999] * 4 and swept.failed == 4
    assert all(e == "spare area of 99.99999% leaves nothing to test on a drive of 2147483648 bytes"
               for e in failed["error"])
    assert failed["iops_steady_mean"].isna().all()
    ok = table[table["error"].isna()]
    assert len(ok) == 8
    for column in ("iops_clean", *VARYING_FIGURES):
        assert (ok[column] > 0).all(), column
    assert (table["wall_seconds"] > 0).all()
    assert table["user_capacity_bytes"].dtype == "Int64"  # whole numbers stay whole beside the nulls
    # the rows follow the spec's order, whatever order the points finished in
    assert list(table["point"]) == [p.name for p in ssdlab.sweep.load_spec(SPEC).points]
    # the spare area moves the figures: more spare area, fewer GC copies
    by = ok.set_index(["drive", "gc", "spare_area"])
    for drive in ("mlc-256", "active-gc"):
        for gc in ("greedy", "fifo"):
            assert by.loc[(drive, gc, 25), "write_amplification"] < by.loc[(drive, gc, 0), "write_amplification"]


def test_every_point_has_its_directory_and_record(swept: Any) -> None:
    table = pd.read_parquet(swept.out / TABLE)
    for name, error in zip(table["point"], table["error"]):
        d = swept.out / "points" / name
        record = json.loads((d / POINT_RECORD).read_text(encoding="utf-8"))
        assert record["point"] == name and record["error"] == error
        if error is None:
            assert {"iops.csv", "series.csv", "summary.json", "iops_log.png"} <= {p.name for p in d.iterdir()}
            assert record["figures"]["iops_steady_mean"] == _summary(d)["iops_steady_mean"]
        else:
            assert [p.name for p in d.iterdir()] == [POINT_RECORD]


def test_a_point_equals_a_single_run_with_the_same_options(swept: Any) -> None:
    d = swept.out / "points" / "drive=active-gc,spare_area=25,gc=fifo"
    drive = ssdlab.load_preset("active-gc").adjusted(gc_policy="fifo", capacity="2GiB")
    single = ssdlab.consistency(drive, spare_area_pct=25, duration_s=30, seed=1)
    point = _summary(d)
    assert point["label"] == f"{single.summary['label']} · gc fifo"
    for key, value in single.summary.items():
        if key not in ("label", "wall_seconds"):
            assert point[key] == value, key
    pd.testing.assert_frame_equal(pd.read_csv(d / "iops.csv"), single.iops)


def test_a_rerun_skips_what_is_done_and_reruns_the_rest_with_the_same_numbers(swept: Any, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(swept.out, out)
    before = pd.read_parquet(out / TABLE)
    stamp = os.stat(out / "points" / "drive=mlc-256,spare_area=0,gc=greedy" / "summary.json").st_mtime_ns

    heard = []
    rerun = ssdlab.sweep(SPEC, out, workers=2, events=lambda kind, **details: heard.append((kind, details)))
    assert rerun.ran == 0 and rerun.skipped == 12
    assert heard == [("start", {"points": 12, "todo": 0, "workers": 0})]  # no cluster, no point ran
    pd.testing.assert_frame_equal(pd.read_parquet(out / TABLE), before)
    assert os.stat(out / "points" / "drive=mlc-256,spare_area=0,gc=greedy" / "summary.json").st_mtime_ns == stamp

    # a point without its record did not finish (say the sweep was stopped): it runs again; on one
    # worker instead of two, alone or in another order, its numbers are the same
    for name in ("drive=mlc-256,spare_area=25,gc=fifo", "drive=active-gc,spare_area=0,gc=greedy"):
        (out / "points" / name / POINT_RECORD).unlink()
    shutil.rmtree(out / "points" / "drive=active-gc,spare_area=99.99999,gc=greedy")
    (out / "points" / "drive=mlc-256,spare_area=25,gc=fifo" / "summary.json").write_text("{}", encoding="utf-8")
    resumed = ssdlab.sweep(SPEC, out, workers=1)
    assert resumed.ran == 3 and resumed.skipped == 9 and resumed.workers == 1
    after = pd.read_parquet(out / TABLE)
    columns = [c for c in before.columns if c != "wall_seconds"]
    pd.testing.assert_frame_equal(after[columns], before[columns])
    redone = _summary(out / "points" / "drive=mlc-256,spare_area=25,gc=fifo")  # the rerun's files replace the old
    assert redone["iops_steady_mean"] == before.set_index("point").loc["drive=mlc-256,spare_area=25,gc=fifo",
                                                                        "iops_steady_mean"]


def test_a_changed_spec_is_refused_and_nothing_is_written(swept: Any) -> None:
    listing = sorted(str(p) for p in swept.out.rglob("*"))
    manifest = (swept.out / MANIFEST).read_text(encoding="utf-8")
    changed = {**SPEC, "base": {"capacity": "2GiB", "duration": 31}}
    with pytest.raises(SsdlabError, match="holds a sweep of a different spec.*use a new --out directory"):
        ssdlab.sweep(changed, swept.out, workers=2)
    assert sorted(str(p) for p in swept.out.rglob("*")) == listing
    assert (swept.out / MANIFEST).read_text(encoding="utf-8") == manifest


def test_a_directory_of_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SsdlabError, match="exists and is not a sweep directory"):
        ssdlab.sweep(SPEC, tmp_path, workers=2)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_charts_and_report(swept: Any) -> None:
    names = sorted(p.name for p in swept.charts)
    assert names == [
        "heatmap-iops_steady_mean.png",
        "heatmap-steady_write_amplification.png",
        "lines-iops_steady_mean.png",
        "lines-steady_write_amplification.png",
    ]
    for path in swept.charts:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000
    html = (swept.out / "report.html").read_text(encoding="utf-8")
    assert "Built from 8 result directories" in html
    assert "active-gc · 25% spare area · gc fifo" in html


def test_the_charts_draw_the_numbers_of_the_table(swept: Any) -> None:
    from ssdlab.sweep import charts

    spec = ssdlab.sweep.load_spec(SPEC)
    figures = charts.figures(spec, swept.table)
    ax = figures["lines-iops_steady_mean.png"].axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert sorted(lines) == sorted(f"drive {d}, gc {g}" for d in ("mlc-256", "active-gc") for g in ("greedy", "fifo"))
    line = lines["drive active-gc, gc fifo"]
    rows = swept.table[(swept.table["drive"] == "active-gc") & (swept.table["gc"] == "fifo")]
    np.testing.assert_array_equal(line.get_xdata(), [0, 25, 99.99999])
    np.testing.assert_array_equal(line.get_ydata()[:2], rows["iops_steady_mean"].to_numpy()[:2])
    assert np.isnan(line.get_ydata()[2])  # the failed point is a gap
    assert line.get_linestyle() != lines["drive active-gc, gc greedy"].get_linestyle()
    assert line.get_color() == lines["drive active-gc, gc greedy"].get_color()


@pytest.mark.parametrize("scenario, options, api, kwargs, figure", [
    ("hdtach", {"torture_minutes": 1.0}, "hdtach", {"torture_minutes": 1.0}, "tortured_pct_of_clean"),
    ("torture", {"torture_minutes": 1.0, "idle_minutes": 1.0, "then": ["pass"]}, "torture",
     {"torture_minutes": 1.0, "idle_minutes": 1.0, "then": ["pass"]}, "worst_pct_of_clean"),
    ("used-vs-new", {"duration": 10.0, "qd": 3}, "used_vs_new", {"duration_s": 10.0, "qd": 3}, "used_pct_of_clean"),
    ("wa", {"torture_minutes": 1.0, "compressibility": 0.5}, "worst_case_wa",
     {"torture_minutes": 1.0, "compressibility": 0.5}, "steady_write_amplification"),
])
def test_each_procedure_runs_as_its_function(scenario: str, options: Dict[str, Any], api: str,
                                             kwargs: Dict[str, Any], figure: str) -> None:
    spec = ssdlab.sweep.load_spec({"scenario": scenario, "base": {"capacity": "2GiB", "seed": 3},
                                   "grid": {"drive": ["no-idle-gc"]}, "points": [options]})
    point = spec.points[0]
    outcome = run_point(Task(spec.scenario, point.name, point.prepared, point.label, ssdlab.__version__))
    assert outcome.error is None
    single = getattr(ssdlab, api)(ssdlab.load_preset("no-idle-gc").with_user_capacity("2GiB"), seed=3, **kwargs)
    summary = json.loads(outcome.files["summary.json"])
    assert {k: v for k, v in summary.items() if k not in ("label", "wall_seconds")} == \
        {k: v for k, v in single.summary.items() if k not in ("label", "wall_seconds")}
    assert outcome.figures[figure] is not None and outcome.figures[figure] > 0


def test_fio_points_run_the_job_file(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text(
        "[fill]\nrw=write\nbs=128k\niodepth=32\n[rand]\nstonewall\nrw=randwrite\nbs=4k\niodepth=32\ntime_based\n"
        "runtime=${RUNTIME}\nwrite_iops_log=rand\n", encoding="utf-8")
    spec = ssdlab.sweep.load_spec({"scenario": "fio", "base": {"jobfile": str(tmp_path / "job.fio"),
                                                               "env": {"RUNTIME": "20"}, "capacity": "2GiB"},
                                   "grid": {"gc": ["greedy"]}})
    point = spec.points[0]
    outcome = run_point(Task(spec.scenario, point.name, point.prepared, point.label, ssdlab.__version__))
    assert outcome.error is None
    from ssdlab.fio import run_jobfile

    single = run_jobfile(tmp_path / "job.fio", "mlc-256", capacity=2 * 2**30, gc="greedy", env={"RUNTIME": "20"})
    iops = [j for j in json.loads(outcome.files["summary.json"])["jobs"] if j["name"] == "rand"][0]["write_iops"]
    assert outcome.figures["job2_rand_write_iops"] == iops
    assert iops == pytest.approx(single.jobs[1].phase["ios"][1] / single.jobs[1].runtime_s, rel=1e-12)
    assert {"fio.json", "fio.txt", "iops.csv", "rand_iops.2.log"} <= set(outcome.files)


def test_a_failing_point_is_an_outcome_not_an_exception() -> None:
    spec = ssdlab.sweep.load_spec({"scenario": "consistency", "base": {"capacity": "2GiB"},
                                   "grid": {"spare_area": [99.99999]}})
    point = spec.points[0]
    outcome = run_point(Task(spec.scenario, point.name, point.prepared, point.label, ssdlab.__version__))
    assert outcome.error == "spare area of 99.99999% leaves nothing to test on a drive of 2147483648 bytes"
    assert outcome.files == {} and outcome.figures == {}
    stale = run_point(Task(spec.scenario, point.name, point.prepared, point.label, "0.0.0-other"))
    assert stale.fatal and "install the same ssdlab on every worker" in (stale.error or "")


def _die(options: Dict[str, Any]) -> Any:
    if options.get("seed") == 2:
        os._exit(3)  # the worker process dies mid-point
    return ssdlab.sweep.SCENARIOS["wa"].run(options)


def test_a_point_that_kills_its_worker_is_an_error_row(tmp_path: Path) -> None:
    import sys
    from dataclasses import replace

    import cloudpickle
    import dask

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this file
    try:
        deadly = replace(ssdlab.sweep.SCENARIOS["wa"], name="deadly-wa", run=_die)
        spec = ssdlab.sweep.load_spec({"scenario": "wa", "base": {"capacity": "2GiB", "torture_minutes": 1.0},
                                       "grid": {"seed": [1, 2]}})
        spec = replace(spec, scenario=deadly)
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):  # Dask's retries, made quick
            result = ssdlab.sweep(spec, tmp_path / "s", workers=2)
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    table = result.table.set_index("seed")
    assert table.loc[1, "error"] is None and table.loc[1, "write_amplification"] > 0
    assert table.loc[2, "error"].startswith("the point could not run on the cluster: KilledWorker")
    assert result.failed == 1
