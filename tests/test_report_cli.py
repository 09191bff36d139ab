"""``ssdlab report`` and ``ssdlab consistency --report``, run as a user runs them (a subprocess), on
made-up result directories and on real simulated runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from fixtures.report_runs import consistency_run, review_set
from ssdlab.report import build_report, load_runs
from ssdlab.scenarios.consistency_report import ConsistencyRun

SMALL = ["--capacity", "2GiB", "--duration", "20"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_report_writes_one_page_over_any_mix_of_runs(tmp_path):
    dirs = review_set(tmp_path / "runs")
    out = run("report", *map(str, dirs), "-o", "page.html", "--title", "My review", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Report in page.html"
    page = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "<title>My review</title>" in page and 'id="plot-hdtach"' in page


def test_report_into_a_directory_and_from_a_folder_of_runs(tmp_path):
    review_set(tmp_path / "runs")
    (tmp_path / "site").mkdir()
    out = run("report", "runs", "--out", "site", "-q", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""
    assert "Built from 8 result directories" in (tmp_path / "site" / "report.html").read_text(encoding="utf-8")


BAD: List[List[str]] = [
    ["nope", "-o", "r.html"],
    ["empty", "-o", "r.html"],
    ["broken", "-o", "r.html"],
    ["good", "-o", "a-file/r.html"],
    ["good"],
    ["-o", "r.html"],
]


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a))
def test_report_errors_are_one_line_and_status_2(tmp_path, args):
    consistency_run(tmp_path / "good")
    (tmp_path / "empty").mkdir()
    consistency_run(tmp_path / "broken")
    (tmp_path / "broken" / "iops.csv").unlink()
    (tmp_path / "a-file").write_text("x")
    out = run("report", *args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), out.stderr
    assert "Traceback" not in out.stderr
    if args[0] in ("nope", "empty", "broken"):
        assert args[0] in lines[0]
    assert not (tmp_path / "r.html").exists()


def test_consistency_report_flag_and_a_report_over_real_runs(tmp_path):
    drive_file = tmp_path / "other.toml"
    drive_file.write_text('name = "other"\n[ftl]\nop = 0.2\n')
    made = [
        ("a", []),
        ("b", ["--spare-area", "25"]),
        ("c", ["--drive-file", str(drive_file)]),
    ]
    for name, extra in made:
        out = run("consistency", *SMALL, *extra, "--out", name, "--report", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"Report in {Path(name) / 'report.html'}" in out.stdout
        assert (tmp_path / name / "report.html").stat().st_size > 1_000_000  # plotly.js is inline
    out = run("consistency", *SMALL, "--out", "quiet", "--report", "-q", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == "" and (tmp_path / "quiet" / "report.html").is_file()

    out = run("report", "a", "b", "c", "-o", "all.html", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = load_runs([tmp_path / n for n, _ in made])
    report = build_report(runs)
    log = report.charts()["consistency-log"]
    assert log.rows == [("Drive", ["mlc-256", "other"]), ("Spare area", ["Default", "25% Spare Area"])]
    assert log.keys == [(0, 0), (0, 1), (1, 0)]
    real = runs[1]
    assert isinstance(real, ConsistencyRun) and real.summary["device"] is None
    assert log.spec("mlc-256", "25% Spare Area")["data"][0]["customdata"] == real.iops
    assert len(real.iops) == 20
    assert [c.value for c in report.tables()["summary-consistency"].column("Steady WA")] == [
        r.summary["steady_write_amplification"] for r in runs
    ]


def test_report_flag_with_a_device_says_how_instead(tmp_path):
    out = run("consistency", "--device", str(tmp_path / "disk.img"), "--report", "--out", "o", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("ssdlab: error: --report is not available with --device")
    assert not (tmp_path / "o").exists() and not (tmp_path / "disk.img").exists()
