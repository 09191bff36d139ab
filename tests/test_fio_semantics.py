"""fio's job semantics a block device honours, on a simulated drive (`ssdlab.fio.semantics`; the
rules: crates/ssdlab/src/workload/{min_rate,arrivals,latency_target,flow,sequencer,control}.rs):
rate floors, Poisson arrivals, offload submission, the latency-target search, flows, exitall,
offset modifiers, blockalign, continue_on_error/ignore_error, and data content on the
compressing drive. Numbers come from fio 3.33's rules and, where noted, fio's own runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ssdlab.cli import main
from ssdlab.errors import SsdlabError
from ssdlab.fio import jsonout, textout
from ssdlab.fio.jobfile import parse_string
from ssdlab.fio.planner import plan as make_plan
from ssdlab.fio.simrun import run_jobfile

GIB = 2**30
HEAD = "[global]\nioengine=libaio\ndirect=1\n"


def run(tmp_path: Path, text: str, drive: str = "mlc-256", capacity: int = GIB, seed: int = 1):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return run_jobfile(path, drive, capacity=capacity, seed=seed)


def cli(tmp_path: Path, text: str, capsys, *args: str):
    path = tmp_path / "job.fio"
    path.write_text(text)
    status = main(["fio", str(path), "--capacity", "1GiB", "-q", *args])
    out, err = capsys.readouterr()
    return status, out, err


def refusal(text: str) -> str:
    with pytest.raises(SsdlabError) as e:
        make_plan(parse_string(text), GIB)
    return str(e.value)


# -- rate_min / rate_iops_min ------------------------------------------------------------------------

SLOW = HEAD + "[job]\nrw=randread\nbs=4k\nthinktime=50ms\nruntime=6\ntime_based\n"


def test_a_job_below_its_iops_floor_fails_as_fio_fails_it(tmp_path, capsys):
    """thinktime=50ms keeps the job at ~20 IOPS: fio 3.33 on a file failed it after 60 reads
    (240KiB/3009msec, 'rate_iops_min=50 not met, got 19 IOPS', err=5, exit status 1). The simulated
    job goes out every 50.008 ms: the check after the 2 s settle period takes a baseline at 2000 ms
    and compares at 3000 ms (20 reads in 1000 ms)."""
    status, out, err = cli(tmp_path, SLOW + "rate_iops_min=50\n", capsys, "--output-format", "json")
    assert status == 1
    assert err.splitlines() == ["job: rate_iops_min=50 not met, got 20 IOPS",
                                "fio: pid=0, err=5/file:backend.c:1131, func=check_min_rate, "
                                "error=Input/output error"]
    job = json.loads(out)["jobs"][0]
    assert (job["error"], job["read"]["total_ios"], job["read"]["runtime"]) == (5, 60, 3000)
    status, out, err = cli(tmp_path, SLOW + "rate_iops_min=50\n", capsys)
    assert "job: (groupid=0, jobs=1): err=5 (file:backend.c:1131, func=check_min_rate, " \
           "error=Input/output error): simulated" in out
    # A floor the job meets: the whole 6 s, exit 0.
    status, out, err = cli(tmp_path, SLOW + "rate_iops_min=15\n", capsys, "--output-format", "json")
    job = json.loads(out)["jobs"][0]
    assert (status, job["error"], job["read"]["runtime"]) == (0, 0, 6000)


def test_a_byte_floor_and_the_exit_status_counts_failed_jobs(tmp_path, capsys):
    # 20 reads of 4 KiB a second: 81920 B/s, below 300 KiB/s; numjobs=2: two failed jobs, status 2.
    status, out, err = cli(tmp_path, SLOW + "rate_min=300k\nnumjobs=2\n", capsys, "--output-format", "json")
    assert status == 2
    assert err.count("job: rate_min=307200B/s not met, got 81920B/s") == 2
    assert [j["error"] for j in json.loads(out)["jobs"]] == [5, 5]


def test_exitall_on_error_stops_the_jobs_running_with_it(tmp_path):
    text = SLOW + "rate_iops_min=50\nexitall_on_error\n[other]\nrw=randread\nbs=4k\niodepth=4\nruntime=6\ntime_based\n"
    r = run(tmp_path, text)
    failed, other = r.jobs
    assert failed.phase["error"]["errno"] == 5
    assert other.phase.get("error") is None
    assert other.runtime_s == pytest.approx(failed.runtime_s, abs=0.001)  # stopped at ~3 s, not 6
    assert other.phase["terminated_at_ns"] == pytest.approx(3.0e9, rel=0.01)
    # Without exitall_on_error the other job runs its 6 s.
    r = run(tmp_path, text.replace("exitall_on_error\n", ""))
    assert r.jobs[1].runtime_s == pytest.approx(6.0, abs=0.01)


@pytest.mark.parametrize("text,needle", [
    ("rate_min=1m\nrate_iops_min=10\n", "mutually exclusive"),
    ("rate=1m\nrate_min=2m\n", "minimum rate exceeds rate"),
    ("rate_iops=100\nrate_iops_min=200\n", "minimum rate exceeds rate"),
])
def test_rate_floors_fio_refuses_are_refused(text, needle):
    assert needle in refusal("[j]\nrw=randread\n" + text)


# -- rate_process=poisson, io_submit_mode=offload ----------------------------------------------------

def _counts(tmp_path, process: str, seed: int = 1):
    text = (HEAD + f"[j]\nrw=randread\nbs=4k\niodepth=32\nrate_iops=2000\nrate_process={process}\n"
            "runtime=20\ntime_based\nlog_avg_msec=10\nwrite_iops_log=j\n")
    r = run(tmp_path, text, seed=seed)
    job = r.jobs[0]
    return job, job.series["read_ios"].to_numpy(np.int64)[:-1]


def test_poisson_arrivals_have_exponential_gaps_at_the_rate(tmp_path):
    """Requests per 10 ms window: for a renewal process the index of dispersion (variance / mean of
    the counts) is the inter-arrival gaps' CV², so CV ≈ 1 for Poisson arrivals and ≈ 0 for
    linear ones; both at fio's rate (gaps of ⌊10⁶/2000⌋ = 500 µs: 40,000 requests in 20 s, ±3σ
    = 600 for Poisson counts)."""
    for process, lo, hi in (("poisson", 0.95, 1.05), ("linear", -0.01, 0.2)):
        job, counts = _counts(tmp_path, process)
        cv = math.sqrt(counts.var(ddof=1) / counts.mean())
        assert lo < cv < hi, (process, cv)
        assert abs(int(job.phase["ios"][0]) - 40_000) < 600, process
        assert job.plan.workload.get("rate_process", "linear") == process
    # deterministic for a seed, another seed other arrivals
    a, b, c = (_counts(tmp_path, "poisson", s)[1] for s in (1, 1, 2))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_poisson_with_a_byte_rate_uses_fios_smallest_size(tmp_path):
    # fio: iops = rate_bps / min_bs = 1 MiB/s / 4 KiB = 256 requests per second, whatever the mix.
    r = run(tmp_path, HEAD + "[j]\nrw=randread\nbssplit=4k/50:64k/50\nrate=1m\nrate_process=poisson\n"
                             "runtime=10\ntime_based\nnorandommap\n")
    assert r.jobs[0].plan.workload["rate_iops"] == 256.0
    assert abs(int(r.jobs[0].phase["ios"][0]) - 2560) < 3 * math.sqrt(2560)


def test_io_submit_mode_offload_changes_nothing_on_a_simulated_drive(tmp_path):
    base = HEAD + "[j]\nrw=randwrite\nbs=4k\niodepth=16\nrate_iops=20000\nruntime=5\ntime_based\n"
    inline = run(tmp_path, base + "io_submit_mode=inline\n").jobs[0]
    offload = run(tmp_path, base + "io_submit_mode=offload\n").jobs[0]
    assert inline.phase["ios"] == offload.phase["ios"] and inline.phase["ios"][1] > 90_000
    assert inline.series.equals(offload.series)
    assert any("io_submit_mode=offload" in n for n in offload.plan.notes)


# -- latency_target ----------------------------------------------------------------------------------

LATENCY = ("[global]\nioengine=libaio\ndirect=1\n[fill]\nrw=write\nbs=128k\niodepth=8\n"
           "[lt]\nstonewall\nrw=randread\nbs=4k\niodepth=128\nlatency_target=400us\nlatency_window=200ms\n"
           "latency_percentile=99\nruntime=20\ntime_based\n")


def test_latency_target_finds_a_depth_and_reports_its_final_window(tmp_path):
    r = run(tmp_path, LATENCY)
    lt = r.jobs[1]
    doc = jsonout.job_json(lt)
    depth = doc["latency_depth"]
    assert 1 < depth < 128
    # fio's units: the target in ns, the window in us
    assert (doc["latency_target"], doc["latency_window"], doc["latency_percentile"]) == (400_000, 200_000, 99.0)
    # the job ended once the depth was found (not after its 20 s); its figures are the final window's
    assert lt.runtime_s < 10
    assert doc["read"]["runtime"] == 200 and doc["job_runtime"] == 200
    assert doc["read"]["clat_ns"]["percentile"]["99.000000"] <= 400_000
    assert f"latency   : target=400000, window=200000, percentile=99.00%, depth={depth}" in textout.normal_text(r)
    # A fixed depth one deeper, over the same stretch of simulated time (ramp_time to where the final
    # window began): its 99th percentile misses the target; at the found depth it meets it.
    since = lt.phase["stats_start_ns"] / 1e9
    for qd, meets in ((depth, True), (depth + 1, False)):
        fixed = (LATENCY.split("[lt]")[0] + f"[fixed]\nstonewall\nrw=randread\nbs=4k\niodepth={qd}\n"
                 f"ramp_time={int(since * 1e6)}us\nruntime=200ms\ntime_based\n")
        p99 = jsonout.job_json(run(tmp_path, fixed).jobs[1])["read"]["clat_ns"]["percentile"]["99.000000"]
        assert (p99 <= 400_000) == meets, (qd, p99)


def test_latency_target_at_depth_one_times_out_unless_ignored(tmp_path, capsys):
    # every read of written data takes longer than 10 us: at depth 1 fio ends the job with ETIMEDOUT
    text = HEAD + "[fill]\nrw=write\nbs=1m\nsize=16m\n[j]\nstonewall\nrw=randread\nbs=4k\nsize=16m\niodepth=8\n" \
                  "latency_target=10us\nlatency_window=100ms\nruntime=2\ntime_based\n"
    status, out, err = cli(tmp_path, text, capsys, "--output-format", "json")
    job = json.loads(out)["jobs"][1]
    assert (status, job["error"], job["read"]["total_ios"]) == (1, 110, 1)
    assert err.startswith("fio: latency of ") and "exceeds specified max (10000 nsec): ssdlab-drive read" in err
    assert "func=max latency exceeded, error=Connection timed out" in err
    # continue_on_error=read with ETIMEDOUT (110: fio's ignore_error knows no ETIMEDOUT name) listed
    status, out, err = cli(tmp_path, text + "continue_on_error=read\nignore_error=110\n", capsys,
                           "--output-format", "json")
    job = json.loads(out)["jobs"][1]
    assert (status, job["error"], job["first_error"]) == (0, 0, 110)
    assert job["total_err"] > job["read"]["total_ios"] > 0
    status, out, err = cli(tmp_path, text + "continue_on_error=read\nignore_error=110\n", capsys)
    assert "errors    : total=" in out and "first_error=110/<Connection timed out>" in out
    # listing only EIO (or continuing on writes only) does not let a read's ETIMEDOUT go
    for extra in ("continue_on_error=read\n", "ignore_error=,110\n"):
        status, out, err = cli(tmp_path, text + extra, capsys, "--output-format", "json")
        assert (status, json.loads(out)["jobs"][1]["error"]) == (1, 110), extra
    assert "ETIMEDOUT" in refusal("[j]\nrw=randread\nignore_error=ETIMEDOUT\n")


# -- flow --------------------------------------------------------------------------------------------

def test_flow_weights_keep_request_counts_in_ratio(tmp_path):
    job = "[{name}]\nrw=randread\nbs=4k\niodepth=4\nruntime=2\ntime_based\nflow={w}\n{extra}"
    jobs = run(tmp_path, HEAD + job.format(name="a", w=1, extra="") + job.format(name="b", w=2, extra="")).jobs
    a, b = (int(j.phase["ios"][0]) for j in jobs)
    assert a > 50_000 and abs(2 * a - b) <= 4, (a, b)  # fio 3.33 on a file: 331777 and 663553
    # flow_sleep: held back, a job waits out its requests and sleeps; the ratio holds
    sleep = "flow_sleep=50\n"
    jobs = run(tmp_path, HEAD + job.format(name="a", w=1, extra=sleep) + job.format(name="b", w=3, extra=sleep)).jobs
    a, b = (int(j.phase["ios"][0]) for j in jobs)
    assert abs(3 * a - b) <= 12, (a, b)
    # without a flow, the deeper job takes more than its share
    free = HEAD + job.format(name="a", w=0, extra="") + job.format(name="b", w=0, extra="iodepth=16\n")
    a, b = (int(j.phase["ios"][0]) for j in run(tmp_path, free).jobs)
    assert b > 3 * a, (a, b)


def test_a_negative_flow_is_fios_unsigned_weight(tmp_path):
    # fio 3.33 reads flow=-2 as the weight 4294967294: the job of weight 1 issued 1 read in fio's run
    jobs = run(tmp_path, HEAD + "[a]\nrw=randread\nbs=4k\nruntime=1\ntime_based\nflow=1\n"
                                "[b]\nrw=randread\nbs=4k\nruntime=1\ntime_based\nflow=-2\n").jobs
    assert int(jobs[0].phase["ios"][0]) == 1 and int(jobs[1].phase["ios"][0]) > 10_000
    assert any("4294967294" in n for n in jobs[1].plan.notes)


def test_a_flow_across_stonewall_is_refused():
    message = refusal("[a]\nrw=read\nflow=1\n[b]\nstonewall\nrw=read\nflow=1\n")
    assert "do not all run at the same time" in message and message.count("\n") == 0


# -- exitall / exit_what ------------------------------------------------------------------------------

EXIT = (HEAD + "bs=4k\nrw=randread\niodepth=4\n{opts}[a]\nnumber_ios=1000\n[b]\nruntime=2\ntime_based\n"
        "[c]\nstonewall\nruntime=1\ntime_based\n")


@pytest.mark.parametrize("opts,b_stopped,c_runs", [
    ("", False, True),
    ("exitall\n", True, True),
    ("exitall\nexit_what=stonewall\n", True, True),
    ("exitall\nexit_what=all\n", True, False),
    ("exit_what=all\n", False, True),  # exit_what alone does nothing
])
def test_exitall_stops_the_jobs_exit_what_names(tmp_path, opts, b_stopped, c_runs):
    a, b, c = run(tmp_path, EXIT.format(opts=opts)).jobs
    assert int(a.phase["ios"][0]) == 1000
    if b_stopped:  # at a's end: in-flight reads complete
        assert b.runtime_s == pytest.approx(a.runtime_s, abs=1e-3) and b.runtime_s < 0.1
    else:
        assert b.runtime_s == pytest.approx(2.0, abs=1e-3)
    doc = jsonout.job_json(c)
    if c_runs:
        assert doc["job_runtime"] == 1000 and doc["read"]["total_ios"] > 10_000
    else:  # never started: reported with no IO, as fio reports it
        assert (doc["job_runtime"], doc["read"]["total_ios"]) == (0, 0)


def test_exitall_group_spares_other_reporting_groups(tmp_path):
    # new_group: b runs at the same time as a but in another group; exit_what=group leaves it alone
    text = EXIT.format(opts="exitall\n").replace("[b]\n", "[b]\nnew_group\n")
    a, b, _ = run(tmp_path, text).jobs
    assert b.runtime_s == pytest.approx(2.0, abs=1e-3)


# -- offset modifiers, rw_sequencer, blockalign --------------------------------------------------------

def test_offset_modifiers_move_what_fio_moves(tmp_path):
    seq = HEAD + "[j]\nbs=4k\nsize=1m\nrw={rw}\n{extra}"
    # write:4k skips a block after each: the pass ends at the region's end after 128 writes (fio's
    # iolog of read:4k over 64k: 0 2 4 ... 14, then the job ended); with io_size the passes go on.
    j = run(tmp_path, seq.format(rw="write:4k", extra="")).jobs[0]
    assert (j.phase["ios"][1], j.phase["bytes"][1], j.phase["counters"]["host_write_units"]) == (128, 2**19, 128)
    j = run(tmp_path, seq.format(rw="write:4k", extra="io_size=2m\n")).jobs[0]
    assert j.phase["ios"][1] == 512
    # backwards never runs out: size= bytes
    assert run(tmp_path, seq.format(rw="read:-8k", extra="")).jobs[0].phase["ios"][0] == 256
    wl = run(tmp_path, seq.format(rw="randread:8", extra="rw_sequencer=identical\n")).jobs[0].plan.workload
    assert wl["sequencer"] == {"add_bytes": 0, "every": 8, "identical": True, "passes": 1}
    assert "one-direction" in refusal("[j]\nrw=randrw:8\n") or "offset modifiers" in refusal("[j]\nrw=randrw:8\n")
    assert "512" in refusal("[j]\nrw=write:100\n")


def test_blockalign_places_random_offsets_and_drops_the_random_map(tmp_path):
    # bs=8k, ba=4k random writes on a fresh drive: offsets on any 4 KiB boundary, so 8 KiB writes
    # overlap and straddle: fewer distinct units than at ba=8k for the same 2048 writes.
    text = HEAD + "[j]\nrw=randwrite\nbs=8k\nsize=16m\nnumber_ios=2048\nnorandommap\n{ba}"
    aligned = run(tmp_path, text.format(ba="")).jobs[0]
    odd = run(tmp_path, text.format(ba="ba=4k\n")).jobs[0]
    assert odd.plan.workload["block_align_bytes"] == 4096
    assert aligned.phase["counters"]["host_write_units"] == odd.phase["counters"]["host_write_units"] == 4096
    j = run(tmp_path, text.format(ba="ba=4k\n").replace("norandommap\n", "")).jobs[0]
    assert j.plan.workload["random_map"] is False
    assert any("turns off randommap" in n for n in j.plan.notes)
    assert "512" in refusal("[j]\nrw=randread\nba=1000\n")
    seq = run(tmp_path, (HEAD + "[j]\nrw=write\nsize=1m\nba=8k\n")).jobs[0]
    assert "block_align_bytes" not in seq.plan.workload and any("no effect" in n for n in seq.plan.notes)


# -- data content on the compressing drive -----------------------------------------------------------

@pytest.mark.parametrize("extra,wa", [
    ("", 0.50),  # every 4 KiB unit half random: the drive stores half
    ("buffer_compress_chunk=8k\n", 0.57),  # 4 KiB random, 4 KiB zeros: units at 1.0 and 0.14
    ("buffer_compress_chunk=64k\n", 0.57),
    ("refill_buffers\n", 0.50),  # fresh data, same mix
    ("dedupe_percentage=50\n", 0.50),  # repeated buffers compress as fresh ones: no effect
])
def test_compressibility_the_compressing_drive_sees(tmp_path, extra, wa):
    j = run(tmp_path, f"[w]\nioengine=libaio\nrw=write\nbs=64k\nsize=256m\nbuffer_compress_percentage=50\n{extra}",
            drive="compressing", capacity=4 * GIB).jobs[0]
    c = j.phase["counters"]
    assert c["nand_write_units"] * 4096 / c["host_write_bytes"] == pytest.approx(wa, abs=0.001)
