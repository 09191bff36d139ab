"""fio jobs -> ssdlab workloads: the mapping rules of ssdlab.fio.jobplan, access and planner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio import jobplan, planner

GIB = 2**30
DRIVE = 4 * GIB
REPO = Path(__file__).resolve().parents[1]


def plan(text: str, user_bytes: int = DRIVE, **kw) -> planner.FioPlan:
    return planner.plan(jf.parse_string(text, env={"RUNTIME": "60"}), user_bytes, **kw)


def workload(text: str, **kw) -> dict:
    return plan(text, **kw).jobs[-1].workload


def error(text: str, **kw) -> str:
    with pytest.raises(SsdlabError) as e:
        plan(text, **kw)
    assert "\n" not in str(e.value)
    return str(e.value)


# -- rw, mix, block size -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rw,core_rw,pattern",
    [
        ("read", "read", "sequential"),
        ("write", "write", "sequential"),
        ("trim", "trim", "sequential"),
        ("randread", "read", "random"),
        ("randwrite", "write", "random"),
        ("randtrim", "trim", "random"),
        ("rw", "mixed", "sequential"),
        ("readwrite", "mixed", "sequential"),
        ("randrw", "mixed", "random"),
        ("trimwrite", "trim-write", "sequential"),
        ("randtrimwrite", "trim-write", "random"),
    ],
)
def test_rw(rw, core_rw, pattern):
    w = workload(f"[j]\nrw={rw}\nnorandommap\n")
    assert (w["rw"], w["pattern"]) == (core_rw, pattern)


def test_default_rw_is_read():
    assert workload("[j]\nsize=1m\n")["rw"] == "read"


def test_rwmix_last_written_wins():
    assert workload("[j]\nrw=randrw\nnorandommap\n")["read_fraction"] == 0.5
    assert workload("[j]\nrw=randrw\nrwmixread=70\nnorandommap\n")["read_fraction"] == 0.7
    assert workload("[j]\nrw=randrw\nrwmixwrite=30\nnorandommap\n")["read_fraction"] == 0.7
    assert workload("[j]\nrw=randrw\nrwmixread=60\nrwmixwrite=10\nnorandommap\n")["read_fraction"] == 0.9
    assert workload("[global]\nrwmixread=20\n[j]\nrw=rw\n")["read_fraction"] == 0.2


@pytest.mark.parametrize(
    "bs,rw,expected",
    [
        ("8k", "randread", 8192),
        ("8k,32k", "write", 32768),  # the write value; trims inherit it
        ("8k,32k", "read", 8192),
        (",16k", "write", 16384),
        ("4k,4k,64k", "trim", 65536),
        ("8k,32k,", "trim", 4096),  # a trailing comma leaves trims at the default
    ],
)
def test_block_size_lists(bs, rw, expected):
    assert workload(f"[j]\nrw={rw}\nbs={bs}\nnorandommap\n")["block_bytes"] == expected


def test_block_sizes_per_direction_for_mixed_jobs():
    # fio's get_next_buflen: the direction first, then its size (bs=READ,WRITE)
    w = workload("[j]\nrw=randrw\nbs=4k,8k\nnorandommap\n")
    assert w["block_bytes"] == 4096
    assert w["direction_block_sizes"] == [[{"bytes": 4096, "pct": 100.0}], [{"bytes": 8192, "pct": 100.0}], []]
    assert "different values per direction are not supported" in error("[j]\nrw=randrw\nbsrange=4k-8k,8k-16k\n")
    assert workload("[j]\nrw=randrw\nbs=8k,8k,4k\nnorandommap\n")["block_bytes"] == 8192


def test_block_size_must_be_whole_sectors():
    assert "bs=1000 is 1000 bytes; a block device takes whole 512-byte sectors: use a positive multiple of 512" in \
        error("[j]\nbs=1000\n")
    assert workload("[j]\nbs=6k\n")["block_bytes"] == 6144  # 1.5 units: accepted, at a read-modify-write's cost


# -- engine and depth --------------------------------------------------------------------------------


def test_synchronous_engines_keep_one_io_in_flight():
    p = plan("[j]\nrw=randread\niodepth=32\nnorandommap\n")  # default engine psync
    assert p.jobs[0].workload["queue_depth"] == 1
    assert any("psync (the default) is synchronous" in n for n in p.jobs[0].notes)
    p = plan("[j]\nrw=randread\niodepth=32\nioengine=libaio\ndirect=1\nnorandommap\n")
    assert p.jobs[0].workload["queue_depth"] == 32
    assert not p.jobs[0].notes


def test_direct_0_is_noted_once():
    p = plan("[a]\nioengine=libaio\n[b]\nstonewall\nioengine=libaio\n")
    assert sum("page cache" in n for n in p.notes) == 1


def test_numjobs_makes_clones_that_run_together():
    p = plan("[j]\nioengine=libaio\niodepth=32\nnumjobs=4\nrandseed=7\n[k]\nstonewall\nrw=write\n")
    assert [(j.name, j.clone) for j in p.jobs] == [("j", 0), ("j", 1), ("j", 2), ("j", 3), ("k", 0)]
    assert p.together == [[0, 1, 2, 3], [4]]
    # Clones draw their own offsets: a given randseed is offset per clone.
    assert [j.workload["seed"] for j in p.jobs[:4]] == [7, 8, 9, 10]
    steps = p.steps()
    assert [s["step"] for s in steps] == ["secure_erase", "run_together", "run"]
    assert len(steps[1]["workloads"]) == 4
    assert p.measured_step_indices() == [1, 1, 1, 1, 2]
    assert [p.member_index(i) for i in range(5)] == [0, 1, 2, 3, None]


def test_host_only_options_are_notes():
    p = plan("[global]\nfilename=/dev/sdz\nioengine=io_uring\ndirect=1\ngroup_reporting\n[j]\nrw=read\n")
    assert p.notes == ["accepted, no effect on the simulated drive: filename, ioengine, direct"]
    assert p.jobs[0].group_reporting


# -- region and amount -------------------------------------------------------------------------------


def test_region_defaults_to_the_drive_and_one_pass():
    w = workload("[j]\nrw=write\nbs=128k\n")
    assert (w["offset_bytes"], w["span_bytes"], w["byte_limit"], w["duration_s"]) == (0, DRIVE, None, None)


def test_offset_and_size():
    w = workload("[j]\nrw=write\noffset=1g\nsize=512m\n")
    assert (w["offset_bytes"], w["span_bytes"], w["byte_limit"]) == (GIB, GIB // 2, None)  # one pass
    w = workload("[j]\nrw=write\noffset=1g\n")
    assert w["span_bytes"] == DRIVE - GIB


def test_percentages_follow_fio():
    # size=N% is N% of the device, capped at what the offset leaves, whole blocks only.
    w = workload("[j]\nrw=write\nbs=64k\noffset=25%\nsize=10%\n")
    assert w["offset_bytes"] == DRIVE // 4
    assert w["span_bytes"] == (DRIVE // 10) // 65536 * 65536
    w = workload("[j]\nrw=write\noffset=50%\nsize=80%\n")
    assert w["span_bytes"] == DRIVE // 2
    # a percentage offset is aligned up to the block size (or offset_align)
    w = workload("[j]\nrw=write\nbs=1m\noffset=33%\nsize=1m\n")
    assert w["offset_bytes"] % 2**20 == 0 and w["offset_bytes"] >= DRIVE * 33 // 100


def test_io_size_filesize_and_loops():
    w = workload("[j]\nrw=write\nsize=1g\nio_size=3g\n")
    assert (w["span_bytes"], w["byte_limit"]) == (GIB, 3 * GIB)
    w = workload("[j]\nrw=write\nfilesize=1g\nsize=2g\n")  # filesize is the region, size the amount
    assert (w["span_bytes"], w["byte_limit"]) == (GIB, 2 * GIB)
    w = workload("[j]\nrw=write\nsize=1g\nloops=3\n")
    assert w["byte_limit"] == 3 * GIB
    w = workload("[j]\nrw=write\nsize=1g\nio_size=50%\n")
    assert w["byte_limit"] == GIB // 2


def test_region_past_the_drive():
    msg = error("[j]\nrw=write\noffset=3g\nsize=2g\n")
    assert msg.startswith("job.fio:4: size=2g (2147483648 bytes) at offset 3221225472 runs past the drive's")
    assert "offset=5g" in error("[j]\noffset=5g\n") and "beyond the end" in error("[j]\noffset=5g\n")


def test_region_is_rounded_to_whole_blocks():
    p = plan("[j]\nrw=write\nbs=128k\nsize=1000k\n")
    assert p.jobs[0].workload["span_bytes"] == 896 * 1024
    assert any("rounded down" in n for n in p.jobs[0].notes)


# -- time and limits ---------------------------------------------------------------------------------


def test_runtime_time_based_and_number_ios():
    w = workload("[j]\nrw=read\nsize=1g\nruntime=30\n")
    assert (w["duration_s"], w["byte_limit"]) == (30.0, GIB)  # whichever ends first
    w = workload("[j]\nrw=read\nsize=1g\nruntime=2m\ntime_based\n")
    assert (w["duration_s"], w["byte_limit"]) == (120.0, None)
    w = workload("[j]\nrw=read\nnumber_ios=1000\n")
    assert (w["io_limit"], w["byte_limit"]) == (1000, DRIVE)  # whichever ends first
    assert "time_based needs runtime=" in error("[j]\ntime_based\n")


def test_startdelay_and_ramp_time_are_the_runs_own():
    """A job alone starts and ramps within its one run (the core's start_delay_s and ramp_s, as for
    jobs that run together); with a latency target its ramp is an unreported phase of its own first,
    the delay on it."""
    p = plan("[j]\nioengine=libaio\nrw=randread\nnorandommap\nruntime=10\ntime_based\nstartdelay=5\nramp_time=2\n")
    steps = p.jobs[0].steps
    assert [s["step"] for s in steps] == ["run"]
    w = steps[0]["workload"]
    assert (w["start_delay_s"], w["ramp_s"], w["duration_s"]) == (5.0, 2.0, 10.0)
    assert p.measured_step_indices() == [1]
    p = plan("[j]\nioengine=libaio\nrw=randread\nnorandommap\nruntime=10\ntime_based\nstartdelay=5\nramp_time=2\n"
             "latency_target=1ms\n")
    steps = p.jobs[0].steps
    assert [s["step"] for s in steps] == ["run", "run"]
    assert steps[0]["workload"]["duration_s"] == 2.0 and steps[0]["workload"]["label"] == "j (ramp)"
    assert steps[0]["workload"]["start_delay_s"] == 5.0 and "start_delay_s" not in steps[1]["workload"]
    assert steps[1]["workload"]["duration_s"] == 10.0
    assert p.measured_step_indices() == [2]


def test_thinktime_caps_the_depth_like_fio():
    p = plan("[j]\nioengine=libaio\nrw=randread\nnorandommap\niodepth=8\nthinktime=250\n")
    w = p.jobs[0].workload
    assert (w["think_time_us"], w["queue_depth"]) == (250.0, 1)
    assert "thinktime_blocks=4: only 1" in error("[j]\nthinktime=1ms\nthinktime_blocks=4\n")


def test_rate_limits():
    assert workload("[j]\nrw=randread\nnorandommap\nrate_iops=500\n")["rate_iops"] == 500.0
    assert workload("[j]\nrw=write\nbs=64k\nrate=64m\n")["rate_iops"] == 1024.0
    assert workload("[j]\nrw=write\nrate_iops=100,200\n")["rate_iops"] == 200.0
    # Mixed jobs: fio caps each direction on its own; one value caps both.
    assert workload("[j]\nrw=randrw\nnorandommap\nrate_iops=500\n")["rate_iops_per_direction"] == [500.0, 500.0, None]
    w = workload("[j]\nrw=randrw\nnorandommap\nrate_iops=,300\n")
    assert w["rate_iops_per_direction"] == [None, 300.0, None] and w["rate_iops"] is None
    assert workload("[j]\nrw=randrw\nbs=8k\nnorandommap\nrate=8m,1m\n")["rate_iops_per_direction"] == [1024.0, 128.0, None]
    assert "mutually exclusive" in error("[j]\nrw=read\nrate=1m\nrate_iops=5\n")


# -- data, randomness, steady state ------------------------------------------------------------------


def test_compressibility():
    assert workload("[j]\nrw=write\n")["compressibility"] == 1.0
    assert workload("[j]\nrw=write\nrefill_buffers\n")["compressibility"] == 1.0
    assert workload("[j]\nrw=write\nbuffer_compress_percentage=60\n")["compressibility"] == pytest.approx(0.4)
    assert workload("[j]\nrw=write\nbuffer_compress_percentage=100\n")["compressibility"] == jobplan.MOST_COMPRESSIBLE
    assert workload("[j]\nrw=write\nzero_buffers\n")["compressibility"] == jobplan.MOST_COMPRESSIBLE
    assert workload("[j]\nrw=read\nzero_buffers\n")["compressibility"] == 1.0  # reads write nothing


def test_seeds_and_random_map():
    assert workload("[j]\nrw=randwrite\nnorandommap\n")["seed"] is None
    assert workload("[j]\nrw=randwrite\nrandseed=42\nnorandommap\n")["seed"] == 42
    p = plan("[j]\nrw=randwrite\n")
    assert p.jobs[0].workload["random_map"] is True
    assert [r.feature for r in p.jobs[0].requirements] == ["random_map"]
    p = plan("[j]\nrw=randwrite\nnorandommap\n")
    assert p.jobs[0].workload["random_map"] is False and not p.jobs[0].requirements
    assert "random_map" not in workload("[j]\nrw=write\n")


def test_steady_state_options():
    w = workload("[j]\nrw=randwrite\nnorandommap\ntime_based\nruntime=600\nss=iops_slope:0.5%\nss_dur=60\nss_ramp=30\n")
    assert w["steady_state"] == {"metric": "iops", "criterion": "slope", "limit": 0.5, "percent": True,
                                 "window_s": 60.0, "ramp_s": 30.0}
    w = workload("[j]\nrw=write\ntime_based\nruntime=600\nss=bw:1000000\nss_dur=1m\n")
    assert w["steady_state"] == {"metric": "bw", "criterion": "deviation", "limit": 1e6, "percent": False,
                                 "window_s": 60.0, "ramp_s": 0.0}
    # fio's default criterion applies when only ss_dur is given; without ss_dur nothing happens
    assert workload("[j]\nrw=write\nss_dur=20\nruntime=60\n")["steady_state"]["criterion"] == "slope"
    assert "steady_state" not in workload("[j]\nrw=write\nss=iops:5%\n")
    # ss_interval came in fio 3.35; fio 3.33, whose job files ssdlab reads, refuses it
    assert "option 'ss_interval' is not supported by the simulator: a later fio's option" in \
        error("[j]\nss=iops:5%\nss_dur=60\nss_interval=5s\n")
    p = plan("[j]\nrw=write\nss=iops:5%\nss_dur=60\nruntime=600\ntime_based\n")
    assert p.jobs[0].steady_state_text == "iops:5.000000%"


def test_trimwrite_needs_the_core_feature():
    p = plan("[j]\nrw=trimwrite\nsize=64m\n")
    assert [r.feature for r in p.jobs[0].requirements] == ["trim-write"]


# -- job sequencing ----------------------------------------------------------------------------------


def test_stonewall_groups_and_concurrent_jobs():
    p = plan("[a]\nrw=read\n[b]\nstonewall\nrw=read\n[c]\nnew_group\nstonewall\nrw=read\n")
    assert [j.groupid for j in p.jobs] == [0, 1, 2]
    p = plan("[a]\nrw=read\n[b]\nrw=write\n[c]\nstonewall\nrw=read\n")
    assert p.together == [[0, 1], [2]] and [j.groupid for j in p.jobs] == [0, 0, 1]
    # startdelay on a job that runs with others: the core starts it at its own time
    p = plan("[a]\nrw=read\n[b]\nrw=write\nstartdelay=5\n")
    assert p.together == [[0, 1]] and p.jobs[1].workload["start_delay_s"] == 5.0
    assert "start_delay_s" not in p.jobs[0].workload
    p = plan("[a]\nrw=read\n[b]\nrw=write\n", sequential_jobs=True)
    assert [j.groupid for j in p.jobs] == [0, 0]
    assert any("runs after 'a'" in n for n in p.notes)
    p = plan("[global]\nstonewall\n[a]\nrw=read\n[b]\nrw=write\n")  # stonewall in [global] applies to all
    assert [j.groupid for j in p.jobs] == [0, 1]


def test_sections_filter():
    p = plan("[a]\nrw=read\n[b]\nstonewall\nrw=write\n", sections=["b"])
    assert [j.name for j in p.jobs] == ["b"]
    assert "no job section named 'x'" in error("[a]\n", sections=["x"])


def test_logs_and_reporting_options():
    p = plan("[j]\nrw=read\nwrite_iops_log\nwrite_bw_log=bw/run\nlog_avg_msec=250\nlog_offset=1\nper_job_logs=0\n")
    j = p.jobs[0]
    assert [(s.kind, s.prefix) for s in j.logs] == [("iops", "j"), ("bw", "bw/run")]
    assert (j.log_msec, j.workload["interval_ms"], j.log_offset, j.per_job_logs) == (250, 250.0, True, False)
    j = plan("[j]\nrw=read\nwrite_lat_log=x\n").jobs[0]
    assert j.log_msec == 1000 and any("cannot log every IO" in n for n in j.notes)
    assert plan("[j]\npercentile_list=99:99.9\n").jobs[0].percentiles == (99.0, 99.9)
    assert "only fio's default percentiles" in error("[j]\npercentile_list=42\n")
    j = plan("[j]\nlat_percentiles=1\n").jobs[0]
    assert (j.lat_percentiles, j.clat_percentiles) == (True, False)


def test_unsupported_values_name_the_option():
    assert "a center or a second value is not supported" in error("[j]\nrw=randread\nrandom_distribution=zipf:1.2:0.5\n")
    assert "ioengine=cpuio: not a block-IO engine" in error("[j]\nioengine=cpuio\n")
    assert "option 'stonewall' takes no value" in error("[j]\nstonewall=yes\n")


# -- the consistency job file ------------------------------------------------------------------------


def test_consistency_jobfile_matches_the_core_procedure():
    """configs/jobs/consistency.fio builds the same steps as `ssdlab consistency`."""
    user = 8 * GIB
    p = planner.plan(jf.parse(REPO / "configs/jobs/consistency.fio", env={"RUNTIME": "2000"}), user)
    core = json.loads(_core.consistency_steps(json.dumps({"duration_s": 2000}), user))
    mine = p.steps()
    assert [s["step"] for s in mine] == [s["step"] for s in core]
    for a, b in zip(mine, core):
        if a["step"] != "run":
            continue
        wa, wb = a["workload"], b["workload"]
        keys = set(wb) - {"label"}
        assert {k: wa.get(k, wb[k]) for k in keys} == {k: wb[k] for k in keys}


# -- skew and size mixes -----------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("random", None),
    ("zipf:1.2", {"kind": "zipf", "theta": 1.2}),
    ("pareto:0.2", {"kind": "pareto", "h": 0.2}),
    ("normal:5", {"kind": "normal", "sigma_pct": 5.0}),
    ("zoned:60/10:30/20:10/70", {"kind": "zoned", "zones": [{"access_pct": 60.0, "size": 10.0},
                                                           {"access_pct": 30.0, "size": 20.0},
                                                           {"access_pct": 10.0, "size": 70.0}]}),
    ("zoned_abs:80/1g:20/3g", {"kind": "zoned_abs", "zones": [{"access_pct": 80.0, "size": float(GIB)},
                                                              {"access_pct": 20.0, "size": float(3 * GIB)}]}),
])
def test_random_distributions(text, expected):
    w = workload(f"[j]\nrw=randwrite\nrandom_distribution={text}\n")
    assert w.get("distribution") == expected
    if expected is not None:
        assert w["random_map"] is False  # drawn with replacement, and said so
        assert any("with replacement" in n for n in plan(f"[j]\nrw=randwrite\nrandom_distribution={text}\n").jobs[0].notes)


@pytest.mark.parametrize("text,message", [
    ("zipf:1", "not 1.0"),
    ("pareto:1.5", "between 0 and 1"),
    ("zoned:50/10:40/90", "add up to 90 %"),
    ("zoned:50/10:50/80", "sizes add up to 90 %"),
    ("zoned_abs:100/8g", "more than the job's"),
    ("gauss:3", "choose one of"),
])
def test_bad_distributions_name_the_problem(text, message):
    msg = error(f"[j]\nrw=randwrite\nrandom_distribution={text}\n")
    assert msg.startswith("job.fio:3: random_distribution=") and message in msg, msg


def test_bssplit_and_bsrange():
    w = workload("[j]\nrw=randwrite\nnorandommap\nbssplit=64k/10:4k/60:16k\n")
    # Entries without a share split what is left; sizes sorted; the smallest is block_bytes.
    assert w["block_sizes"] == [{"bytes": 4096, "pct": 60.0}, {"bytes": 16384, "pct": 30.0},
                                {"bytes": 65536, "pct": 10.0}]
    assert w["block_bytes"] == 4096
    w = workload("[j]\nrw=randread\nnorandommap\nbsrange=8k-64k\n")
    assert (w["block_range"], w["block_bytes"]) == ([8192, 65536], 8192)
    assert "add up to 110 %" in error("[j]\nbssplit=4k/60:8k/50\n")
    assert "multiple of 512" in error("[j]\nbssplit=4k/50:1000/50\n")
    assert workload("[j]\nrw=randrw\nnorandommap\nbssplit=4k/100,8k/100\n")["direction_block_sizes"][1] == \
        [{"bytes": 8192, "pct": 100.0}]  # a mix per direction (tests/test_fio_examples_gaps.py)
    assert "different values per direction" in error("[j]\nrw=randrw\nbsrange=4k-8k,8k-16k\n")
    assert "bssplit or bsrange, not both" in error("[j]\nbssplit=4k/100\nbsrange=4k-8k\n")
    assert "use bsrange=MIN-MAX" in error("[j]\nbs=4k-8k\n")
