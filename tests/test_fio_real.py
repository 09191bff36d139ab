"""The review procedures through the real fio, on a temporary file and (as root) a loop device.

Short runs only: files of 64-256 MiB and a few seconds of random writes. Skipped without fio
(scripts/install-test-tools.sh installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ssdlab.errors import SsdlabError
from ssdlab.fio import device, jsonout, logfiles, runner
from ssdlab.fio import jobfile as jf
from ssdlab.fio.simrun import run_jobfile
from ssdlab.results import CONSISTENCY_FILES, SUMMARY_KEYS

MIB = 2**20
pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")


def _loop_skip() -> str:
    if os.geteuid() != 0:
        return "needs root for a loop device"
    if not os.path.exists("/dev/loop-control") or shutil.which("losetup") is None:
        return "no /dev/loop-control or losetup here"
    return ""


LOOP_SKIP = _loop_skip()


def check_consistency_dir(out: Path, device_path: str, seconds: int) -> dict:
    for name in CONSISTENCY_FILES:
        assert (out / name).exists(), name
    summary = json.loads((out / "summary.json").read_text())
    assert set(SUMMARY_KEYS) <= set(summary)
    assert summary["scenario"] == "consistency"
    assert summary["device"] == device_path and summary["seed"] is None
    iops = pd.read_csv(out / "iops.csv")
    assert list(iops.columns) == ["time_s", "iops"] and len(iops) == seconds
    assert iops["iops"].sum() > 0
    series = pd.read_csv(out / "series.csv")
    assert len(series) == seconds and series["host_mib"].sum() > 0
    assert (out / "iops_log.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "fio" / "01-fill" / "job.fio").exists()
    # the per-second IOPS came from fio's own log (its last second may be missing there)
    log = logfiles.read_log(out / "fio" / "01-fill" / "random-write_iops.2.log")
    logged = logfiles.per_second(log, seconds)
    assert np.array_equal(logged[:-1], iops["iops"].to_numpy()[:-1])
    assert (iops["iops"] > 0).all()
    fio_doc = json.loads((out / "fio" / "01-fill" / "fio.json").read_text())
    rw = [j for j in fio_doc["jobs"] if j["jobname"] == "random-write"][0]["write"]
    assert iops["iops"].sum() == pytest.approx(rw["total_ios"], rel=0.05)
    return summary


def test_consistency_on_a_temporary_file(tmp_path):
    target = tmp_path / "disk.img"
    result = device.consistency_on_device(target, capacity=128 * MIB, duration_s=3, out_dir=tmp_path / "out")
    result.save(tmp_path / "out")
    s = check_consistency_dir(tmp_path / "out", str(target), 3)
    assert s["erase_method"].startswith("punched holes")
    assert s["host_write_bytes"] > 0 and s["write_amplification"] is None
    assert s["latency_us"]["p50"] > 0 and s["fill_seconds"] > 0
    assert s["user_capacity_bytes"] == 128 * MIB
    assert target.stat().st_size == 128 * MIB
    assert repr(result).startswith("<DeviceConsistencyResult 'disk.img · 0% spare area': clean ")
    assert repr(result).endswith("WA n/a>")


def _direct_io_works(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    os.close(fd)
    return True


def test_tmpfs_file_uses_direct_io_where_the_kernel_allows(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm (tmpfs) here")
    target = shm / f"ssdlab-test-{os.getpid()}.img"
    try:
        with open(target, "wb") as f:
            f.truncate(64 * MIB)
        io = runner.probe_io(target)
        # tmpfs refused O_DIRECT before Linux 6.6; the probe must agree with the kernel either way.
        assert io.direct is _direct_io_works(target)
        if not io.direct:
            assert "O_DIRECT does not work" in io.notes[0] and "tmpfs" in io.notes[0]
    finally:
        target.unlink(missing_ok=True)


def test_buffered_fallback_when_o_direct_fails(tmp_path, monkeypatch):
    """A filesystem that refuses O_DIRECT (a fio wrapper fails every --direct=1 run): buffered, with a note."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "fio"
    wrapper.write_text(f"#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --direct=1 ] && {{ echo 'fio: O_DIRECT: Invalid argument' >&2; exit 1; }}; done\n"
                       f"exec {shutil.which('fio')} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    target = tmp_path / "f.img"
    with open(target, "wb") as f:
        f.truncate(16 * MIB)
    io = runner.probe_io(target)
    assert (io.engine, io.direct) == ("io_uring", False) or (io.direct is False and io.engine in runner.ENGINES)
    assert io.notes[0].startswith(f"O_DIRECT does not work on {target} (")
    assert "page cache" in io.notes[0]


def test_torture_procedure_on_a_file(tmp_path):
    r = device.torture_on_device(tmp_path / "disk.img", capacity=64 * MIB, torture_minutes=0.03, idle_minutes=0.01,
                                 out_dir=tmp_path / "out")
    r.save(tmp_path / "out")
    frame = pd.read_csv(tmp_path / "out" / "hdtach.csv")
    assert list(frame.columns) == ["pass", "position_pct", "mb_s"]
    names = ["clean", "after 0.03 min torture", "after 0.03 min torture, pass, 0.01 min idle", "after TRIM"]
    assert list(dict.fromkeys(frame["pass"])) == names
    assert (frame.groupby("pass").size() == device.BUCKETS).all()
    assert (frame["mb_s"] > 0).all()
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["scenario"] == "torture" and s["device"] == str(tmp_path / "disk.img") and s["seed"] is None
    assert [p["name"] for p in s["passes"]] == names and s["passes"][0]["pct_of_clean"] == 100.0
    assert (s["torture_minutes"], s["idle_minutes"], s["block_bytes"], s["queue_depth"]) == (0.03, 0.01, 131072, 1)
    assert s["steps"][2].endswith(", fill, 0.03 min torture")
    assert (tmp_path / "out" / "hdtach.png").read_bytes()[:4] == b"\x89PNG"


def test_hdtach_procedure_on_a_file(tmp_path):
    r = device.hdtach_on_device(tmp_path / "disk.img", capacity=64 * MIB, out_dir=tmp_path / "out")
    assert [p["name"] for p in r.summary["passes"]] == ["clean"]
    assert r.summary["scenario"] == "hdtach" and r.summary["torture_minutes"] == 0.0


def test_torture_steps_name_passes_like_the_core():
    steps = device.torture_steps(20, True, 30, ["pass", "idle:60", "pass"], True)
    names = [arg for kind, arg in steps if kind == "pass"]
    assert names == ["clean", "after 20 min torture", "after 20 min torture, pass, 30 min idle",
                     "after 20 min torture, pass, 30 min idle, pass", "after 20 min torture, pass, 30 min idle, pass, "
                     "pass, 60 min idle", "after TRIM"]
    with pytest.raises(SsdlabError, match="unknown torture action 'nap'"):
        device.torture_steps(then=["nap"])


def test_refusals_come_before_anything_is_written(tmp_path):
    p = tmp_path / "data.bin"
    p.write_bytes(b"x" * MIB)
    with pytest.raises(SsdlabError, match="add --yes-destroy-data"):
        device.consistency_on_device(p, duration_s=1, out_dir=tmp_path / "out")
    assert p.read_bytes() == b"x" * MIB
    assert not (tmp_path / "out" / "fio").exists()


def test_fio_json_from_the_simulator_has_real_fios_fields(tmp_path):
    """The same job on the real fio and on the simulator: every field real fio writes is there."""
    job = tmp_path / "job.fio"
    job.write_text(f"[global]\nioengine=libaio\ndirect=1\nfilename={tmp_path / 'f.img'}\nsize=64m\n"
                   "norandommap\n[w]\nrw=randwrite\nbs=4k\niodepth=8\ntime_based\nruntime=1\n")
    real = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert real.returncode == 0, real.stderr
    real_doc = json.loads(real.stdout[real.stdout.index("{"):])
    sim_doc = jsonout.fio_json(run_jobfile(job, "mlc-256", capacity=2 * 2**30))
    assert set(real_doc) - {"disk_util"} <= set(sim_doc)
    rj, sj = real_doc["jobs"][0], sim_doc["jobs"][0]
    assert set(rj) - {"job_start"} <= set(sj)
    for d in ("read", "write", "trim"):
        assert set(rj[d]) <= set(sj[d])
        for lat in ("slat_ns", "clat_ns", "lat_ns"):
            assert set(sj[d][lat]) <= set(rj[d][lat]) | {"percentile"}
    assert list(rj["write"]["clat_ns"]["percentile"]) == list(sj["write"]["clat_ns"]["percentile"])
    assert rj["job options"] == sj["job options"]
    assert real_doc["global options"] == sim_doc["global options"]
    assert set(rj["latency_ms"]) == set(sj["latency_ms"]) and set(rj["iodepth_level"]) == set(sj["iodepth_level"])


def test_real_fio_reads_the_logs_we_parse(tmp_path):
    """fio's own windowed logs parse with read_log and match its JSON totals."""
    job = tmp_path / "job.fio"
    job.write_text(f"[w]\nioengine=libaio\ndirect=1\nfilename={tmp_path / 'f.img'}\nsize=64m\nnorandommap\n"
                   "rw=randwrite\nbs=4k\niodepth=8\ntime_based\nruntime=3\nlog_avg_msec=1000\n"
                   "write_iops_log=w\nwrite_bw_log=w\nwrite_lat_log=w\n")
    parsed = jf.parse(job)
    assert parsed.jobs()[0].name == "w"
    r = subprocess.run(["fio", "--output-format=json", "job.fio"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    for kind in ("iops", "bw", "lat", "clat", "slat"):
        log = logfiles.read_log(tmp_path / f"w_{kind}.1.log")
        assert not log.empty and set(log["direction"]) == {1}
    iops = logfiles.per_second(logfiles.read_log(tmp_path / "w_iops.1.log"), 3)
    assert (iops[:2] > 0).all()  # fio may write no window for the last second
    doc = json.loads(r.stdout[r.stdout.index("{"):])
    assert iops.sum() <= doc["jobs"][0]["write"]["total_ios"] * 1.05


# -- a loop device ----------------------------------------------------------------------------------


@pytest.mark.skipif(bool(LOOP_SKIP), reason=LOOP_SKIP or "-")
def test_consistency_on_a_loop_device(tmp_path):
    img = tmp_path / "backing.img"
    with open(img, "wb") as f:
        f.truncate(128 * MIB)
    r = subprocess.run(["losetup", "--find", "--show", str(img)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot attach a loop device: {r.stderr.strip()}")
    dev = r.stdout.strip()
    try:
        with pytest.raises(SsdlabError, match="add --yes-destroy-data"):
            device.consistency_on_device(dev, duration_s=2, out_dir=tmp_path / "refused")
        result = device.consistency_on_device(dev, duration_s=3, yes_destroy_data=True, out_dir=tmp_path / "out")
        result.save(tmp_path / "out")
        s = check_consistency_dir(tmp_path / "out", dev, 3)
        assert s["erase_method"] == "blkdiscard of the tested range"
        assert s["direct"] is True
        assert s["user_capacity_bytes"] == 128 * MIB
    finally:
        subprocess.run(["losetup", "--detach", dev], capture_output=True)
