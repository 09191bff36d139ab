"""ssdlab pts iops: PTS 2.0's IOPS test on small simulated drives (docs/pts.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import ssdlab
from ssdlab import scenarios
from ssdlab.cli import cli, main
from ssdlab.errors import SsdlabError
from ssdlab.pts import steady
from ssdlab.pts.rounds import Point, point_step
from ssdlab.scenarios.pts_iops import BLOCK_SIZES, FILES, MIXES, TRACKING, PtsIopsResult, points, pts_iops

CAPACITY = "4GiB"
ROUND_S = 5.0
"""Seconds per point: a twelfth of the spec's minute keeps a round at ~2 s of wall time here; at
4 GiB the drive reaches its steady state within the WIPC and the first round (its blocks are 16 × smaller)."""


def drive(op: float | None = None) -> ssdlab.DriveConfig:
    """mlc-256 at `CAPACITY`; with `op`, the same NAND at that over-provisioning (less user space)."""
    cfg = ssdlab.load_preset("mlc-256").with_user_capacity(CAPACITY)
    return cfg if op is None else cfg.with_op(op)


@pytest.fixture(scope="module")
def mlc() -> PtsIopsResult:
    # write-back, as the consistency test it is compared with runs (PTS-E's write-through pads every
    # 4 KiB write to a page: another drive, tested in test_pts_latency.py)
    return pts_iops(drive(), round_s=ROUND_S, write_cache="on")


def test_it_is_a_pts_subcommand_found_through_the_registry() -> None:
    entry = scenarios.get("pts-iops")
    assert entry is not None and entry.command_path == ("pts", "iops")
    assert cli.commands["pts"].commands["iops"].name == "iops"
    assert [o.key for o in entry.options] == ["variant", "rounds_max", "round_s", "active_range", "tc", "qd",
                                              "write_cache"]


def test_a_point_is_tc_threads_each_with_its_own_queue() -> None:
    step = point_step(Point(65, 65536), threads=4, queue_depth=32, span_bytes=2**30, seconds=60, seed=7)
    assert step["step"] == "run_together" and len(step["workloads"]) == 4
    assert {w["queue_depth"] for w in step["workloads"]} == {32}
    assert {(w["rw"], w["read_fraction"], w["block_bytes"], w["pattern"]) for w in step["workloads"]} == \
        {("mixed", 0.65, 65536, "random")}
    assert len({w["seed"] for w in step["workloads"]}) == 4  # every thread draws its own addresses
    assert {w["interval_ms"] for w in step["workloads"]} == {60_000}  # one interval per point, no series
    assert point_step(Point(100, 4096), threads=1, queue_depth=1, span_bytes=2**30, seconds=1, seed=1)[
        "workloads"][0]["rw"] == "read"
    # PTS's loop: mixes outside, block sizes inside, 56 points
    assert [(p.read_pct, p.block_bytes) for p in points()[:9]] == [(100, b) for b in BLOCK_SIZES] + [(95, 2**20)]
    assert len(points()) == 56


def test_the_iops_test_on_mlc_256_reaches_steady_state(mlc: PtsIopsResult) -> None:
    s = mlc.summary
    ss = s["steady_state"]
    assert s["scenario"] == "pts-iops" and s["spec"] == "PTS-E" and (s["threads"], s["queue_depth"]) == (4, 32)
    assert ss["steady"] and steady.WINDOW <= ss["rounds_run"] <= steady.ROUNDS_MAX
    first, last = ss["window_rounds"]
    assert (first, last) == (ss["rounds_run"] - 4, ss["rounds_run"])  # the test stops at the first steady round
    assert set(ss["tracking"]) == set(TRACKING)
    # the verdict is the rule applied to the rounds' own figures in rounds.csv
    rounds = mlc.rounds
    assert len(rounds) == 56 * ss["rounds_run"]
    for key, point in TRACKING.items():
        ys = rounds[(rounds["read_pct"] == point.read_pct) & (rounds["block_bytes"] == point.block_bytes)] \
            .sort_values("round")["iops"].tolist()
        assert len(ys) == ss["rounds_run"]
        w = steady.check_window(ys[first - 1:last], first)
        assert w.steady and w.average == pytest.approx(ss["tracking"][key]["average"], rel=1e-12)
    # and no earlier round was steady for all three
    assert not any(steady.assess({k: _track(rounds, p)[:r] for k, p in TRACKING.items()}) for r in range(5, last))
    # the table: 8 block sizes × 7 mixes, window averages; larger blocks give fewer IOPS in every mix
    t = mlc.table
    assert list(t["block_bytes"]) == list(BLOCK_SIZES) and len(t.columns) == 1 + len(MIXES)
    for mix in t.columns[1:]:
        by_size = dict(zip(t["block_bytes"], t[mix]))
        assert by_size[2**20] < by_size[65536] < by_size[8192], mix
    assert t.loc[t["block_bytes"] == 4096, "0/100"].item() == pytest.approx(ss["tracking"]["rnd_4k_0_100"]["average"])


def _track(rounds: pd.DataFrame, point: Point) -> list:
    rows = rounds[(rounds["read_pct"] == point.read_pct) & (rounds["block_bytes"] == point.block_bytes)]
    return rows.sort_values("round")["iops"].tolist()


def test_its_4k_random_write_average_agrees_with_the_consistency_test(mlc: PtsIopsResult) -> None:
    # Both measure the drive's write-bound steady state under uniform random 4 KiB writes over
    # every LBA: the same greedy-GC write amplification, so the same IOPS. The PTS point runs at
    # TC 4 x QD 32 (a write-bound drive's IOPS do not grow past the depth that keeps every die
    # busy) for 5 s after other sizes' writes, averaged over 5 rounds; the consistency test
    # averages its last 30 % of seconds at QD 32. 10 %: room for the 5-s points' scatter (the
    # steady state's seconds range from 0.75x to 1.3x the mean at this size), not for a drive
    # out of its steady state (the clean drive writes 66K IOPS, 8x).
    pts_avg = mlc.summary["steady_state"]["tracking"]["rnd_4k_0_100"]["average"]
    consistency = ssdlab.consistency(drive(), duration_s=600, seed=1).summary["iops_steady_mean"]
    assert pts_avg == pytest.approx(consistency, rel=0.10), (pts_avg, consistency)


def test_25_percent_spare_area_gives_higher_4k_write_iops(mlc: PtsIopsResult) -> None:
    # the same NAND with a quarter of the 7 %-OP drive's user capacity held back: physical/user - 1
    # = 1.0737 / 0.75 - 1 (the consistency test's --spare-area 25, as a drive with that OP)
    spare = pts_iops(drive(op=1.073741824 / 0.75 - 1), round_s=ROUND_S, rounds_max=steady.WINDOW, write_cache="on")
    base = mlc.summary["window_iops"]
    more = spare.summary["window_iops"]
    assert spare.summary["user_capacity_bytes"] < 0.76 * mlc.summary["user_capacity_bytes"]
    # greedy GC's write amplification falls from ~8 to ~1.9 (README): 4 KiB writes > 2.5x faster
    assert more["4096"]["0/100"] > 2.5 * base["4096"]["0/100"]
    assert more["65536"]["0/100"] > 2.5 * base["65536"]["0/100"]
    # reads do not depend on the spare area
    assert more["4096"]["100/0"] == pytest.approx(base["4096"]["100/0"], rel=0.1)


def test_same_seed_same_csv_bytes(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> Path:
        out = tmp_path / name
        pts_iops(ssdlab.load_preset("mlc-256").with_user_capacity(2**30), round_s=0.2, rounds_max=steady.WINDOW,
                 seed=seed).save(out)
        return out

    a, b, c = run(1, "a"), run(1, "b"), run(2, "c")
    for name in ("rounds.csv", "iops_table.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
        assert (a / name).read_bytes() != (c / name).read_bytes(), name
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    sa.pop("wall_seconds"), sb.pop("wall_seconds")
    assert sa == sb


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "iops", "--capacity", "1GiB", "--round-s", "0.2", "--rounds-max", "5", "--variant", "client",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "round  5:" in captured.err and "window average IOPS" in captured.out
    assert "deviation: points of 0.2 s instead of 60 s" in captured.out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = PtsIopsResult.load(out)
    s = loaded.summary
    assert s["variant"] == "client" and s["active_range_pct"] == 75 and (s["threads"], s["queue_depth"]) == (2, 16)
    assert s["active_bytes"] == int(2**30 * 0.75) // 2**20 * 2**20
    # the WIPC writes twice the user capacity over the 75 % range: two passes and two thirds of one
    assert s["wipc"]["bytes"] == 2 * 2**30 and s["wipc"]["passes"] == 3
    assert len(loaded.rounds) == 56 * s["steady_state"]["rounds_run"]
    assert set(loaded.charts()) == {n for n in FILES if n.endswith(".png")}


def test_bad_values_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args, text in ((["--rounds-max", "4"], "from 5"), (["--rounds-max", "101"], "to 100"),
                       (["--round-s", "0"], "positive"), (["--round-s", "4000"], "3600"),
                       (["--variant", "server"], "server"), (["--tc", "0"], "from 1 to 256"),
                       (["--qd", "0"], "from 1 to 65536"), (["--active-range", "0"], "above 0"),
                       (["--capacity", "1GiB", "--active-range", "0.01"], "holds no")):
        status = main(["pts", "iops", "-q", "--out", str(tmp_path / "o"), *args])
        err = capsys.readouterr().err
        assert status == 2 and err.startswith("ssdlab: error:") and len(err.splitlines()) == 1, (args, err)
        assert text in err, (args, err)
    assert not (tmp_path / "o").exists()
    with pytest.raises(SsdlabError, match="variant"):
        pts_iops("mlc-256", variant="server")
