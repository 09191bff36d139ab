"""fio workloads beyond one size and uniform offsets, simulated: size mixes (bssplit, bsrange),
per-direction rate caps, jobs that run at the same time (no stonewall, numjobs) and
group_reporting. The skew distributions' shapes are tested in the core
(crates/ssdlab/src/workload/distribution.rs) and their effect on WA in crates/ssdlab/tests/it/skew.rs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab.cli import main
from ssdlab.fio import run_jobfile

JOBS = Path(__file__).parent / "fio_jobs"
GIB = 2**30


def run(tmp_path: Path, text: str, **kw):
    path = tmp_path / "job.fio"
    path.write_text("[global]\nioengine=libaio\ndirect=1\nsize=256m\nnorandommap\n" + text)
    return run_jobfile(path, "mlc-256", capacity=2 * GIB, **kw)


def direction(job, name: str) -> dict:
    p = job.phase
    i = ("read", "write", "trim").index(name)
    return {"ios": p["ios"][i], "bytes": p["bytes"][i]}


def test_a_size_mix_sends_its_sizes_in_their_shares(tmp_path: Path) -> None:
    r = run(tmp_path, "[w]\nrw=randwrite\nbssplit=4k/70:16k/20:64k/10\niodepth=8\nnumber_ios=20000\n")
    w = direction(r.jobs[0], "write")
    expected = 0.7 * 4096 + 0.2 * 16384 + 0.1 * 65536
    assert w["ios"] == 20000
    assert w["bytes"] / w["ios"] == pytest.approx(expected, rel=0.02)


def test_a_size_range_draws_as_fio_does(tmp_path: Path) -> None:
    # fio: min + floor((max - min + 1) u) bytes, aligned down to min: 4k..28k equally, 32k almost never.
    r = run(tmp_path, "[r]\nrw=randread\nbsrange=4k-32k\niodepth=4\nnumber_ios=20000\n")
    rd = direction(r.jobs[0], "read")
    assert rd["bytes"] / rd["ios"] == pytest.approx(16384, rel=0.02)


def test_per_direction_caps_hold_and_the_other_direction_runs_on(tmp_path: Path) -> None:
    r = run(tmp_path, "[m]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=16\nruntime=2\ntime_based\nrate_iops=,300\n")
    job = r.jobs[0]
    reads, writes = direction(job, "read")["ios"], direction(job, "write")["ios"]
    seconds = job.runtime_s
    assert writes / seconds == pytest.approx(300, rel=0.02)
    # As fio's rate_ddir: while writes are ahead of their cap, drawn writes become reads.
    assert reads > 10 * writes


def test_jobs_without_stonewall_share_the_drive(tmp_path: Path) -> None:
    text = "[a]\nrw=randwrite\nbs=4k\niodepth=8\nruntime=2\ntime_based\n[b]\nrw=randwrite\nbs=4k\niodepth=8\nruntime=2\ntime_based\n"
    together = run(tmp_path, text)
    apart = run(tmp_path, text, sequential_jobs=True)
    a, b = together.jobs
    assert a.start_s == b.start_s == 0.0, "both start at once"
    alone = direction(apart.jobs[0], "write")["ios"]
    shared = [direction(j, "write")["ios"] for j in together.jobs]
    # Each gets about half of what one job alone gets (the drive is the bottleneck) ...
    assert shared[0] == pytest.approx(shared[1], rel=0.05)
    assert sum(shared) == pytest.approx(alone, rel=0.15)
    assert max(shared) < 0.7 * alone
    # ... and the second job of the sequential run starts when the first ends.
    assert apart.jobs[1].start_s == pytest.approx(apart.jobs[0].runtime_s, abs=0.01)


def test_numjobs_and_group_reporting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumjobs=4\nruntime=1\ntime_based\n"
    each = run(tmp_path, text)
    grouped = run(tmp_path, text + "group_reporting\n")
    assert [j.plan.name for j in each.jobs] == ["w"] * 4
    assert len(grouped.jobs) == 1 and grouped.jobs[0].plan.reported_jobs == 4
    total = sum(direction(j, "write")["ios"] for j in each.jobs)
    assert direction(grouped.jobs[0], "write")["ios"] == total
    # The group's latency distribution is the clones' merged: its extremes are theirs.
    lat = [j.phase["latency"][1] for j in each.jobs]
    g = grouped.jobs[0].phase["latency"][1]
    assert g["count"] == total
    assert g["max_ns"] == max(x["max_ns"] for x in lat) and g["min_ns"] == min(x["min_ns"] for x in lat)


def test_the_skew_and_mix_job_file_runs_with_fio_output(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIZE", "256m")
    monkeypatch.setenv("RUNTIME", "1")
    status = main(["fio", str(JOBS / "skew-mix.fio"), "--capacity", "2GiB", "--output-format", "json", "-q"])
    assert status == 0
    doc = json.loads(capsys.readouterr().out)
    names = [(j["jobname"], j["groupid"]) for j in doc["jobs"]]
    # hot-writers' two clones reported as one (group_reporting), zipf-reader alone: together in
    # group 0; pareto-mix after the stonewall.
    assert names == [("hot-writers", 0), ("zipf-reader", 0), ("pareto-mix", 1)]
    hot, zipf, pareto = doc["jobs"]
    assert hot["elapsed"] == zipf["elapsed"] < pareto["elapsed"]
    # capped (rate_iops=500); the two writers keep the dies' queues full of programs, which a read
    # waits behind (dies serve in arrival order), so the 4-deep reader gets less than its cap
    # (measured 381, mean read latency 6.8 ms)
    assert 300 < zipf["read"]["iops"] <= 500
    assert pareto["write"]["iops"] == pytest.approx(300, rel=0.02)
    main(["fio", str(JOBS / "skew-mix.fio"), "--capacity", "2GiB", "-q"])
    text = capsys.readouterr().out
    assert "hot-writers: (groupid=0, jobs=2)" in text and "bs=(R) 4096B-64.0KiB" in text.replace("64KiB", "64.0KiB")


@pytest.mark.parametrize("version", [2, 3])
def test_read_iolog_replays_the_log(tmp_path: Path, version: int) -> None:
    rows = [("write", 0, 65536), ("write", 65536, 8192), ("read", 4096, 4096), ("trim", 0, 65536),
            ("write", 512, 4096)]  # the last one unaligned: a read-modify-write
    lines = [f"fio version {version} iolog"]
    for i, (action, offset, length) in enumerate(rows):
        prefix = f"{i * 2} " if version == 3 else ""
        lines.append(f"{prefix}/dev/sdb {action} {offset} {length}")
        if version == 2:
            lines.append("/dev/sdb wait 2000")
    (tmp_path / "io.log").write_text("\n".join(lines) + "\n")
    job = tmp_path / "replay.fio"
    job.write_text("[replay]\nread_iolog=io.log\nioengine=libaio\niodepth=4\n")
    r = run_jobfile(job, "mlc-256", capacity=2 * GIB)
    phase = r.jobs[0].phase
    assert phase["bytes"] == [4096, 65536 + 8192 + 4096, 65536]
    assert phase["ios"] == [1, 3, 1]
    # Open loop at the log's times: the last request arrives 8 ms after the first.
    assert r.jobs[0].runtime_s == pytest.approx(0.008, abs=0.001)
    job.write_text("[replay]\nread_iolog=io.log\nreplay_no_stall=1\niodepth=4\nioengine=libaio\n")
    fast = run_jobfile(job, "mlc-256", capacity=2 * GIB)
    assert fast.jobs[0].phase["bytes"] == phase["bytes"] and fast.jobs[0].runtime_s < 0.001


def test_an_iolog_job_runs_alone(tmp_path: Path) -> None:
    (tmp_path / "io.log").write_text("fio version 2 iolog\n/dev/sdb write 0 4096\n")
    job = tmp_path / "two.fio"
    job.write_text("[replay]\nread_iolog=io.log\n[other]\nrw=write\nsize=1m\n")
    from ssdlab.errors import SsdlabError

    with pytest.raises(SsdlabError, match=r"two.fio:2: read_iolog=io.log: an iolog job must run alone"):
        run_jobfile(job, "mlc-256", capacity=2 * GIB)


def test_an_iolog_jobs_startdelay_is_a_note(tmp_path: Path) -> None:
    """The log is replayed from when its group starts: a startdelay (or ramp_time) on it is said to
    have no effect rather than dropped silently."""
    (tmp_path / "io.log").write_text("fio version 2 iolog\n/dev/sdb write 0 4096\n")
    job = tmp_path / "late.fio"
    job.write_text("[replay]\nread_iolog=io.log\nstartdelay=2\n")
    r = run_jobfile(job, "mlc-256", capacity=2 * GIB)
    assert r.jobs[0].start_s == 0.0
    assert "job 'replay': startdelay is not simulated for an iolog job" in " ".join(r.notes)
