"""Result directories: the docs/results.md contract, atomic saving, refusing bad output paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

import ssdlab
from ssdlab import results
from ssdlab.results import check_output_dir
from ssdlab.scenarios.consistency_result import CONSISTENCY_FILES, IOPS_COLUMNS, SERIES_COLUMNS, SUMMARY_KEYS


def _entries(directory: Path) -> set:
    return {p.name for p in directory.iterdir()}


def test_save_writes_the_contract(short_run: ssdlab.ConsistencyResult, tmp_path: Path) -> None:
    out = short_run.save(tmp_path / "a" / "b")
    assert out == tmp_path / "a" / "b"
    assert _entries(out) == set(CONSISTENCY_FILES)
    assert _entries(tmp_path / "a") == {"b"}  # no staging directory left behind
    iops = pd.read_csv(out / "iops.csv")
    assert list(iops.columns) == list(IOPS_COLUMNS) and len(iops) == 30
    pd.testing.assert_frame_equal(iops, short_run.iops)
    series = pd.read_csv(out / "series.csv")
    assert list(series.columns) == list(SERIES_COLUMNS) and len(series) == 30
    pd.testing.assert_frame_equal(series, short_run.series, check_exact=False, rtol=1e-9)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert list(summary) == list(SUMMARY_KEYS)
    assert summary == short_run.summary
    assert summary["device"] is None
    for chart in ("iops_log.png", "steady_log.png", "steady_linear.png"):
        assert (out / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mode = (out).stat().st_mode & 0o777
    assert mode == 0o777 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_load_round_trip(short_run: ssdlab.ConsistencyResult, tmp_path: Path) -> None:
    back = ssdlab.ConsistencyResult.load(short_run.save(tmp_path / "r"))
    assert back.summary == short_run.summary
    pd.testing.assert_frame_equal(back.iops, short_run.iops)
    assert back.config is None and back.steps == []
    with pytest.raises(ssdlab.SsdlabError, match="cannot read"):
        ssdlab.ConsistencyResult.load(tmp_path / "missing")


def test_saving_into_an_existing_directory_replaces_only_our_files(
    short_run: ssdlab.ConsistencyResult, tmp_path: Path
) -> None:
    out = tmp_path / "r"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "iops.csv").write_text("old")
    short_run.save(out)
    assert _entries(out) == set(CONSISTENCY_FILES) | {"notes.txt"}
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "iops.csv").read_text().startswith("time_s,iops")
    assert _entries(tmp_path) == {"r"}


def test_a_failure_leaves_nothing_half_written(
    short_run: ssdlab.ConsistencyResult, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_charts(self: ssdlab.ConsistencyResult) -> dict:
        raise RuntimeError("chart failed")

    monkeypatch.setattr(results.ConsistencyResult, "charts", broken_charts)
    with pytest.raises(RuntimeError, match="chart failed"):
        short_run.save(tmp_path / "new")
    assert _entries(tmp_path) == set()

    existing = tmp_path / "old"
    existing.mkdir()
    (existing / "iops.csv").write_text("old")
    with pytest.raises(RuntimeError):
        short_run.save(existing)
    assert _entries(tmp_path) == {"old"}
    assert (existing / "iops.csv").read_text() == "old"


def test_refuses_files_and_unwritable_places(short_run: ssdlab.ConsistencyResult, tmp_path: Path) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    cases = [a_file, a_file / "sub", Path("/proc/ssdlab-test"), Path("/dev/null")]
    for path in cases:
        with pytest.raises(ssdlab.SsdlabError) as err:
            short_run.save(path)
        assert "\n" not in str(err.value)
    with pytest.raises(ssdlab.SsdlabError, match="empty"):
        check_output_dir("")
    assert _entries(tmp_path) == {"f"}


def test_check_output_dir_creates_nothing(tmp_path: Path) -> None:
    target = tmp_path / "x" / "y"
    assert check_output_dir(target) == target
    assert _entries(tmp_path) == set()


def test_label_subtitle_and_charts(short_run: ssdlab.ConsistencyResult) -> None:
    assert short_run.label == "mlc-256 · 0% spare area"
    sub = short_run.subtitle()
    assert "4 KiB random writes, QD32" in sub and "2 GiB user" in sub and "greedy GC" in sub
    assert set(short_run.charts()) == {"iops_log.png", "steady_log.png", "steady_linear.png"}
