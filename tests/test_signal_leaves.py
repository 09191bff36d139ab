"""What a signal leaves behind (docs/safety.md, "What a signal leaves behind"): Ctrl-C or SIGTERM
at any moment of a simulated run leaves either nothing (no result directory, no staging directory)
or the complete result; never a half-written one, and never a mix of two results in an existing
directory. The signals are sent over the whole run, late ones included (during the save)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ssdlab.scenarios.consistency_result import CONSISTENCY_FILES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SSDLAB = [sys.executable, "-m", "ssdlab"]
ARGS = ["consistency", "--capacity", "1GiB", "--duration", "30", "-q", "--report"]
FILES = {*CONSISTENCY_FILES, "report.html"}


def _run(out: Path, cwd: Path, delay: float, sig: int) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(SSDLAB + ARGS + ["--out", str(out)], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", err)


@pytest.fixture(scope="module")
def run_seconds(tmp_path_factory: pytest.TempPathFactory) -> float:
    """How long the whole run takes here, so the signals can be spread over all of it."""
    tmp = tmp_path_factory.mktemp("timing")
    start = time.monotonic()
    done = subprocess.run(SSDLAB + ARGS + ["--out", "o"], cwd=tmp, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return time.monotonic() - start


@pytest.mark.parametrize("share", [0.15, 0.5, 0.8, 0.9, 0.95, 1.0])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_leaves_the_complete_result_or_nothing(tmp_path: Path, run_seconds: float, share: float,
                                                        sig: int) -> None:
    done = _run(tmp_path / "o", tmp_path, share * run_seconds, sig)
    left = sorted(os.listdir(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    if (tmp_path / "o").exists():
        assert left == ["o"]
        assert FILES <= set(os.listdir(tmp_path / "o"))
        assert json.loads((tmp_path / "o" / "summary.json").read_text())["duration_s"] == 30
    else:
        assert left == [], left  # no staging directory either
        assert done.returncode in (130, 143, -sig), done.stderr
        if done.returncode > 0:
            want = "ssdlab: interrupted" if sig == signal.SIGINT else "ssdlab: terminated"
            assert done.stderr.strip().splitlines() == [want]


@pytest.mark.parametrize("share", [0.8, 0.9, 0.95, 1.0])
def test_a_signal_never_mixes_two_results(tmp_path: Path, run_seconds: float, share: float) -> None:
    """Into an existing result of the same scenario: afterwards the directory holds the old result
    whole or the new one whole (their summaries differ by seed)."""
    out = tmp_path / "o"
    first = subprocess.run(SSDLAB + ARGS + ["--out", str(out), "--seed", "1"], capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0, first.stderr
    old = {name: (out / name).read_bytes() for name in ("iops.csv", "series.csv")}
    args = ARGS + ["--out", str(out), "--seed", "2"]
    proc = subprocess.Popen(SSDLAB + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=share * run_seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    assert sorted(os.listdir(tmp_path)) == ["o"]
    seed = json.loads((out / "summary.json").read_text())["seed"]
    now = {name: (out / name).read_bytes() for name in ("iops.csv", "series.csv")}
    if seed == 1:
        assert now == old
    else:
        assert seed == 2 and now["iops.csv"] != old["iops.csv"]


def test_a_signal_during_the_commit_is_held_until_the_result_is_whole(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic twin of the test above: SIGINT arrives while the second file moves in; the
    commit finishes, then the interrupt is delivered."""
    from ssdlab import results

    out = tmp_path / "o"
    out.mkdir()
    for name, text in (("iops.csv", "old"), ("series.csv", "old"), ("summary.json", '{"scenario": "consistency"}')):
        (out / name).write_text(text)
    stage = results.ResultStage(out)
    for name, text in (("iops.csv", "new"), ("series.csv", "new"), ("summary.json", '{"scenario": "consistency"}')):
        (stage.path / name).write_text(text)
    real_replace = os.replace
    calls = []

    def replace(src: object, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the signal arrives (and its handler would run) before the next move
        real_replace(src, dst)

    monkeypatch.setattr(results.os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        stage.commit()
    assert len(calls) == 3
    assert (out / "iops.csv").read_text() == "new" and (out / "series.csv").read_text() == "new"
    assert sorted(os.listdir(tmp_path)) == ["o"]


_MANGLED = """
import os, signal, sys
import matplotlib.figure
from ssdlab import cli

real = matplotlib.figure.Figure.savefig
def savefig(self, *args, **kwargs):
    # what matplotlib's renderer did with a SIGTERM while it drew (seen in CI): the handler's
    # exception raised inside its C++ code came out as "ValueError: Invalid bounding box"
    if {send}:
        try:
            os.kill(os.getpid(), {sig})
        except KeyboardInterrupt:
            pass
    raise ValueError("Invalid bounding box")
matplotlib.figure.Figure.savefig = savefig
sys.exit(cli.main({args!r}))
"""


@pytest.mark.parametrize("sig,status,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_a_library_turns_into_another_exception_is_still_one_line(tmp_path: Path, sig: int, status: int,
                                                                           word: str) -> None:
    """Deterministic: the signal's exception comes out of the chart's drawing as a ValueError. The
    run stops as for the signal (one line, 130 / 143, no result directory); the same ValueError
    with no signal is a bug and stays a traceback."""
    args = ["consistency", "--capacity", "1GiB", "--duration", "5", "-q", "--out", str(tmp_path / "o")]
    for send in (True, False):
        code = _MANGLED.format(send=send, sig=int(sig), args=args)
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        if send:
            assert (done.returncode, done.stderr) == (status, f"ssdlab: {word}\n")
        else:
            assert done.returncode == 1 and "ValueError: Invalid bounding box" in done.stderr, done.stderr
        assert os.listdir(tmp_path) == [], os.listdir(tmp_path)
