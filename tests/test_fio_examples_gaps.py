"""The mechanisms fio's own example job files needed beyond the rest (scripts/check-fio-examples.py):
rates below one request per second (1mbs_clients.fio, exitwhat.fio), a size mix per direction
(cmdprio-bssplit.fio) and offset_increment (cross-stripe-verify.fio). Numbers from fio 3.33's
rules, stated in each test."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab import limits
from ssdlab.errors import SsdlabError
from ssdlab.fio.simrun import run_jobfile
from ssdlab.simulate import Simulator

GIB = 2**30
HEAD = "[global]\nioengine=libaio\ndirect=1\n"


def run(tmp_path: Path, text: str, capacity: int = GIB, seed: int = 1):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return run_jobfile(path, "mlc-256", capacity=capacity, seed=seed)


# -- rates below one request per second ------------------------------------------------------------


def test_a_byte_rate_below_one_request_per_second_issues_what_fio_issues(tmp_path):
    """rate=300 at bs=4k: fio's rate_bps = 300 (init.c __setup_rate), and after k requests the next
    is due at k * 4096 * 10^6 / 300 us (backend.c usec_for_io: bytes issued / bps), the first at 0
    (rate_next_io_time starts at 0). 300 / 4096 = 0.0732 IOPS, a gap of 13.653 s: requests at 0,
    13.65, 27.31, 40.96 and 54.61 s; the sixth would be due at 68.27 s, past runtime=60, so
    rate_ddir (io_u.c) sleeps to the timeout and ends the job: 5 requests, 20 KiB."""
    r = run(tmp_path, HEAD + "[j]\nrw=read\nbs=4k\nrate=300\nruntime=60\ntime_based\n")
    job = r.jobs[0]
    assert job.plan.workload["rate_iops"] == pytest.approx(300 / 4096, rel=1e-12)
    assert [int(n) for n in job.phase["ios"]] == [5, 0, 0]
    # without the sub-1 IOPS rates the job was refused ("the simulator's lowest rate is 1 IOPS")
    assert limits.MIN_RATE_IOPS == 1e-6


def test_a_byte_limited_job_at_a_low_rate_takes_its_gaps(tmp_path):
    """rate=1250 (1mbs_clients.fio's rate) at bs=4k, size=64k: 16 requests, the k-th due at
    k * 4096 / 1250 = k * 3.2768 s, the last at 49.152 s."""
    r = run(tmp_path, HEAD + "[j]\nrw=read\nbs=4k\nrate=1250\nsize=64k\n")
    job = r.jobs[0]
    assert [int(n) for n in job.phase["ios"]] == [16, 0, 0]
    elapsed_s = (job.phase["end_ns"] - job.phase["start_ns"]) / 1e9
    assert 49.152 < elapsed_s < 49.153


def test_a_rate_that_would_run_the_clock_out_is_one_line_error():
    """At the lowest rate, 10^-6 IOPS (a gap of 10^15 ns), a count-limited job reaches the 10^10 s
    a rate may schedule after 10^4 requests (with 10^5 s intervals; at the default 1 s the 10^7
    series intervals bound it at 10^7 s): an error, not an overflow or a series out of memory."""
    sim = Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), seed=1)
    w = {"rw": "read", "rate_iops": 1e-6, "io_limit": 20_000, "interval_ms": 1e8}
    with pytest.raises(SsdlabError) as e:
        sim.run_steps([{"step": "run", "workload": w}])
    assert str(e.value).startswith("workload: the rate limit would hold a request past 1e10 simulated seconds")
    assert "\n" not in str(e.value)
    # 10^4 requests at 10^-3 IOPS and 1000 s intervals: 10^7 s, 10^4 intervals, no error
    sim = Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), seed=1)
    (step,) = sim.run_steps([{"step": "run", "workload": {"rw": "read", "rate_iops": 1e-3, "io_limit": 10_000,
                                                           "interval_ms": 1e6}}])
    assert step.phase["ios"][0] == 10_000
    with pytest.raises(SsdlabError) as e:
        sim.run_steps([{"step": "run", "workload": {"rw": "read", "rate_iops": 1e-7, "io_limit": 1}}])
    assert "rate_iops must be at least 0.000001" in str(e.value)


# -- a size mix per direction ----------------------------------------------------------------------


def _bytes(job):
    return [int(b) for b in job.phase["bytes"]], [int(n) for n in job.phase["ios"]]


def test_each_direction_draws_its_own_size_mix(tmp_path):
    """bssplit=4k/100,64k/100 with rw=randrw: fio draws the direction, then the size from
    bssplit[ddir] (io_u.c get_next_buflen): every read is 4 KiB, every write 64 KiB, so bytes per
    direction are exactly 4 KiB x reads and 64 KiB x writes. The reads' share of requests stays
    rwmixread=50 (binomial: within 3 sigma)."""
    r = run(tmp_path, HEAD + "[j]\nrw=randrw\nbssplit=4k/100,64k/100\nnumber_ios=4000\nnorandommap\n")
    job = r.jobs[0]
    (rb, wb, _), (ri, wi, _) = _bytes(job)
    assert ri + wi == 4000
    assert rb == 4096 * ri and wb == 65536 * wi
    assert abs(ri - 2000) < 3 * (4000 * 0.25) ** 0.5
    assert job.plan.workload["direction_block_sizes"] == [[{"bytes": 4096, "pct": 100.0}],
                                                          [{"bytes": 65536, "pct": 100.0}], []]


def test_a_mixed_mix_per_direction(tmp_path):
    """cmdprio-bssplit.fio's bssplit=64k/40:1024k/60,1024k/100: reads 40 % 64 KiB and 60 % 1 MiB,
    writes all 1 MiB. Write bytes are exactly 1 MiB per write; the read bytes are a whole number
    of 1 MiB reads (rb = ri x 64 KiB + n x 960 KiB) with n / ri = 0.6 within 3 sigma."""
    r = run(tmp_path, HEAD + "[j]\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\nnumber_ios=4000\nnorandommap\n",
            capacity=4 * GIB)
    (rb, wb, _), (ri, wi, _) = _bytes(r.jobs[0])
    assert ri + wi == 4000
    assert wb == 2**20 * wi
    n_1m, rest = divmod(rb - ri * 65536, 2**20 - 65536)
    assert rest == 0
    assert abs(n_1m / ri - 0.6) < 3 * (0.24 / ri) ** 0.5


def test_one_mix_for_every_direction_keeps_the_one_mix_field(tmp_path):
    """The same sizes for every direction stay one mix (bit-identical runs of existing jobs)."""
    r = run(tmp_path, HEAD + "[j]\nrw=randrw\nbssplit=4k/50:64k/50\nnumber_ios=100\nnorandommap\n")
    assert "direction_block_sizes" not in r.jobs[0].plan.workload
    assert r.jobs[0].plan.workload["block_sizes"] == [{"bytes": 4096, "pct": 50.0}, {"bytes": 65536, "pct": 50.0}]


# -- offset_increment --------------------------------------------------------------------------------


def _regions(text: str, capacity: int = GIB):
    from ssdlab.fio.jobfile import parse_string
    from ssdlab.fio.planner import plan

    p = plan(parse_string(text), capacity)
    return [(j.clone, j.workload["offset_bytes"], j.workload["span_bytes"]) for j in p.jobs]


def test_offset_increment_moves_each_clone():
    """filesetup.c get_start_offset: offset + subjob_number x offset_increment; without size= the
    region runs to the device's end (io_size = real_file_size - file_offset), in whole 16 KiB blocks."""
    whole = lambda n: n // 16384 * 16384  # noqa: E731
    assert _regions("[j]\nrw=write\nbs=16k\noffset=120k\noffset_increment=124m\nnumjobs=3\nio_size=1m\n") == [
        (0, 122880, whole(GIB - 122880)),
        (1, 122880 + 124 * 2**20, whole(GIB - 122880 - 124 * 2**20)),
        (2, 122880 + 248 * 2**20, whole(GIB - 122880 - 248 * 2**20)),
    ]


def test_a_percentage_increment_is_of_the_device_and_aligns_up():
    """offset_increment=10%: 10 x 2^30 / 100 = 107374182 bytes, and (align = true) the sum aligns up
    to the minimum block size, 64 KiB: clone 0 at 4096 -> 65536, clone 1 at 4096 + 107374182 =
    107378278 -> 1639 x 65536 = 107413504, clone 2 at 214752460 -> 3277 x 65536 = 214761472."""
    regions = _regions("[j]\nrw=write\nbs=64k\noffset=4k\noffset_increment=10%\nnumjobs=3\nio_size=1m\n")
    assert [o for _, o, _ in regions] == [65536, 107413504, 214761472]


def test_a_clone_past_the_end_is_refused_with_fios_reason():
    """Clone 9 of offset_increment=124m starts at 9 x 124 MiB = 1116 MiB, past a 1 GiB device:
    fio fails that clone's setup ("you need to specify valid offset=")."""
    with pytest.raises(SsdlabError) as e:
        _regions("[j]\nrw=write\nbs=16k\noffset_increment=124m\nnumjobs=10\nio_size=1m\n")
    assert "clone 9 of job 'j' starts at 1170210816 bytes (offset + 9 x 130023424)" in str(e.value)


def test_clones_with_an_increment_write_their_own_regions(tmp_path):
    """Two clones, 512 MiB apart, each writing its first 1 MiB sequentially: the drive holds 2 MiB
    of distinct data (no clone overwrote the other's), 256 + 256 writes of 4 KiB."""
    r = run(tmp_path, HEAD + "[j]\nrw=write\nbs=4k\noffset_increment=512m\nnumjobs=2\nio_size=1m\n")
    assert [int(j.phase["ios"][1]) for j in r.jobs] == [256, 256]
    assert [j.plan.workload["offset_bytes"] for j in r.jobs] == [0, 512 * 2**20]
