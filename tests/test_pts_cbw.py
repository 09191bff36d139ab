"""ssdlab pts cbw: PTS's composite block size workload (a TC × QD sweep) on a small simulated drive."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.fio import jobfile, planner
from ssdlab.pts import demand, histogram as hist, steady, sweep
from ssdlab.scenarios.pts_cbw import BLOCK_SIZES, FILES, STIMULUS, pts_cbw

ROUND_S = 0.5
BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"


@pytest.fixture(scope="module")
def cbw() -> demand.DemandResult:
    return pts_cbw(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), round_s=ROUND_S, rounds_max=5)


def test_the_stimulus_is_what_fio_makes_of_the_spec_s_job() -> None:
    # The same job in fio's words, read by ssdlab's fio reader (tested against fio itself): the
    # size mix, the zones and the mix reach the core exactly as the test sends them.
    text = (f"[cbw]\nrw=randrw\nrwmixread=40\nbssplit={BSSPLIT}\n"
            "random_distribution=zoned:50/5:30/15:20/80\nsize=1g\n")
    job = planner.plan(jobfile.parse_string(text), 2**31).jobs[0].workload
    ours = STIMULUS.workload()
    for key in ("rw", "read_fraction", "pattern", "block_bytes", "block_sizes", "distribution"):
        assert job[key] == ours[key], key


def test_every_round_sweeps_tc_and_qd_from_32x32_down_to_1x1(cbw: demand.DemandResult) -> None:
    r = cbw.rounds
    rounds = cbw.summary["steady_state"]["rounds_run"]
    assert len(r) == 49 * rounds
    first = r[r["round"] == 1]
    order = list(zip(first["threads"], first["queue_depth"]))
    assert order[0] == (32, 32) and order[-1] == (1, 1) and len(set(order)) == 49
    assert order == sorted(order, key=lambda p: (-p[0], -p[1]))
    assert (r["oio"] == r["threads"] * r["queue_depth"]).all()
    # a closed loop of TC × QD outstanding requests: Little's law, mean response × IOPS = OIO,
    # less the drain after the point's time (OIO requests finishing over ~OIO/IOPS seconds, half
    # of them outstanding on average): one thread's queue alone would give 1/TC of it
    little = r["mean_latency_us"] * 1e-6 * r["iops"] / r["oio"]
    drained = 1 - r["oio"] / r["iops"] / (2 * r["seconds"])
    assert ((little - drained).abs() < 0.06).all(), (little - drained).describe()


def test_requests_follow_the_composite_size_mix_and_the_40_60_mix(cbw: demand.DemandResult) -> None:
    r = cbw.rounds
    ios = r["read_ios"] + r["write_ios"]
    mean_size = (r["mb_s"] * 1e6 * r["seconds"]).sum() / ios.sum()
    expected = sum(b * p for b, p in BLOCK_SIZES) / 100
    assert mean_size == pytest.approx(expected, rel=0.01), (mean_size, expected)
    assert r["read_ios"].sum() / ios.sum() == pytest.approx(0.40, abs=0.01)


def test_the_verdict_is_the_rule_on_the_iops_at_the_highest_load(cbw: demand.DemandResult) -> None:
    ss = cbw.summary["steady_state"]
    top = cbw.rounds[(cbw.rounds["threads"] == 32) & (cbw.rounds["queue_depth"] == 32)].sort_values("round")
    series = top["iops"].tolist()
    again = steady.assess({sweep.TRACKING_KEY: series}, rounds_max=5)
    assert again is not None and again.steady == ss["steady"] and again.round == ss["window_rounds"][1]
    w = ss["tracking"][sweep.TRACKING_KEY]
    assert w["values"] == series[w["first_round"] - 1:w["last_round"]]


def test_histograms_at_the_max_mid_and_min_iops_points(cbw: demand.DemandResult) -> None:
    s = cbw.summary
    last = cbw.rounds[cbw.rounds["round"] == s["steady_state"]["window_rounds"][1]]
    pts = s["histogram_points"]
    under = last[last["mean_latency_us"] < sweep.ART_CEILING_US]
    best = under.loc[under["iops"].idxmax()]
    assert (pts["max"]["threads"], pts["max"]["queue_depth"]) == (best["threads"], best["queue_depth"])
    assert (pts["min"]["threads"], pts["min"]["queue_depth"]) == (1, 1)
    middle = (best["iops"] + last[(last["threads"] == 1) & (last["queue_depth"] == 1)]["iops"].iloc[0]) / 2
    assert abs(pts["mid"]["iops"] - middle) < abs(pts["max"]["iops"] - middle)
    for name, p in pts.items():
        rows = cbw.histograms[cbw.histograms["point"].str.startswith(f"{name} IOPS")]
        assert int(rows["count"].sum()) == p["responses"] > 0
        assert rows["cumulative_pct"].iloc[-1] == pytest.approx(100.0)
        # the histogram's 99.999th percentile is the core's own, to the bucket
        assert p["p99_999_from_histogram_us"] == pytest.approx(p["p99_999_latency_us"], rel=1e-3)
        assert p["mean_latency_us"] <= p["p99_999_from_histogram_us"] <= p["max_latency_us"] * 1.001


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "cbw", "--capacity", "1GiB", "--round-s", "0.2", "--rounds-max", "5", "--variant", "client",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "round  5:" in captured.err and "max IOPS" in captured.out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = demand.DemandResult.load(out)
    s = loaded.summary
    assert s["scenario"] == "pts-cbw" and s["write_cache"] == "enabled (WCE)" and s["active_range_pct"] == 75
    assert len(loaded.rounds) == 49 * s["steady_state"]["rounds_run"]
    assert set(loaded.charts()) == {n for n in FILES if n.endswith(".png")}
    assert hist.percentile_us([[1000, 1000, 1], [2000, 2001, 1]], 50) == 1.0


def test_bad_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, text in ((["--rounds-max", "4"], "from 5"), (["--round-s", "0"], "positive"),
                       (["--write-cache", "maybe"], "maybe"), (["--variant", "server"], "server")):
        status = main(["pts", "cbw", "-q", "--out", str(tmp_path / "o"), *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("ssdlab: error:") and len(err.splitlines()) == 1, (args, err)
        assert text in err, (args, err)
    assert not (tmp_path / "o").exists()
