"""Real-device safety under injected option values (issue 12): on files and loop devices, a run
with a bad value is refused in one line with exit 2 before anything is written, and no byte
outside the named target changes -- checked by checksums of the target's neighbours (the other
files in its directory, and another loop device), the target itself, and the directory listing.
Interrupted and failed runs leave neither a result directory nor a file they created."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")

SSDLAB = [sys.executable, "-m", "ssdlab"]
MIB = 2**20


def _loop_skip() -> str:
    if os.geteuid() != 0:
        return "needs root for a loop device"
    if not os.path.exists("/dev/loop-control") or shutil.which("losetup") is None:
        return "no /dev/loop-control or losetup here"
    return ""


LOOP_SKIP = _loop_skip()


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot(root: Path) -> Dict[str, str]:
    """Every entry under `root`: files by checksum, directories and others by kind."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = digest(p) if p.is_file() and not p.is_symlink() else "dir" if p.is_dir() else "other"
    return out


def ssdlab(args: List[str], cwd: Path, env: Dict[str, str] | None = None, timeout: int = 120):
    return subprocess.run(SSDLAB + args, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def assert_refused(r: subprocess.CompletedProcess, needle: str) -> None:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), r.stderr
    assert needle in lines[0], lines[0]


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    """A directory with a target holding data and two neighbours holding data."""
    for name in ("target.img", "neighbour-a.img", "neighbour-b.img"):
        (tmp_path / name).write_bytes(os.urandom(4 * MIB))
    (tmp_path / "job.fio").write_text("[global]\ndescription=${DESC}\n[w]\nrw=randwrite\nbs=4k\nruntime=1\n"
                                      "time_based\nioengine=psync\n")
    return tmp_path


INJECTED = [
    (["consistency", "--qd", "0"], "--qd"),
    (["consistency", "--qd", "100000"], "--qd"),
    (["consistency", "--duration", "nan"], "--duration"),
    (["consistency", "--duration", "1e30"], "--duration"),
    (["consistency", "--block-size", "3GiB"], "larger than"),
    (["consistency", "--block-size", "4097"], "multiple of 512"),
    (["consistency", "--spare-area", "100"], "--spare-area"),
    (["hdtach", "--torture-minutes", "-1"], "--torture-minutes"),
    (["hdtach", "--torture-minutes", "inf"], "--torture-minutes"),
    (["torture", "--torture-minutes", "1e30"], "--torture-minutes"),
    (["torture", "--then", "pass,idle:-5"], "idle:-5"),
    (["fio", "job.fio"], "control character"),
]


@pytest.mark.parametrize("args,needle", INJECTED, ids=[" ".join(a) for a, _ in INJECTED])
def test_injected_values_change_no_byte_on_a_file(lab: Path, args: List[str], needle: str) -> None:
    before = snapshot(lab)
    device = ["--device", "target.img", "--yes-destroy-data", "--force-signatures"]
    r = ssdlab(args + device + ["--out", "out"], lab, env={"DESC": "x\nfilename=neighbour-a.img"})
    assert_refused(r, needle)
    assert snapshot(lab) == before


@pytest.mark.parametrize("target,needle", [
    ("/proc/version", "proc filesystem, not storage"),
    ("/dev/zero", "is a character device"),
    ("fifo", "is a FIFO"),
    (".", "is a directory"),
])
def test_targets_that_are_not_storage_are_refused(lab: Path, target: str, needle: str) -> None:
    os.mkfifo(lab / "fifo")
    before = snapshot(lab)
    r = ssdlab(["consistency", "--device", target, "--capacity", "64MiB", "--duration", "1", "--yes-destroy-data",
                "--out", "out"], lab, timeout=30)
    assert_refused(r, needle)
    assert snapshot(lab) == before


def test_a_created_file_is_removed_when_the_run_is_refused_after_creating_it(lab: Path) -> None:
    before = snapshot(lab)
    r = ssdlab(["hdtach", "--device", "new.img", "--capacity", "8MiB", "--out", "out"], lab)
    assert_refused(r, "too small for 200 position buckets")
    assert snapshot(lab) == before


def test_an_interrupted_device_run_leaves_nothing(lab: Path) -> None:
    before = snapshot(lab)
    proc = subprocess.Popen(SSDLAB + ["consistency", "--device", "new.img", "--capacity", "64MiB", "--duration",
                                      "120", "--out", "out"], cwd=lab, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (lab / "new.img").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2.0)  # fio is filling or writing
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "ssdlab: terminated"
    assert snapshot(lab) == before  # no new.img, no out/, no staging directory


def test_a_smuggled_filename_in_a_job_value_is_refused_and_the_neighbour_keeps_its_bytes(lab: Path) -> None:
    """The issue's example: DESC=$'x\\nfilename=OTHER' with description=${DESC}."""
    before = snapshot(lab)
    r = ssdlab(["fio", "job.fio", "--device", "new.img", "--capacity", "64MiB", "--out", "out"], lab,
               env={"DESC": f"x\nfilename={lab / 'neighbour-a.img'}"})
    assert_refused(r, "job.fio:2: environment variable 'DESC' holds a control character")
    assert snapshot(lab) == before
    r = ssdlab(["fio", "job.fio", "--device", "new.img", "--capacity", "64MiB", "--out", "out", "-q"], lab,
               env={"DESC": "one line"})
    assert r.returncode == 0, r.stderr
    after = snapshot(lab)
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert changed and all(k == "new.img" or k == "out" or k.startswith("out/") for k in changed), changed
    assert (lab / "out" / "summary.json").is_file()


@pytest.mark.skipif(bool(LOOP_SKIP), reason=LOOP_SKIP or "-")
def test_injected_values_change_no_byte_on_loop_devices(tmp_path: Path) -> None:
    devs = []
    try:
        for name in ("target", "neighbour"):
            img = tmp_path / f"{name}.img"
            img.write_bytes(os.urandom(32 * MIB))
            r = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
            if r.returncode != 0:
                pytest.skip(f"cannot attach a loop device: {r.stderr.strip()}")
            devs.append(r.stdout.strip())
        target, neighbour = devs
        (tmp_path / "job.fio").write_text("[global]\ndescription=${DESC}\n[w]\nrw=randwrite\nbs=4k\nruntime=1\n"
                                          "time_based\n")
        before = {d: digest(Path(d)) for d in devs}
        cases = [
            (["consistency", "--qd", "0"], "--qd"),
            (["consistency", "--block-size", "1GiB"], "larger than"),
            (["hdtach", "--torture-minutes", "-1"], "--torture-minutes"),
            (["fio", "job.fio"], "control character"),
        ]
        for args, needle in cases:
            r = ssdlab(args + ["--device", target, "--yes-destroy-data", "--force-signatures", "--out", "out"],
                       tmp_path, env={"DESC": f"x\nfilename={neighbour}"})
            assert_refused(r, needle)
            assert {d: digest(Path(d)) for d in devs} == before, args
        assert not (tmp_path / "out").exists()
        # a legitimate run writes the target only
        r = ssdlab(["fio", "job.fio", "--device", target, "--yes-destroy-data", "--force-signatures", "-q",
                    "--out", "out"], tmp_path, env={"DESC": "one line"})
        assert r.returncode == 0, r.stderr
        assert digest(Path(neighbour)) == before[neighbour]
        assert digest(Path(target)) != before[target]
    finally:
        for d in devs:
            subprocess.run(["losetup", "--detach", d], capture_output=True)
