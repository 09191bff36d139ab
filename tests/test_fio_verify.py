"""fio's ``verify`` on a simulated drive (python/ssdlab/fio/verify.py, crates/ssdlab/src/workload/
verify.rs): what is read back, what it costs, and failures reported as fio 3.33 reports them.

The expected lines and figures of the failure cases are fio 3.33's own, from the same job files
run on a file (overlap, verify_only, patterns) or on a loop device (the TRIM case), as noted."""

from __future__ import annotations

import json

import pytest

from ssdlab.cli import main
from ssdlab.fio import options as opts
from ssdlab.fio import verify as fio_verify
from ssdlab.fio.jobfile import RawOption, Location
from ssdlab.fio.simrun import run_jobfile

EILSEQ_LINE = ("fio: pid=0, err=84/file:io_u.c:2152, func=io_u_sync_complete, error=Invalid or incomplete multibyte "
               "or wide character")
ERR84 = ("err=84 (file:io_u.c:2152, func=io_u_sync_complete, error=Invalid or incomplete multibyte or wide "
         "character)")


def fio(tmp_path, capsys, text, *extra):
    path = tmp_path / "job.fio"
    path.write_text(text)
    status = main(["fio", str(path), "--capacity", "1GiB", "-q", "--output-format", "json", *extra])
    out, err = capsys.readouterr()
    doc = json.loads(out) if out.strip().startswith("{") else None
    return status, doc, err


def ddir(job, name):
    d = job[name]
    return d["io_bytes"], d["total_ios"], d["runtime"]


# -- a clean run ---------------------------------------------------------------------------------------


def test_a_clean_run_reads_back_everything_it_wrote_and_reports_the_reads(tmp_path, capsys):
    """fio 3.33 on a file: write 1 MiB in 256 random 4 KiB blocks, read 1 MiB back in 256 reads,
    error 0, exit 0; the verify reads are reported under "read"."""
    status, doc, err = fio(tmp_path, capsys, "[w]\nsize=1m\nbs=4k\nrw=randwrite\nverify=crc32c\n")
    assert status == 0, err
    (job,) = doc["jobs"]
    assert job["error"] == 0
    assert ddir(job, "write")[:2] == (1 << 20, 256)
    assert ddir(job, "read")[:2] == (1 << 20, 256)
    v = job["ssdlab"]["verify"]
    assert (v["verified_blocks"], v["error"], v["messages"]) == (256, 0, [])
    # The reads cost simulated time: the read runtime is the verify phase's, the write runtime the
    # write pass's, and the job's whole runtime holds both.
    assert job["read"]["runtime"] == max(round(v["verify_ns"] / 1e6), 1)
    assert job["write"]["runtime"] == max(round(v["write_ns"] / 1e6), 1)
    assert v["verify_ns"] > 0 and v["write_ns"] > 0
    assert job["ssdlab"]["runtime_s"] == pytest.approx((v["verify_ns"] + v["write_ns"]) / 1e9)
    assert "verify" not in err


def test_without_verify_there_are_no_reads_and_the_run_is_shorter(tmp_path):
    """The mechanism: the same job without verify reads nothing, and verify makes the job longer
    by the time its reads take."""
    def run(extra):
        path = tmp_path / f"j{len(extra)}.fio"
        path.write_text("[w]\nsize=1m\nbs=4k\nrw=randwrite\nioengine=libaio\niodepth=4\n" + extra)
        return run_jobfile(path, "mlc-256", capacity=2**30, seed=3).jobs[0]
    plain, checked = run(""), run("verify=md5\n")
    assert plain.phase["ios"] == [0, 256, 0] and "verify" not in plain.phase
    assert checked.phase["ios"] == [256, 256, 0]
    assert checked.runtime_s > plain.runtime_s
    assert checked.phase["verify"]["verified_blocks"] == 256


# -- failures, as fio reports them ---------------------------------------------------------------------


def test_overlapping_jobs_fail_with_fios_message_error_and_exit_status(tmp_path, capsys):
    """Two jobs writing overlapping regions at the same time. On a file, fio 3.33 printed
    "verify: bad header numberio 0, wanted 128 at file ... offset 524288, length 4096 (requested
    block: offset=524288, length=4096)" and exit status 1 for whichever job lost the race; the
    simulated race is decided: job a overwrites b's first half half a pass later, so b finds a's
    129th write where its first block should be."""
    text = "[global]\nsize=1m\nbs=4k\nrw=write\nverify=crc32c\n[a]\n[b]\noffset=512k\n"
    status, doc, err = fio(tmp_path, capsys, text)
    assert status == 1
    assert err.splitlines() == [
        "verify: bad header numberio 128, wanted 0 at file b.0.0 offset 524288, length 4096 (requested block: "
        "offset=524288, length=4096)",
        EILSEQ_LINE,
    ]
    a, b = doc["jobs"]
    assert (a["error"], b["error"]) == (0, 84)
    assert ddir(a, "read")[:2] == (1 << 20, 256)
    assert ddir(b, "read")[:2] == (4096, 1), "b stops at its first bad block"
    # The normal output's job line, as fio's.
    path = tmp_path / "job.fio"
    assert main(["fio", str(path), "--capacity", "1GiB", "-q"]) == 1
    out = capsys.readouterr().out
    assert f"b: (groupid=0, jobs=1): {ERR84}: simulated" in out
    assert "a: (groupid=0, jobs=1): err= 0: simulated" in out


def test_trim_between_write_and_verify_reads_zeros(tmp_path, capsys):
    """Written with verify headers (do_verify=0), 8 KiB trimmed, then read back with verify. fio
    3.33 on a loop device: w wrote 65536 bytes in 16 IOs, t trimmed 8192 in 2, v read 20480 bytes in
    5 IOs and failed with "verify: bad magic header 0, wanted acca at file /dev/loop1 offset 16384,
    length 4096 (requested block: offset=16384, length=4096)", exit 1."""
    text = ("[global]\nsize=64k\nbs=4k\n[w]\nrw=write\nverify=crc32c\ndo_verify=0\n[t]\nstonewall\nrw=trim\n"
            "offset=16k\nsize=8k\n[v]\nstonewall\nrw=read\nverify=crc32c\n")
    status, doc, err = fio(tmp_path, capsys, text)
    assert status == 1
    assert err.splitlines() == [
        "verify: bad magic header 0, wanted acca at file v.0.0 offset 16384, length 4096 (requested block: "
        "offset=16384, length=4096)",
        EILSEQ_LINE,
    ]
    w, t, v = doc["jobs"]
    assert (w["error"], t["error"], v["error"]) == (0, 0, 84)
    assert ddir(w, "write")[:2] == (65536, 16) and ddir(w, "read")[:2] == (0, 0)
    assert ddir(t, "trim")[:2] == (8192, 2)
    assert ddir(v, "read")[:2] == (20480, 5)
    # Without the TRIM the same read verifies clean.
    status, doc, err = fio(tmp_path, capsys, text.replace("rw=trim", "rw=read"))
    assert status == 0 and doc["jobs"][2]["error"] == 0, err


def test_verify_only_on_a_region_never_written(tmp_path, capsys):
    """fio 3.33: "verify: bad magic header 0, wanted acca at file ... offset 0, length 4096
    (requested block: offset=0, length=4096)"; 16 phantom writes of 65536 bytes reported with
    runtime 0, one read of 4096 bytes, error 84, exit 1."""
    status, doc, err = fio(tmp_path, capsys, "[w]\nsize=64k\nbs=4k\nrw=write\nverify=crc32c\nverify_only\n")
    assert status == 1
    assert err.splitlines()[0] == ("verify: bad magic header 0, wanted acca at file w.0.0 offset 0, length 4096 "
                                   "(requested block: offset=0, length=4096)")
    (job,) = doc["jobs"]
    assert job["error"] == 84
    assert ddir(job, "write") == (65536, 16, 0)
    assert (job["write"]["iops"], job["write"]["bw"]) == (0.0, 0)
    assert ddir(job, "read")[:2] == (4096, 1)
    assert job["ssdlab"]["host_write_bytes"] == 0, "verify_only issues no writes"


def test_patterns_and_types_fail_as_fio_prints_them(tmp_path, capsys):
    """fio 3.33 on a file with this job file printed exactly these lines (CRC values aside: they
    are the simulator's checksums here) and exited 2: two jobs in error. A crc32c check of data
    written with another pattern passes (fio checks the header's checksum, not the pattern)."""
    text = ("[global]\nsize=64k\nbs=4k\nrw=write\n"
            "[w]\nverify=pattern\nverify_pattern=0xaa\ndo_verify=0\n"
            "[v]\nstonewall\nverify=pattern\nverify_pattern=0xab\nverify_only\n"
            "[w2]\nstonewall\nverify=crc32c\nverify_pattern=0x12345678\ndo_verify=0\n"
            "[v2]\nstonewall\nverify=crc32c\nverify_pattern=0x12345679\nverify_only\n"
            "[v3]\nstonewall\nverify=md5\nverify_only\n")
    status, doc, err = fio(tmp_path, capsys, text)
    assert status == 2
    lines = err.splitlines()
    assert lines[:5] == [
        "fio: got pattern 'aa', wanted 'ab'. Bad bits 1",
        "fio: bad pattern block offset 0",
        "pattern: verify failed at file v.0.0 offset 0, length 2863311530 (requested block: offset=0, length=4096, "
        "flags=88)",
        "fio: verify type mismatch (43690 media, 18 given)",
        EILSEQ_LINE,
    ]
    assert lines[5] == ("md5: verify failed at file v3.0.0 offset 0, length 4096 (requested block: offset=0, "
                        "length=4096, flags=88)")
    assert lines[6].startswith("       Expected CRC: ") and lines[7].startswith("       Received CRC: ")
    assert lines[8:] == ["fio: verify type mismatch (5 media, 2 given)", EILSEQ_LINE]
    assert [j["error"] for j in doc["jobs"]] == [0, 84, 0, 0, 84]


def test_a_different_seed_or_run_gives_the_same_verdict(tmp_path, capsys):
    text = "[global]\nsize=1m\nbs=4k\nrw=randwrite\nverify=crc32c\nioengine=libaio\niodepth=8\n[a]\n[b]\noffset=256k\n"
    runs = [fio(tmp_path, capsys, text, "--seed", str(s)) for s in (1, 1, 2)]
    assert runs[0][0] == runs[1][0] and runs[0][2] == runs[1][2]
    assert [j["ssdlab"]["verify"] for j in runs[0][1]["jobs"]] == [j["ssdlab"]["verify"] for j in runs[1][1]["jobs"]]
    assert all(r[0] >= 1 for r in runs), "random overlapping writers always clash somewhere"


# -- the other verify options --------------------------------------------------------------------------


def test_backlog_verifies_while_writing(tmp_path):
    def run(extra):
        path = tmp_path / f"b{len(extra)}.fio"
        path.write_text("[w]\nsize=2m\nbs=4k\nrw=randwrite\nverify=crc32c\nioengine=libaio\niodepth=8\n" + extra)
        return run_jobfile(path, "mlc-256", capacity=2**30, seed=1).jobs[0].phase
    with_backlog, without = run("verify_backlog=16\n"), run("")
    for p in (with_backlog, without):
        assert p["ios"][:2] == [512, 512] and p["verify"]["verified_blocks"] == 512
    # Most reads happen during the write pass: it takes longer, and the last verify phase is short
    # (measured 2.7 ms against 15.3 ms: the 8-deep verify reads overlap on the dies).
    assert with_backlog["verify"]["write_ns"] > 2 * without["verify"]["write_ns"]
    assert with_backlog["verify"]["verify_ns"] * 4 < without["verify"]["verify_ns"]


def test_verify_interval_and_fatal(tmp_path):
    base = "[w]\nsize=1m\nbs=16k\nrw=write\nverify=sha256\nverify_interval=4k\n"
    path = tmp_path / "i.fio"
    path.write_text(base)
    p = run_jobfile(path, "mlc-256", capacity=2**30, seed=1).jobs[0].phase
    assert (p["verify"]["verified_blocks"], p["verify"]["error"]) == (64, 0)


def test_time_based_writes_never_reach_their_verify_phase(tmp_path, capsys):
    """fio 3.33: "fio: verification read phase will never start because write phase uses all of
    runtime"; it wrote for the whole runtime and read nothing."""
    status, doc, err = fio(tmp_path, capsys, "[w]\nsize=64k\nbs=4k\nrw=write\nverify=crc32c\ntime_based\nruntime=1\n")
    assert status == 0
    (job,) = doc["jobs"]
    assert job["read"]["total_ios"] == 0 and job["write"]["total_ios"] > 1000
    assert job["write"]["runtime"] == 1000
    assert any("verification read phase will never start" in n for n in doc["ssdlab"]["notes"])


def test_loops_repeat_write_and_verify(tmp_path):
    path = tmp_path / "l.fio"
    path.write_text("[w]\nsize=256k\nbs=4k\nrw=randwrite\nverify=crc32c\nloops=3\n")
    p = run_jobfile(path, "mlc-256", capacity=2**30, seed=1).jobs[0].phase
    assert p["ios"][:2] == [192, 192]
    assert (p["verify"]["passes"], p["verify"]["verified_blocks"]) == (3, 192)


# -- what is refused, and the registry ----------------------------------------------------------------


@pytest.mark.parametrize("line, message", [
    ("verify=CRC32C", "not one of fio's verify types"),
    ("verify=crc32c-intel\nverify_interval=256", "whole 512-byte sectors"),
    ("verify=pattern", "needs verify_pattern"),
    ("verify=crc32c\nverify_pattern=%o", "format specifiers"),
    ("verify=crc32c\nverify_offset=64", "moves fio's header"),
    ("verify=crc32c\ntrim_percentage=10", "not simulated yet"),
    ("verify=crc32c\nexperimental_verify=1", "not simulated"),
    ("verify_only", "verify_only needs verify="),
])
def test_refusals_are_one_line(tmp_path, capsys, line, message):
    status, doc, err = fio(tmp_path, capsys, f"[w]\nsize=64k\nbs=4k\nrw=write\n{line}\n")
    assert status == 2 and doc is None
    assert err.startswith("ssdlab: error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("name", sorted(fio_verify.TYPES))
def test_every_fio_verify_type_is_accepted(tmp_path, name):
    extra = "verify_pattern=0x5a\n" if name == "pattern" else ""
    path = tmp_path / "t.fio"
    path.write_text(f"[w]\nsize=64k\nbs=4k\nrw=write\nverify={name}\n{extra}")
    p = run_jobfile(path, "mlc-256", capacity=2**30, seed=1).jobs[0].phase
    if name == "0":
        assert "verify" not in p and p["ios"][0] == 0
    else:
        assert p["ios"][0] == 16 and p["verify"]["error"] == 0


def test_verify_options_have_a_status_and_a_reason():
    names = ["verify", "do_verify", "verify_only", "verify_interval", "verify_offset", "verify_pattern",
             "verify_fatal", "verify_dump", "verify_async", "verify_backlog", "verify_backlog_batch",
             "verify_async_cpus", "experimental_verify", "verify_state_load", "verify_state_save",
             "trim_percentage", "trim_verify_zero", "trim_backlog", "trim_backlog_batch"]
    for n in names:
        s = opts.spec(n)
        assert s is not None and s.help and "issue 24" not in s.help, n
    supported = {n for n in names if opts.spec(n).kind == opts.SIM}
    assert supported == {"verify", "do_verify", "verify_only", "verify_interval", "verify_pattern", "verify_fatal",
                         "verify_backlog", "verify_backlog_batch"}


@pytest.mark.parametrize("text, expected", [
    ("0xff", b"\xff"), ("0xdeadbeef", b"\xde\xad\xbe\xef"), ("0xabc", b"\x0a\xbc"), ("0xff0x14", b"\xff\x14"),
    ("1234", b"\xd2\x04"), ("0", b"\x00"), ('"abc"', b"abc"), ('0x01"xy"2', b"\x01xy\x02"),
])
def test_verify_pattern_is_read_as_fio_reads_it(text, expected):
    assert fio_verify.parse_pattern(RawOption("verify_pattern", text, Location("j.fio", 1))) == expected


def test_continue_on_error_counts_failed_blocks_and_goes_on(tmp_path, capsys):
    """fio's td_non_fatal_error: a failed verify is EILSEQ, a verify error; with
    continue_on_error=verify (EILSEQ is in ignore_error's default list) fio logs every failed block,
    counts it (total_err, first_error) and reads on. Job b's first 128 blocks hold job a's writes."""
    text = ("[global]\nsize=1m\nbs=4k\nrw=write\nverify=crc32c\n[a]\n[b]\noffset=512k\n"
            "continue_on_error=verify\n")
    status, doc, err = fio(tmp_path, capsys, text)
    assert status == 0, err
    assert sum("bad header numberio" in ln for ln in err.splitlines()) == 128
    b = doc["jobs"][1]
    assert b["error"] == 0 and b["ssdlab"]["verify"]["ignored_errors"] == 128
    assert ddir(b, "read")[:2] == (1 << 20, 256)
    path = tmp_path / "job.fio"
    phase = run_jobfile(path, "mlc-256", capacity=2**30, seed=1).jobs[1].phase
    assert (phase["ignored_errors"], phase["first_ignored_error"]) == (128, 84)
    # ignore_error without EILSEQ for verify errors: the first failure ends the job again.
    status, doc, err = fio(tmp_path, capsys, text + "ignore_error=,,EIO\n")
    assert status == 1 and doc["jobs"][1]["error"] == 84
