"""fio's examples/cross-stripe-verify.fio, in the shape of its numbers (the file itself is fio's and
is not copied here): 30 clones, offset=120k, offset_increment=124g, io_size=120g, loops=2,
rw=write:112k (16 KiB written of every 128 KiB), verify=crc32c. What it would take: a drive of more
than 29 x 124 GiB + 120 KiB + 16 KiB, 240 GiB written and read back by each clone (fio's io_size
x loops), and a content store holding every written block -- the clones' regions cover the whole
drive and all write the same 16 KiB of each 128 KiB, so 1/8 of the drive's 4 KiB units, 121.9
million. The store keeps one extent per 16 KiB write (a header and its data tokens follow from a
few numbers), a quarter of an extent per unit: 30.5 million extents, next to the drive's 7.7 GiB of
mapping tables."""

from __future__ import annotations

import pytest

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio import jobfile as jf
from ssdlab.fio import planner
from ssdlab.fio import verify as fio_verify
from ssdlab.fio.simrun import drive_config

GIB = 2**30
JOB = ("[global]\nbs=16k\ndirect=1\nrw=write:112k\nverify=crc32c\nfilename=/dev/nvme0n1\nverify_backlog=1\n"
       "offset_increment=124g\nio_size=120g\noffset=120k\ngroup_reporting\nverify_dump=1\nloops=2\n\n"
       "[write-verify]\nnumjobs=30\n")


def plan_for(tmp_path, text: str, user_bytes: int):
    path = tmp_path / "job.fio"
    path.write_text(text)
    return planner.plan(jf.parse(path), user_bytes)


def test_the_store_it_needs(tmp_path):
    user = 3720 * GIB
    p = plan_for(tmp_path, JOB, user)
    assert len(p.jobs) == 30
    v = p.jobs[0].workload["verify"]
    assert v["issue_cap_bytes"] == 240 * GIB  # io_size x loops, over all loops (fio's io_issue_bytes)
    bound = fio_verify.store_units_bound(p.jobs, user)
    first = p.jobs[0].workload  # clone 0's region: from 120 KiB to the drive's end (in whole blocks)
    assert first["offset_bytes"] == 120 * 1024 and user - 16 * 1024 < 120 * 1024 + first["span_bytes"] <= user
    assert bound["union_bytes"] == first["span_bytes"]  # every other clone's region lies inside it
    assert bound["units"] == -(-first["span_bytes"] // 8 // 4096) == 121_896_956
    unit = _core.store_unit_bytes("checksums")
    extent = _core.store_extent_bytes()
    assert unit == extent + 8 * 8 + 16  # an extent of eight listed sums
    tables = int(drive_config("mlc-256", capacity=user).describe()["memory_bytes"])
    assert 8.0e9 < tables < 8.5e9
    store = fio_verify.store_peak_bytes(bound, unit, extent)
    assert store == -(-bound["units"] * extent // 4)  # one extent per 16 KiB write
    fio_verify.check_store_memory(p.jobs, user, tables, unit, extent, 23 * 10**9)  # fits this machine
    with pytest.raises(SsdlabError) as e:
        fio_verify.check_store_memory(p.jobs, user, tables, unit, extent, (tables + store) * 10 // 9 - 10**6)
    msg = str(e.value)
    assert "\n" not in msg and "job 'write-verify' and the 29 other verifying jobs" in msg
    assert "121.9 million 4 KiB units" in msg
    fio_verify.check_store_memory(p.jobs, user, tables, unit, extent, (tables + store) * 10 // 9 + 10**6)
    # With a verify pattern every sector's sum is listed: a unit costs its eight sums.
    patterned = plan_for(tmp_path, JOB.replace("verify=crc32c", "verify=pattern\nverify_pattern=0x5a"), user)
    pbound = fio_verify.store_units_bound(patterned.jobs, user)
    assert fio_verify.store_peak_bytes(pbound, unit, extent) == pbound["units"] * unit
    with pytest.raises(SsdlabError):
        fio_verify.check_store_memory(patterned.jobs, user, tables, unit, extent, 23 * 10**9)


def test_a_store_that_fits_is_not_refused(tmp_path):
    """The same job in small (offset_increment=4g, io_size=1g) on a 128 GiB drive: 4.2 million
    units at most (the regions wrap the whole drive): not refused."""
    small = JOB.replace("offset_increment=124g", "offset_increment=4g").replace("io_size=120g", "io_size=1g")
    user = 128 * GIB
    p = plan_for(tmp_path, small, user)
    bound = fio_verify.store_units_bound(p.jobs, user)
    assert bound["units"] == -(-p.jobs[0].workload["span_bytes"] // 8 // 4096) == 4_194_300
    fio_verify.check_store_memory(p.jobs, user, 400 * 10**6, _core.store_unit_bytes("checksums"),
                                  _core.store_extent_bytes(), 4 * 10**9)


def test_random_writers_have_no_bound(tmp_path):
    p = plan_for(tmp_path, "[w]\nrw=randwrite\nbs=4k\nsize=64m\nverify=crc32c\n", GIB)
    assert fio_verify.store_units_bound(p.jobs, GIB) is None
