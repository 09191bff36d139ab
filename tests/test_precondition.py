"""ssdlab precondition: PTS's purge and WIPC, the first scenario added as one module plus one
registry line (docs/architecture.md, "Adding a scenario")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ssdlab
from ssdlab import scenarios
from ssdlab.cli import cli, main
from ssdlab.errors import SsdlabError
from ssdlab.report import build_report, load_runs
from ssdlab.scenarios.precondition import COLUMNS, FILES, PreconditionResult, precondition

GIB = 2**30


@pytest.fixture(scope="module")
def mlc() -> PreconditionResult:
    return precondition(ssdlab.load_preset("mlc-256").with_user_capacity(GIB))


def test_it_is_found_through_the_registry() -> None:
    entry = scenarios.get("precondition")
    assert entry is not None and "precondition" in cli.commands
    assert [o.key for o in entry.options] == ["variant", "active_range", "passes", "block_size", "qd"]
    from ssdlab.sweep.scenarios import SCENARIOS

    assert {"variant", "passes", "block_size", "qd", "drive", "capacity"} <= set(SCENARIOS["precondition"].keys)


def test_the_wipc_writes_the_active_range_twice_in_sequence(mlc: PreconditionResult) -> None:
    s = mlc.summary
    assert s["scenario"] == "precondition" and s["variant"] == "enterprise" and s["active_range_pct"] == 100
    assert s["active_bytes"] == GIB and s["passes"] == 2 and s["block_size"] == 128 * 1024
    # exact byte accounting: two passes of the whole user space
    assert s["host_write_bytes"] == 2 * GIB
    # a sequential write into a secure-erased drive, then a sequential overwrite, invalidates whole
    # blocks: no GC copies, so NAND writes equal host writes
    assert s["nand_write_bytes"] == s["host_write_bytes"] and s["write_amplification"] == 1.0
    first, second = s["passes_detail"]
    assert first["free_blocks_after"] > second["free_blocks_after"]  # the second pass used the spare pool
    # per-second series: every second of both passes, MB/s within the drive's sequential rate
    series = mlc.series
    assert tuple(series.columns) == COLUMNS and set(series["pass"]) == {1, 2}
    assert series["time_s"].is_monotonic_increasing
    mb = series["mb_s"].to_numpy()
    assert (mb[:-1] > 100).all() and mb.max() < 1000
    assert first["mb_s_mean"] == pytest.approx(GIB / first["seconds"] / 1e6)


def test_client_preconditions_three_quarters_and_a_cache_drive_shows_its_cache() -> None:
    drive = ssdlab.load_preset("tlc-dynamic-cache").with_user_capacity(32 * GIB)
    r = precondition(drive, variant="client")
    s = r.summary
    assert s["active_range_pct"] == 75 and s["active_bytes"] == 24 * GIB
    assert s["host_write_bytes"] == 48 * GIB
    # the SLC cache: the first second of the first pass runs at cache speed (~4 GB/s), the rest of
    # it at the folding and TLC speeds (1.5-2 GB/s)
    first = r.series[r.series["pass"] == 1]["mb_s"].to_numpy()[:-1]
    assert first[0] > 3000 and first[0] > 2 * np.median(first[1:])
    assert s["write_amplification"] > 1.0  # folding from the SLC cache


def test_bad_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, text in ((["--passes", "0"], "from 1 to 16"), (["--active-range", "0"], "above 0"),
                       (["--active-range", "101"], "at most 100"), (["--variant", "server"], "server"),
                       (["--block-size", "6100"], "multiple of 512"), (["--capacity", "1GiB", "--active-range", "0.001",
                                                           "--block-size", "32MiB"], "holds no")):
        status = main(["precondition", "-q", "--out", str(tmp_path / "o"), *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("ssdlab: error:") and len(err.splitlines()) == 1, (args, err)
        assert text in err, (args, err)
    assert not (tmp_path / "o").exists()
    with pytest.raises(SsdlabError, match="variant"):
        precondition("mlc-256", variant="server")


def test_the_command_saves_loads_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["precondition", "--capacity", "1GiB", "--passes", "1", "--out", str(out), "--report"]) == 0
    printed = capsys.readouterr().out
    assert "mean MB/s" in printed and "report.html" in printed
    assert set(FILES) | {"report.html"} == {p.name for p in out.iterdir()}
    assert (out / "precondition.png").read_bytes()[:4] == b"\x89PNG"
    back = PreconditionResult.load(out)
    assert back.summary == json.loads((out / "summary.json").read_text())
    pd.testing.assert_frame_equal(back.series, pd.read_csv(out / "precondition.csv"))
    report = build_report(load_runs([out]))
    assert [s.id for s in report.sections] == ["precondition"]
    assert np.isclose(back.summary["host_write_bytes"], GIB)


def test_a_sweep_varies_its_options(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "precondition"\n[base]\ncapacity = "1GiB"\n[grid]\npasses = [1, 2]\n')
    result = ssdlab.sweep(spec, tmp_path / "out", workers=1, progress=False)
    table = result.table.sort_values("passes")
    assert table["error"].isna().all()
    assert table["pass1_mb_s"].notna().all() and table["pass2_mb_s"].isna().tolist() == [True, False]
