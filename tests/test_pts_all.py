"""ssdlab pts all: every PTS test into one directory, on a tiny simulated drive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab.cli import main
from ssdlab.scenarios.pts_all import TESTS


def test_every_test_runs_into_its_own_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "all"
    assert main(["pts", "all", "--capacity", "512MiB", "--round-s", "0.1", "--rounds-max", "5", "--xsr-minutes",
                 "0.05,0.05,0.05", "--hir-segments", "1", "--variant", "client", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    # progress: each test announced in order, then the table
    starts = [captured.err.index(f"[{i + 1}/{len(TESTS)}] pts {t} ") for i, t in enumerate(TESTS)]
    assert starts == sorted(starts)
    s = json.loads((out / "summary.json").read_text())
    assert [t["test"] for t in s["tests"]] == list(TESTS)
    for t in s["tests"]:
        sub = json.loads((out / t["directory"] / "summary.json").read_text())
        assert sub["scenario"] == f"pts-{t['test']}" and sub["variant"] == "client"
        assert sub["write_cache"] == "enabled (WCE)" and t["wall_seconds"] > 0 and t["verdict"]
        assert f"  {t['test']:<10}" in captured.out
    assert json.loads((out / "xsr" / "summary.json").read_text())["phase_minutes"] == [0.05, 0.05, 0.05]
    assert json.loads((out / "hir" / "summary.json").read_text())["segments"] == 1
    assert json.loads((out / "wsat" / "summary.json").read_text())["sample_s"] == 1  # whole seconds


def test_bad_values_are_refused_before_any_test_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, text in ((["--xsr-minutes", "1,2"], "three durations"), (["--hir-segments", "0"], "from 1"),
                       (["--rounds-max", "4"], "from 5"), (["--write-cache", "maybe"], "maybe")):
        status = main(["pts", "all", "-q", "--capacity", "512MiB", "--out", str(tmp_path / "o"), *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("ssdlab: error:") and len(err.splitlines()) == 1, (args, err)
        assert text in err, (args, err)
        assert not (tmp_path / "o").exists()
