"""Trace replay: every format reads to the same requests, units per format, byte accounting,
selection, fitting, timing, malformed lines, the CLI."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
from pathlib import Path
from typing import List, Tuple

import pytest
import zstandard

import ssdlab
from ssdlab.cli import main
from ssdlab.errors import SsdlabError
from ssdlab.replay.formats import FORMATS, blkparse_parser, decimal_ns, sniff
from ssdlab.replay.writers import TRIMS, write_lines

CAPACITY = 2 * 2**30
Req = Tuple[int, int, int, int]


def drive() -> ssdlab.DriveConfig:
    return ssdlab.load_preset("mlc-256").with_user_capacity(CAPACITY)


def sample_requests(n: int = 3000, seed: int = 7) -> List[Req]:
    """Reads and writes of 512 B multiples (some unaligned to 4 KiB) at whole-second times, so
    every format can hold them exactly (Tencent counts whole seconds)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        length = rng.choice((4096, 8192, 65536, 512, 1536 + 4096))
        offset = rng.randrange(0, (CAPACITY - 65536) // 512) * 512
        out.append((0 if rng.random() < 0.4 else 1, offset, length, (1_000 + i // 50) * 10**9))
    return out


def write_trace(path: Path, fmt: str, reqs: List[Req]) -> Path:
    text = "\n".join(write_lines(fmt, reqs)) + "\n"
    data = text.encode()
    opener = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
              ".zst": zstandard.ZstdCompressor().compress}.get(path.suffix)
    path.write_bytes(opener(data) if opener else data)
    return path


def totals(reqs: List[Req]) -> Tuple[int, int, int]:
    return tuple(sum(r[2] for r in reqs if r[0] == d) for d in (0, 1, 2))  # type: ignore[return-value]


REQS = sample_requests()


@pytest.mark.parametrize("fmt,ext", [("msr", ".gz"), ("fiu", ".bz2"), ("spc", ".xz"), ("alibaba", ".zst"),
                                     ("tencent", ""), ("blkparse", ".gz"), ("iolog", ""), ("disksim", "")])
def test_the_same_requests_in_every_format_replay_to_the_same_bytes(tmp_path: Path, fmt: str, ext: str) -> None:
    path = write_trace(tmp_path / f"trace.{fmt}{ext}", fmt, REQS)
    r = ssdlab.replay(path, drive(), timing="afap", qd=8)
    s = r.summary
    assert s["format"] == fmt and s["format_sniffed"], "auto found the format"
    assert s["compression"] == {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", "": None}[ext]
    read, write, trim = totals(REQS)
    assert (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"]) == (read, write, trim)
    assert s["requests"] == len(REQS) == s["reads"] + s["writes"]
    assert s["reads"] == sum(1 for r in REQS if r[0] == 0)
    unaligned = sum(1 for _, o, n, _ in REQS if o % 4096 or (o + n) % 4096)
    assert sum(s["unaligned_requests"].values()) == unaligned
    # Whole units touched: a request covers units floor(o/4096) .. ceil((o+n)/4096).
    units = sum(-(-(o + n) // 4096) - o // 4096 for d, o, n, _ in REQS if d == 1)
    assert s["units"]["write"] == units == s["host_write_units"]
    # The series holds every byte too, and the per-direction latency table every request.
    assert r.series["write_mb_s"].sum() * 1e6 * r.interval_s == pytest.approx(write, rel=1e-9)
    assert int(r.latency.set_index("direction").loc["read", "count"]) == s["reads"]


@pytest.mark.parametrize("fmt", sorted(TRIMS))
def test_trims_are_accounted_in_the_formats_that_have_them(tmp_path: Path, fmt: str) -> None:
    rng = random.Random(3)
    reqs = [(rng.choice((0, 1, 2)), rng.randrange(0, 2**20) * 512, rng.choice((512, 4096, 65536 + 512)), i * 10**6)
            for i in range(1500)]
    s = ssdlab.replay(write_trace(tmp_path / f"t.{fmt}", fmt, reqs), drive(), timing="afap").summary
    assert (s["host_read_bytes"], s["host_write_bytes"], s["host_trim_bytes"]) == totals(reqs)
    # Units a TRIM covers whole are unmapped; the rest of its bytes are counted as left mapped.
    whole = sum(max(0, (o + n) // 4096 - -(-o // 4096)) for d, o, n, _ in reqs if d == 2)
    assert s["units"]["trim"] == whole
    assert s["trim_bytes_not_unmapped"] == totals(reqs)[2] - whole * 4096


def test_every_format_replays_identically_at_trace_timing(tmp_path: Path) -> None:
    """Times too: the same requests in every format give the same simulation, bit for bit."""
    seen = {}
    for fmt in FORMATS:
        s = ssdlab.replay(write_trace(tmp_path / f"t.{fmt}", fmt, REQS[:600]), drive(), format=fmt).summary
        seen[fmt] = (s["host_write_bytes"], s["duration_s"], s["latency_us"]["write"]["p99"],
                     s["latency_us"]["read"]["max"])
    assert len(set(seen.values())) == 1, seen


# -- units per format: one line each, the numbers from the format's definition ----------------------


@pytest.mark.parametrize("fmt,line,expected", [
    ("msr", "128166372003061629,hm,1,Write,3154678784,24576,1331",
     (1, 3154678784, 24576, 12816637200306162900, "hm_1")),
    ("fiu", "89594233325748 4890 syslogd 35339456 8 W 6 0 4b3e1f7cbbc3a4b1bb5e0a3b6a5b7a2c",
     (1, 35339456 * 512, 8 * 512, 89594233325748, "6,0")),
    ("spc", "0,303567,3584,w,0.026214", (1, 303567 * 512, 3584, 26_214_000, "0")),
    ("alibaba", "419,W,8851845120,4096,1577808000000158", (1, 8851845120, 4096, 1577808000000158000, "419")),
    ("tencent", "1538323200,1000,8,0,1283", (0, 1000 * 512, 8 * 512, 1538323200 * 10**9, "1283")),
    ("disksim", "12.5 3 1024 16 1", (0, 1024 * 512, 16 * 512, 12_500_000, "3")),
])
def test_each_format_reads_its_units(fmt: str, line: str, expected: tuple) -> None:
    assert FORMATS[fmt].make_parser()(line) == expected


def test_blkparse_reads_the_dispatch_events_and_skips_the_rest() -> None:
    parse = blkparse_parser("D")
    assert parse("  8,0    3        1     0.000000000  4162  Q  WS 3417048 + 8 [kworker]") is None
    assert parse("  8,0    3        2     0.000012345  4162  D  WS 3417048 + 8 [kworker]") == (
        1, 3417048 * 512, 4096, 12_345, "8,0")
    assert parse("  8,0    3        3     1.5  4162  D  DS 2048 + 2048 [fstrim]") == (2, 2048 * 512, 2048 * 512,
                                                                                     1_500_000_000, "8,0")
    assert parse("  8,0    3        4     1.6  4162  D  FWS [kworker]") is None, "a flush holds no data"
    assert parse("CPU0 (8,0):") is None


def test_iolog_v2_takes_its_clock_from_waits() -> None:
    p = FORMATS["iolog"].make_parser()
    assert p("fio version 2 iolog") is None
    assert p("/dev/sdb add") is None
    assert p("/dev/sdb read 4096 8192") == (0, 4096, 8192, 0, "/dev/sdb")
    assert p("/dev/sdb wait 1500") is None
    assert p("/dev/sdb trim 0 65536") == (2, 0, 65536, 1_500_000, "/dev/sdb")


def test_decimal_times_are_exact() -> None:
    assert decimal_ns("1538323200.123456789", 10**9) == 1538323200123456789
    assert decimal_ns("0.5", 10**6) == 500_000
    with pytest.raises(ValueError):
        decimal_ns("-1", 10**9)


def test_the_sniffer_refuses_what_it_does_not_know() -> None:
    name, why = sniff(["hello world\n", "this is not a trace\n"])
    assert name is None and "none of its first 2 lines" in why


# -- malformed lines -------------------------------------------------------------------------------


def test_a_malformed_line_is_an_error_naming_it_or_a_counted_skip(tmp_path: Path) -> None:
    lines = list(write_lines("alibaba", REQS[:100]))
    lines[41] = "7,X,4096,4096,1000"
    lines[70] = "7,W,4096"
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SsdlabError, match=r"line 42: opcode 'X' is neither R nor W .*--skip-bad-lines"):
        ssdlab.replay(path, drive(), format="alibaba")
    s = ssdlab.replay(path, drive(), format="alibaba", skip_bad_lines=True).summary
    assert s["lines"]["bad_skipped"] == 2 and s["requests"] == 98
    assert "line 42" in s["first_bad_line"]
    good = REQS[:41] + REQS[42:70] + REQS[71:100]
    assert s["host_write_bytes"] == totals(good)[1]


def test_a_header_row_is_skipped_once(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text("Timestamp,Offset,Size,IOType,VolumeID\n" + "\n".join(write_lines("tencent", REQS[:50])) + "\n")
    s = ssdlab.replay(path, drive(), format="tencent").summary
    assert s["lines"]["header"] == 1 and s["requests"] == 50


# -- selection, fitting, timing --------------------------------------------------------------------


def test_device_window_and_limit_select_requests(tmp_path: Path) -> None:
    lines = []
    for i, (d, o, n, t) in enumerate(REQS[:400]):
        lines.append(f"{t // 100},{'hm' if i % 2 else 'web'},0,{('Read', 'Write')[d]},{o},{n},10")
    path = tmp_path / "multi.csv"
    path.write_text("\n".join(lines) + "\n")
    both = ssdlab.replay(path, drive())
    assert both.summary["devices"] == 2 and "--trace-device" in both.summary["note"]
    hm = ssdlab.replay(path, drive(), trace_device="hm_0").summary
    mine = [r for i, r in enumerate(REQS[:400]) if i % 2]
    assert hm["requests"] == 200 and hm["host_write_bytes"] == totals(mine)[1]
    assert hm["lines"]["other_device"] == 200
    # Times are whole seconds from 1000 s, 50 requests each: the window [2, 4) holds seconds 2 and 3.
    first = mine[0][3]
    window = [r for r in mine if 2 * 10**9 <= r[3] - first < 4 * 10**9]
    w = ssdlab.replay(path, drive(), trace_device="hm_0", start_s=2, end_s=4).summary
    assert w["requests"] == len(window) == 50 and w["host_read_bytes"] == totals(window)[0]
    assert ssdlab.replay(path, drive(), limit=17).summary["requests"] == 17


def test_offsets_beyond_the_drive_are_refused_or_folded(tmp_path: Path) -> None:
    far = [(1, 6 * 2**30 + 512, 4096, 10**9), (1, 100 * 4096, 8192, 2 * 10**9), (0, 8 * 2**30 - 4096, 4096, 3 * 10**9)]
    path = write_trace(tmp_path / "far.csv", "alibaba", far)
    with pytest.raises(SsdlabError, match=r"line 1: 4096 bytes at offset 6442451456 do not fit .*--fit wrap"):
        ssdlab.replay(path, drive())
    for fit in ("wrap", "scale"):
        s = ssdlab.replay(path, drive(), fit=fit).summary
        assert s["host_write_bytes"] == 4096 + 8192 and s["host_read_bytes"] == 4096
        # Placement keeps each request's position in its unit: the first stays unaligned, the rest not.
        assert s["unaligned_requests"] == {"read": 0, "write": 1, "trim": 0}
    assert ssdlab.replay(path, drive(), fit="scale").summary["trace_extent_bytes"] == 8 * 2**30


def test_trace_timing_queues_and_speed_compresses_time(tmp_path: Path) -> None:
    burst = [(1, (i * 131072) % (2**30), 131072, 10**9 + i * 20_000) for i in range(3000)]
    path = write_trace(tmp_path / "burst.txt", "fiu", burst)
    recorded = ssdlab.replay(path, drive()).summary
    slow = ssdlab.replay(path, drive(), speed=0.01).summary
    assert recorded["latency_us"]["write"]["p99"] > 10 * slow["latency_us"]["write"]["p99"]
    span = (burst[-1][3] - burst[0][3]) / 1e9
    assert slow["duration_s"] == pytest.approx(span / 0.01, rel=1e-3)
    afap = ssdlab.replay(path, drive(), timing="afap", qd=1).summary
    assert afap["latency_us"]["write"]["max"] < recorded["latency_us"]["write"]["max"]


def test_preconditioning_sets_the_drive_state(tmp_path: Path) -> None:
    writes = [r for r in REQS if r[0] == 1][:1500]
    path = write_trace(tmp_path / "t.txt", "disksim", writes)
    fresh = ssdlab.replay(path, drive(), timing="afap").summary
    full = ssdlab.replay(path, drive(), timing="afap", precondition="steady").summary
    # No GC on a fresh drive: NAND bytes are the whole units the writes touch (a partial unit is
    # programmed whole), over the writes' own bytes.
    units = sum(-(-(o + n) // 4096) - o // 4096 for _, o, n, _ in writes)
    assert fresh["write_amplification"] == pytest.approx(units * 4096 / sum(n for _, _, n, _ in writes), rel=0.01)
    assert full["write_amplification"] > 1.5, "on a full, randomly written drive GC copies"


def test_a_replay_is_deterministic(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.txt", "spc", REQS[:800])
    a = ssdlab.replay(path, drive(), precondition="fill").summary
    b = ssdlab.replay(path, drive(), precondition="fill").summary
    for key in ("duration_s", "latency_us", "nand_write_units", "erases"):
        assert a[key] == b[key]


# -- the CLI ---------------------------------------------------------------------------------------


def test_the_cli_writes_the_result_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_trace(tmp_path / "t.csv.gz", "msr", REQS[:500])
    out = tmp_path / "out"
    assert main(["replay", str(path), "--capacity", "2GiB", "--out", str(out), "--timing", "afap", "--qd", "4"]) == 0
    captured = capsys.readouterr()
    assert "trace format: msr" in captured.err and "requests" in captured.out
    assert {p.name for p in out.iterdir()} == {"series.csv", "latency.csv", "summary.json", "replay.png"}
    s = json.loads((out / "summary.json").read_text())
    for key in ("requests", "host_read_bytes", "host_write_bytes", "host_trim_bytes", "write_amplification",
                "latency_us"):
        assert key in s
    assert s["host_write_bytes"] == totals(REQS[:500])[1]


@pytest.mark.parametrize("args,message", [
    (["replay", "{missing}"], "no such file"),
    (["replay", "{bad}"], "line 3"),
    (["replay", "{good}", "--timing", "afap", "--speed", "2"], "--speed applies to --timing trace"),
    (["replay", "{good}", "--from", "5", "--to", "1"], "ends"),
    (["replay", "{good}", "--format", "nope"], "nope"),
])
def test_cli_mistakes_are_one_line_and_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     args: List[str], message: str) -> None:
    good = write_trace(tmp_path / "good.txt", "disksim", REQS[:20])
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(list(write_lines("disksim", REQS[:5]))[:2] + ["1.0 0 xx 8 0"]) + "\n")
    out = tmp_path / "out"
    argv = [a.format(missing=tmp_path / "none.txt", bad=bad, good=good) for a in args]
    assert main(argv + ["--capacity", "2GiB", "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ssdlab: error:") and message in err, err
    assert not out.exists()


def test_replay_is_a_sweep_scenario(tmp_path: Path) -> None:
    from ssdlab.sweep import scenarios as sc

    entry = sc.scenario("replay")
    write_trace(tmp_path / "t.csv", "alibaba", REQS[:300])
    options = {"trace": entry.option("trace").convert("t.csv", tmp_path), "capacity": CAPACITY, "timing": "afap",
               "qd": 4, "precondition": "fill"}
    result = entry.run(entry.prepare(options))
    figures = entry.figures(result.summary)
    assert figures["host_write_bytes"] == totals(REQS[:300])[1] and figures["write_p99_us"] > 0
    with pytest.raises(sc.BadValue, match="no such trace"):
        entry.option("trace").convert("missing.csv", tmp_path)
    assert entry.content(options)[2] == (tmp_path / "t.csv").stat().st_size
