"""ssdlab span: random 4 KiB IOPS against the test span (scenarios/span.py), on the DRAM-less
presets and their DRAM twins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ssdlab
from ssdlab import scenarios
from ssdlab.cli import cli, main
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.report import build_report, load_runs
from ssdlab.scenarios.span import FILES, SpanResult, coverage_bytes, span_test, spans_of

GIB = 2**30
QUICK = {"min_span": 256 * 2**20, "seconds": 0.5, "warmup": 0.3}


def _twin(cfg: DriveConfig) -> DriveConfig:
    data = cfg.to_dict()
    data["ftl"].pop("map_cache", None)
    return DriveConfig.from_dict(data)


@pytest.fixture(scope="module")
def sata() -> DriveConfig:
    return ssdlab.load_preset("dramless-sata").with_user_capacity(4 * GIB)


@pytest.fixture(scope="module")
def runs(sata: DriveConfig) -> tuple[SpanResult, SpanResult]:
    return span_test(sata, writes=False, **QUICK), span_test(_twin(sata), writes=False, **QUICK)


def test_it_is_found_through_the_registry() -> None:
    entry = scenarios.get("span")
    assert entry is not None and "span" in cli.commands
    assert [o.key for o in entry.options] == ["hmb_mb", "min_span", "seconds", "warmup", "writes"]


def test_the_spans_double_to_the_whole_drive() -> None:
    assert spans_of(4 * GIB, GIB // 4) == [GIB // 4, GIB // 2, GIB, 2 * GIB, 4 * GIB]
    assert spans_of(3 * 10**9, 10**9) == [999_997_440, 1_999_998_976, 2_999_996_416]
    with pytest.raises(SsdlabError, match="at least 1 MiB"):
        spans_of(GIB, 4096)


def test_the_knee_is_where_the_sram_coverage_ends(runs: tuple[SpanResult, SpanResult], sata: DriveConfig) -> None:
    dl, dram = runs
    # 1024 KiB of SRAM / 4 bytes per entry x 4 KiB per entry = 1 GiB.
    assert coverage_bytes(sata) == {"sram": GIB, "total": GIB}
    assert dl.summary["knee_span_bytes"] == GIB
    assert dram.summary["knee_span_bytes"] == 4 * GIB, "the DRAM twin is flat"
    fast, slow = dl.iops("read", 1), dram.iops("read", 1)
    for span, a, b in zip(dl.summary["spans"], fast, slow):
        if span <= GIB:
            assert a == pytest.approx(b, rel=0.01)
        else:
            assert a < 0.85 * b
    reads = dl.curve[(dl.curve["rw"] == "read") & (dl.curve["qd"] == 1)].sort_values("span_bytes")
    # Beyond the coverage the misses read translation pages: the miss ratio 1 - 1 GiB / span.
    for span, per in zip(reads["span_bytes"], reads["map_reads_per_io"]):
        assert per == pytest.approx(max(0.0, 1 - GIB / span), abs=0.04)
    assert (dram.curve["map_reads_per_io"] == 0).all()


def test_hmb_mb_switches_the_hmb_and_is_refused_for_a_drive_with_dram() -> None:
    hmb = ssdlab.load_preset("dramless-hmb").with_user_capacity(8 * GIB)
    on = span_test(hmb, hmb_mb=2, writes=False, **QUICK)
    off = span_test(hmb, hmb_mb=0, writes=False, **QUICK)
    assert on.summary["hmb_mib"] == 2 and off.summary["hmb_mib"] == 0
    # SRAM 1 GiB; + 2 MiB of HMB = 128 translation pages of 16 MiB: 3 GiB.
    assert on.summary["coverage_bytes"] == {"sram": GIB, "total": 3 * GIB}
    assert off.summary["knee_span_bytes"] == GIB
    assert on.summary["knee_span_bytes"] == 2 * GIB  # the last doubling within 3 GiB
    with pytest.raises(SsdlabError, match="DRAM-less"):
        span_test(ssdlab.load_preset("mlc-256").with_user_capacity(GIB), hmb_mb=0)


def test_the_command_writes_its_files_and_refuses_hmb_on_a_dram_drive(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    code = main(["span", "--drive", "dramless-sata", "--capacity", "2GiB", "--min-span", "512MiB", "--seconds",
                 "0.3", "--warmup", "0.2", "--out", str(out), "-q"])
    assert code in (0, None)
    assert sorted(p.name for p in out.iterdir() if p.name in FILES) == sorted(FILES)
    s = json.loads((out / "summary.json").read_text())
    assert s["scenario"] == "span" and s["knee_span_bytes"] == GIB
    back = SpanResult.load(out)
    assert len(back.curve) == 4 * 3  # four modes x three spans
    assert (out / "span.png").read_bytes()[:4] == b"\x89PNG"
    report = build_report(load_runs([out]))
    assert [sec.id for sec in report.sections] == ["span"]
    bad = tmp_path / "bad"
    code = main(["span", "--drive", "mlc-256", "--capacity", "1GiB", "--hmb-mb", "0", "--out", str(bad), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("ssdlab: error: ") and "DRAM-less" in err and err.count("\n") == 1
    assert not bad.exists()


def test_a_sweep_varies_the_hmb(tmp_path: Path) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "span"\n[base]\ndrive = "dramless-hmb"\ncapacity = "4GiB"\nmin_span = "512MiB"\n'
                    'seconds = 0.3\nwarmup = 0.2\nwrites = false\n[grid]\nhmb_mb = [0, 2]\n')
    result = ssdlab.sweep(spec, tmp_path / "out", workers=1, progress=False)
    table = result.table.sort_values("hmb_mb")
    assert table["error"].isna().all()
    # HMB off: fast to the SRAM's 1 GiB; 2 MiB of HMB maps 2 GiB more (the last doubling: 2 GiB).
    assert table["knee_span_bytes"].tolist() == [GIB, 2 * GIB]
