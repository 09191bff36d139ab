"""The report's data assembly: loading result directories, naming and grouping runs, the numbers in
each trace and table, and the page's self-containedness. The browser test is test_report_browser.py."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from fixtures.report_runs import consistency_run, hdtach_run, review_set, used_vs_new_run, wa_run
from ssdlab.errors import SsdlabError
from ssdlab.report import build_report, load_runs, write_report
from ssdlab.report.charts import (
    drive_keys,
    nice_ceiling,
)
from ssdlab.report.load import expand_run_dirs, spare_label
from ssdlab.report.tables import MISSING
from ssdlab.scenarios.consistency_report import (
    LOG_FLOOR_IOPS,
    ConsistencyRun,
    charts as consistency_charts,
    table as consistency_table,
)
from ssdlab.scenarios.hdtach import ALL_PASSES, HdtachRun, chart as hdtach_chart, table as hdtach_table
from ssdlab.scenarios.used_vs_new import UsedVsNewRun
from ssdlab.scenarios.wa import WaRun, chart as wa_chart, entries as wa_entries

STUB_PLOTLY = "/* plotly stub */"


@pytest.fixture(scope="module")
def review_dirs(tmp_path_factory) -> list[Path]:
    return review_set(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def runs(review_dirs):
    return load_runs(review_dirs)


def by_name(runs, name):
    return next(r for r in runs if r.name == name)


# --- loading -------------------------------------------------------------------------------------


def test_each_scenario_loads_into_its_run_type(runs, review_dirs):
    assert [type(r) for r in runs] == [
        ConsistencyRun, ConsistencyRun, ConsistencyRun, HdtachRun, HdtachRun, UsedVsNewRun, WaRun, WaRun,
    ]
    assert [r.path for r in runs] == review_dirs


def test_consistency_samples_are_the_csv(runs, review_dirs):
    run = runs[0]
    frame = pd.read_csv(review_dirs[0] / "iops.csv")
    assert run.time_s == frame["time_s"].tolist()
    assert run.iops == frame["iops"].tolist()
    t, iops = run.zoom()
    assert t[0] == run.zoom_start_s == 140.0  # 70 % of a 200 s run
    assert iops == frame["iops"].tolist()[140:]


def test_hdtach_passes_in_run_order_with_their_figures(runs, review_dirs):
    run = runs[3]
    summary = json.loads((review_dirs[3] / "summary.json").read_text())
    assert [p.name for p in run.passes] == ["clean", "after 20 min torture", "after 30 min idle", "after TRIM"]
    frame = pd.read_csv(review_dirs[3] / "hdtach.csv")
    torture = run.passes[1]
    assert torture.mb_s == frame[frame["pass"] == "after 20 min torture"]["mb_s"].tolist()
    assert torture.avg_mb_s == summary["passes"][1]["avg_mb_s"]
    assert torture.pct_of_clean == pytest.approx(summary["passes"][1]["pct_of_clean"])


def test_hdtach_figures_are_computed_when_the_summary_lacks_them(tmp_path):
    d = hdtach_run(tmp_path / "h")
    summary = json.loads((d / "summary.json").read_text())
    del summary["passes"]
    (d / "summary.json").write_text(json.dumps(summary))
    (run,) = load_runs([d])
    frame = pd.read_csv(d / "hdtach.csv")
    clean = frame[frame["pass"] == "clean"]["mb_s"]
    trim = frame[frame["pass"] == "after TRIM"]["mb_s"]
    assert run.passes[0].avg_mb_s == pytest.approx(clean.mean())
    assert run.passes[0].min_mb_s == clean.min()
    assert run.passes[3].pct_of_clean == pytest.approx(100 * trim.mean() / clean.mean())


def test_a_folder_of_runs_stands_for_its_runs_and_repeats_are_dropped(review_dirs):
    root = review_dirs[0].parent
    expanded = expand_run_dirs([root, review_dirs[2]])
    assert expanded == sorted(review_dirs)


def test_a_folder_of_runs_passes_over_other_kinds_of_results(tmp_path):
    run = consistency_run(tmp_path / "runs" / "a")
    fio = tmp_path / "runs" / "fio"
    fio.mkdir()
    (fio / "summary.json").write_text('{"scenario": "fio", "drive": "d"}')
    broken = tmp_path / "runs" / "z"
    broken.mkdir()
    (broken / "summary.json").write_text("{")
    assert expand_run_dirs([tmp_path / "runs"]) == [run, broken]
    with pytest.raises(SsdlabError, match=f"{broken}/summary.json: is not valid JSON"):
        load_runs([tmp_path / "runs"])
    with pytest.raises(SsdlabError, match="unknown scenario 'fio'"):
        load_runs([fio])


# --- errors: one line naming the directory and what is missing ------------------------------------


def _break(tmp_path: Path, how: str) -> tuple[Path, str]:
    d = consistency_run(tmp_path / "run")
    summary = json.loads((d / "summary.json").read_text())
    if how == "no dir":
        return tmp_path / "nope", "no such result directory"
    if how == "no summary":
        (d / "summary.json").unlink()
        return d, "not an ssdlab result directory (no summary.json)"
    if how == "bad json":
        (d / "summary.json").write_text('{"scenario": "consistency",')
        return d, "summary.json: is not valid JSON"
    if how == "not an object":
        (d / "summary.json").write_text("[1, 2]")
        return d, "summary.json: not a JSON object"
    if how == "no scenario":
        del summary["scenario"]
    elif how == "unknown scenario":
        summary["scenario"] = "benchmark"
    elif how == "no zoom":
        del summary["zoom_start_s"]
    elif how == "no iops.csv":
        (d / "iops.csv").unlink()
        return d, "consistency result without iops.csv"
    elif how == "missing column":
        (d / "iops.csv").write_text("time_s,ops\n0,1\n")
        return d, "iops.csv: missing column 'iops'"
    elif how == "not a number":
        (d / "iops.csv").write_text("time_s,iops\n0,1\n1,lots\n")
        return d, "iops.csv: column 'iops' has a non-number on line 3"
    elif how == "empty csv":
        (d / "iops.csv").write_text("")
        return d, "iops.csv: unreadable CSV"
    (d / "summary.json").write_text(json.dumps(summary))
    return d, {
        "no scenario": "summary.json: missing 'scenario'",
        "unknown scenario": "unknown scenario 'benchmark'",
        "no zoom": "summary.json: missing 'zoom_start_s'",
    }[how]


@pytest.mark.parametrize(
    "how",
    ["no dir", "no summary", "bad json", "not an object", "no scenario", "unknown scenario", "no zoom",
     "no iops.csv", "missing column", "not a number", "empty csv"],
)
def test_a_broken_directory_is_one_line_naming_it(tmp_path, how):
    d, what = _break(tmp_path, how)
    with pytest.raises(SsdlabError) as err:
        write_report([d], tmp_path / "r.html")
    message = str(err.value)
    assert "\n" not in message
    assert str(d) in message
    assert what in message
    assert not (tmp_path / "r.html").exists()


def test_other_scenarios_name_their_missing_files(tmp_path):
    for make, file in ((hdtach_run, "hdtach.csv"), (used_vs_new_run, "used_vs_new.csv")):
        d = make(tmp_path / file)
        (d / file).unlink()
        with pytest.raises(SsdlabError, match=re.escape(f"{d}: ")):
            load_runs([d])
    d = wa_run(tmp_path / "wa")
    summary = json.loads((d / "summary.json").read_text())
    del summary["speed_ratio_estimate"]
    (d / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(SsdlabError, match="missing 'speed_ratio_estimate'"):
        load_runs([d])


def test_no_directories_is_an_error(tmp_path):
    with pytest.raises(SsdlabError, match="no result directories"):
        load_runs([])


def test_an_unwritable_output_is_an_error(tmp_path, review_dirs):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SsdlabError, match="cannot write"):
        write_report(review_dirs[:1], blocker / "report.html")


# --- naming ---------------------------------------------------------------------------------------


def test_runs_are_named_by_label_else_drive_and_spare_area(runs):
    names = [r.name for r in runs]
    assert names[:3] == ["mlc-256 · default spare area", "mlc-256 · 25% spare area", "tlc-512 · default spare area"]
    assert names[3:] == ["mlc-256", "tlc-512", "mlc-256", "mlc-256", "tlc-512"]


def test_a_label_wins_and_a_blank_label_does_not(tmp_path):
    a = consistency_run(tmp_path / "a", "x", 7.0, label="My drive, 7 %")
    b = consistency_run(tmp_path / "b", "x", 7.0, label="  ")
    assert [r.name for r in load_runs([a, b])] == ["My drive, 7 %", "x · 7% spare area"]


def test_shared_names_get_the_directory_then_the_path(tmp_path):
    a = consistency_run(tmp_path / "one" / "run", "x", 0.0)
    b = consistency_run(tmp_path / "two" / "run", "x", 0.0)
    c = consistency_run(tmp_path / "three", "x", 0.0)
    w = wa_run(tmp_path / "wa", "x", label="x · default spare area")  # meets them in the WA chart
    u = used_vs_new_run(tmp_path / "u", "x", label="x · default spare area")  # another section: may share
    names = [r.name for r in load_runs([a, b, c, w, u])]
    assert names == [
        f"x · default spare area ({a})",
        f"x · default spare area ({b})",
        "x · default spare area (three)",
        "x · default spare area (wa)",
        "x · default spare area",
    ]


# --- grouping into buttons ------------------------------------------------------------------------


def test_consistency_buttons_group_by_drive_and_spare_area(runs):
    charts = consistency_charts(runs)
    assert [c.id for c in charts] == ["consistency-log", "consistency-steady-log", "consistency-steady-linear"]
    for chart in charts:
        assert chart.rows == [("Drive", ["mlc-256", "tlc-512"]), ("Spare area", ["Default", "25% Spare Area"])]
        # tlc-512 has no 25 % run: there is no (1, 1) combination, so the page greys that button
        assert chart.keys == [(0, 0), (0, 1), (1, 0)]
        assert chart.spec("mlc-256", "25% Spare Area")["data"][0]["name"] == "mlc-256 · 25% spare area"
        assert chart.spec("tlc-512", "Default")["data"][0]["name"] == "tlc-512 · default spare area"


def test_spare_area_buttons_are_sorted_and_labelled_like_the_reviews(tmp_path):
    dirs = [consistency_run(tmp_path / f"s{p}", "d", p) for p in (25.0, 0.0, 12.5)]
    (chart, *_) = consistency_charts(load_runs(dirs))
    assert chart.rows[1] == ("Spare area", ["Default", "12.5% Spare Area", "25% Spare Area"])
    assert chart.keys == [(0, 0), (0, 1), (0, 2)]
    assert spare_label(None) == "Default"


def test_drive_buttons_tell_apart_runs_of_one_drive_and_setting(tmp_path):
    greedy = consistency_run(tmp_path / "g", "d", 0.0, gc_policy="greedy")
    fifo = consistency_run(tmp_path / "f", "d", 0.0, gc_policy="fifo")
    fifo25 = consistency_run(tmp_path / "f25", "d", 25.0, gc_policy="fifo")
    other = consistency_run(tmp_path / "o", "e", 0.0)
    runs = load_runs([greedy, fifo, fifo25, other])
    assert drive_keys(runs) == ["d · greedy", "d · fifo", "d · fifo", "e"]
    twin = consistency_run(tmp_path / "twin", "e", 0.0)  # same everything but the directory
    assert drive_keys(load_runs([other, twin])) == ["e · o", "e · twin"]
    real = [consistency_run(tmp_path / f"r{i}", "Samsung 840 Pro", 0.0, device=f"/dev/sd{x}")
            for i, x in enumerate("bc")]
    assert drive_keys(load_runs(real)) == ["Samsung 840 Pro · /dev/sdb", "Samsung 840 Pro · /dev/sdc"]


# --- the numbers in each trace --------------------------------------------------------------------


def test_whole_run_log_view_plots_every_second_with_stalls_on_the_floor(runs):
    chart = consistency_charts(runs)[0]
    run = runs[0]
    (trace,) = chart.spec("mlc-256", "Default")["data"]
    assert trace["x"] == run.time_s
    assert trace["customdata"] == run.iops  # hover shows the true value...
    assert trace["y"] == [max(v, LOG_FLOOR_IOPS) for v in run.iops]  # ...a 0 IOPS second sits on the floor
    assert 0 in run.iops
    layout = chart.spec("mlc-256", "Default")["layout"]
    assert layout["yaxis"]["type"] == "log"
    assert layout["xaxis"]["range"] == [0.0, 200.0]
    assert layout["shapes"][0]["x0"] == run.zoom_start_s
    assert "mlc-256 · default spare area" in layout["title"]["text"]
    assert "whole run, log scale" in layout["title"]["text"]
    assert layout["xaxis"]["title"]["text"] == "Time (s)"
    assert "IOPS" in layout["yaxis"]["title"]["text"]


def test_zoom_views_start_at_zoom_start_and_draw_the_steady_mean(runs):
    _, steady_log, steady_linear = consistency_charts(runs)
    run = runs[1]
    t, iops = run.zoom()
    for chart, log in ((steady_log, True), (steady_linear, False)):
        spec = chart.spec("mlc-256", "25% Spare Area")
        points, mean = spec["data"]
        assert points["x"] == t and points["x"][0] == run.zoom_start_s
        assert points["y"] == ([max(v, 1.0) for v in iops] if log else iops)
        assert mean["y"] == [run.summary["iops_steady_mean"]] * 2
        assert mean["x"] == [t[0], t[-1]]
        assert f"from t = {run.zoom_start_s:g} s" in spec["layout"]["title"]["text"]
        assert ("log scale" if log else "linear scale") in spec["layout"]["title"]["text"]


def test_each_view_keeps_one_scale_for_all_runs(runs):
    peak = max(max(r.iops) for r in runs if isinstance(r, ConsistencyRun))
    steady_peak = max(max(r.zoom()[1]) for r in runs if isinstance(r, ConsistencyRun))
    log, steady_log, linear = consistency_charts(runs)
    for chart in (log, steady_log):
        ranges = {tuple(s["layout"]["yaxis"]["range"]) for s in chart.specs}
        assert len(ranges) == 1
        bottom, top = ranges.pop()
        assert bottom == 0 and 10**top >= peak and 10 ** (top - 1) < peak
    ranges = {tuple(s["layout"]["yaxis"]["range"]) for s in linear.specs}
    assert ranges == {(0, nice_ceiling(steady_peak * 1.05))}


def test_nice_ceiling():
    assert [nice_ceiling(v) for v in (0.3, 1, 1.2, 19_000, 21_000, 40_001, 73_000)] == [
        0.5, 1, 2, 20_000, 25_000, 50_000, 100_000]


def test_hdtach_buttons_per_drive_and_pass(runs):
    chart = hdtach_chart(runs)
    passes = ["clean", "after 20 min torture", "after 30 min idle", "after TRIM"]
    assert chart.rows == [("Drive", ["mlc-256", "tlc-512"]), ("Pass", [ALL_PASSES, *passes])]
    # tlc-512 ran no idle pass: no (1, 3)
    assert chart.keys == [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 1), (1, 2), (1, 4)]
    run = runs[3]
    overlay = chart.spec("mlc-256", ALL_PASSES)["data"]
    assert [t["name"] for t in overlay] == passes
    (trim,) = chart.spec("mlc-256", "after TRIM")["data"]
    assert trim["x"] == run.passes[3].position_pct and trim["y"] == run.passes[3].mb_s
    title = chart.spec("mlc-256", "after TRIM")["layout"]["title"]["text"]
    assert f"avg {run.passes[3].avg_mb_s:.1f} MB/s" in title and "% of clean" in title
    assert chart.spec("tlc-512", "clean")["data"][0]["y"] == runs[4].passes[0].mb_s
    layout = chart.spec("mlc-256", "clean")["layout"]
    assert layout["xaxis"]["title"]["text"].startswith("Position")
    assert "MB/s" in layout["yaxis"]["title"]["text"]


def test_hdtach_buttons_use_run_names_when_a_drive_has_two_runs(tmp_path):
    a = hdtach_run(tmp_path / "a", "d", label="d, 20 min torture")
    b = hdtach_run(tmp_path / "b", "d", label="d, 60 min torture")
    assert hdtach_chart(load_runs([a, b])).rows[0] == ("Drive", ["d, 20 min torture", "d, 60 min torture"])


def test_worst_case_wa_bars_lowest_first(runs):
    entries = wa_entries(runs)
    steady = {r.name: r.summary["steady_write_amplification"] for r in runs if isinstance(r, ConsistencyRun)}
    measured = [e[1] for e in entries]
    assert measured == sorted(measured)
    assert {e[0]: e[1] for e in entries if e[0] in steady} == steady
    wa = {e[0]: e for e in entries if e[3] == "wa run"}
    assert wa["tlc-512"][1:3] == (4.1, pytest.approx(300 / 60))
    chart = wa_chart(runs)
    measured_trace, estimate_trace = chart.specs[0]["data"]
    assert measured_trace["y"] == [e[0] for e in entries] and measured_trace["x"] == measured
    assert estimate_trace["x"] == [e[2] for e in entries]
    assert chart.specs[0]["layout"]["yaxis"]["autorange"] == "reversed"


def test_a_real_device_without_nand_counters_has_no_wa_bar(tmp_path):
    d = consistency_run(tmp_path / "real", "Samsung 840 Pro", 0.0, device="/dev/sdb",
                        write_amplification=None, steady_write_amplification=None, nand_write_bytes=None)
    runs = load_runs([d])
    assert wa_entries(runs) == [] and wa_chart(runs) is None
    table = consistency_table(runs)
    assert table.column("Device")[0].text == "/dev/sdb"
    assert table.column("WA")[0].text == MISSING
    report = build_report(runs)
    assert "1 real device (/dev/sdb)" in report.intro
    assert [s.id for s in report.sections] == ["summary", "consistency"]


def test_used_vs_new_bars(runs):
    chart = build_report(runs).charts()["used-vs-new"]
    traces = chart.specs[0]["data"]
    assert [t["name"] for t in traces] == ["clean", "used", "used after TRIM"]
    assert [t["y"] for t in traces] == [[310.0], [140.5], [301.2]]
    assert [t["customdata"] for t in traces] == [[75_700.0], [34_300.0], [73_500.0]]


# --- tables ---------------------------------------------------------------------------------------


def test_summary_table_carries_the_summary_figures(runs):
    table = consistency_table(runs)
    cols = {
        "Clean IOPS": "iops_clean", "Steady mean IOPS": "iops_steady_mean", "Steady min IOPS": "iops_steady_min",
        "WA": "write_amplification", "Steady WA": "steady_write_amplification",
        "Latency p50 (µs)": "latency_us.p50", "p99 (µs)": "latency_us.p99", "p99.9 (µs)": "latency_us.p999",
    }
    cruns = [r for r in runs if isinstance(r, ConsistencyRun)]
    assert [c.text for c in table.column("Run")] == [r.name for r in cruns]
    for col, key in cols.items():
        assert [c.value for c in table.column(col)] == [r.figure(key) for r in cruns], col
    assert table.column("Steady WA")[0].text == f"{cruns[0].summary['steady_write_amplification']:.2f}"
    assert table.column("p99.9 (µs)")[0].text == "18,300"
    assert [c.text for c in table.column("Spare area")] == ["Default", "25% Spare Area", "Default"]


def test_hdtach_table_one_row_per_pass(runs):
    table = hdtach_table(runs)
    assert len(table.rows) == 4 + 3
    assert table.rows[1][1].text == "after 20 min torture"
    assert table.rows[1][2].value == runs[3].passes[1].avg_mb_s


# --- the page -------------------------------------------------------------------------------------


def test_sections_follow_the_runs_given(runs):
    report = build_report(runs, title="Review")
    assert report.title == "Review"
    assert [s.id for s in report.sections] == ["summary", "consistency", "hdtach", "wa", "used-vs-new"]
    assert report.intro == (
        "Built from 8 result directories: 3 consistency runs, 2 torture runs, 1 used-vs-new run and "
        "2 wa runs, on 2 simulated drives."
    )
    assert build_report(runs).title == "SSD report: mlc-256 and tlc-512"
    only_wa = build_report([r for r in runs if isinstance(r, WaRun)])
    assert [s.id for s in only_wa.sections] == ["wa"]


def test_every_spec_is_valid_plotly(runs):
    go = pytest.importorskip("plotly.graph_objects")
    for chart in build_report(runs).charts().values():
        for spec in chart.specs:
            go.Figure(spec)  # raises on any unknown property or bad value


def test_page_is_self_contained_and_deterministic(tmp_path, review_dirs):
    out = write_report(review_dirs, tmp_path / "sub" / "report.html")
    assert out == tmp_path / "sub" / "report.html"
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page, re.I)
    assert "cdn." not in page.split("<script", 1)[0]
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs() in page  # the whole bundle, inline
    assert write_report(review_dirs, tmp_path / "again.html").read_bytes() == out.read_bytes()


def test_chart_data_is_embedded_as_json_the_page_can_parse(runs):
    page = build_report(runs).html(plotly=STUB_PLOTLY)
    blob = re.search(r'<script type="application/json" id="ssdlab-report">(.*?)</script>', page, re.S).group(1)
    data = json.loads(blob)
    charts = build_report(runs).charts()
    assert [c["id"] for c in data["charts"]] == list(charts)
    log = data["charts"][0]
    assert log["keys"] == [[0, 0], [0, 1], [1, 0]]
    assert log["specs"][2]["data"][0]["customdata"] == runs[2].iops
    for cid, chart in charts.items():
        assert f'id="plot-{cid}"' in page
        for r, (_, labels) in enumerate(chart.rows):
            for i, label in enumerate(labels):
                assert f'data-chart="{cid}" data-row="{r}" data-index="{i}" aria-pressed="false">{label}<' in page


def test_hostile_labels_cannot_break_the_page(tmp_path):
    label = '</script><script>alert(1)</script> & <b>'
    d = consistency_run(tmp_path / "x", "d<i>", 0.0, label=label)
    page = build_report(load_runs([d])).html(plotly=STUB_PLOTLY)
    assert "<script>alert(1)" not in page
    assert page.count("</script>") == 3  # data, plotly, app
    blob = re.search(r'id="ssdlab-report">(.*?)</script>', page, re.S).group(1)
    spec = json.loads(blob)["charts"][0]["specs"][0]
    assert spec["data"][0]["name"] == label
    assert "&lt;/script&gt;" in spec["layout"]["title"]["text"]  # plotly markup, escaped


def test_non_finite_numbers_become_gaps(tmp_path):
    d = consistency_run(tmp_path / "x")
    (d / "iops.csv").write_text("time_s,iops\n0,5\n1,nan\n2,7\n")
    with pytest.raises(SsdlabError, match="non-number on line 3"):
        load_runs([d])
    summary = json.loads((d / "summary.json").read_text())
    summary["iops_steady_mean"] = math.nan  # json.dumps writes NaN; Python reads it back
    (d / "summary.json").write_text(json.dumps(summary))
    (d / "iops.csv").write_text("time_s,iops\n0,5\n1,6\n2,7\n")
    page = build_report(load_runs([d])).html(plotly=STUB_PLOTLY)
    assert "NaN" not in page


def test_consistency_lede_names_the_duration_only_when_runs_share_it(tmp_path):
    a = consistency_run(tmp_path / "a", "d", 0.0, duration=100)
    b = consistency_run(tmp_path / "b", "d", 25.0, duration=100)
    c = consistency_run(tmp_path / "c", "e", 0.0, duration=120)
    lede = lambda dirs: next(s.lede for s in build_report(load_runs(dirs)).sections if s.id == "consistency")
    assert "for 100 s;" in lede([a, b])
    assert "for the run's duration;" in lede([a, b, c])
