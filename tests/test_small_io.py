"""I/O of any size a block device takes: whole 512-byte sectors at sector-aligned offsets, in the
workload engine, the native scenarios and fio jobs. The drive maps 4 KiB units, so a request that
covers a unit in part costs a read-modify-write of the unit (one path for every workload:
`Drive::submit_bytes` in the core), counted in the WA (NAND bytes over host bytes) and in the NAND
reads. Each test states the arithmetic it checks.

The drive is the default preset (mlc-256) at 1 GiB: U = 262,144 units of 4096 bytes, 4 units per
multi-plane program, a 600 MB/s link.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

import ssdlab
from ssdlab import cli
from ssdlab.errors import SsdlabError
from ssdlab.simulate import Simulator

UNIT = 4096
U = 2**18  # units of the 1 GiB drive
FILL = {"step": "run", "workload": {"rw": "write", "pattern": "sequential", "block_bytes": 131072}}


def cfg() -> ssdlab.DriveConfig:
    return ssdlab.load_preset("mlc-256").with_user_capacity("1GiB")


def run(steps: List[Dict[str, Any]], seed: int = 1) -> Dict[str, Any]:
    """The last phase of `steps` on a fresh drive."""
    return Simulator(cfg(), seed=seed).run_steps(steps)[-1].phase


def write(block: int, **w: Any) -> Dict[str, Any]:
    return {"step": "run", "workload": {"rw": "write", "block_bytes": block, **w}}


def wa(phase: Dict[str, Any]) -> float:
    c = phase["counters"]
    return c["nand_write_units"] * UNIT / c["host_write_bytes"]


def test_random_512_byte_writes_on_a_fresh_drive_program_eight_times_their_bytes() -> None:
    """N = 20,000 random 512-byte writes on a fresh drive: each programs its whole 4 KiB unit, so
    NAND bytes / host bytes = 4096 / 512 = 8 before GC (less one program per write that lands in a
    unit still in the page being assembled, merged in the write buffer: about N × 4 / U ≈ 0.3).
    A never-written unit is merged with zeros, no NAND read; only writes into a unit written
    earlier in the run read it: N − distinct units, expected N − U(1 − (1 − 1/U)^N) ≈ 744
    (Poisson, σ ≈ 27; if never-written units were read too, there would be 20,000)."""
    n = 20_000
    p = run([write(512, io_limit=n)])
    c = p["counters"]
    assert p["bytes"][1] == c["host_write_bytes"] == n * 512
    assert c["gc_write_units"] == 0
    assert wa(p) == pytest.approx(8.0, rel=0.01)
    assert n - c["host_write_units"] <= 5  # units merged in the buffer: not reprogrammed
    expected = n - U * (1 - (1 - 1 / U) ** n)
    assert abs(c["host_page_reads"] - expected) < 5 * expected**0.5


def test_512_byte_writes_into_written_units_read_each_unit_first() -> None:
    """The first 512 MiB written sequentially, then N = 20,000 random 512-byte writes there: every
    unit they touch holds data, so every unit programmed was first read from NAND (reads = unit
    programs), and WA is still 4096 / 512 = 8 before GC (the drive has half its space free)."""
    n = 20_000
    half = 2**29
    p = run([{**FILL, "workload": {**FILL["workload"], "span_bytes": half}}, write(512, io_limit=n, span_bytes=half)])
    c = p["counters"]
    assert c["gc_write_units"] == 0
    assert c["host_page_reads"] == c["host_write_units"] == c["nand_write_units"]
    assert n - c["host_write_units"] <= 5  # merged in the write buffer (about N × 4 / (U / 2) ≈ 0.6)
    assert wa(p) == pytest.approx(8.0, rel=0.01)


def test_sequential_512_byte_writes_fill_units_in_the_write_buffer() -> None:
    """Sequential 512-byte writes: the unit's later sectors merge into it in the write buffer while
    its page is being assembled. Only the last unit of each P-unit program is sent to NAND with its
    first sector, so it is read back and programmed again at the start of the next page: each
    page holds P − 1 new units, WA = P / (P − 1) = 4/3, one NAND read per page. (With a
    read-modify-write from NAND for every sector, WA would be 8.)"""
    n = 80_000  # 10,000 units
    p = run([write(512, pattern="sequential", io_limit=n)])
    per = cfg().describe()["units_per_program"]
    assert per == 4
    assert wa(p) == pytest.approx(per / (per - 1), rel=0.01)
    units = n * 512 // UNIT
    assert p["counters"]["host_page_reads"] == pytest.approx(units / (per - 1), rel=0.01)


# The 4 KiB random-write phase below, before sub-4 KiB I/O existed (the same build's numbers,
# recorded before the change): whole-unit workloads keep every number bit for bit.
BEFORE = {"erases": 33654, "free_block_samples_sum": 13036304, "gc_page_reads": 201911, "gc_victims": 33654,
          "gc_write_units": 681313, "host_page_reads": 0, "host_read_units": 0, "host_write_units": 143296,
          "nand_write_units": 824609, "slc_folded_units": 0, "slc_write_units": 0, "trim_units": 0}


def test_4k_aligned_workloads_are_unchanged() -> None:
    """Secure erase, a sequential fill and 10 s of 4 KiB random writes at QD32, seed 3: the same
    counters and end time as before, host bytes = host units × 4096, and WA (NAND over host bytes)
    equal to NAND units over host units to the last bit."""
    steps = [{"step": "secure_erase"}, FILL, write(4096, duration_s=10)]
    p = Simulator(cfg(), seed=3).run_steps(steps)[-1].phase
    c = dict(p["counters"])
    assert c.pop("host_write_bytes") == c["host_write_units"] * UNIT
    assert c == BEFORE
    assert (p["end_ns"], p["ios"]) == (12923483159, [0, 143296, 0])
    assert wa(p) == BEFORE["nand_write_units"] / BEFORE["host_write_units"]


@pytest.mark.parametrize("seed", [1, 2])
def test_in_steady_state_512_byte_writes_multiply_the_gc_write_amplification_by_eight(seed: int) -> None:
    """Fill, 3 drive-fulls of units to reach steady state, then U more requests measured, at the
    same pace (3000 IOPS, below both sizes' speed: the GC's on-demand cleaning uses idle die time, so
    a slower host would leave it more and change its WA). A 512-byte write into a random unit
    invalidates and programs one unit, as a 4 KiB write does, so the GC sees the same workload
    and copies the same per unit: WA(512) = 8 × WA(4096). Over 6 seeds the ratio was within
    0.4 % of 8 (the measured phases' WA varies ~2 % from seed to seed, but both sizes draw
    alike); 2 % is a 5σ bound."""
    measured = {}
    for bs in (4096, 512):
        p = run([FILL, write(bs, io_limit=3 * U, rate_iops=3000), write(bs, io_limit=U, rate_iops=3000)], seed=seed)
        c = p["counters"]
        assert c["gc_write_units"] > 4 * c["host_write_units"], "measured in GC's steady state"
        # WA counts the host's bytes: 8 times the NAND units per host unit for 512-byte writes
        assert wa(p) == pytest.approx(c["nand_write_units"] / c["host_write_units"] * UNIT / bs, rel=1e-3)
        measured[bs] = wa(p)
    assert 6.0 < measured[4096] < 8.0
    assert measured[512] / measured[4096] == pytest.approx(8.0, rel=0.02)


def test_512_byte_reads_read_a_whole_unit_and_move_512_bytes() -> None:
    """N = 20,000 random reads at QD1 of a full drive: a 512-byte read reads its whole unit from
    NAND (one NAND read per request, as a 4 KiB read), and moves 512 bytes over the link: it is
    faster by the transfer of 3584 bytes at 600 MB/s, 5.97 µs (within 10 %: the units differ)."""
    n = 20_000
    mean = {}
    for bs in (4096, 512):
        p = run([FILL, {"step": "run", "workload": {"rw": "read", "block_bytes": bs, "queue_depth": 1,
                                                    "io_limit": n}}])
        c = p["counters"]
        assert c["host_page_reads"] == c["host_read_units"] == n
        assert p["bytes"][0] == n * bs
        mean[bs] = p["latency"][0]["mean_ns"]
    assert mean[4096] - mean[512] == pytest.approx((UNIT - 512) / 600e6 * 1e9, rel=0.10)


def test_a_mix_of_512_and_4096_bytes_programs_what_it_straddles(tmp_path: Path) -> None:
    """fio's bssplit=512/50:4k/50 on a fresh drive: random offsets align to the smallest size
    (512), so a 4 KiB request straddles two units unless it starts on a unit boundary (1 in 8):
    2 − 1/8 = 1.875 units; a 512-byte request programs one. NAND / host bytes
    = (0.5 + 0.5 × 1.875) × 4096 / (0.5 × 512 + 0.5 × 4096) = 5888 / 2304 ≈ 2.556."""
    out = fio(tmp_path, "[mix]\nrw=randwrite\nbssplit=512/50:4k/50\nnumber_ios=40000\niodepth=32\n")
    job = out["jobs"][0]
    assert job["ssdlab"]["write_amplification"] == pytest.approx(5888 / 2304, rel=0.01)
    assert job["write"]["total_ios"] == 40_000
    assert job["write"]["io_bytes"] == job["ssdlab"]["host_write_bytes"]


def test_a_512_to_8k_size_range_draws_whole_sectors(tmp_path: Path) -> None:
    """fio's bsrange=512-8k: min + ⌊(8192 − 512 + 1)·u⌋ aligned down to 512 (min is a power of two):
    k × 512 for k = 1..15 each with probability 512/7681, 8192 with 1/7681, mean
    512 × (512 × 120 + 16) / 7681 ≈ 4096.5 bytes (σ of the mean of 40,000 ≈ 11 bytes)."""
    out = fio(tmp_path, "[range]\nrw=randwrite\nbsrange=512-8k\nnumber_ios=40000\n")
    w = out["jobs"][0]["write"]
    assert w["io_bytes"] % 512 == 0
    assert w["io_bytes"] / w["total_ios"] == pytest.approx(512 * (512 * 120 + 16) / 7681, rel=0.01)


def fio(tmp_path: Path, job: str, *args: str) -> Dict[str, Any]:
    """`ssdlab fio` on a 1 GiB simulated drive; its fio-format JSON."""
    (tmp_path / "job.fio").write_text("[global]\nioengine=libaio\ndirect=1\nsize=256m\n" + job)
    status, err = run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "1GiB", "-q", "--output-format", "json",
                           "--output", str(tmp_path / "fio.json"), "--out", str(tmp_path / "out"), *args])
    assert status == 0, err
    return json.loads((tmp_path / "fio.json").read_text())


def test_a_fio_job_with_bs_512_runs_and_reports_512_byte_requests(tmp_path: Path) -> None:
    """bs=512 random writes, io_size=8m, on a fresh drive: 8 MiB / 512 = 16,384 requests of 512
    bytes, each programming a unit (64 MiB of NAND writes, WA 8), reported as fio reports them."""
    out = fio(tmp_path, "[w512]\nrw=randwrite\nbs=512\niodepth=32\nio_size=8m\n")
    job = out["jobs"][0]
    assert job["job options"]["bs"] == "512"
    w = job["write"]
    assert (w["io_bytes"], w["io_kbytes"], w["total_ios"]) == (8 * 2**20, 8192, 16_384)
    assert job["ssdlab"]["workload"]["block_bytes"] == 512
    assert job["ssdlab"]["host_write_bytes"] == 8 * 2**20
    assert job["ssdlab"]["nand_write_bytes"] == pytest.approx(64 * 2**20, rel=0.001)
    assert job["ssdlab"]["write_amplification"] == pytest.approx(8.0, rel=0.001)
    text = (tmp_path / "out" / "fio.txt").read_text()
    assert "bs=(R) 512B-512B, (W) 512B-512B, (T) 512B-512B" in text


def test_the_consistency_scenario_takes_512_byte_blocks(tmp_path: Path) -> None:
    """`ssdlab consistency --block-size 512`: the random writes are 512 bytes (host bytes = writes
    × 512) and the summary's WA counts the host's bytes: 8 × the NAND units per host unit."""
    r = ssdlab.consistency(cfg(), duration_s=5, block_size=512, seed=1)
    s = r.summary
    assert s["block_size"] == 512
    random = r.steps[-1].phase
    assert s["host_write_bytes"] == random["ios"][1] * 512 == random["counters"]["host_write_bytes"]
    c = random["counters"]
    assert s["write_amplification"] == pytest.approx(c["nand_write_units"] / c["host_write_units"] * 8, rel=1e-9)
    assert s["write_amplification"] > 8


def run_cli(args: List[str]) -> Tuple[Any, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = cli.main(args)
    return status, err.getvalue()


def refused(args: List[str], *needles: str) -> str:
    status, err = run_cli(args)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err and "panicked" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("args,needles", [
    (["consistency", "--block-size", "1000"], ("--block-size", "not a whole number of 512 B blocks",
                                               "give a multiple of 512")),
    (["saturation", "--block-size", "4100"], ("--block-size", "give a multiple of 512")),
    (["precondition", "--block-size", "700"], ("--block-size", "give a multiple of 512")),
])
def test_native_scenarios_refuse_sizes_that_are_not_whole_sectors(tmp_path: Path, args: List[str],
                                                                   needles: Tuple[str, ...]) -> None:
    refused([*args, "--capacity", "1GiB", "-q", "--out", str(tmp_path / "out")], *needles)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("job,needles", [
    ("[j]\nrw=randwrite\nbs=1000\n", ("bs=1000 is 1000 bytes", "whole 512-byte sectors", "multiple of 512")),
    ("[j]\nrw=randwrite\nbssplit=512/50:700/50\n", ("size 700 B is 700 bytes", "multiple of 512")),
    ("[j]\nrw=randwrite\nbsrange=512-1000\n", ("the largest size is 1000 bytes", "multiple of 512")),
    ("[j]\nrw=randwrite\nbs=4k\noffset=100\n", ("offset=100 is 100 bytes", "use a multiple of 512")),
])
def test_fio_refuses_sizes_and_offsets_that_are_not_whole_sectors(tmp_path: Path, job: str,
                                                                  needles: Tuple[str, ...]) -> None:
    (tmp_path / "job.fio").write_text(job)
    refused(["fio", str(tmp_path / "job.fio"), "--capacity", "1GiB", "-q", "--out", str(tmp_path / "out")], *needles)


def test_the_core_refuses_a_workload_that_is_not_whole_sectors() -> None:
    """Through the API, the core's own check: one line naming the size and the mend."""
    with pytest.raises(SsdlabError) as e:
        Simulator(cfg()).run_steps([write(1000)])
    assert "block size must be a positive multiple of 512 bytes (a sector), got 1000; use 512 or 1024" in str(e.value)
    assert "\n" not in str(e.value)
