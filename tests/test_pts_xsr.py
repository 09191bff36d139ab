"""ssdlab pts xsr: PTS's cross-stimulus recovery test on simulated drives (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.scenarios.pts_xsr import FILES, PtsXsrResult, pts_xsr


@pytest.fixture(scope="module")
def tlc() -> PtsXsrResult:
    # 64 GB of the 1 TB TLC design, 1-minute groups in 1-s samples: the SLC cache (a third of the
    # free space, ~21 GB) lasts the first seconds of group 1
    return pts_xsr(ssdlab.load_preset("tlc-dynamic-cache").with_user_capacity("64GB"), phase_minutes="1,1,1",
                   sample_s=1)


def test_xsr_on_tlc_dynamic_cache_shows_the_cache(tlc: PtsXsrResult) -> None:
    g1 = tlc.samples[tlc.samples["group"] == 1]["mb_s"].tolist()
    # README: 4.0 GB/s into the cache, 1.5 GB/s while folding, 2.0 GB/s native
    assert g1[0] > 3500 and max(g1[:3]) > 1.8 * g1[-1]
    assert 1300 < min(g1) < 1700 and 1700 < g1[-1] < 2200


def test_random_writes_slow_the_sequential_writes_after_them(tlc: PtsXsrResult) -> None:
    s = tlc.summary
    groups = {g["group"]: g for g in s["groups"]}
    third = tlc.samples[tlc.samples["group"] == 3]["mb_s"].tolist()
    # the random 8 KiB writes leave the drive fragmented: sequential writes after them start far
    # below group 1's average and climb back as GC frees whole blocks
    assert third[0] < 0.5 * s["recovery"]["target_mb_s"] and third[-1] > 1.3 * third[0]
    assert groups[2]["mb_s"] < groups[1]["mb_s"] / 3
    assert s["recovery"]["seconds"] is None or s["recovery"]["seconds"] > 0
    assert list(tlc.samples["group"].unique()) == [1, 2, 3]


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "xsr", "--capacity", "1GiB", "--phase-minutes", "0.1,0.1,0.2", "--sample-s", "1", "--out",
                 str(out)]) == 0
    assert "recovery:" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = PtsXsrResult.load(out)
    assert set(loaded.samples["group"]) == {1, 2, 3} and set(loaded.charts()) == {"xsr.png"}
    for args, text in ((["--phase-minutes", "1,2"], "three durations"), (["--sample-s", "0"], "positive")):
        assert main(["pts", "xsr", "-q", "--out", str(tmp_path / "o"), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("ssdlab: error:") and len(err.splitlines()) == 1 and text in err, err


def test_each_sample_has_its_own_maximum_response_time(tlc: PtsXsrResult) -> None:
    # PTS's MRT per sample: the core's series keeps each interval's longest response
    s = tlc.samples
    assert s["max_latency_us"].notna().all()
    assert (s["max_latency_us"] >= s["mean_latency_us"] * (1 - 1e-9)).all()
    for g in tlc.summary["groups"]:
        mine = s[s["group"] == g["group"]]
        # the group's MRT is the largest response of the group (its drain after the last sample too)
        assert mine["max_latency_us"].max() <= g["mrt_us"] * (1 + 1e-9)
        assert mine["max_latency_us"].nunique() > len(mine) // 2  # each sample its own, not the group's
    assert not any("MRT per access group" in d for d in tlc.summary["deviations"])
