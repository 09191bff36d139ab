"""ssdlab pts dirth: PTS's demand intensity / response time histogram test on a small simulated drive."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.pts import demand, sweep
from ssdlab.scenarios.pts_dirth import FILES, pts_dirth

ROUND_S = 0.5


@pytest.fixture(scope="module")
def dirth() -> demand.DemandResult:
    # PTS-E, the write cache off: every write waits for its program, so deeper queues overlap them
    # (with the cache on, this write-bound drive gives about the same IOPS at every depth)
    return pts_dirth(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), round_s=ROUND_S, rounds_max=5)


def test_random_8k_requests_65_percent_reads(dirth: demand.DemandResult) -> None:
    assert dirth.summary["write_cache"] == "disabled (WCD)"
    r = dirth.rounds
    ios = r["read_ios"] + r["write_ios"]
    assert ((r["mb_s"] * 1e6 * r["seconds"]).round() == ios * 8192).all()
    assert r["read_ios"].sum() / ios.sum() == pytest.approx(0.65, abs=0.01)
    assert dirth.summary["block_bytes"] == 8192 and dirth.summary["block_sizes"] == []


def test_demand_variation_and_intensity(dirth: demand.DemandResult) -> None:
    w = {(p["threads"], p["queue_depth"]): p for p in dirth.summary["window"]}
    assert len(w) == 49
    # one thread: more outstanding requests, more IOPS (QD 1 against QD 32), and longer responses
    assert w[(1, 32)]["iops"] > 1.5 * w[(1, 1)]["iops"]
    assert w[(1, 32)]["mean_latency_us"] > 5 * w[(1, 1)]["mean_latency_us"]
    # response time against IOPS rises with the outstanding requests at every thread count
    for t in sweep.THREADS:
        arts = [w[(t, q)]["mean_latency_us"] for q in sorted(sweep.DEPTHS)]
        assert arts == sorted(arts), (t, arts)


def test_the_histogram_points_span_the_demand(dirth: demand.DemandResult) -> None:
    p = dirth.summary["histogram_points"]
    assert p["min"]["iops"] < p["mid"]["iops"] < p["max"]["iops"]
    names = list(dirth.histograms["point"].drop_duplicates())
    assert [n.split()[0] for n in names] == ["max", "mid", "min"]
    # T1Q1's responses are the shortest: its histogram ends below the max-IOPS point's 5 9s
    assert p["min"]["p99_999_from_histogram_us"] < p["max"]["p99_999_from_histogram_us"]


def test_the_command_writes_the_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "dirth", "--capacity", "1GiB", "--round-s", "0.2", "--rounds-max", "5", "--out",
                 str(out)]) == 0
    captured = capsys.readouterr()
    assert "min IOPS: T1Q1" in captured.out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    s = demand.DemandResult.load(out).summary
    assert s["scenario"] == "pts-dirth" and s["write_cache"] == "disabled (WCD)" and s["spec"] == "PTS-E"
