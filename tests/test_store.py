"""The content store (crates/ssdlab/src/store.rs): what the host wrote, per 512-byte sector,
sparse, zeros where nothing was written or after TRIM; as `ssdlab._core.Store` on its own and as a
simulated drive's store, driven from the drive's request path and checked against the FTL."""

from __future__ import annotations

import json
import random

import pytest

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.simulate import Simulator

GB = 10**9
GIB = 2**30
SECTOR = 512


def stats(store):
    return json.loads(store.stats())


@pytest.mark.parametrize("mode, bound", [("checksums", 256 * 1024), ("data", 1000 * 4112 + 64 * 1024)])
def test_memory_grows_with_what_is_written_not_with_capacity(mode, bound):
    """1,000 scattered sectors of a 256 GB drive: a few hundred KB with checksums (a dense table
    of 64-bit sums would be 4 GB), about their 4 KiB units with data; trimming gives it back."""
    store = _core.Store(mode, 256 * GB // 4096 * 4096)
    assert stats(store)["memory_bytes"] < 1024
    rng = random.Random(5)
    sectors = 256 * GB // SECTOR
    for _ in range(1000):
        store.write(rng.randrange(sectors) * SECTOR, bytes([7]) * SECTOR)
    s = stats(store)
    assert s["units_held"] == 1000
    assert s["memory_bytes"] < bound, s
    store.trim(0, 256 * GB // 4096 * 4096)
    assert stats(store)["units_held"] == 0


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/statm"), reason="needs /proc")
def test_resident_memory_stays_small_on_a_256_gb_drive():
    """Measured by the kernel, not by the store's own count: a 256 GB store with 1,000 sectors
    written adds well under 2 MB to the process (a dense table of sums would be 4 GB)."""
    before = _rss()
    store = _core.Store("checksums", 256 * GB // 4096 * 4096)
    rng = random.Random(7)
    for _ in range(1000):
        store.write(rng.randrange(256 * GB // SECTOR) * SECTOR, b"\x01" * SECTOR)
    assert _rss() - before < 2 * 2**20
    assert stats(store)["units_held"] == 1000


def test_round_trip_zeros_and_sector_granular_overwrite():
    store = _core.Store("data", 1 * GIB)
    data = bytes((i * 7 + 3) % 251 for i in range(3 * SECTOR))
    store.write(5 * SECTOR, data)  # sectors 5..7: crosses no unit, starts inside one
    store.write(7 * SECTOR, data)  # sectors 7..9: crosses into the next unit
    got = store.read(4 * SECTOR, 7 * SECTOR)
    assert got[:SECTOR] == bytes(SECTOR), "a sector never written reads zeros"
    assert got[SECTOR:3 * SECTOR] == data[:2 * SECTOR]
    assert got[3 * SECTOR:6 * SECTOR] == data, "the later write wins where they overlap"
    assert got[6 * SECTOR:] == bytes(SECTOR)
    # 512 bytes over part of a unit change that sector only.
    store.write(6 * SECTOR, b"\xee" * SECTOR)
    after = store.read(4 * SECTOR, 7 * SECTOR)
    assert after[2 * SECTOR:3 * SECTOR] == b"\xee" * SECTOR
    assert after[:2 * SECTOR] == got[:2 * SECTOR] and after[3 * SECTOR:] == got[3 * SECTOR:]


@pytest.mark.parametrize("mode", ["checksums", "data"])
def test_trim_reads_zero_at_sector_granularity(mode):
    store = _core.Store(mode, 64 * 1024)
    for k in range(16):
        store.write(k * SECTOR, bytes([k + 1]) * SECTOR)
    before = [store.checksum(k * SECTOR) for k in range(16)]
    store.trim(3 * SECTOR, 2 * SECTOR)  # part of unit 0
    store.trim(8 * SECTOR, 8 * SECTOR)  # unit 1 whole
    for k in range(16):
        want = 0 if k in (3, 4) or k >= 8 else before[k]
        assert store.checksum(k * SECTOR) == want, k
    assert stats(store)["units_held"] == 1
    if mode == "data":
        assert store.read(0, 16 * SECTOR)[3 * SECTOR:5 * SECTOR] == bytes(2 * SECTOR)


def test_both_modes_give_the_same_checksums():
    a, b = _core.Store("checksums", 1 * GIB), _core.Store("data", 1 * GIB)
    rng = random.Random(1)
    for _ in range(50):
        off = rng.randrange(2048) * SECTOR
        data = bytes(rng.randrange(256) for _ in range(SECTOR * rng.randrange(1, 4)))
        a.write(off, data)
        b.write(off, data)
    for k in range(2100):
        assert a.checksum(k * SECTOR) == b.checksum(k * SECTOR)
    assert _core.Store("checksums", 4096).checksum(0) == 0


@pytest.mark.parametrize("call, message", [
    (lambda s: s.write(100, bytes(SECTOR)), "multiples of 512"),
    (lambda s: s.write(0, bytes(100)), "multiples of 512"),
    (lambda s: s.trim(1 << 40, SECTOR), "outside the store"),
    (lambda s: s.read(0, SECTOR), "keeps checksums"),
])
def test_bad_requests_are_one_line_errors(call, message):
    store = _core.Store("checksums", 1 * GIB)
    with pytest.raises(SsdlabError) as e:
        call(store)
    assert message in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(SsdlabError, match="checksums, data"):
        _core.Store("bytes", 4096)


# -- a drive's store ---------------------------------------------------------------------------------


def _steps():
    fill = {"step": "run", "workload": {"rw": "write", "pattern": "sequential", "block_bytes": 131072,
                                        "queue_depth": 8, "span_bytes": 64 * 2**20}}
    rand = {"step": "run", "workload": {"rw": "write", "pattern": "random", "block_bytes": 512, "queue_depth": 8,
                                        "span_bytes": 64 * 2**20, "byte_limit": 4 * 2**20}}
    trim = {"step": "trim", "offset_bytes": 8 * 2**20, "length_bytes": 8 * 2**20}
    return [{"step": "secure_erase"}, fill, rand, trim]


def test_a_drive_keeps_what_it_acknowledged_and_trim_and_erase_clear_it():
    sim = Simulator("mlc-256", 3)
    assert sim.store_stats() is None, "off by default"
    sim.enable_store("checksums")
    sim.run_steps(_steps())
    s = sim.store_stats()
    # 64 MiB written, 8 MiB of it trimmed: 56 MiB of 4 KiB units hold content.
    assert s["units_held"] == 56 * 256
    assert s["memory_bytes"] < 56 * 256 * 200
    sim.check_store()  # every unit with content is mapped in the FTL
    sim.run_steps([{"step": "secure_erase"}])
    assert sim.store_stats()["units_held"] == 0


def test_the_store_follows_the_ftl_while_gc_runs_hard():
    """A small drive written over three times at random, in 512-byte and 64 KiB requests, with
    TRIMs between: GC moves every unit many times; the store still holds content exactly where the
    FTL maps data (the FTL-mapping cross-check), and the run is deterministic."""
    def run():
        sim = Simulator(_small(), 9)
        sim.enable_store("checksums")
        user = sim.user_bytes
        steps = [{"step": "secure_erase"}]
        for k in range(3):
            steps.append({"step": "run", "workload": {"rw": "write", "pattern": "random", "block_bytes": 65536,
                                                      "queue_depth": 16, "byte_limit": user}})
            steps.append({"step": "run", "workload": {"rw": "write", "pattern": "random", "block_bytes": 512,
                                                      "queue_depth": 16, "byte_limit": 8 * 2**20}})
            steps.append({"step": "trim", "offset_bytes": k * 16 * 2**20, "length_bytes": 16 * 2**20})
        results = sim.run_steps(steps)
        sim.check_store()
        return sim, results

    a, _ = run()
    b, _ = run()
    assert a.counters()["gc_write_units"] > a.user_bytes // 4096, "GC copied more than a drive's worth"
    assert a.store_stats() == b.store_stats()


def _small():
    from ssdlab.config import load_preset

    return load_preset("mlc-256").with_user_capacity(1 * GIB)
