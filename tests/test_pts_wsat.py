"""ssdlab pts wsat: PTS's write saturation test on simulated drives (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.scenarios.pts_wsat import FILES, PtsWsatResult, pts_wsat


@pytest.fixture(scope="module")
def mlc() -> PtsWsatResult:
    # write-back, as the clean-to-steady figures below were measured (with PTS-E's write-through the
    # clean drive's first sample is itself bound by its padded page programs)
    return pts_wsat(ssdlab.load_preset("mlc-256").with_user_capacity("4GiB"), sample_s=10, write_cache="on")


def test_it_writes_four_times_the_user_capacity_from_a_purged_drive(mlc: PtsWsatResult) -> None:
    s = mlc.summary
    user = s["user_capacity_bytes"]
    assert s["stopped_by"] == "capacity" and s["wipc"] is None
    assert s["host_write_bytes"] == pytest.approx(4 * user, rel=1e-6)
    # every second is in the series, the samples are their sums
    assert mlc.samples["seconds"].sum() == pytest.approx(s["simulated_seconds"], rel=1e-9)
    ios = (mlc.samples["iops"] * mlc.samples["seconds"]).sum()
    assert ios == pytest.approx(s["host_write_bytes"] / 4096, rel=1e-9)
    assert mlc.samples["tgbw"].is_monotonic_increasing
    assert mlc.samples["drive_fills"].iloc[-1] == pytest.approx(4.0, rel=1e-6)
    # the purged drive writes at its clean speed, then falls to its steady state (66K -> ~8K at 4 GiB)
    assert s["first_sample_iops"] > 5 * s["last_sample_iops"]
    # the steady-state rule over the last five whole samples, for information
    whole = mlc.samples[mlc.samples["seconds"] == 10]
    assert s["last_window"]["values"] == pytest.approx(whole["iops"].tolist()[-5:])


def test_a_time_limit_stops_it_first(tmp_path: Path) -> None:
    r = pts_wsat(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), time_limit=7, sample_s=2)
    s = r.summary
    assert s["stopped_by"] == "time limit" and s["simulated_seconds"] == pytest.approx(7, abs=0.1)
    assert list(r.samples["time_s"]) == [0, 2, 4, 6] and s["drive_fills"] < 4
    r.save(tmp_path / "a")
    again = pts_wsat(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), time_limit=7, sample_s=2)
    again.save(tmp_path / "b")
    for name in ("samples.csv", "series.csv"):  # same seed, same bytes
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    loaded = PtsWsatResult.load(tmp_path / "a")
    assert loaded.samples["iops"].tolist() == pytest.approx(r.samples["iops"].tolist(), rel=1e-9)
    assert len(loaded.series) == len(r.series)


def test_zero_iops_seconds_are_counted_from_the_seconds_not_the_samples() -> None:
    # a drive that stalls (clean-up-later after a sequential fill: 0 IOPS on 29 % of the seconds
    # at 256 GB) shows it in the 1-s series; a one-minute sample only averages the stall in
    import numpy as np
    import pandas as pd

    from ssdlab.scenarios.pts_wsat import PtsWsatResult as R

    ios = np.array([9000, 0, 0, 8000, 0, 9000, 9000, 0, 9000, 9000, 9000, 4500])
    step = SimpleNamespace(series=pd.DataFrame({"write_ios": ios, "host_bytes": ios * 4096, "nand_units": ios * 3}),
                           duration_s=11.5, phase={"bytes": [0, int(ios.sum()) * 4096, 0], "counters": {}})
    cfg = ssdlab.load_preset("mlc-256").with_user_capacity("1GiB")
    params = {"variant": "enterprise", "spec": "PTS-E", "active_range_pct": 100.0, "active_bytes": 2**30,
              "threads": 4, "queue_depth": 32, "capacity_multiple": 4.0, "time_limit_s": 11.5, "sample_s": 5.0,
              "block_bytes": 4096}
    r = R.from_run(label="x", config=cfg, step=step, params=params, seed=1, user_bytes=2**30, wall_seconds=0)
    assert r.summary["zero_iops_seconds"] == 4 and list(r.samples["zero_seconds"]) == [3, 1, 0]
    assert list(r.samples["seconds"]) == [5, 5, 1.5] and r.samples["iops"].iloc[2] == pytest.approx(13500 / 1.5)
    assert r.series["iops"].iloc[-1] == pytest.approx(4500 / 0.5)  # the last, partial second as a rate
    assert (r.samples["iops"] > 0).all() and r.summary["stopped_by"] == "time limit"


def test_the_command_and_bad_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "wsat", "--capacity", "1GiB", "--sample-s", "5", "--variant", "client", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "drive fills (stopped by the capacity)" in printed and "deviation: samples of 5 s" in printed
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    s = PtsWsatResult.load(out).summary
    assert s["active_range_pct"] == 75 and (s["threads"], s["queue_depth"]) == (2, 16)
    for args, text in ((["--capacity-multiple", "0"], "above 0"), (["--sample-s", "1.5"], "whole number"),
                       (["--time-limit", "0"], "positive"), (["--tc", "300"], "from 1 to 256"),
                       (["--variant", "server"], "server")):
        status = main(["pts", "wsat", "-q", "--out", str(tmp_path / "o"), *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("ssdlab: error:") and len(err.splitlines()) == 1, (args, err)
        assert text in err, (args, err)
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_clean_up_later_stalls_once_wsat_has_made_it_dirty() -> None:
    """WSAT on clean-up-later (the Plextor M5M, seed 003) shows its 0-IOPS stalls, and when.

    From a purge, k fills of random writes leave e^-k of the LBAs never written (1.8 % at 4 fills),
    and those act as spare area: the GC's victims need fewer copies than in the consistency test
    (which starts from a sequential fill) and the deferred cleaning keeps up, as 25 % spare area
    keeps the M5M from stalling. The drive stops once its victims need more than its between-stall
    budget: measured at 128 GB (write cache on, TC 4 x QD 32) first in the sample ending at 4.43
    fills (WA 8.3), none within PTS's 4 x the user capacity (docs/pts.md, WSAT). 128 GB: at 16-32 GB
    the drive's smaller blocks keep its WA below the budget and it never stalls (32 GB: 8 fills, WA
    9.5, no stall)."""
    r = pts_wsat(ssdlab.load_preset("clean-up-later").with_user_capacity("128GB"), capacity_multiple=5.5,
                 write_cache="on")
    s = r.samples
    stalled = s[s["zero_seconds"] > 0]
    assert len(stalled) >= 10 and r.summary["zero_iops_seconds"] >= 100
    first = stalled.iloc[0]
    assert 4.0 < first["drive_fills"] < 5.0 and first["write_amplification"] > 8.0
    assert s[s["drive_fills"] <= 4.0]["zero_seconds"].sum() == 0
    # stalls are whole seconds at 0 IOPS in the 1-s series, after the drive came to need them
    zeros = r.series[r.series["iops"] == 0]["time_s"]
    assert zeros.min() >= first["time_s"] and len(zeros) == r.summary["zero_iops_seconds"]
