"""ssdlab pts latency: PTS 2.0's latency test on a small simulated drive (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.pts import histogram as hist, steady
from ssdlab.scenarios.pts_latency import BLOCK_SIZES, FILES, MIXES, PtsLatencyResult, cell_name, pts_latency


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


def test_the_histograms_hold_every_response_of_the_window(mlc: PtsLatencyResult) -> None:
    first, last = mlc.summary["steady_state"]["window_rounds"]
    r = mlc.rounds[mlc.rounds["round"].between(first, last)]
    for m in MIXES:
        for b in BLOCK_SIZES:
            rows = mlc.histograms[mlc.histograms["point"] == cell_name(m, b)]
            cell = r[(r["read_pct"] == m) & (r["block_bytes"] == b)]
            # every read and write of the cell's window rounds, each in one bucket
            assert int(rows["count"].sum()) == int((cell["read_ios"] + cell["write_ios"]).sum()) > 0
            assert rows["low_us"].is_monotonic_increasing and rows["cumulative_pct"].iloc[-1] == pytest.approx(100)
            # the window's 5 9s comes from the rounds' buckets added: between the rounds' own
            table = mlc.table[(mlc.table["read_pct"] == m) & (mlc.table["block_bytes"] == b)].iloc[0]
            buckets = [[round(lo * 1e3), round(hi * 1e3), int(c)]
                       for lo, hi, c in rows[["low_us", "high_us", "count"]].to_numpy()]
            assert table["p99_999_us"] == pytest.approx(hist.percentile_us(buckets, 99.999), rel=1e-9)
            assert cell["p99_999_latency_us"].min() * (1 - 1e-3) <= table["p99_999_us"]
            assert table["p99_999_us"] <= cell["p99_999_latency_us"].max() * (1 + 1e-3)
            # the last bucket holds the largest response (3 significant digits)
            assert rows["high_us"].iloc[-1] == pytest.approx(cell["max_latency_us"].max(), rel=1e-3)


def test_the_write_cache_off_waits_for_the_nand_program() -> None:
    # QD 1 writes: with the cache on (PTS-C's WCE) a write completes once in the DRAM buffer;
    # off (PTS-E's WCD) once its padded page is programmed, never faster than the fastest program
    cfg = ssdlab.load_preset("mlc-256").with_user_capacity("1GiB")
    fastest_us = cfg.timing.program_us * min(cfg.timing.program_page_factors)
    art = {}
    for cache in ("on", "off"):
        r = pts_latency(cfg, round_s=0.5, rounds_max=5, write_cache=cache)
        cell = r.table[(r.table["read_pct"] == 0) & (r.table["block_bytes"] == 4096)].iloc[0]
        art[cache] = cell["mean_us"]
        assert r.summary["write_cache"] == ("enabled (WCE)" if cache == "on" else "disabled (WCD)")
        assert any("write cache on" in d for d in r.summary["deviations"]) == (cache == "on")
    assert art["off"] >= fastest_us, art
    assert art["on"] < 0.5 * fastest_us, art


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
