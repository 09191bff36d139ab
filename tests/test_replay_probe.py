"""No trace file, however broken, gives a traceback: each probe is one ``ssdlab: error:`` line naming
the file (and the line), exit status 2 and no result directory. Numbers are ASCII digits of bounded
length; compressed files that are damaged, cut short or not compressed at all are named as such;
a line longer than 64 KiB is refused without being read whole, so a gzip bomb of one 3 GB line
costs no memory; nonsensical speeds and windows are refused."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Tuple

import pytest
import zstandard

import ssdlab
from ssdlab.cli import main
from ssdlab.errors import SsdlabError
from ssdlab.replay.reader import MAX_LINE_CHARS

SMALL = ssdlab.load_preset("mlc-256").with_user_capacity(2**30)

# One good line per format, the timestamp as {T}; a header where the format has one.
TEMPLATES = {
    "msr": "{T},hm,0,Write,4096,4096,1",
    "fiu": "{T} 1 p 100 8 W 8 0 x",
    "spc": "0,100,4096,w,{T}",
    "alibaba": "1,W,4096,4096,{T}",
    "tencent": "{T},100,8,1,7",
    "blkparse": "  8,0    1        1     {T}  4162  D  WS 100 + 8 [dd]",
    "iolog": "{T} /dev/x write 4096 4096",
    "disksim": "{T} 0 100 8 0",
    "systor": "{T},0.000100000,W,3,4096,4096",
}
HEADERS = {"iolog": "fio version 3 iolog", "systor": "Timestamp,Response,IOType,LUN,Offset,Size"}
PROBES = {
    "5000 digits": ("9" * 5000, "is a 5000-character number; trace fields hold at most 40 characters"),
    "Arabic-Indic digits": ("\u0661\u0662\u0663", "has non-ASCII digits; trace numbers are written with the digits 0-9"),
    "a superscript two": ("1\u00b2", "has non-ASCII digits"),
    "fullwidth digits": ("\uff11\uff12", "has non-ASCII digits"),
}


def run(args: List[str], capsys: pytest.CaptureFixture[str]) -> Tuple[int, str]:
    status = main(args + ["--capacity", "1GiB", "-q"])
    return status, capsys.readouterr().err


def refused(status: int, err: str, *parts: str) -> str:
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("ssdlab: error: ") and "Traceback" not in err, err
    for part in parts:
        assert part in err, (part, err)
    return err


def trace_with(tmp_path: Path, fmt: str, value: str, name: str = "t.txt") -> Path:
    lines = [HEADERS[fmt]] if fmt in HEADERS else []
    lines += [TEMPLATES[fmt].format(T="1"), TEMPLATES[fmt].format(T=value)]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("probe", sorted(PROBES))
@pytest.mark.parametrize("fmt", sorted(TEMPLATES))
def test_a_bad_timestamp_is_one_line_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          fmt: str, probe: str) -> None:
    value, why = PROBES[probe]
    path = trace_with(tmp_path, fmt, value)
    line = 3 if fmt in HEADERS else 2
    out = tmp_path / "out"
    refused(*run(["replay", str(path), "--format", fmt, "--out", str(out)], capsys), f"trace '{path}' line {line}: ",
            why, f"--format {fmt})?")
    assert not out.exists()
    # Without --format: the format is told from the good line, or the file is refused as unknown.
    status, err = run(["replay", str(path), "--out", str(out)], capsys)
    refused(status, err, f"trace '{path}'")
    assert not out.exists()


@pytest.mark.parametrize("fmt", sorted(TEMPLATES))
def test_the_good_line_of_each_probe_replays(tmp_path: Path, fmt: str) -> None:
    """The probes' files differ from a good trace only in the one value."""
    path = trace_with(tmp_path, fmt, "2")
    s = ssdlab.replay(path, SMALL, format=fmt, fit="wrap", timing="afap").summary
    assert s["requests"] == 2 and s["host_write_bytes"] == 8192


def test_other_numbers_are_bounded_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for fmt, line, why in [
        ("spc", f"0,{'7' * 41},4096,w,1.0", "LBA 777777777777... is a 41-character number"),
        ("msr", "128166372003061629,hm,0,Write,+4096,4096,1", "offset '+4096' is not a whole number"),
        ("alibaba", "1,W,4_096,4096,15", "offset '4_096' is not a whole number"),
        ("blkparse", "  8,0 1 1 0.5 4162 D WS 100 + \u0668 [dd]", "sector count '\u0668' has non-ASCII digits"),
        ("disksim", "1e3 0 100 8 0", "timestamp '1e3' is not a non-negative number"),
    ]:
        path = tmp_path / f"{fmt}.txt"
        path.write_text(line + "\n", encoding="utf-8")
        refused(*run(["replay", str(path), "--format", fmt, "--out", str(tmp_path / "o")], capsys), "line 1: ", why)


# -- compressed files ---------------------------------------------------------------------------------

LINES = "".join(f"0,{100 + 8 * i},4096,w,{i}.5\n" for i in range(20_000)).encode()


def damaged(data: bytes) -> bytes:
    """`data` with 64 bytes in its middle flipped."""
    mid = len(data) // 2
    return data[:mid] + bytes(b ^ 0xA5 for b in data[mid:mid + 64]) + data[mid + 64:]


COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": lambda d: zstandard.ZstdCompressor(write_checksum=True).compress(d)}
KIND = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_plain_text_named_as_compressed_is_named_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    ext: str) -> None:
    path = tmp_path / f"trace.csv{ext}"
    path.write_bytes(LINES)
    refused(*run(["replay", str(path), "--out", str(tmp_path / "o")], capsys),
            f"trace '{path}': is not {KIND[ext]} data", f"though its name ends in {ext}; rename it")
    refused(*run(["replay", str(path), "--format", "spc", "--out", str(tmp_path / "o")], capsys),
            f"is not {KIND[ext]} data")


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_damaged_and_truncated_compressed_files_are_named_so(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             ext: str) -> None:
    data = COMPRESS[ext](LINES)
    bad = tmp_path / f"damaged.csv{ext}"
    bad.write_bytes(damaged(data))
    status, err = run(["replay", str(bad), "--format", "spc", "--out", str(tmp_path / "o")], capsys)
    refused(status, err, f"trace '{bad}'")
    # Named as damaged where the decompressor notices (a bad code, a checksum); what it decodes
    # before noticing may be garbage, which is then a bad line, with the hint to check the file.
    assert f"{KIND[ext]} data is damaged" in err or f"and whole ({KIND[ext]} -t)?" in err, err
    cut = tmp_path / f"cut.csv{ext}"
    cut.write_bytes(data[: len(data) * 3 // 4])
    refused(*run(["replay", str(cut), "--format", "spc", "--out", str(tmp_path / "o")], capsys),
            f"trace '{cut}': its {KIND[ext]} data is cut short", f"fetch or copy it again (check it with {KIND[ext]} -t)")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("ext", sorted(COMPRESS))
def test_a_compressed_file_cut_at_a_line_end_is_not_replayed_in_part(tmp_path: Path, ext: str) -> None:
    """Cut where a line ends, a file would read as a shorter trace; each format's end marker tells."""
    data = COMPRESS[ext](LINES[:40_000])
    for cut in (len(data) - 1, len(data) - 4, len(data) - 9, len(data) * 9 // 10, len(data) * 2 // 3):
        path = tmp_path / f"cut{cut}.csv{ext}"
        path.write_bytes(data[:cut])
        with pytest.raises(SsdlabError, match=f"{KIND[ext]} data is cut short|and whole|is not {KIND[ext]}"):
            ssdlab.replay(path, SMALL, format="spc", timing="afap")


def test_a_corrupt_gzip_is_named_with_the_line_reached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(gzip.compress(LINES))
    data[-8] ^= 0xFF  # the CRC of the whole member: noticed at its end
    path = tmp_path / "corrupt.csv.gz"
    path.write_bytes(bytes(data))
    status, err = run(["replay", str(path), "--out", str(tmp_path / "o")], capsys)
    refused(status, err, f"trace '{path}': its gzip data is damaged after line 20000 (CRC check failed",
            "(check it with gzip -t)")


def test_bytes_that_are_not_utf8_are_named_with_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes(LINES[:2000] + b"0,100,4096,w,1.\xe9\n" + LINES[2000:4000])
    line = LINES[:2000].count(b"\n") + 1
    refused(*run(["replay", str(path), "--format", "spc", "--out", str(tmp_path / "o")], capsys),
            f"trace '{path}' line {line}: is not text (UTF-8): byte b'\\xe9'")


def test_a_utf8_byte_order_mark_is_not_part_of_the_header(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_text("\ufeffTimestamp,Response,IOType,LUN,Offset,Size\n1.5,0.001,W,0,0,4096\n", encoding="utf-8")
    s = ssdlab.replay(path, SMALL).summary
    assert s["format"] == "systor" and s["lines"]["header"] == 1 and s["requests"] == 1


# -- one endless line ------------------------------------------------------------------------------------


def gzip_bomb(path: Path, line_bytes: int, then: bytes = b"") -> Path:
    """A gzip file of one line of `line_bytes` NUL bytes (no newline), then `then`: members of
    16 MiB each, concatenated (gzip reads them as one stream), so it is made in milliseconds."""
    member = gzip.compress(b"\0" * (1 << 24), compresslevel=9)
    with open(path, "wb") as f:
        for _ in range(line_bytes >> 24):
            f.write(member)
        f.write(gzip.compress(then))
    return path


CHILD = textwrap.dedent("""
    import json, resource, sys, time
    from ssdlab.cli import main
    from ssdlab.replay.reader import TraceReader
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    if sys.argv[1] == "cli":
        status = main(["replay", sys.argv[2], "--capacity", "1GiB", "-q", "--out", sys.argv[3]])
        counts = None
    else:
        with TraceReader(sys.argv[2], "spc", skip_bad_lines=True) as r:
            n = sum(len(b.kinds) for b in r.batches())
        status, counts = 0, [r.counts.requests, r.counts.bad, r.counts.first_bad]
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"status": status, "grew_kib": after - before, "seconds": time.perf_counter() - start,
                      "counts": counts}))
""")


def _cap_memory() -> None:
    """2 GiB of address space (the child needs under 200 MB): were the line read whole, the child
    fails with a MemoryError instead of taking the machine's memory."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))


def child(*args: str) -> Tuple[dict, str]:
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, timeout=300,
                         preexec_fn=_cap_memory)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_a_gzip_bomb_of_one_3_gb_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    line = 3 * 2**30
    bomb = gzip_bomb(tmp_path / "bomb.csv.gz", line)
    assert bomb.stat().st_size < 4 * 2**20, "about 3 MB on disk"
    result, err = child("cli", str(bomb), str(tmp_path / "out"))
    assert result["status"] == 2
    assert err == (f"ssdlab: error: trace '{bomb}' line 1: longer than 65,536 characters ({chr(0) * 24!r}...), which "
                   f"no trace line is; is it a trace, and is it compressed as its name says? Pass --skip-bad-lines "
                   f"to count and skip such lines\n")
    # Peak memory grew by far less than the line: a few pieces of MAX_LINE_CHARS, not 3 GB.
    assert result["grew_kib"] * 1024 < 64 * 2**20 < line // 40, result
    assert result["seconds"] < 30, result
    assert not (tmp_path / "out").exists()


def test_an_over_long_line_is_skipped_in_bounded_memory_when_asked(tmp_path: Path) -> None:
    line = 256 * 2**20
    bomb = gzip_bomb(tmp_path / "long.csv.gz", line, b"\n0,100,4096,w,1.0\n0,108,4096,r,1.5\n")
    result, _ = child("reader", str(bomb))
    requests, bad, first_bad = result["counts"]
    assert (requests, bad) == (2, 1) and f"line 1: longer than {MAX_LINE_CHARS:,} characters" in first_bad
    assert result["grew_kib"] * 1024 < 16 * 2**20 < line // 8, result


def test_a_line_just_within_the_bound_is_read(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    first = "0,100,4096,w,1.0"
    path.write_text(first + " " * (MAX_LINE_CHARS - len(first)) + "\n0,108,4096,w,2\n")
    assert len(path.read_text().splitlines()[0]) == MAX_LINE_CHARS == 65536
    assert ssdlab.replay(path, SMALL, format="spc").summary["requests"] == 2
    path.write_text(first + " " * (MAX_LINE_CHARS + 1 - len(first)) + "\n0,108,4096,w,2\n")
    with pytest.raises(SsdlabError, match="line 1: longer than 65,536 characters"):
        ssdlab.replay(path, SMALL, format="spc")


# -- speeds and windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize("args,why", [
    (["--speed", "1e-15"], "must be a factor from 1e-09 to 1e+09"),
    (["--speed", "0"], "must be a factor from 1e-09 to 1e+09"),
    (["--speed", "-2"], "must be a factor from 1e-09 to 1e+09"),
    (["--speed", "1e300"], "must be a factor from 1e-09 to 1e+09"),
    (["--speed", "nan"], "is not a number"),
    (["--speed", "inf"], "is not a number"),
    (["--from", "5", "--to", "1"], "the window ends (1 s) before it starts (5 s)"),
    (["--from", "2", "--to", "2"], "before it starts"),
    (["--from", "-1"], "zero or more"),
    (["--to", "nan"], "is not a number"),
    (["--from", "1e300"], "the window's start (--from) of 1e+300 s is beyond any trace"),
    (["--to", "1e400"], "too large"),
    (["--from", "100"], "no request falls in the window from 100 s (its requests span 2 s from the first)"),
    (["--to", "0"], "no request falls in the window from 0 s to 0 s"),
])
def test_nonsensical_speeds_and_windows_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    args: List[str], why: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text("0,100,4096,w,1.0\n0,200,4096,w,2.5\n0,300,4096,r,3.0\n")
    out = tmp_path / "out"
    refused(*run(["replay", str(path), "--out", str(out), *args], capsys), why)
    assert not out.exists()


def test_an_unknown_blkparse_action_is_refused_in_the_api(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("  8,0    1        1     0.5  4162  D  WS 100 + 8 [dd]\n")
    with pytest.raises(SsdlabError, match="unknown blkparse action 'X'; choose D"):
        ssdlab.replay(path, SMALL, blkparse_action="X")
