"""A verifying job's loops with io_size below its region (fio's examples/cross-stripe-verify.fio:
io_size=120g, loops=2): fio bounds what the job issues over all its loops by io_size x loops
(backend.c io_issue_bytes_exceeded on td->io_issue_bytes, which no loop resets), so the first
pass writes io_size x loops and the passes after it write nothing; a pass bounded by the region
alone wrote loops x that, loops^2 x io_size in all. The installed fio is the oracle (a file)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from ssdlab.fio import jsonout
from ssdlab.fio.simrun import run_jobfile

MIB = 2**20


def job(loops: int, backlog: bool, filename: str) -> str:
    return (f"[j]\nbs=16k\nrw=write\nverify=crc32c\nfilename={filename}\nsize=8m\nio_size=1m\nloops={loops}\n"
            + ("verify_backlog=1\n" if backlog else "") + "ioengine=psync\n")


def simulated(tmp_path, text: str) -> dict:
    path = tmp_path / "sim.fio"
    path.write_text(text)
    (doc,) = jsonout.fio_json(run_jobfile(path, "mlc-256", capacity=2**30, seed=1))["jobs"]
    return doc


@pytest.mark.parametrize("backlog", [False, True])
@pytest.mark.parametrize("loops", [1, 2, 3])
def test_loops_write_io_size_times_loops(tmp_path, loops, backlog):
    doc = simulated(tmp_path, job(loops, backlog, "/dev/nvme0n1"))
    assert (doc["write"]["io_bytes"], doc["read"]["io_bytes"]) == (loops * MIB, loops * MIB)
    assert doc["error"] == 0


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")
@pytest.mark.parametrize("loops", [2, 3])
def test_fio_writes_the_same(tmp_path, loops):
    img = tmp_path / "f.img"
    img.write_bytes(b"\0" * (8 * MIB))
    path = tmp_path / "real.fio"
    path.write_text(job(loops, True, str(img)))
    out = subprocess.run(["fio", "--output-format=json", str(path)], capture_output=True, text=True, check=True,
                         timeout=120, cwd=tmp_path).stdout  # fio leaves its verify state file in its cwd
    (real,) = json.loads(out[out.index("{"):])["jobs"]
    sim = simulated(tmp_path, job(loops, True, "/dev/nvme0n1"))
    for d in ("write", "read"):
        assert real[d]["io_bytes"] == sim[d]["io_bytes"] == loops * MIB
