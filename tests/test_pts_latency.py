"""ssdlab pts latency: PTS 2.0's latency test on a small simulated drive (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.pts import steady
from ssdlab.scenarios.pts_latency import BLOCK_SIZES, FILES, MIXES, PtsLatencyResult, pts_latency


@pytest.fixture(scope="module")
def mlc() -> PtsLatencyResult:
    return pts_latency(ssdlab.load_preset("mlc-256").with_user_capacity("4GiB"), round_s=5)


def test_it_reaches_steady_state_on_the_4k_write_response_time(mlc: PtsLatencyResult) -> None:
    s = mlc.summary
    ss = s["steady_state"]
    assert ss["steady"] and (s["threads"], s["queue_depth"]) == (1, 1)
    first, last = ss["window_rounds"]
    rows = mlc.rounds[(mlc.rounds["read_pct"] == 0) & (mlc.rounds["block_bytes"] == 4096)].sort_values("round")
    w = steady.check_window(rows["mean_latency_us"].tolist()[first - 1:last], first)
    assert w.steady and w.average == pytest.approx(ss["tracking"]["rnd_4k_0_100_mean"]["average"], rel=1e-12)
    assert len(mlc.table) == len(MIXES) * len(BLOCK_SIZES)


def test_each_cell_has_average_five_nines_and_maximum(mlc: PtsLatencyResult) -> None:
    r = mlc.rounds
    assert (r["mean_latency_us"] <= r["p99_999_latency_us"]).all()
    assert (r["p99_999_latency_us"] <= r["max_latency_us"] * (1 + 1e-3)).all()
    # QD 1: one request at a time, so the average response time is the inverse of the IOPS
    # (Little's law), less the host's zero think time
    assert (r["mean_latency_us"] * r["iops"] / 1e6).tolist() == pytest.approx([1.0] * len(r), rel=0.01)
    t = mlc.table
    assert (t["mean_us"] <= t["p99_999_us"]).all() and (t["p99_999_us"] <= t["max_us"] * (1 + 1e-3)).all()
    # the window's ART is the IO-weighted mean of its rounds
    first, last = mlc.summary["steady_state"]["window_rounds"]
    cell = r[(r["read_pct"] == 65) & (r["block_bytes"] == 8192) & r["round"].between(first, last)]
    n = cell["read_ios"] + cell["write_ios"]
    row = t[(t["read_pct"] == 65) & (t["block_bytes"] == 8192)].iloc[0]
    assert row["mean_us"] == pytest.approx((cell["mean_latency_us"] * n).sum() / n.sum())
    assert row["max_us"] == cell["max_latency_us"].max()


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "latency", "--capacity", "1GiB", "--round-s", "0.5", "--out", str(out)]) == 0
    assert "5 9s µs" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = PtsLatencyResult.load(out)
    assert len(loaded.table) == 9 and set(loaded.charts()) == {n for n in FILES if n.endswith(".png")}
    for args, text in ((["--rounds-max", "3"], "from 5"), (["--round-s", "-1"], "positive")):
        assert main(["pts", "latency", "-q", "--out", str(tmp_path / "o"), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ssdlab: error:") and len(err.splitlines()) == 1 and text in err, err
