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
