"""startdelay and ramp_time on jobs that run at the same time (fio's examples/1mbs_clients.fio):
each job starts at its own simulated time, a ramp's requests are left out of the job's figures,
and a startdelay range is drawn as fio 3.33 draws it. The installed fio is the oracle where the
numbers can be compared (the null engine; skipped without fio)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.fio import jsonout
from ssdlab.fio.simrun import run_jobfile
from ssdlab.fio.startdelay import draw_us, split_range

GIB = 2**30
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (scripts/install-test-tools.sh)")

# Two jobs at 100 requests per second for 3 s, the second 1 s late; a third at 1024 per second
# with a 1 s ramp before its 2 s.
TOGETHER = """[global]
ioengine=null
size=64m
rw=read
bs=4k
rate_iops=100
runtime=3
time_based
[a]
[b]
startdelay=1
[c]
rate_iops=1024
runtime=2
ramp_time=1
"""


def run(tmp_path: Path, text: str, seed: int = 1, capacity: int = 2 * GIB):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return run_jobfile(path, "mlc-256", capacity=capacity, seed=seed)


def fio_json(tmp_path: Path, text: str) -> dict:
    path = tmp_path / "fio.fio"
    path.write_text(text)
    out = subprocess.run(["fio", "--output-format=json", str(path)], capture_output=True, text=True, check=True,
                         cwd=tmp_path, timeout=120)
    return json.loads(out.stdout)


def test_a_delayed_job_starts_at_its_own_time(tmp_path):
    """b's first request goes at 1 s; it still runs its 3 s (fio's runtime starts when the job
    does), 300 requests; the drive saw only a in the first second: a's and b's completions by
    second are 100, 200, 200, 100 (b's own series starts at its start)."""
    r = run(tmp_path, TOGETHER)
    a, b, c = r.jobs
    assert (a.start_s, b.start_s) == (0.0, pytest.approx(1.0, abs=1e-9))
    assert b.plan.workload["start_delay_s"] == 1.0
    assert [int(x) for x in a.phase["ios"]] == [300, 0, 0]
    assert [int(x) for x in b.phase["ios"]] == [300, 0, 0]
    assert b.runtime_s == pytest.approx(3.0, abs=0.001)
    assert list(a.iops_per_second()[:3]) == [100, 100, 100]
    assert list(b.iops_per_second()[:3]) == [100, 100, 100]
    by_second = [0] * 4
    for job, at in ((a, 0), (b, 1)):
        for k, n in enumerate(job.iops_per_second()[:3]):
            by_second[at + k] += int(n)
    assert by_second == [100, 200, 200, 100]
    # the ramp: 1 s at 1024 requests per second that are not reported, then 2 s that are (the
    # rate starts over at the ramp's end, so the request due then goes at once: 2049)
    assert c.start_s == pytest.approx(1.0, abs=1e-9)
    assert [int(x) for x in c.phase["ios"]] == [2049, 0, 0]
    assert c.runtime_s == pytest.approx(2.0, abs=0.001)


@needs_fio
def test_delay_and_ramp_report_what_fio_reports(tmp_path):
    """The same file through fio 3.33 on its null engine: each job's IOs within fio's run-to-run
    spread (a request or two, 0.5 % on a busy host), the same runtimes (ms), and the ramp's IOs
    left out (c's 1 s ramp at 1024 per second would add 1024)."""
    fio = {j["jobname"]: j for j in fio_json(tmp_path, TOGETHER)["jobs"]}
    sim = {j["jobname"]: j for j in jsonout.fio_json(run(tmp_path, TOGETHER))["jobs"]}
    for name, ios in (("a", 300), ("b", 300), ("c", 2048)):
        spread = max(2, ios // 200)
        assert abs(fio[name]["read"]["total_ios"] - ios) <= spread, fio[name]["read"]["total_ios"]
        assert abs(sim[name]["read"]["total_ios"] - ios) <= 1
        assert sim[name]["job_runtime"] == (2000 if name == "c" else 3000)  # the ramp is not runtime
        for key in ("job_runtime", "read"):  # fio's clock on a busy host: within 1 %
            f, m = (x[key]["runtime"] if key == "read" else x[key] for x in (fio[name], sim[name]))
            assert abs(f - m) <= m // 100, (name, key, f, m)


@needs_fio
def test_a_sized_job_counts_its_ramp_towards_its_size_as_fio_does(tmp_path):
    """size=16m at 4 MiB/s with ramp_time=1, next to a job without one: fio issues 16 MiB in all
    and reports what completed after the ramp, 12 MiB in 3 s (fio's issued bytes are not reset at
    the ramp's end; its figures are)."""
    text = ("[global]\nioengine=null\nsize=16m\nbs=4k\nrw=write\nrate=4m\n[plain]\n[ramped]\nramp_time=1\n")
    fio = {j["jobname"]: j["write"] for j in fio_json(tmp_path, text)["jobs"]}
    sim = {j["jobname"]: j["write"] for j in jsonout.fio_json(run(tmp_path, text))["jobs"]}
    assert sim["plain"]["io_bytes"] == fio["plain"]["io_bytes"] == 16 * 2**20
    assert abs(fio["ramped"]["total_ios"] - 3072) <= 16  # 0.5 %: fio's spread on a busy host
    assert abs(sim["ramped"]["total_ios"] - 3072) <= 1
    assert abs(sim["ramped"]["runtime"] - fio["ramped"]["runtime"]) <= 10


def test_clients_added_every_four_seconds(tmp_path):
    """fio's examples/1mbs_clients.fio in small: reading clients at 1250 B/s (ratemin=1024) that
    start 0, 4, 8 and 12 s in; each reads its 32 KiB (8 requests at 3.28 s gaps) from its own start,
    none falls below its rate floor."""
    text = "[global]\nsize=32k\nrw=read\nrate=1250\nratemin=1024\n" + "".join(
        f"[file{k + 1}]\nstartdelay={4 * k}\n" for k in range(4))
    r = run(tmp_path, text)
    assert [round(j.start_s, 6) for j in r.jobs] == [0.0, 4.0, 8.0, 12.0]
    gap = 4096 / 1250
    for j in r.jobs:
        assert [int(x) for x in j.phase["ios"]] == [8, 0, 0]
        assert j.phase.get("error") is None
        assert j.runtime_s == pytest.approx(7 * gap, abs=0.01)
    assert r.jobs[-1].start_s + r.jobs[-1].runtime_s == pytest.approx(12 + 7 * gap, abs=0.01)


def test_same_file_same_seed_same_numbers(tmp_path):
    text = TOGETHER.replace("ioengine=null", "ioengine=libaio\niodepth=4").replace("rw=read", "rw=randrw")
    one = jsonout.fio_json(run(tmp_path, text, seed=3))
    two = jsonout.fio_json(run(tmp_path, text, seed=3))
    for doc in (one, two):
        doc.pop("time", None), doc.pop("timestamp", None), doc.pop("timestamp_ms", None)
    assert one["jobs"] == two["jobs"]


# -- startdelay ranges -----------------------------------------------------------------------------


def test_a_range_splits_as_fio_splits_it():
    assert split_range("1-3") == ("1", "3")
    assert split_range("500ms:2500ms") == ("500ms", "2500ms")
    assert split_range("2,4") == ("2", "4")
    assert split_range("5") == ("5", "5")


def test_a_range_is_drawn_as_fio_draws_it(tmp_path):
    """fio's rand_between on the job's own Tausworthe generator (randseed 0x89, thread numbers
    from 1): the delays fio 3.33 drew for startdelay=0-3 in jobs 2, 3 and 4 (seen in its logs to
    within its thread start's granularity, test below), and the same plan every time."""
    assert [draw_us(0, 3_000_000, t) for t in (1, 2, 3, 4)] == [2008657, 263330, 1678500, 1677396]
    assert draw_us(0, 3_000_000, 4, use64=True) == 1782466
    assert draw_us(7, 7, 9) == 7
    text = "[global]\nsize=16m\nrw=read\nruntime=1\ntime_based\n[a]\n[b]\nstartdelay=0-3\nnumjobs=2\n[d]\nstartdelay=0-3\n"
    r = run(tmp_path, text)
    assert [j.plan.start_delay_s for j in r.jobs] == [0.0, 0.26333, 1.6785, 1.677396]
    assert [round(j.start_s, 6) for j in r.jobs] == [0.0, 0.26333, 1.6785, 1.677396]


@needs_fio
def test_fio_starts_ranged_jobs_when_ssdlab_does(tmp_path):
    """The installed fio's own start times (the first entry of each job's iops log, in Unix
    milliseconds), as differences between its delayed jobs: within 0.25 s of the delays ssdlab
    draws (fio starts a waiting job at its next look, every 0.1 to 0.2 s)."""
    text = ("[global]\nioengine=null\nsize=1g\nrw=read\nbs=4k\nrate_iops=1000\nruntime=1\ntime_based\n"
            "write_iops_log=sd\nlog_avg_msec=50\nlog_unix_epoch=1\n[a]\n[b]\nstartdelay=0-3\n[c]\nstartdelay=0-3\n"
            "[d]\nrandseed=7\nstartdelay=500ms-2500ms\n")
    fio_json(tmp_path, text)
    first = [int((tmp_path / f"sd_iops.{k}.log").read_text().split(",", 1)[0]) / 1000 for k in (2, 3, 4)]
    ours = [draw_us(0, 3_000_000, 2), draw_us(0, 3_000_000, 3), draw_us(500_000, 2_500_000, 4, randseed=7)]
    ours = [u / 1e6 for u in ours]
    for i, k in ((0, 1), (0, 2), (1, 2)):
        assert abs((first[k] - first[i]) - (ours[k] - ours[i])) < 0.25, (first, ours)


def test_a_backwards_range_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="high end is below its low end"):
        run(tmp_path, "[a]\nrw=read\nsize=16m\n[b]\nrw=read\nsize=16m\nstartdelay=3-1\n")


def test_ramp_with_verify_on_jobs_together_is_refused(tmp_path):
    with pytest.raises(SsdlabError, match="ramp_time with verify on a job that runs at the same time"):
        run(tmp_path, "[global]\nsize=16m\n[a]\nrw=read\n[b]\nrw=write\nverify=crc32c\nramp_time=1\n")


# -- later groups: startdelay counts from fio's start; a job alone ramps within its run ---------------

# a runs 2 s; b (a new group) has a delay of 1 s from fio's start, over when a ends; c, b's group-mate,
# 3 s from fio's start; d (the next group) 4 s, over when b and c end. fio: 0, 2, 3, 5 (and not 0, 3,
# 5, 11 as delays counted from each group's start would give).
LATER = """[global]
ioengine=null
size=64m
rw=read
bs=4k
rate_iops=100
runtime=2
time_based
[a]
[b]
stonewall
startdelay=1
[c]
startdelay=3
[d]
stonewall
startdelay=4
"""


def test_a_later_groups_delay_counts_from_the_first_groups_start(tmp_path):
    r = run(tmp_path, LATER)
    assert [round(j.start_s, 6) for j in r.jobs] == [0.0, 2.0, 3.0, 5.0]
    for j in r.jobs:
        assert [int(x) for x in j.phase["ios"]] == [200, 0, 0]
        assert j.runtime_s == pytest.approx(2.0, abs=0.001)
    assert not any("fio would start" in n for n in r.notes)


@needs_fio
def test_fio_starts_later_groups_when_ssdlab_does(tmp_path):
    """The installed fio's start times (the first entry of each job's iops log, in Unix ms) less
    a's: within 0.35 s of ssdlab's (fio looks for jobs to start every 0.1-0.2 s and a thread takes
    ~0.1 s to start; delays counted from each group's start would be 1 to 6 s off)."""
    fio_json(tmp_path, LATER.replace("time_based\n", "time_based\nwrite_iops_log=sd\nlog_avg_msec=50\n"
                                                     "log_unix_epoch=1\n", 1))
    first = [int((tmp_path / f"sd_iops.{k}.log").read_text().split(",", 1)[0]) / 1000 for k in (1, 2, 3, 4)]
    fio = [t - first[0] for t in first]
    ours = [j.start_s for j in run(tmp_path, LATER).jobs]
    for f, m in zip(fio, ours):
        assert abs(f - m) < 0.35, (fio, ours)


def test_where_fios_start_order_leaves_the_groups_a_note_says_so(tmp_path):
    """b (stonewall) waits for its 3 s from fio's start when a ends at 2 s: fio starts c (the next
    group, whose 1 s is over) then, before b; and in a group whose second job starts after the
    first has ended, fio would start the next group in between. The simulator keeps the file's
    order and says where fio would not."""
    text = LATER.replace("startdelay=1\n[c]\nstartdelay=3\n[d]\nstonewall\nstartdelay=4\n",
                         "startdelay=3\n[c]\nstonewall\nstartdelay=1\n")
    r = run(tmp_path, text)
    assert [round(j.start_s, 6) for j in r.jobs] == [0.0, 3.0, 5.0]
    assert "job 'c': fio would start it at 2 s, before 'b' (stonewall)" in " ".join(r.notes)
    gap = LATER.replace("[c]\nstartdelay=3\n", "[c]\nstartdelay=5\n")
    r = run(tmp_path, gap)
    assert [round(j.start_s, 6) for j in r.jobs] == [0.0, 2.0, 5.0, 7.0]
    assert "job 'd': fio would start it at 4 s, when the jobs before 'c' had ended" in " ".join(r.notes)


# size=16m at 1024 4 KiB writes a second, alone, with ramp_time=1: fio issues 16 MiB in all and
# reports the 12 MiB that complete after the ramp, in 3 s; a sequential job goes on from where its ramp
# ended (the drive sees 16 MiB, not 4 + 16).
ALONE = "[global]\nioengine=null\nsize=16m\nbs=4k\nrw=write\nrate_iops=1024\n[first]\nsize=4m\n[ramped]\nstonewall\nramp_time=1\n"


def test_a_job_alone_counts_its_ramp_towards_its_size(tmp_path):
    r = run(tmp_path, ALONE)
    ramped = r.jobs[1]
    assert [s["step"] for s in ramped.plan.steps] == ["run"]
    assert ramped.plan.workload["ramp_s"] == 1.0
    assert [int(x) for x in ramped.phase["ios"]] == [0, 3072, 0]
    assert ramped.runtime_s == pytest.approx(3.0, abs=0.01)
    assert ramped.start_s == pytest.approx(r.jobs[0].runtime_s + 1.0, abs=0.01)
    host = ramped.step.counters["host_write_bytes"]
    assert host == (4 + 16) * 2**20  # the first job's 4 MiB and the ramped job's 16 MiB, ramp included


@needs_fio
def test_a_job_alone_ramps_as_fio_ramps_it(tmp_path):
    fio = {j["jobname"]: j["write"] for j in fio_json(tmp_path, ALONE)["jobs"]}
    sim = {j["jobname"]: j["write"] for j in jsonout.fio_json(run(tmp_path, ALONE))["jobs"]}
    assert abs(fio["ramped"]["total_ios"] - 3072) <= 16  # 0.5 %: fio's spread on a busy host
    assert abs(sim["ramped"]["total_ios"] - 3072) <= 1
    assert abs(sim["ramped"]["runtime"] - fio["ramped"]["runtime"]) <= 30


@needs_fio
def test_a_first_job_still_in_its_delay_lets_the_next_group_start_in_fio(tmp_path):
    """[a] startdelay=2, then [b] stonewall: fio skips a while its delay lasts and starts b at once
    (nothing runs, so b's stonewall does not hold it); the simulator runs a first, and says so."""
    text = LATER.split("[a]")[0] + "write_iops_log=sd\nlog_avg_msec=50\nlog_unix_epoch=1\n[a]\nstartdelay=2\n[b]\nstonewall\n"
    fio_json(tmp_path, text)
    first = [int((tmp_path / f"sd_iops.{k}.log").read_text().split(",", 1)[0]) / 1000 for k in (1, 2)]
    assert 1.6 < first[0] - first[1] < 2.4  # fio: b at once, a 2 s later
    ours = run(tmp_path, LATER.split("[a]")[0] + "[a]\nstartdelay=2\n[b]\nstonewall\n")
    assert [round(j.start_s, 6) for j in ours.jobs] == [2.0, 4.0]
    assert "job 'b': fio would start it at 0 s, before 'a', whose startdelay of 2 s" in " ".join(ours.notes)
