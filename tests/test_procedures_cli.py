"""``ssdlab hdtach``, ``torture``, ``used-vs-new`` and ``wa``: one run as a user runs it (a
subprocess, with --report), the rest in-process through `ssdlab.cli.main` (the same code path,
without an interpreter start per case)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.scenarios.hdtach import FILES as HDTACH_FILES
from ssdlab.scenarios.used_vs_new import FILES as USED_VS_NEW_FILES
from ssdlab.scenarios.wa import FILES as WA_FILES

SMALL = ["--capacity", "8GiB"]
TINY_TOML = """name = "tiny"
[geometry]
channels = 1
dies_per_channel = 1
planes_per_die = 1
blocks_per_plane = 100
pages_per_block = 8
page_bytes = 4096
"""


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_torture_as_a_user_runs_it_with_a_report(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ssdlab", "torture", "--drive", "no-idle-gc", *SMALL, "--torture-minutes", "5",
         "--idle-minutes", "5", "--no-pass-after-torture", "--then", "pass,idle:2", "--out", "t", "--report"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("ssdlab: no-idle-gc, 8 GiB user") and "Traceback" not in out.stderr
    assert {p.name for p in (tmp_path / "t").iterdir()} == {*HDTACH_FILES, "report.html"}
    for line in ("clean", "after 5 min torture, 5 min idle", "after 5 min torture, 5 min idle, pass", "after TRIM",
                 "% of clean", "torture WA"):
        assert line in out.stdout
    page = (tmp_path / "t" / "report.html").read_text(encoding="utf-8")
    assert 'id="plot-hdtach"' in page
    s = json.loads((tmp_path / "t" / "summary.json").read_text(encoding="utf-8"))
    assert (s["scenario"], s["drive"], s["then"]) == ("torture", "no-idle-gc", ["pass", "idle:2"])
    assert s["pass_after_torture"] is False
    assert len(s["passes"]) == 4


def test_hdtach(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hdtach", *SMALL, "--torture-minutes", "5", "--seed", "3", "--out", "h"]) == 0
    out = capsys.readouterr()
    assert "after 5 min torture" in out.out and "avg MB/s" in out.out
    result = ssdlab.HdtachResult.load(in_tmp / "h")
    assert (result.summary["seed"], result.summary["torture_minutes"]) == (3, 5)
    assert len(result.passes) == 400


def test_used_vs_new(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["used-vs-new", *SMALL, "--test-span", "1GiB", "--duration", "120", "--qd", "4", "--os-pct", "10",
                 "--out", "u"]) == 0
    out = capsys.readouterr().out
    for state in ("clean", "used", "used after TRIM", "IOPS", "% of clean"):
        assert state in out
    assert {p.name for p in (in_tmp / "u").iterdir()} == set(USED_VS_NEW_FILES)
    s = ssdlab.UsedVsNewResult.load(in_tmp / "u").summary
    assert (s["test_span_bytes"], s["duration_s"], s["queue_depth"], s["os_pct"]) == (2**30, 120, 4, 10)


def test_wa_with_a_note_and_quiet(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wa", "--drive", "compressing", *SMALL, "--torture-minutes", "5", "--compressibility", "0.3",
                 "--out", "w"]) == 0
    out = capsys.readouterr().out
    assert "true WA" in out and "speed-ratio estimate" in out and "note: The drive compresses" in out
    assert {p.name for p in (in_tmp / "w").iterdir()} == set(WA_FILES)
    assert main(["wa", *SMALL, "--torture-minutes", "1", "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    (made,) = (in_tmp / "runs").iterdir()
    assert made.name.startswith("wa-mlc-256-")


BAD: List[List[str]] = [
    ["torture", "--then", "idle"],
    ["torture", "--then", "pass,idle:-5"],
    ["torture", "--then", "sleep:5"],
    ["torture", "--torture-minutes", "-5"],
    ["torture", "--idle-minutes", "-1"],
    ["torture", "--drive-file", "tiny.toml"],
    ["torture", "--compressibility", "0"],
    ["torture", "--trim", "--no-such-option"],
    ["hdtach", "--drive-file", "tiny.toml"],
    ["hdtach", "--torture-minutes", "-1"],
    ["hdtach", "--compressibility", "1.5"],
    ["hdtach", "--drive", "nope"],
    ["hdtach", "--yes-destroy-data"],
    ["hdtach", "--device", "f.img", "--drive", "idle-gc"],
    ["torture", "--device", "f.img", "--compressibility", "0.5"],
    ["wa", "--compressibility", "-0.3"],
    ["wa", "--compressibility", "nan"],
    ["wa", "--torture-minutes", "0"],
    ["wa", "--gc", "lru"],
    ["wa", "--seed", "-1"],
    ["used-vs-new", "--test-span", "100GB"],
    ["used-vs-new", "--test-span", "0"],
    ["used-vs-new", "--duration", "0"],
    ["used-vs-new", "--qd", "0"],
    ["used-vs-new", "--os-pct", "90"],
    ["used-vs-new", "--out", "a-file"],
    ["used-vs-new", "--out", "a-file/sub"],
    ["used-vs-new", "--out", "/proc/ssdlab-x"],
]


@pytest.mark.parametrize("bad", BAD, ids=lambda a: " ".join(a))
def test_bad_input_is_one_line_and_status_2(in_tmp: Path, capsys: pytest.CaptureFixture[str], bad: List[str]) -> None:
    (in_tmp / "a-file").write_text("x")
    (in_tmp / "tiny.toml").write_text(TINY_TOML)
    before = {p.name for p in in_tmp.iterdir()}
    size = [] if "--drive-file" in bad or "--device" in bad else SMALL
    args = [*bad, *size, *([] if "--out" in bad else ["--out", "o"])]
    assert main(args) == 2
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("ssdlab: error: ") and "Traceback" not in out.err and "Usage:" not in out.err
    assert out.out == ""
    assert {p.name for p in in_tmp.iterdir()} == before  # nothing written


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")
def test_hdtach_on_a_file_through_fio(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hdtach", "--device", "disk.img", "--capacity", "32MiB", "--out", "d", "--report"]) == 0
    out = capsys.readouterr()
    assert "clean" in out.out and "through fio" in out.err
    assert {*HDTACH_FILES, "report.html", "fio"} <= {p.name for p in (in_tmp / "d").iterdir()}
    result = ssdlab.HdtachResult.load(in_tmp / "d")
    s = result.summary
    assert (s["device"], s["seed"], s["scenario"]) == ("disk.img", None, "hdtach")
    assert result.summary["label"] == "disk.img · HD Tach"
    assert len(result.passes) == 200
    # the file now exists: overwriting it needs --yes-destroy-data, as for `consistency --device`
    assert main(["hdtach", "--device", "disk.img", "--out", "d2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ssdlab: error: ") and "--yes-destroy-data" in err and len(err.splitlines()) == 1
    assert not (in_tmp / "d2").exists()
    assert main(["hdtach", "--device", "disk.img", "--yes-destroy-data", "--out", "d2", "--quiet"]) == 0
