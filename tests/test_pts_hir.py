"""ssdlab pts hir: PTS's host idle recovery test on simulated drives (docs/pts.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.scenarios.pts_hir import FILES, WAIT_STATES, PtsHirResult, pts_hir, wait_state_steps

SEGMENTS = 10


def hir(preset: str) -> PtsHirResult:
    # the write cache on (PTS-E asks for it off): idle GC's recovery is a property of the GC, measured
    # as calibrated, with write-back; with PTS-E's write-through each 4 KiB write programs its own
    # padded page, and that, not GC, bounds the writes (docs/pts.md, HIR)
    return pts_hir(ssdlab.load_preset(preset).with_user_capacity("16GiB"), segments=SEGMENTS, round_s=10,
                   write_cache="on")


@pytest.fixture(scope="module")
def runs() -> dict:
    return {p: hir(p) for p in ("idle-gc", "no-idle-gc")}


def test_a_wait_state_is_write_slices_with_idle_gaps_then_continuous_writes() -> None:
    steps = wait_state_steps(25, segments=3, slice_s=5, threads=4, depth=32, span=2**30, seed=1)
    assert [s["step"] for s in steps] == ["run_together", "idle"] * 3 + ["run_together"]
    assert {s["seconds"] for s in steps if s["step"] == "idle"} == {25}
    assert {w["duration_s"] for w in steps[0]["workloads"]} == {5} and len(steps[0]["workloads"]) == 4
    assert {w["duration_s"] for w in steps[-1]["workloads"]} == {15}  # 3 slices of continuous writes
    assert {w["interval_ms"] for w in steps[-1]["workloads"]} == {5000}


def test_idle_gc_recovers_more_than_no_idle_gc(runs: dict) -> None:
    idle, none = (runs[p].summary for p in ("idle-gc", "no-idle-gc"))
    for s in (idle, none):
        assert s["steady_state"]["steady"] and [w["wait_s"] for w in s["wait_states"]] == list(WAIT_STATES)
    by_wait = {p: {w["wait_s"]: w for w in runs[p].summary["wait_states"]} for p in runs}
    # idle-gc starts cleaning after 10 s of idle: 50-s gaps give it 40 s of idle GC per slice, and
    # its slices then write well above its steady state; no-idle-gc's stay below it
    assert by_wait["idle-gc"][50]["wait_vs_steady"] > 1.2
    assert by_wait["no-idle-gc"][50]["wait_vs_steady"] < 0.8
    assert by_wait["idle-gc"][50]["wait_iops"] > 2 * by_wait["no-idle-gc"][50]["wait_iops"]
    # a 5-s gap is shorter than idle-gc's delay: both drives do the same (nothing) while idle
    assert by_wait["idle-gc"][5]["wait_iops"] == pytest.approx(by_wait["no-idle-gc"][5]["wait_iops"], rel=0.15)
    slices = runs["idle-gc"].slices
    assert len(slices[slices["phase"] == "wait"]) == SEGMENTS * len(WAIT_STATES)
    assert len(slices[slices["phase"] == "baseline"]) == SEGMENTS * len(WAIT_STATES)


@pytest.mark.parametrize("variant", ["enterprise", "client"])
def test_idle_gc_recovers_more_than_no_idle_gc_in_either_variant(variant: str) -> None:
    # Each variant as PTS has it: PTS-E with the write cache off (write-through), PTS-C with it on.
    # Under write-through idle-gc's slices after 50-s gaps fell to 0.55 x its steady state (8 GiB, 10
    # segments; 0.87 x with 5), below no-idle-gc's 0.63 x: its idle rewrites piled the data onto the
    # dies that were free first, leaving the host's writes one or two dies under dynamic striping's
    # cap, and ran on past the host's return (docs/pts.md, HIR)
    runs = {p: pts_hir(ssdlab.load_preset(p).with_user_capacity("8GiB"), variant=variant, segments=5, round_s=10)
            for p in ("idle-gc", "no-idle-gc")}
    at50 = {p: next(w for w in r.summary["wait_states"] if w["wait_s"] == 50) for p, r in runs.items()}
    assert runs["idle-gc"].summary["write_cache"] == ("disabled (WCD)" if variant == "enterprise" else
                                                     "enabled (WCE)")
    assert at50["idle-gc"]["wait_vs_steady"] > 1.2
    assert at50["idle-gc"]["wait_vs_steady"] > 1.4 * at50["no-idle-gc"]["wait_vs_steady"]
    assert at50["idle-gc"]["wait_iops"] > 1.4 * at50["no-idle-gc"]["wait_iops"]


def test_the_command_saves_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["pts", "hir", "--capacity", "1GiB", "--segments", "2", "--round-s", "1", "--out", str(out)]) == 0
    assert "return to baseline" in capsys.readouterr().out
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    loaded = PtsHirResult.load(out)
    assert len(loaded.slices) == 2 * 2 * len(WAIT_STATES) and set(loaded.charts()) == {"hir.png"}
    assert main(["pts", "hir", "-q", "--out", str(tmp_path / "o"), "--segments", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssdlab: error:") and len(err.splitlines()) == 1 and "from 1" in err
