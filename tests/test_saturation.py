"""Write saturation (``ssdlab.saturation``, ``SaturationResult``, ``ssdlab saturation``) on the
presets of today's drives at 16 GB: the result directory, the cliff and its figures against the
drive's cache settings, the recovery after idle, argument checks, and every other procedure
running on the SLC-cache presets."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import ssdlab
from ssdlab import procedures
from ssdlab.cli import main
from ssdlab.scenarios.saturation import COLUMNS as SATURATION_COLUMNS, FILES as SATURATION_FILES, SaturationResult

CACHED = ("tlc-dynamic-cache", "qlc-hybrid-cache")
SIZE = "16GB"
SUMMARY_KEYS = {"cache_gb", "mb_s_in_cache", "mb_s_after_cache", "mb_s_after_idle", "user_capacity_bytes",
                "recovered_gb", "written_gb", "mb_s_average", "write_amplification", "folded_gb", "slc_cache"}


def _drive(name: str) -> ssdlab.DriveConfig:
    return ssdlab.load_preset(name).with_user_capacity(SIZE)


@pytest.mark.parametrize("name", CACHED)
def test_the_cliff_is_where_the_cache_the_preset_describes_runs_out(name: str, tmp_path: Path) -> None:
    cfg = _drive(name)
    r = ssdlab.saturation(cfg, idle_minutes=2)
    s = r.summary
    assert SUMMARY_KEYS <= set(s)
    cache = cfg.ftl.slc_cache
    assert cache is not None
    bits = {"tlc": 3, "qlc": 4}[cfg.geometry.cell]
    dynamic = cache.dynamic_share * (1 - cache.dynamic_floor_pct / 100) / bits
    expected = s["user_capacity_bytes"] / 1e9 * (cache.static_pct / 100 + dynamic)
    assert r.cache_gb == pytest.approx(expected, rel=0.05)
    assert s["mb_s_after_cache"] < s["mb_s_in_cache"] / 2
    # A full drive has no dynamic cache: after idle only the static part comes back.
    static_gb = s["user_capacity_bytes"] / 1e9 * cache.static_pct / 100
    assert s["recovered_gb"] == pytest.approx(static_gb, abs=s["written_gb"] / 200 + 1e-9)
    path = r.save(tmp_path / "sat")
    assert {p.name for p in path.iterdir()} == set(SATURATION_FILES)
    loaded = SaturationResult.load(path)
    assert tuple(loaded.curve.columns) == SATURATION_COLUMNS
    pd.testing.assert_frame_equal(loaded.curve, r.curve, check_exact=False, rtol=1e-9)
    assert set(loaded.curve["phase"]) == {"write", "after idle"}
    assert json.loads((path / "summary.json").read_text(encoding="utf-8"))["cache_gb"] == pytest.approx(r.cache_gb)


def test_a_half_full_drive_recovers_a_smaller_dynamic_cache() -> None:
    cfg = _drive("tlc-dynamic-cache")
    r = ssdlab.saturation(cfg, fill_pct=50, idle_minutes=1, after_idle_pct=20)
    s = r.summary
    assert r.cache_gb is not None
    # Folded during idle, the half-full drive's cache is half the empty drive's; the write after
    # idle overwrites the start of the drive, so each GB it caches frees a GB of native data, and
    # the cache grows by dynamic_share / bits of that: c = c0 + share * c / 3.
    # The static (default TurboWrite) part is there whatever the fill: c0 = static + dynamic / 2.
    share = cfg.ftl.slc_cache.dynamic_share  # type: ignore[union-attr]
    static = s["user_capacity_bytes"] / 1e9 * cfg.ftl.slc_cache.static_pct / 100  # type: ignore[union-attr]
    expected = (static + (r.cache_gb - static) / 2) / (1 - share / 3)
    assert s["recovered_gb"] == pytest.approx(expected, abs=s["written_gb"] / 200 + 1e-9)


def test_a_full_tlc_drive_after_idle_writes_its_static_turbowrite_part_at_cache_speed() -> None:
    # The 980 PRO 1 TB's Intelligent TurboWrite: a 6 GB default region (in the spare area) plus an
    # intelligent one in free space, 114 GB in all (AnandTech's 980 PRO review, Samsung's figures;
    # docs/calibration.md). A full drive has no free space, so after idle only the default region
    # comes back: the write after idle starts at cache speed for ~6 GB per TB, then falls to the
    # folding rate. Checked against the source's 6 GB per TB, not the preset's own setting.
    r = ssdlab.saturation(_drive("tlc-dynamic-cache"), idle_minutes=1, points=1000)
    s = r.summary
    tb = s["user_capacity_bytes"] / 1e12
    bin_gb = s["written_gb"] / 1000
    after = r.curve[r.curve["phase"] == "after idle"].mb_s.to_numpy()
    fast = after >= 0.9 * s["mb_s_in_cache"]
    assert fast[:3].any(), f"the write after idle starts at {after[:3]} MB/s, not cache speed"
    # The fast points are one run at the start (the first can hold the open native block's end).
    first = int(fast.argmax())
    run = int(fast[first:].argmin()) if not fast[first:].all() else fast[first:].size
    assert not fast[first + run:].any()
    fast_gb = run * bin_gb
    # 6 GB per TB; whole pSLC blocks per die round it up (by up to a block per die at 16 GB).
    assert 0.75 * 6 * tb <= fast_gb <= 1.5 * 6 * tb, f"{fast_gb:.3f} GB fast after idle at {tb:g} TB"
    assert after[first + run:first + run + 20].max() < 0.6 * s["mb_s_in_cache"]


def test_without_a_cache_there_is_no_cliff() -> None:
    r = ssdlab.saturation(ssdlab.load_preset("mlc-256").with_user_capacity(SIZE), pattern="random")
    assert r.cache_gb is None and r.summary["mb_s_after_cache"] is None
    assert r.summary["slc_written_gb"] == 0
    assert "no cliff" in repr(r)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pattern": "zigzag"}, "sequential or random"),
        ({"fill_pct": 0}, "fill must be in"),
        ({"fill_pct": 101}, "fill must be in"),
        ({"idle_minutes": -1}, "idle minutes"),
        ({"block_size": "3000"}, "multiple of 512"),
        ({"points": 5}, "10 to 10000 points"),
        ({"prefill_pct": 100}, "prefill must be in"),
        ({"prefill_pct": float("nan")}, "prefill percentage must be a finite number"),
    ],
)
def test_bad_arguments_are_one_line_errors(kwargs: dict, match: str) -> None:
    with pytest.raises(ssdlab.SsdlabError, match=match) as err:
        ssdlab.saturation(_drive("qlc-hybrid-cache"), **kwargs)
    assert "\n" not in str(err.value)


def test_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["saturation", "--drive", "qlc-hybrid-cache", "--capacity", SIZE, "--idle-minutes", "1",
                 "--out", "s"]) == 0
    out = capsys.readouterr().out
    assert "fast for" in out and "after 1 min idle" in out
    assert {p.name for p in (tmp_path / "s").iterdir()} == set(SATURATION_FILES)
    for bad in (["--fill-pct", "0"], ["--pattern", "zigzag"], ["--prefill-pct", "100"], ["--prefill-pct", "-1"],
                ["--block-size", "64MiB"]):
        assert main(["saturation", "--drive", "qlc-hybrid-cache", "--capacity", SIZE, "--out", "x", *bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") <= 2 and "Traceback" not in err, err
        assert not (tmp_path / "x").exists()


def test_a_fuller_drive_has_a_smaller_cache() -> None:
    # The QLC preset (Intel 660p class): static 1.2 % plus a dynamic part of `dynamic_share` of the free
    # space beyond a quarter of the drive, so at 80 % full only the static part is left.
    cfg = _drive("qlc-hybrid-cache")
    cache = cfg.ftl.slc_cache
    assert cache is not None and cache.dynamic_floor_pct == 25
    runs = {full: ssdlab.saturation(cfg, prefill_pct=full) for full in (0, 50, 80)}
    gb = {full: r.summary for full, r in runs.items()}
    user = gb[0]["user_capacity_bytes"] / 1e9
    assert runs[0].label == "qlc-hybrid-cache · write saturation"
    assert runs[50].label == "qlc-hybrid-cache · write saturation, 50 % full"

    def expected(full: float) -> float:
        return user * (cache.static_pct + cache.dynamic_share * max(0.0, 75 - full) / 4) / 100

    for full, s in gb.items():
        assert s["prefill_pct"] == full
        assert s["written_gb"] == pytest.approx(user * (100 - full) / 100, rel=0.001)
        assert s["slc_written_gb"] == pytest.approx(expected(full), rel=0.04), full
    assert gb[0]["cache_gb"] > gb[50]["cache_gb"] > gb[80]["cache_gb"]
    # At 80 % full only the static part is left, and the cliff is where it runs out.
    assert gb[80]["cache_gb"] == pytest.approx(expected(80), rel=0.1)


def test_a_slow_first_point_is_not_the_cliff() -> None:
    # At 125 GB and 80 % full, the measured write's first point is below half the cache speed
    # (each die first finishes the native block it had open), then 1.5 GB run in the static
    # cache. Taking that first point for the cliff reported 0 GB of cache.
    cfg = ssdlab.load_preset("qlc-hybrid-cache").with_user_capacity("125GB")
    r = ssdlab.saturation(cfg, prefill_pct=80)
    first = r.curve["mb_s"].iloc[0]
    assert first < r.summary["mb_s_initial"] / 2
    assert r.summary["cache_gb"] == pytest.approx(125 * 0.012, rel=0.1)


def test_the_tlc_preset_folds_while_it_writes_then_runs_at_the_native_rate() -> None:
    # 980 Pro class: past the cache the host runs slower while the drive folds, and faster once the
    # cache is folded (TechPowerUp: "the fuller the drive gets, the higher the write speed").
    r = ssdlab.saturation(_drive("tlc-dynamic-cache"))
    s = r.summary
    assert s["folded_gb"] == pytest.approx(s["slc_written_gb"], rel=0.01)
    assert s["write_amplification"] == pytest.approx(1 + s["folded_gb"] / s["written_gb"], rel=0.002)
    curve = r.curve[r.curve["phase"] == "write"]
    cache = r.cache_gb
    assert cache is not None
    folding = curve[(curve.gb_written > cache * 1.5) & (curve.gb_written < cache * 3)].mb_s.median()
    native = curve[curve.gb_written > 0.8 * s["written_gb"]].mb_s.median()
    assert native > 1.2 * folding
    assert s["mb_s_in_cache"] > 1.8 * native


def test_saturation_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    from ssdlab.report import build_report, load_runs
    from ssdlab.scenarios.saturation import SaturationRun

    monkeypatch.chdir(tmp_path)
    assert main(["saturation", "--drive", "qlc-hybrid-cache", "--capacity", SIZE, "--idle-minutes", "1",
                 "--report", "--out", "s", "-q"]) == 0
    assert (tmp_path / "s" / "report.html").is_file()
    assert "Write saturation" in (tmp_path / "s" / "report.html").read_text(encoding="utf-8")
    runs = load_runs([tmp_path / "s"])
    assert isinstance(runs[0], SaturationRun)
    report = build_report(runs)
    assert [x.id for x in report.sections] == ["saturation"]
    chart = report.charts()["saturation"]
    spec = chart.specs[0]
    csv = pd.read_csv(tmp_path / "s" / "saturation.csv")
    for trace, phase in zip(spec["data"], ("write", "after idle")):
        rows = csv[csv.phase == phase]
        assert trace["x"] == pytest.approx(rows.gb_written.tolist())
        assert trace["y"] == pytest.approx(rows.mb_s.tolist())
    summary = json.loads((tmp_path / "s" / "summary.json").read_text(encoding="utf-8"))
    assert spec["layout"]["shapes"][0]["x0"] == pytest.approx(summary["cache_gb"])
    table = report.tables()["summary-saturation"]
    assert table.rows[0][1].text == f"{summary['cache_gb']:,.1f}"
    go = pytest.importorskip("plotly.graph_objects")
    go.Figure(spec)
    # A directory whose CSV is missing is a one-line error naming it.
    (tmp_path / "s" / "saturation.csv").unlink()
    with pytest.raises(ssdlab.SsdlabError, match="without saturation.csv"):
        load_runs([tmp_path / "s"])


def test_the_plan_matches_the_core_steps() -> None:
    cfg = _drive("tlc-dynamic-cache")
    for kwargs in ({"idle_minutes": 1}, {"idle_minutes": 1, "prefill_pct": 30}):
        planned = procedures.procedure_steps("saturation", cfg, **kwargs)
        r = ssdlab.saturation(cfg, **kwargs)
        assert [s["step"] for s in planned] == [s.kind for s in r.steps]
        assert [s.get("workload", {}).get("label", "") for s in planned] == [s.label for s in r.steps]


@pytest.mark.parametrize("name", CACHED)
def test_every_procedure_runs_on_the_slc_cache_presets(name: str) -> None:
    cfg = _drive(name)
    c = ssdlab.consistency(cfg, duration_s=20)
    assert c.summary["scenario"] == "consistency"
    t = ssdlab.torture(cfg, torture_minutes=0.5, idle_minutes=0.5)
    assert [p["name"] for p in t.summary["passes"]][-1] == "after TRIM"
    u = ssdlab.used_vs_new(cfg, duration_s=10)
    assert len(u.summary["states"]) == 3
    w = ssdlab.worst_case_wa(cfg, torture_minutes=0.5)
    assert w.write_amplification >= 1.0


def test_a_sweep_point_runs_saturation_like_the_function() -> None:
    from ssdlab.sweep.execute import Task, run_point

    spec = ssdlab.sweep.load_spec({"scenario": "saturation", "base": {"drive": "qlc-hybrid-cache", "capacity": SIZE},
                                   "grid": {"fill_pct": [50]}})
    point = spec.points[0]
    outcome = run_point(Task(spec.scenario, point.name, point.prepared, point.label, ssdlab.__version__))
    assert outcome.error is None
    single = ssdlab.saturation(_drive("qlc-hybrid-cache"), fill_pct=50)
    assert outcome.figures["cache_gb"] == pytest.approx(single.cache_gb, rel=1e-12)
    assert set(SATURATION_FILES) <= set(outcome.files)
