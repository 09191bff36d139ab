"""blkparse output as blkparse prints it: events, then the summary it ends with. The fixtures are the
real blkparse's output for binary traces written here (tests/fixtures/blktrace.py); a live capture on
a loop device checks the same against real I/O. Bytes are accounted exactly, against what the
workload wrote and against an independent reading of the text."""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.errors import SsdlabError
from ssdlab.replay.formats import BlkparseParser
from ssdlab.replay.trace_latency import LatencyHistogram

from fixtures import blktrace
from fixtures.blktrace import TRACES, WORKLOAD

CAPACITY = 4 * 2**30


def drive() -> ssdlab.DriveConfig:
    return ssdlab.load_preset("mlc-256").with_user_capacity(CAPACITY)


def events_bytes(text: str, action: str) -> Tuple[int, int, int]:
    """(read, write, trim) bytes of the `action` events, read the way awk would: the sixth field is
    the action, then RWBS, sector, "+", sectors. Nothing of ssdlab's parser is used."""
    totals = [0, 0, 0]
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 10 and re.fullmatch(r"\d+,\d+", f[0]) and f[5] == action and f[8] == "+":
            rwbs = f[6]
            d = 2 if "D" in rwbs else 1 if "W" in rwbs else 0 if "R" in rwbs else None
            if d is not None:
                totals[d] += int(f[9]) * 512
    return totals[0], totals[1], totals[2]


def workload_bytes() -> Tuple[int, int, int]:
    """(read, write, trim) bytes the workload moved: every request with data, merged bios included."""
    totals = [0, 0, 0]
    for r in WORKLOAD:
        if r.op != "F":
            totals["RWD".index(r.op)] += r.sectors * 512
    return totals[0], totals[1], totals[2]


def summary_lines(text: str) -> int:
    """Lines from the first of blkparse's summary (a line that is no event) to the end, blank ones
    not counted."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines)
                 if line.strip() and not re.match(r"\s*\d+,\d+\s", line) and not line.startswith("Input file"))
    return sum(1 for line in lines[first:] if line.strip())


FIXTURES = ["sdb.blkparse.txt", "sdb-queue.blkparse.txt", "sdb-complete.blkparse.txt",
            "sdb-en_US-stats.blkparse.txt"]
ACTION = {"sdb-queue.blkparse.txt": "Q", "sdb-complete.blkparse.txt": "C"}


# -- the fixtures are the real blkparse's output --------------------------------------------------------


def test_the_fixtures_are_what_blkparse_prints(tmp_path: Path) -> None:
    version = blktrace.blkparse_version()
    if version != "1.2.0":
        pytest.skip(f"the fixtures were made by blkparse 1.2.0; here blkparse is {version or 'not installed'}")
    for name in ("sdb.blkparse.txt", "sdb-queue.blkparse.txt", "sdb-complete.blkparse.txt"):
        d = tmp_path / name
        d.mkdir()
        assert blktrace.FIXTURES[name](d) == (TRACES / name).read_text(), name
    # The en_US one differs from the C locale's output only by thousands separators ("2,048KiB") and
    # the padding they take.
    d = tmp_path / "stats"
    d.mkdir()
    blktrace.write_per_cpu(d, "sdb", blktrace.records())
    plain = blktrace.blkparse_files(d, "sdb", ["-s"])
    en_us = (TRACES / "sdb-en_US-stats.blkparse.txt").read_text()
    assert "2,048KiB" in en_us and "1,064KiB" in en_us

    def words(text: str) -> List[List[str]]:
        return [re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", line).split() for line in text.splitlines()]

    assert words(en_us) == words(plain) and en_us != plain


def test_the_fixtures_end_with_blkparses_summary() -> None:
    text = (TRACES / "sdb.blkparse.txt").read_text()
    for line in ("CPU0 (sdb):", "CPU3 (sdb):", "Total (sdb):", "Events (sdb): 173 entries",
                 "Skips: 0 forward (0 -   0.0%)", "Input file sdb.blktrace.3 added"):
        assert line in text.splitlines()
    assert " Reads Queued:          16,     2048KiB\t Writes Queued:          13,     1064KiB" in text
    queue = (TRACES / "sdb-queue.blkparse.txt").read_text()
    assert "Total (8,16):" in queue and "Input file" not in queue, "read from a pipe: no file names"
    stats = (TRACES / "sdb-en_US-stats.blkparse.txt").read_text()
    assert "fio (4242)" in stats.splitlines() and "Throughput (R/W): 227,555KiB/s / 118,279KiB/s" in stats


# -- replaying them ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_blkparse_output_with_its_summary_replays_with_exact_bytes(name: str) -> None:
    text = (TRACES / name).read_text()
    action = ACTION.get(name, "D")
    s = ssdlab.replay(TRACES / name, drive(), blkparse_action=action, timing="afap").summary
    assert s["format"] == "blkparse"
    expected = events_bytes(text, action)
    assert (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"]) == expected == workload_bytes()
    assert expected == (16 * 131072, 8 * 4096 + 512 + 2 * 4096, 2048 * 512)
    assert s["lines"]["summary"] == summary_lines(text) > 10
    assert s["lines"]["bad_skipped"] == 0 and s["lines"]["read"] == len(text.splitlines())


@pytest.mark.parametrize("action", ["D", "Q", "C"])
def test_each_action_of_a_full_capture_holds_the_same_bytes(action: str) -> None:
    s = ssdlab.replay(TRACES / "sdb.blkparse.txt", drive(), blkparse_action=action, timing="afap").summary
    assert (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"]) == workload_bytes()
    # Q counts bios (the two merged ones apart), D and C the requests the device saw.
    bios = sum(1 for r in WORKLOAD if r.op != "F")
    assert s["requests"] == (bios if action == "Q" else bios - 1)


def with_lines(tmp_path: Path, name: str, edit) -> Path:  # type: ignore[no-untyped-def]
    lines = (TRACES / "sdb.blkparse.txt").read_text().splitlines()
    path = tmp_path / name
    path.write_text("\n".join(edit(lines)) + "\n")
    return path


def test_an_event_after_the_summary_is_refused(tmp_path: Path) -> None:
    """The summary ends the trace: an event after it means two outputs joined (their times start
    again from 0), which is refused rather than replayed out of order or silently dropped."""
    lines = (TRACES / "sdb.blkparse.txt").read_text().splitlines()
    path = with_lines(tmp_path, "joined.txt", lambda ls: ls + ls[:3])
    with pytest.raises(SsdlabError, match=rf"line {len(lines) + 1}: an event after the summary blkparse ends its "
                                          r"output with \(from 'CPU0 \(sdb\):'\); are two blkparse outputs joined"):
        ssdlab.replay(path, drive())


def test_summary_variants_are_recognised(tmp_path: Path) -> None:
    def old_events_line(ls: List[str]) -> List[str]:  # blkparse before 1.0: "N entries, M skips", no Skips line
        out = [line for line in ls if not line.startswith(("Skips:", "Throughput"))]
        return [("Events (sdb): 173 entries, 0 skips" if line.startswith("Events") else line) for line in out]

    variants = {
        "cut.txt": lambda ls: ls[:ls.index("CPU1 (sdb):") + 3],  # the summary cut off part way
        "names-first.txt": lambda ls: ls[-4:] + ls[:-4],  # "Input file ... added" flushed before the events
        "many-cpus.txt": lambda ls: [f"Input file sdb.blktrace.{i} added" for i in range(64)] + ls[:-4],
        "one-cpu.txt": lambda ls: ls[:ls.index("CPU0 (sdb):")] + ["CPU2 (sdb):", " Reads Queued:    16,  2048KiB"],
        "old-events.txt": old_events_line,
        "no-summary.txt": lambda ls: ls[:ls.index("CPU0 (sdb):")],
    }
    for name, edit in variants.items():
        s = ssdlab.replay(with_lines(tmp_path, name, edit), drive(), timing="afap").summary
        assert (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"]) == workload_bytes(), name


def test_a_line_that_is_neither_event_nor_summary_is_refused(tmp_path: Path) -> None:
    path = with_lines(tmp_path, "odd.txt", lambda ls: ls[:5] + ["this is not blkparse"] + ls[5:])
    with pytest.raises(SsdlabError, match=r"line 6: not a blkparse event line .* nor part of the summary"):
        ssdlab.replay(path, drive(), format="blkparse")


# -- a capture without the chosen action --------------------------------------------------------------


@pytest.mark.parametrize("name,action,message", [
    ("sdb-queue.blkparse.txt", "D", "holds no D events (it has Q 28); choose one with --blkparse-action Q"),
    ("sdb-queue.blkparse.txt", "C", "holds no C events (it has Q 28); choose one with --blkparse-action Q"),
    ("sdb-complete.blkparse.txt", "D", "holds no D events (it has C 27); choose one with --blkparse-action C"),
])
def test_a_capture_without_the_action_says_which_it_holds(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          name: str, action: str, message: str) -> None:
    out = tmp_path / "out"
    status = main(["replay", str(TRACES / name), "--blkparse-action", action, "--capacity", "4GiB",
                   "--out", str(out), "-q"])
    err = capsys.readouterr().err
    assert status == 2 and err == f"ssdlab: error: trace '{TRACES / name}' {message}\n"
    assert not out.exists()


def test_the_counts_in_that_message_are_the_traces(tmp_path: Path) -> None:
    text = (TRACES / "sdb-queue.blkparse.txt").read_text()
    q = sum(1 for line in text.splitlines() if len(line.split()) > 8 and line.split()[5] == "Q"
            and line.split()[8] == "+")
    assert q == 28 == sum(1 for r in WORKLOAD if r.op != "F")
    only_plugs = tmp_path / "plugs.txt"
    only_plugs.write_text("\n".join(line for line in text.splitlines() if " P " in line or " U " in line) + "\n")
    with pytest.raises(SsdlabError, match=r"holds no D, Q or C events with data \(only P 28, U 28\); capture with "
                                          r"blktrace's default actions"):
        ssdlab.replay(only_plugs, drive(), format="blkparse")
    summary_only = tmp_path / "summary.txt"
    summary_only.write_text(text[text.index("CPU0 (8,16):"):])
    with pytest.raises(SsdlabError, match=r"holds no blkparse events, only its summary; was it written with "
                                          r"blkparse -O"):
        ssdlab.replay(summary_only, drive(), format="blkparse")


def test_the_parser_counts_actions_it_does_not_replay() -> None:
    p = BlkparseParser("D")
    for line in (TRACES / "sdb-queue.blkparse.txt").read_text().splitlines():
        if line.strip():
            p(line)
    assert p.ranged == {"Q": 28, "G": 27, "M": 1, "I": 1, "A": 2}
    assert p.bare == {"P": 28, "U": 28, "Q": 1, "G": 1}, "the flush's Q and G hold no sector range"
    assert p.missing("t") is not None and BlkparseParser("Q").missing("t") is not None


# -- the original latency ---------------------------------------------------------------------------


def test_the_original_latency_is_the_issue_to_completion_time() -> None:
    d2c: Dict[int, List[int]] = {0: [], 1: [], 2: []}
    for r in WORKLOAD:
        if r.op != "F" and r.merge_into is None:
            d2c["RWD".index(r.op)].append(r.d2c_ns)
    for action in ("D", "C"):
        s = ssdlab.replay(TRACES / "sdb.blkparse.txt", drive(), blkparse_action=action, timing="afap").summary
        t = s["trace_latency_us"]
        assert t["requests_with_latency"] == t["requests"] == s["requests"] == 27
        for i, d in enumerate(("read", "write", "trim")):
            values = sorted(d2c[i])
            assert t[d]["count"] == len(values)
            assert t[d]["mean"] == pytest.approx(sum(values) / len(values) / 1e3, abs=1e-9)
            assert (t[d]["min"], t[d]["max"]) == (values[0] / 1e3, values[-1] / 1e3)
            median = values[(len(values) + 1) // 2 - 1]  # the smallest with half at or below it
            assert abs(t[d]["p50"] * 1e3 - median) <= median / 64
    assert t["write"]["mean"] == pytest.approx((41_250 + 66_000 + 52_875 + 88_125 + 45_500 + 71_250 + 39_000
                                                + 95_625 + 27_000 + 120_000) / 10 / 1e3)
    # Queued bios are merged and split on the way to the device: no pairing for Q.
    q = ssdlab.replay(TRACES / "sdb.blkparse.txt", drive(), blkparse_action="Q", timing="afap").summary
    assert q["trace_latency_us"] is None


def test_only_replayed_requests_count_in_the_original_latency() -> None:
    # Reading stops at the 4th request: its completion, on a later line, is not read.
    s = ssdlab.replay(TRACES / "sdb.blkparse.txt", drive(), limit=4, timing="afap").summary
    t = s["trace_latency_us"]
    assert t["requests"] == 4 and t["requests_with_latency"] == 3 and t["read"] is None
    assert t["write"]["mean"] == pytest.approx((41_250 + 66_000 + 52_875) / 3 / 1e3)
    # A window: only the reads (1 ms to 5.65 ms after the first request) count.
    s = ssdlab.replay(TRACES / "sdb.blkparse.txt", drive(), start_s=0.0009, end_s=0.006, timing="afap").summary
    t = s["trace_latency_us"]
    assert s["writes"] == 0 and t["write"] is None and t["read"]["count"] == 16 == s["reads"]


def test_the_cli_shows_both_latencies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["replay", str(TRACES / "sdb.blkparse.txt"), "--capacity", "4GiB", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  write lat\. +p50 .*\n        trace p50 +53 µs  p99 +120 µs  max +120 µs$", text, re.M), text
    assert "trace lat. is the traced system's: blkparse D (issue) to C (completion)" in text
    assert "27 of 27 requests" in text
    saved = json.loads((out / "summary.json").read_text())
    assert saved["trace_latency_us"]["trim"]["max"] == 1480.0


def test_the_histogram_keeps_percentiles_within_its_bucket_width() -> None:
    h = LatencyHistogram()
    values = [1_000 + (i * 7919) % 10_000_000 for i in range(20_000)]
    for v in values:
        h.add(v)
    values.sort()
    for p in (1, 50, 90, 99, 99.9):
        exact = values[max(1, -(-len(values) * p // 100)) - 1] if p == int(p) else values[int(len(values) * p / 100)]
        assert abs(h.percentile(p) - exact) <= exact / 64 + 1, p
    assert h.summary_us()["mean"] == pytest.approx(sum(values) / len(values) / 1e3)  # type: ignore[index]


# -- a live capture on a loop device ------------------------------------------------------------------

MiB = 2**20


def _losetup(image: Path) -> str:
    out = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        pytest.skip(f"no loop device: {out.stderr.strip()}")
    return out.stdout.strip()


def _io(device: str) -> Tuple[int, int, int]:
    """The I/O the capture records, with dd and the BLKDISCARD ioctl; returns what it moved."""
    def dd(*args: str) -> None:
        subprocess.run(["dd", *args, "status=none"], check=True, timeout=60)

    dd("if=/dev/urandom", f"of={device}", "bs=4096", "count=3", "seek=10", "oflag=direct")
    dd("if=/dev/urandom", f"of={device}", "bs=512", "count=1", "seek=8193", "oflag=direct")
    dd("if=/dev/urandom", f"of={device}", "bs=65536", "count=2", "seek=40", "oflag=direct")
    dd(f"if={device}", "of=/dev/null", "bs=8192", "count=2", "skip=5", "iflag=direct")
    fd = os.open(device, os.O_WRONLY)
    try:
        fcntl.ioctl(fd, 0x1277, struct.pack("QQ", 4 * MiB, MiB))  # BLKDISCARD: 1 MiB at 4 MiB
    finally:
        os.close(fd)
    return 2 * 8192, 3 * 4096 + 512 + 2 * 65536, MiB


@pytest.mark.parametrize("category,action", [(None, "D"), ("queue", "Q"), ("complete", "C")])
def test_a_live_capture_replays_with_exact_bytes(tmp_path: Path, category: str, action: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("a live block trace needs root (loop devices, debugfs, blktrace)")
    for tool in ("blkparse", "losetup", "dd"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            pytest.skip(f"{tool} is not installed")
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(64 * MiB)
    device = _losetup(image)
    try:
        subprocess.run(["udevadm", "settle"], capture_output=True, timeout=60) if os.path.exists(
            "/usr/bin/udevadm") else None
        moved: List[Tuple[int, int, int]] = []
        try:
            text, how = blktrace.capture(device, tmp_path, lambda: moved.append(_io(device)), category)
        except blktrace.CaptureUnavailable as why:
            pytest.skip(f"cannot capture a block trace here: {why}")
    finally:
        subprocess.run(["losetup", "-d", device], capture_output=True, timeout=60)
    trace = tmp_path / "capture.txt"
    trace.write_text(text)
    reads, writes, trims = moved[0]
    assert "Events (" in text and ("CPU" in text or "Total" in text), f"blkparse's summary ({how})"
    s = ssdlab.replay(trace, drive(), blkparse_action=action, timing="afap").summary
    got = (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"])
    # What dd and the ioctl moved is on the device, every byte once; only reads may come from
    # others too (udev's probes), and the text says exactly which.
    assert got == events_bytes(text, action), how
    assert (got[1], got[2]) == (writes, trims) and got[0] >= reads, (got, moved, how)
    assert s["lines"]["summary"] == summary_lines(text)
    if action == "D":
        assert s["trace_latency_us"]["requests_with_latency"] == s["requests"]
