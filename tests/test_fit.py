"""`ssdlab fit` and `ssdlab predict` (docs/fit.md): the fit reads only what a device run records,
recovers a hidden drive's knobs, predicts a held-out workload, fits a file-backed device run, and
refuses bad inputs in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import List

import numpy as np
import pandas as pd
import pytest

from ssdlab.cli import main
from ssdlab.config import DriveConfig, load_preset
from ssdlab.fit import fit
from ssdlab.fit.predict import Workload, predict
from ssdlab.scenarios.consistency import consistency

GiB = 2**30


def _hidden(program_us: float, op: float, capacity: int) -> DriveConfig:
    """A drive the fit does not know: the mlc-256 design with another program time and OP."""
    d = load_preset("mlc-256").to_dict()
    d["name"] = "hidden"
    d["timing"]["program_us"] = program_us
    d["ftl"]["op"] = op
    return DriveConfig.from_dict(d).with_user_capacity(capacity)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A simulated consistency run of the hidden drive (its directory holds the drive's configuration
    too, as every simulated run's does)."""
    d = tmp_path_factory.mktemp("m") / "consistency"
    consistency(_hidden(1800.0, 0.20, 8 * GiB), duration_s=240.0).save(d)
    return d


def test_the_fit_never_reads_a_simulated_runs_drive_configuration(measured: Path, tmp_path: Path) -> None:
    blank = tmp_path / "blank"
    shutil.copytree(measured, blank)
    s = json.loads((blank / "summary.json").read_text())
    assert s["op"] is not None and s["effective_spare_factor"] is not None  # there was something to blank
    for key in ("drive", "label", "op", "effective_spare_factor", "gc_policy", "gc_mode", "seed", "write_amplification",
                "steady_write_amplification", "nand_write_bytes", "host_write_bytes", "iops_clean", "burst_s",
                "iops_steady_mean", "iops_steady_min", "zoom_start_s", "fill_seconds", "ssdlab_version"):
        s[key] = None
    s["op"] = 5.0  # a wrong value where a blank would not show a reader that falls back to it
    (blank / "summary.json").write_text(json.dumps(s))
    (blank / "series.csv").unlink()  # NAND and GC MiB per second: no device records them
    a = fit([measured], max_evaluations=2, refine=False)
    b = fit([blank], max_evaluations=2, refine=False)
    assert a.knobs == b.knobs
    assert {k: (v.value, v.status) for k, v in a.table.items()} == {k: (v.value, v.status) for k, v in b.table.items()}
    assert a.errors == b.errors


def test_fit_recovers_a_hidden_drive_and_predicts_a_held_out_workload(measured: Path, tmp_path: Path) -> None:
    r = fit([measured], max_evaluations=8, budget_s=900)
    k = r.knobs
    # the measurement: 8 GiB, 240 s; the truth: tPROG 1800 us, OP 20 %, on-demand, no cache
    assert k.gc_mode == "on-demand" and not k.cache
    assert k.program_us == pytest.approx(1800.0, rel=0.06)
    assert k.op == pytest.approx(0.20, rel=0.12)
    assert r.table["op"].status == "determined" and r.table["dies"].status == "undetermined"
    assert r.table["read_us"].status == "undetermined" and r.table["idle_gc"].status == "undetermined"
    for fig in ("clean_iops", "cliff_bytes", "steady_mean"):
        assert abs(r.errors[fig]) < 0.08, (fig, r.errors)
    # a held-out workload: 25 % spare area, never measured
    w = Workload(spare_area_pct=25.0, duration_s=120.0)
    truth = predict(_hidden(1800.0, 0.20, 4 * GiB), w)
    twin = predict(k.config(4 * GiB), w)
    assert twin.iops == pytest.approx(truth.iops, rel=0.10)
    assert twin.write_amplification == pytest.approx(truth.write_amplification, rel=0.10)
    # and the drive file the command writes is one --drive-file accepts
    assert main(["fit", str(measured), "--out", str(tmp_path / "twin.toml"), "--budget", "1", "-q"]) == 0
    cfg = DriveConfig.from_toml_file(tmp_path / "twin.toml")
    assert cfg.describe()["user_capacity_bytes"] == 8 * GiB
    doc = json.loads((tmp_path / "twin-fit" / "fit.json").read_text())
    assert "op" in doc["determined"] and "read_us" in doc["undetermined"]
    assert (tmp_path / "twin-fit" / "fit.png").stat().st_size > 10_000
    page = (tmp_path / "twin-fit" / "fit.html").read_text()
    assert '"label":"consistency"' in page and "updatemenus" in page and "determined by" in page


def test_predict_expresses_a_mix_zipf_and_spare_area(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "d.toml"
    from ssdlab.fit.twin import to_toml

    toml.write_text(to_toml(_hidden(1300.0, 0.1, 2 * GiB)))
    assert main(["predict", str(toml), "--rw", "randrw", "--read-pct", "70", "--qd", "8", "--zipf", "1.2",
                 "--spare-area", "25", "--duration", "20", "--json", str(tmp_path / "p.json")]) == 0
    p = json.loads((tmp_path / "p.json").read_text())
    assert p["read_iops"] / p["iops"] == pytest.approx(0.70, abs=0.03)
    assert "QD8" in p["workload"] and "zipf 1.2" in p["workload"] and "25 % spare area" in p["workload"]
    assert "IOPS" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")
def test_fit_of_a_file_backed_device_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["consistency", "--device", "disk.img", "--capacity", "64MiB", "--duration", "25", "--out", "dev",
                 "-q"]) == 0
    assert main(["fit", "dev", "--out", "twin.toml", "--budget", "30", "-q"]) == 0
    cfg = DriveConfig.from_toml_file(tmp_path / "twin.toml")
    assert cfg.describe()["user_capacity_bytes"] == 64 * 2**20
    doc = json.loads((tmp_path / "twin-fit" / "fit.json").read_text())
    # a file has no cliff and no GC: OP and the GC mode are not determined, and say so
    assert doc["knobs"]["op"]["status"] == "undetermined"
    assert doc["knobs"]["gc_mode"]["status"] == "undetermined"
    assert doc["knobs"]["program_us"]["status"] == "determined"
    # the twin's clean IOPS are stated against the file's, within a factor of two: how close depends on
    # the host (measured +20 % on an idle host whose file ran a steady 160K IOPS, the 64 MiB twin
    # topping out at 193K whatever its program time; +56 % on the same host under load), so the
    # file's own figure is not a drive's and is not held to the fit's 10 % goal
    iops = pd.read_csv(tmp_path / "dev" / "iops.csv")["iops"].to_numpy(float)
    assert doc["measured"]["consistency"]["clean_iops"] == pytest.approx(iops[:10].mean(), rel=0.25)
    assert np.isfinite(doc["errors"]["clean_iops"]) and abs(doc["errors"]["clean_iops"]) < 1.0
    # fio's own files of the same run (its JSON and per-second logs) read as the same measurement
    from ssdlab.fit.measurements import read_measurements

    fio_dir = next((tmp_path / "dev" / "fio").glob("*"))
    a = read_measurements([tmp_path / "dev"]).consistency[0]
    b = read_measurements([fio_dir]).consistency[0]
    assert (b.capacity_bytes, b.block_bytes, b.qd) == (a.capacity_bytes, a.block_bytes, a.qd)
    n = min(len(a.iops), len(b.iops)) - 1  # the last second may be completed from fio's totals
    assert n >= 20 and np.allclose(a.iops[:n], b.iops[:n], rtol=0.01, atol=2)


def _one_line_error(capsys: pytest.CaptureFixture[str], args: List[str]) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("ssdlab: error: ") and "Traceback" not in err, err
    return err


def test_bad_inputs_are_one_line_errors_and_write_nothing(measured: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "t.toml")
    other = tmp_path / "other-tool"
    other.mkdir()
    (other / "results.txt").write_text("IOPS: 12345\n")
    assert "neither an ssdlab result directory" in _one_line_error(capsys, ["fit", str(other), "--out", out])
    wa = tmp_path / "wa"
    wa.mkdir()
    (wa / "summary.json").write_text(json.dumps({"scenario": "wa"}))
    assert "cannot be fitted" in _one_line_error(capsys, ["fit", str(wa), "--out", out])
    assert "not a directory" in _one_line_error(capsys, ["fit", str(tmp_path / "nope"), "--out", out])
    short = tmp_path / "short"
    shutil.copytree(measured, short)
    pd.DataFrame({"time_s": range(8), "iops": [50000] * 8}).to_csv(short / "iops.csv", index=False)
    assert "too few" in _one_line_error(capsys, ["fit", str(short), "--out", out])
    other_cap = tmp_path / "other-cap"
    shutil.copytree(measured, other_cap)
    s = json.loads((other_cap / "summary.json").read_text())
    s["user_capacity_bytes"] = 2 * s["user_capacity_bytes"]
    (other_cap / "summary.json").write_text(json.dumps(s))
    assert "different capacities" in _one_line_error(capsys, ["fit", str(measured), str(other_cap), "--out", out])
    nan = tmp_path / "nan"
    shutil.copytree(measured, nan)
    pd.DataFrame({"time_s": range(30), "iops": [np.nan] * 30}).to_csv(nan / "iops.csv", index=False)
    assert "finite" in _one_line_error(capsys, ["fit", str(nan), "--out", out])
    deep = tmp_path / "deep"  # a summary nested past Python's recursion limit: read as every result file is
    deep.mkdir()
    (deep / "summary.json").write_text("[" * 100_000 + "]" * 100_000)
    assert "nests arrays or objects more than 64 deep" in _one_line_error(capsys, ["fit", str(deep), "--out", out])
    assert not Path(out).exists() and not (tmp_path / "t-fit").exists()
    _one_line_error(capsys, ["predict", str(tmp_path / "missing.toml")])
    toml = tmp_path / "d.toml"
    from ssdlab.fit.twin import to_toml

    toml.write_text(to_toml(_hidden(1300.0, 0.1, 2 * GiB)))
    assert "zipf" in _one_line_error(capsys, ["predict", str(toml), "--zipf", "1"])


def test_fit_finds_a_hidden_slc_cache_from_a_saturation_run(tmp_path: Path) -> None:
    from ssdlab.scenarios.saturation import saturation

    d = load_preset("tlc-dynamic-cache").to_dict()
    d["name"] = "hidden-cache"
    d["ftl"]["slc_cache"]["static_pct"] = 0.0  # a dynamic cache only, as the twin models it
    d["ftl"]["slc_cache"]["dynamic_share"] = 0.22
    d["ftl"]["slc_cache"]["fold_while_writing"] = 0.0
    d["timing"]["pslc_program_us"] = 180.0  # ~5 GB/s in the cache
    d["timing"]["program_us"] = 900.0  # ~1 GB/s after it: a fall below half, the reviewers' cliff
    cfg = DriveConfig.from_dict(d).with_user_capacity(8 * GiB)
    saturation(cfg).save(tmp_path / "sat")
    r = fit([tmp_path / "sat"], max_evaluations=6, refine=False)
    k = r.knobs
    assert k.cache and r.table["slc_cache"].status == "determined"
    assert k.dynamic_share == pytest.approx(0.22, rel=0.15)
    assert k.pslc_program_us == pytest.approx(180.0, rel=0.10)
    assert k.program_us == pytest.approx(900.0, rel=0.10)
    assert abs(r.errors["cache_gb"]) < 0.10 and abs(r.errors["in_cache_mb_s"]) < 0.05
    assert r.table["op"].status == "undetermined" and r.table["cell"].status == "assumed"
    # and a drive without a cache is found to have none
    saturation(_hidden(1300.0, 0.1, 8 * GiB)).save(tmp_path / "nocache")
    r2 = fit([tmp_path / "nocache"], max_evaluations=1, refine=False)
    assert not r2.knobs.cache and r2.table["slc_cache"].value is False


def _hdtach_dir(d: Path, passes: dict) -> Path:
    """HD Tach passes as a device run writes them (hdtach.csv and the procedure's summary)."""
    d.mkdir()
    rows = [{"pass": name, "position_pct": (i + 0.5) / 2, "mb_s": mb * (1 + 0.01 * (i % 3))}
            for name, mb in passes.items() for i in range(200)]
    pd.DataFrame(rows).to_csv(d / "hdtach.csv", index=False)
    (d / "summary.json").write_text(json.dumps({"scenario": "torture", "device": "x", "user_capacity_bytes": 8 * GiB,
                                                "torture_minutes": 20, "idle_minutes": 30}))
    return d


def test_hdtach_after_idle_decides_idle_gc_or_leaves_it_undetermined(measured: Path, tmp_path: Path) -> None:
    recovers = _hdtach_dir(tmp_path / "a", {"clean": 400.0, "after 20 min torture": 150.0,
                                            "after 20 min torture, pass, 30 min idle": 392.0})
    stays = _hdtach_dir(tmp_path / "b", {"clean": 400.0, "after 20 min torture": 150.0,
                                         "after 20 min torture, pass, 30 min idle": 210.0})
    no_idle = _hdtach_dir(tmp_path / "c", {"clean": 400.0, "after 20 min torture": 150.0})
    got = {}
    for name, d in (("recovers", recovers), ("stays", stays), ("no idle", no_idle)):
        t = fit([measured, d], max_evaluations=1, refine=False).table["idle_gc"]
        got[name] = (t.value, t.status)
    assert got == {"recovers": (True, "determined"), "stays": (False, "determined"),
                   "no idle": (False, "undetermined")}


def _hidden_reader(capacity: int) -> DriveConfig:
    """A drive whose reads the write procedures do not show: 16 dies (8 channels x 2) and tR 80 µs
    against the twin design's 32 dies and 50 µs."""
    d = load_preset("mlc-256").to_dict()
    d["name"] = "hidden-reads"
    d["geometry"]["dies_per_channel"] = 2
    d["timing"]["read_us"] = 80.0
    d["timing"]["program_us"] = 650.0  # the same array write rate as 32 dies at 1300 µs
    d["ftl"]["op"] = 0.15
    return DriveConfig.from_dict(d).with_user_capacity(capacity)


@pytest.fixture(scope="module")
def pts_measured(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    """The hidden reader's consistency run and its PTS latency, IOPS and throughput tests (short
    rounds), each as a simulated run saves it (the drive's configuration in every summary)."""
    from ssdlab.scenarios.pts_iops import pts_iops
    from ssdlab.scenarios.pts_latency import pts_latency
    from ssdlab.scenarios.pts_throughput import pts_throughput

    root = tmp_path_factory.mktemp("pts")
    cfg = _hidden_reader(GiB)
    consistency(cfg, duration_s=60.0).save(root / "consistency")
    for name, run in (("latency", pts_latency), ("iops", pts_iops), ("throughput", pts_throughput)):
        run(cfg, round_s=0.2, rounds_max=5).save(root / name)
    return [root / n for n in ("consistency", "latency", "iops", "throughput")]


def test_pts_runs_determine_the_read_time_the_dies_and_the_link(pts_measured: List[Path], tmp_path: Path) -> None:
    without = fit(pts_measured[:1], max_evaluations=2, refine=False)
    assert without.table["read_us"].status == "undetermined" and without.table["dies"].status == "undetermined"
    assert without.knobs.dies == 32 and "pts_read_iops_512" not in without.errors
    r = fit(pts_measured, max_evaluations=2, refine=False)
    k = r.knobs
    # the truth: tR 80 µs, 16 dies, a 600 MB/s link
    assert r.table["read_us"].status == "determined" and k.read_us == pytest.approx(80.0, rel=0.05)
    assert r.table["dies"].status == "determined" and k.dies == 16
    assert r.table["link_mb_s"].status == "determined" and k.link_mb_s == 600.0
    for fig in ("pts_read_latency_us", "pts_read_iops_512", "pts_seq_read_mb_s"):
        assert abs(r.errors[fig]) < 0.05, (fig, r.errors)
    # the dies scale the program time: the array's write rate (dies / tPROG) is what the burst fixed
    assert k.dies / k.program_us == pytest.approx(without.knobs.dies / without.knobs.program_us, rel=0.06)
    # what a device run does not record is never read: blank the drive's configuration, drop rounds.csv
    blank = []
    for d in pts_measured[1:]:
        b = tmp_path / d.name
        shutil.copytree(d, b)
        s = json.loads((b / "summary.json").read_text())
        for key in ("drive", "label", "op", "effective_spare_factor", "gc_policy", "gc_mode", "seed", "wipc",
                    "steady_state", "window_iops", "simulated_seconds", "wall_seconds", "active_bytes"):
            s[key] = None
        s["op"] = 5.0
        (b / "summary.json").write_text(json.dumps(s))
        (b / "rounds.csv").unlink()
        blank.append(b)
    r2 = fit(pts_measured[:1] + blank, max_evaluations=2, refine=False)
    assert r2.knobs == r.knobs and r2.errors == r.errors


def test_the_fit_is_a_section_of_the_html_report(pts_measured: List[Path], tmp_path: Path) -> None:
    from ssdlab.fit.report import save_report
    from ssdlab.report import build_report, load_runs

    r = fit(pts_measured, max_evaluations=1, refine=False)
    save_report(r, tmp_path / "twin-fit", "twin.toml")
    report = build_report(load_runs([tmp_path / "twin-fit", pts_measured[0]]))
    assert [s.id for s in report.sections][-1] == "fit"
    chart = report.charts()["fit"]
    assert chart.rows == [("Procedure", ["Consistency", "PTS reads"])]
    pts = chart.spec("PTS reads")
    measured, twin = (t for t in pts["data"])
    assert measured["y"][0] == pytest.approx(r.measured["pts"]["latency_us"])
    assert twin["y"][0] == pytest.approx(r.twin.reads.latency_us)
    assert len(chart.spec("Consistency")["data"][0]["y"]) == 60
    knobs = report.tables()["fit-knobs"]
    assert "determined" in [c.text for c in knobs.column("Status")] and "dies" in [c.text for c in knobs.column("Knob")]
    page = report.html(plotly="/* stub */")
    assert 'id="fit"' in page and ">PTS reads</button>" in page


def test_bad_pts_inputs_are_one_line_errors(pts_measured: List[Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "t.toml")
    reads_only = [str(d) for d in pts_measured[1:]]
    assert "PTS runs only the reads" in _one_line_error(capsys, ["fit", *reads_only, "--out", out])
    broken = tmp_path / "iops"
    shutil.copytree(pts_measured[2], broken)
    t = pd.read_csv(broken / "iops_table.csv")
    t.loc[0, "100/0"] = np.nan
    t.to_csv(broken / "iops_table.csv", index=False)
    assert "finite, positive" in _one_line_error(capsys, ["fit", str(pts_measured[0]), str(broken), "--out", out])
    wsat = tmp_path / "wsat"
    wsat.mkdir()
    (wsat / "summary.json").write_text(json.dumps({"scenario": "pts-wsat", "user_capacity_bytes": GiB}))
    assert "cannot be fitted" in _one_line_error(capsys, ["fit", str(pts_measured[0]), str(wsat), "--out", out])
    assert not Path(out).exists()


def test_sequential_reads_at_a_links_rate_name_the_link(pts_measured: List[Path]) -> None:
    """The write side guesses the slowest link above its fastest (noisy) speed; PTS's sequential
    reads at 99 % of 600 MB/s say the link is 600 MB/s, unless a write ran clearly faster."""
    from ssdlab.fit.measurements import read_measurements
    from ssdlab.fit.reads import fit_reads
    from ssdlab.fit.twin import Knobs

    m = read_measurements(pts_measured[1:])
    guess = Knobs(capacity_bytes=GiB, link_mb_s=3500.0)
    r = fit_reads(guess, m, max_evaluations=1, seen_mb_s=400.0)
    assert r is not None and r.knobs.link_mb_s == 600.0 and r.notes["link_mb_s"][:2] == (600.0, "determined")
    r2 = fit_reads(guess, m, max_evaluations=1, seen_mb_s=900.0)
    assert r2 is not None and r2.knobs.link_mb_s == 3500.0 and r2.notes["link_mb_s"][1] == "assumed"


def _drawn(base: str, channels: int, program_us: float, op: float, read_us: float) -> DriveConfig:
    """A drive of `base`'s design with other geometry and timing (fit_validation's drives 6 and 19)."""
    d = load_preset(base).to_dict()
    d["name"] = "hidden"
    d["geometry"]["channels"] = channels
    d["timing"].update(program_us=program_us, read_us=read_us)
    d["ftl"]["op"] = op
    return DriveConfig.from_dict(d).with_user_capacity(4 * GiB)


@pytest.mark.parametrize("base, channels, program_us, op, read_us, mode", [
    ("mlc-256", 4, 1178.1, 0.300, 73.8, "on-demand"),  # a tight steady band that is not active GC
    ("active-gc", 8, 1048.4, 0.229, 67.0, "active"),
])
def test_pts_mixed_points_decide_the_gc_mode_a_tight_band_leaves_open(tmp_path: Path, base: str, channels: int,
                                                                       program_us: float, op: float, read_us: float,
                                                                       mode: str) -> None:
    """Under writes alone both drives show a tight steady band, read as active GC. With a PTS IOPS
    run, each mode's twin runs the same test and the mode whose 4 and 8 KiB mixed cells come
    closest wins (measured here: 3.6 % against 14.0 % active for the first, 5.9 % against 25.0 %
    on-demand for the second): the truth in both."""
    from ssdlab.scenarios.pts_iops import pts_iops

    cfg = _drawn(base, channels, program_us, op, read_us)
    consistency(cfg, duration_s=240.0).save(tmp_path / "consistency")
    pts_iops(cfg, round_s=0.5, rounds_max=5).save(tmp_path / "iops")
    writes = fit([tmp_path / "consistency"], max_evaluations=2, refine=False)
    assert writes.table["gc_mode"].value == "active" and "tight band" in writes.table["gc_mode"].by
    notes: List[str] = []
    r = fit([tmp_path / "consistency", tmp_path / "iops"], max_evaluations=8, refine=False, say=notes.append)
    assert r.knobs.gc_mode == mode and r.table["gc_mode"].value == mode
    assert r.table["gc_mode"].by.startswith("PTS IOPS mixed points") and "10 cells" in r.table["gc_mode"].by
    errors = {line.split(",")[1].split()[0]: float(line.rsplit(" ", 2)[-2])
              for line in notes if line.startswith("fit: PTS IOPS mixed points")}
    assert set(errors) == {"on-demand", "active", "clean-up-later"}
    runner_up = sorted(errors.values())[1]
    assert errors[mode] < 0.7 * runner_up, errors  # a clear margin, not a coin toss
