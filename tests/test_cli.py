"""The command line, run as a user runs it: in a subprocess, through ``python -m ssdlab`` and the
installed console script."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest

import ssdlab
from ssdlab.scenarios.consistency_result import CONSISTENCY_FILES

SMALL = ["--capacity", "2GiB"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ssdlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_console_script_is_installed(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("ssdlab")
    if not script.exists():
        pytest.skip("the ssdlab console script is not installed next to this Python")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"ssdlab {ssdlab.__version__}"


def test_version_and_help(tmp_path: Path) -> None:
    assert run("--version", cwd=tmp_path).stdout.strip() == f"ssdlab {ssdlab.__version__}"
    help_text = run("consistency", "--help", cwd=tmp_path)
    assert help_text.returncode == 0
    for option in ("--drive", "--drive-file", "--capacity", "--op", "--spare-area", "--gc", "--qd", "--duration",
                   "--block-size", "--seed", "--out", "--quiet"):
        assert option in help_text.stdout
    assert "[default: 2000]" in help_text.stdout
    assert run(cwd=tmp_path).returncode == 0  # no command: the help


def test_drives(tmp_path: Path) -> None:
    out = run("drives", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:8] == ["NAME", "USER", "PHYSICAL", "OP", "%", "EFF", "%", "DIES"]
    row = next(line for line in lines if line.startswith("mlc-256"))
    assert "256 GB" in row and "256 GiB" in row and "7.37" in row and "greedy" in row and "on-demand" in row
    # the effective spare: the op less the expected bad blocks, the GC's pool and the open blocks
    eff = float(row.split()[6])
    assert eff == pytest.approx(100 * ssdlab.load_preset("mlc-256").spare()["effective_spare_factor"], abs=0.006)
    assert 6.0 < eff < 7.37
    assert len(lines) == 1 + len(ssdlab.preset_names())


def test_consistency_writes_the_six_files(tmp_path: Path) -> None:
    out = run("consistency", *SMALL, "--duration", "30", "--out", "tmp", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert {p.name for p in (tmp_path / "tmp").iterdir()} == set(CONSISTENCY_FILES)
    assert "tmp" in out.stdout
    for figure in ("clean IOPS", "steady IOPS", "write ampl.", "latency p99"):
        assert figure in out.stdout
    assert "Traceback" not in out.stderr
    result = ssdlab.ConsistencyResult.load(tmp_path / "tmp")
    assert len(result.iops) == 30 and result.summary["user_capacity_bytes"] == 2 * 2**30


def test_consistency_options_reach_the_summary(tmp_path: Path) -> None:
    drive_file = tmp_path / "mine.toml"
    drive_file.write_text('name = "mine"\n[ftl]\nop = 0.2\n')
    out = run(
        "consistency", "--drive-file", str(drive_file), *SMALL, "--gc", "fifo", "--spare-area", "10",
        "--qd", "8", "--duration", "12", "--block-size", "8k", "--seed", "7", "--out", "o", "--quiet",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""
    s = ssdlab.ConsistencyResult.load(tmp_path / "o").summary
    assert (s["drive"], s["gc_policy"], s["spare_area_pct"], s["qd"], s["duration_s"], s["block_size"], s["seed"]) == (
        "mine", "fifo", 10.0, 8, 12.0, 8192, 7
    )
    assert s["op"] == pytest.approx(0.2, abs=0.01)


def test_op_keeps_the_nand(tmp_path: Path) -> None:
    out = run("consistency", *SMALL, "--op", "0.28", "--duration", "3", "--out", "o", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    s = ssdlab.ConsistencyResult.load(tmp_path / "o").summary
    assert s["op"] == pytest.approx(0.28, abs=0.005)  # capacity scaling rounds blocks per plane up


def test_default_out_dir(tmp_path: Path) -> None:
    out = run("consistency", *SMALL, "--duration", "2", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    (made,) = (tmp_path / "runs").iterdir()
    assert made.name.startswith("consistency-mlc-256-")


BAD_INPUTS: List[List[str]] = [
    ["--capacity", "-5GiB"],
    ["--capacity", "1e30"],
    ["--capacity", "abc"],
    ["--capacity", "99999PB"],
    ["--capacity", "100TB"],
    ["--capacity", "0"],
    ["--capacity", "256MiB"],
    ["--op", "0"],
    ["--op", "-0.1"],
    ["--op", "0.0001"],
    ["--op", "many"],
    ["--op", "nan"],
    ["--drive", "nope"],
    ["--drive", "mlc-256", "--drive-file", "x.toml"],
    ["--drive-file", "missing.toml"],
    ["--gc", "lru"],
    ["--spare-area", "100"],
    ["--spare-area", "150"],
    ["--spare-area", "-1"],
    ["--qd", "0"],
    ["--qd", "-3"],
    ["--qd", "lots"],
    ["--duration", "0"],
    ["--duration", "-10"],
    ["--duration", "inf"],
    ["--block-size", "1000"],
    ["--block-size", "-4k"],
    ["--seed", "-1"],
    ["--out", "a-file"],
    ["--out", "a-file/sub"],
    ["--out", "/proc/ssdlab-x"],
    ["--no-such-option"],
]


@pytest.mark.parametrize("bad", BAD_INPUTS, ids=lambda a: " ".join(a))
def test_bad_input_is_one_line_and_status_2(tmp_path: Path, bad: List[str]) -> None:
    (tmp_path / "a-file").write_text("x")
    out = run("consistency", *SMALL, "--duration", "5", *(["--out", "o"] if "--out" not in bad else []), *bad,
              cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("ssdlab: error: ")
    assert "Traceback" not in out.stderr and "Usage:" not in out.stderr
    assert out.stdout == ""
    assert {p.name for p in tmp_path.iterdir()} <= {"a-file"}  # nothing written


def test_unknown_command(tmp_path: Path) -> None:
    out = run("consistensy", cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("ssdlab: error: No such command")
    assert len(out.stderr.splitlines()) == 1


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_exits_130_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssdlab", "consistency", "--duration", "2000", "--out", "o"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        header = proc.stderr.readline()  # printed once the simulation has started
        assert header.startswith("ssdlab: mlc-256")
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert err.splitlines() == ["ssdlab: interrupted"]
    assert not (tmp_path / "o").exists()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("digits", [400, 5000])
def test_a_huge_numeral_quoted_back_stays_a_short_line(tmp_path: Path, digits: int) -> None:
    """A drive file or a sweep spec holding a huge number is refused in one line that names the
    number's length instead of repeating thousands of digits."""
    preset = (Path(__file__).resolve().parent.parent / "configs" / "drives" / "mlc-256.toml").read_text()
    big = "9" * digits
    drive = tmp_path / "big.toml"
    drive.write_text("\n".join(f"channels = {big}" if line.startswith("channels =") else line
                               for line in preset.splitlines()) + "\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'scenario = "consistency"\n[base]\ncapacity = {big}\n[grid]\nseed = [1, 2]\n')
    for args in (["consistency", "--drive-file", str(drive), "-q"], ["sweep", str(spec), "--out", "o"]):
        out = run(*args, cwd=tmp_path)
        assert out.returncode == 2 and out.stderr.startswith("ssdlab: error:"), out.stderr
        assert len(out.stderr.splitlines()) == 1 and len(out.stderr) < 400, out.stderr
        assert "digits" in out.stderr or "characters" in out.stderr, out.stderr
