"""``ssdlab sweep``: a run as a user makes it against a separately started ``dask scheduler`` with
two ``dask worker`` processes (loopback only, bounded, cleaned up), and the command's refusals
(in-process through `ssdlab.cli.main`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List

import pandas as pd
import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.sweep import execute

SPEC = """\
scenario = "consistency"
[base]
capacity = "2GiB"
duration = 30
[grid]
spare_area = [0, 25, 99.99999]
gc = ["greedy", "fifo"]
"""
START_TIMEOUT_S = 60


def _dask(*args: str) -> List[str]:
    return [sys.executable, "-m", "dask", *args]


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[str]:
    """A `dask scheduler` on 127.0.0.1 and a `dask worker` process with two worker processes."""
    info = tmp_path / "scheduler.json"
    logs = [open(tmp_path / name, "wb") for name in ("scheduler.log", "worker.log")]
    procs = []
    try:
        procs.append(subprocess.Popen(
            _dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(info)),
            stdout=logs[0], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp_path))
        deadline = time.monotonic() + START_TIMEOUT_S
        while not info.is_file() and time.monotonic() < deadline and procs[0].poll() is None:
            time.sleep(0.2)
        assert info.is_file(), (tmp_path / "scheduler.log").read_text()
        address = json.loads(info.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(subprocess.Popen(
            _dask("worker", address, "--host", "127.0.0.1", "--nworkers", "2", "--nthreads", "1", "--no-dashboard"),
            stdout=logs[1], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tmp_path))
        yield address
    finally:
        for proc in reversed(procs):
            _stop(proc)
        for log in logs:
            log.close()


def test_a_sweep_on_a_separately_started_scheduler_with_two_workers(scheduler: str, tmp_path: Path) -> None:
    spec = tmp_path / "study.toml"
    spec.write_text(SPEC, encoding="utf-8")
    # the workers join in their own time: wait for both, so the sweep is spread over the two
    from distributed import Client

    with Client(scheduler, timeout=START_TIMEOUT_S) as client:
        client.wait_for_workers(2, timeout=START_TIMEOUT_S)
    run = subprocess.run([sys.executable, "-m", "ssdlab", "sweep", str(spec), "--out", "study", "--scheduler", scheduler],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    assert run.stderr.startswith(
        f"ssdlab: sweep consistency: spare_area 3 x gc 2 (6 points); 6 to run on 2 workers at {scheduler}\n")
    assert "Traceback" not in run.stderr
    assert run.stdout.splitlines()[:2] == [
        "Results in study/: results.parquet, points/, charts/ (4 charts), report.html",
        f"  6 points: 4 with results, 2 failed; 6 run now in {run.stdout.split(' run now in ')[1].split(' s')[0]} s on "
        f"the Dask scheduler at {scheduler}, 0 done before",
    ]
    assert "  failed: spare area of 99.99999% leaves nothing to test on a drive of 2147483648 bytes " \
           "(spare_area=99.99999,gc=greedy, spare_area=99.99999,gc=fifo)" in run.stdout
    table = pd.read_parquet(tmp_path / "study" / "results.parquet")
    assert len(table) == 6 and table["error"].notna().sum() == 2
    # a point's numbers are those of a single run on this machine
    drive = ssdlab.load_preset("mlc-256").adjusted(gc_policy="fifo", capacity="2GiB")
    single = ssdlab.consistency(drive, spare_area_pct=25, duration_s=30, seed=1).summary
    row = table.set_index("point").loc["spare_area=25,gc=fifo"]
    for key in ("iops_clean", "iops_steady_mean", "iops_steady_min", "write_amplification", "host_write_bytes"):
        assert row[key] == single[key], key


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    return lines[0]


@pytest.mark.parametrize("text, message", [
    ('scenario = "consistency"\n[base]\nspare_aera = 5\n[grid]\ngc = ["fifo"]\n', "did you mean spare_area?"),
    ('scenario = "consistency"\n[grid]\ngc = []\n', "[grid] gc is an empty list"),
    ('scenario = "consistency"\n[grid]\ngc = ["lru"]\n', 'gc[0] = "lru": not a GC policy'),
])
def test_spec_mistakes_exit_2_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                message: str) -> None:
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out")]) == 2
    assert message in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "out").exists()


def test_option_mistakes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.toml").write_text(SPEC, encoding="utf-8")
    assert main(["sweep", str(tmp_path / "s.toml"), "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"]) == 2
    assert "with --scheduler the cluster's own workers run the points" in _one_error_line(capsys.readouterr().err)
    assert main(["sweep", str(tmp_path / "s.toml"), "--workers", "0"]) == 2
    assert "--workers" in _one_error_line(capsys.readouterr().err)
    assert main(["sweep", str(tmp_path / "nope.toml")]) == 2
    assert "no such file" in _one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists()


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(execute, "CONNECT_TIMEOUT_S", 2)
    (tmp_path / "s.toml").write_text(SPEC, encoding="utf-8")
    status = main(["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"),
                   "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert status == 2
    line = _one_error_line(capsys.readouterr().err)
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in line and "`dask scheduler`" in line
    assert not (tmp_path / "out").exists()
