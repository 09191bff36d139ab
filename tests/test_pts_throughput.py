"""ssdlab pts throughput: PTS 2.0's throughput test on a small simulated drive (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.pts import steady
from ssdlab.scenarios.pts_throughput import BLOCK_SIZES, FILES, PtsThroughputResult, pts_throughput


@pytest.fixture(scope="module")
def mlc() -> PtsThroughputResult:
    return pts_throughput(ssdlab.load_preset("mlc-256").with_user_capacity("4GiB"), round_s=5)


def test_each_block_size_has_its_own_purge_wipc_and_steady_state(mlc: PtsThroughputResult) -> None:
    s = mlc.summary
    assert list(mlc.table["block_bytes"]) == list(BLOCK_SIZES) and s["steady"]
    for bs in BLOCK_SIZES:
        sub = s["block_sizes"][str(bs)]
        assert sub["wipc"]["block_bytes"] == bs and sub["wipc"]["bytes"] == 2 * s["user_capacity_bytes"]
        ss = sub["steady_state"]
        first, last = ss["window_rounds"]
        rows = mlc.rounds[(mlc.rounds["block_bytes"] == bs) & (mlc.rounds["read_pct"] == 0)].sort_values("round")
        assert len(rows) == ss["rounds_run"] and set(mlc.rounds[mlc.rounds["block_bytes"] == bs]["pattern"]) == \
            {"sequential"}
        w = steady.check_window(rows["mb_s"].tolist()[first - 1:last], first)
        assert w.steady and w.average == pytest.approx(sub["write_mb_s"])


def test_sequential_writes_run_at_the_wipc_s_speed(mlc: PtsThroughputResult) -> None:
    # the rounds' sequential writes are the WIPC's workload (same size, QD 32, a drive overwritten
    # in order, so GC finds whole invalid blocks): the same MB/s within 2 % of its second pass
    for bs in BLOCK_SIZES:
        sub = mlc.summary["block_sizes"][str(bs)]
        assert sub["write_mb_s"] == pytest.approx(sub["wipc"]["mb_s"][1], rel=0.02)


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "throughput", "--capacity", "1GiB", "--round-s", "0.5", "--out", str(out)]) == 0
    assert "write" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = PtsThroughputResult.load(out)
    assert len(loaded.table) == 2 and set(loaded.charts()) == {n for n in FILES if n.endswith(".png")}
    assert main(["pts", "throughput", "-q", "--out", str(tmp_path / "o"), "--rounds-max", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssdlab: error:") and len(err.splitlines()) == 1 and "from 5" in err
