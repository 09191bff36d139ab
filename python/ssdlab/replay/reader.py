"""Reading a trace file as a stream of requests, in batches of NumPy arrays, in bounded memory.

The file is opened like every file ssdlab reads (`ssdlab.inputs.open_stream`: a regular file
only, never blocking) but not size-bounded: a trace may be many GB. Compression is chosen by the
extension (``.gz``, ``.bz2``, ``.xz``/``.lzma``, ``.zst``/``.zstd``). Lines are read with a bound
(`MAX_LINE_CHARS`: a longer line is refused, or skipped, without being held whole, so a
decompression bomb of one endless line costs no memory) and parsed one at a time by the format's
parser (`ssdlab.replay.formats`); selected requests are gathered into batches of `BATCH` for the
core. Only the batch, the parser's state and the counts are held. A file that cannot be read or
decompressed is one `SsdlabError` naming it (and the line reached).
"""

from __future__ import annotations

import bz2
import codecs
import functools
import gzip
import io
import itertools
import lzma
import os
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.inputs import open_stream
from ssdlab.replay.formats import FORMATS, BadLine, BlkparseParser, SystorParser, sniff
from ssdlab.replay.trace_latency import OriginalLatency

__all__ = ["BATCH", "Batch", "MAX_LINE_CHARS", "Selection", "TraceReader", "compression_of"]

BATCH = 1 << 16
SNIFF_LINES = 20
MAX_LINE_CHARS = 1 << 16
"""The longest line a trace may hold: 65,536 characters (64 KiB of ASCII; trace lines are tens of
characters). A longer line is refused, or skipped with --skip-bad-lines, having read at most this
much of it at a time."""

MAX_TRACE_SECONDS = 2**64 / 1e9
"""The longest span a trace's times can have: 2^64 ns, about 1.8e10 s."""


def _is_read_error(err: BaseException) -> bool:
    """An error reading or decompressing the file (zstandard's ZstdError is named, not imported:
    the package is imported only for .zst files)."""
    return (isinstance(err, (UnicodeDecodeError, OSError, EOFError, lzma.LZMAError, zlib.error))
            or type(err).__name__ == "ZstdError")


_TOO_LONG = "\0" * (MAX_LINE_CHARS + 1)  # stands in the sniffed head for an over-long line already skipped
_TOOLS = {"gzip": "gzip", "bzip2": "bzip2", "xz": "xz", "zstd": "zstd"}

_COMPRESSIONS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".lzma": "xz", ".zst": "zstd", ".zstd": "zstd"}


def compression_of(path: str) -> Optional[str]:
    """The compression a trace's extension names, or None."""
    return _COMPRESSIONS.get(os.path.splitext(path)[1].lower())


def _decompressed(raw: IO[bytes], kind: Optional[str], shown: str) -> IO[bytes]:
    if kind is None:
        return raw
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(raw, "rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(raw, "rb")  # type: ignore[return-value]
    try:
        import zstandard
    except ImportError:  # pragma: no cover - a dependency of the package
        raise SsdlabError(f"trace {shown!r}: reading .zst needs the zstandard package (pip install zstandard)") from None
    return io.BufferedReader(_ZstdFrames(raw, zstandard.ZstdDecompressor()), buffer_size=1 << 16)


class _ZstdFrames(io.RawIOBase):
    """The frames of a .zst file, decompressed one after another; a file that ends inside a frame
    raises EOFError, as gzip, bz2 and xz do (zstandard's stream_reader ends quietly there)."""

    def __init__(self, raw: IO[bytes], decompressor: Any) -> None:
        self.raw = raw
        self.decompressor = decompressor
        self.frame = decompressor.decompressobj()
        self.started = False  # a frame has begun and not ended
        self.pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            data = self.raw.read(1 << 16)
            if not data:
                if self.started:
                    raise EOFError("the file ends inside a zstd frame")
                return 0
            out = []
            while data:
                self.started = True
                out.append(self.frame.decompress(data))
                if not self.frame.eof:
                    break
                data = self.frame.unused_data  # the next frame, if any
                self.frame = self.decompressor.decompressobj()
                self.started = False
            self.pending = memoryview(b"".join(out))
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n


@dataclass
class Selection:
    """Which requests of a trace are replayed. Times are seconds from the first request of the
    selected device (the first line that holds a request, when no device is named)."""

    device: Optional[str] = None
    start_s: Optional[float] = None
    end_s: Optional[float] = None
    limit: Optional[int] = None


@dataclass
class Batch:
    kinds: np.ndarray  # uint8
    offsets: np.ndarray  # uint64
    lengths: np.ndarray  # uint64
    times_ns: np.ndarray  # uint64
    lines: np.ndarray  # int64: the line each request came from


@dataclass
class Counts:
    """What the reader saw, line by line."""

    lines: int = 0
    requests: int = 0
    no_data: int = 0
    header: int = 0
    bad: int = 0
    other_device: int = 0
    outside_window: int = 0
    zero_length: int = 0
    summary: int = 0  # lines of the summary blkparse ends its output with
    devices: Dict[str, int] = field(default_factory=dict)
    first_bad: Optional[str] = None

    MAX_DEVICES = 1000


class TraceReader:
    """A trace file read once, front to back (`batches()`); `counts` grow as it goes."""

    def __init__(self, path: Any, fmt: str = "auto", *, selection: Optional[Selection] = None,
                 skip_bad_lines: bool = False, blkparse_action: str = "D") -> None:
        self.raw, self.shown = open_stream(path, "trace")
        self.path = path
        self.skip_bad_lines = skip_bad_lines
        self.counts = Counts()
        self._physical = 0  # lines read from the file so far
        try:
            self.size = os.fstat(self.raw.fileno()).st_size
            self.compression = compression_of(self.shown)
            self.text = io.TextIOWrapper(_decompressed(self.raw, self.compression, self.shown), encoding="utf-8-sig",
                                         errors="strict", newline=None)
            self._head: List[str] = []
            self.sniffed: Optional[str] = None
            if fmt == "auto":
                self._head = self._read_head()
                name, why = sniff([line for line in self._head if line is not _TOO_LONG])
                if name is None:
                    raise SsdlabError(f"trace {self.shown!r}: cannot tell its format: {why}; name it with --format")
                self.format = name
                self.sniffed = why
            elif fmt in FORMATS:
                self.format = fmt
            else:
                raise SsdlabError(f"unknown trace format {fmt!r}; choose auto, {', '.join(FORMATS)}")
            self.original: Optional[OriginalLatency] = None
            if self.format == "blkparse":
                if blkparse_action in ("D", "C"):  # Q: queued bios and issued requests differ by merges
                    self.original = OriginalLatency("blkparse", blkparse_action)
                self.parser: Callable[[str], Any] = BlkparseParser(blkparse_action, self.original)
            elif self.format == "systor":
                self.original = OriginalLatency("response")
                self.parser = SystorParser(self.original)
            else:
                self.parser = FORMATS[self.format].make_parser()
        except BaseException:
            self.raw.close()
            raise
        self.selection = selection or Selection()
        for name, value in (("start (--from)", self.selection.start_s), ("end (--to)", self.selection.end_s)):
            if value is not None and value > MAX_TRACE_SECONDS:
                self.raw.close()
                raise SsdlabError(f"the window's {name} of {value:g} s is beyond any trace: a trace's times are "
                                  f"whole nanoseconds in 64 bits, which span at most {MAX_TRACE_SECONDS:.4g} s "
                                  f"(584 years); give seconds from the first request")
        self.first_time_ns: Optional[int] = None

    def _read_head(self) -> List[str]:
        head: List[str] = []
        readline = self.text.readline
        limit = MAX_LINE_CHARS + 1
        try:
            while len(head) < SNIFF_LINES:
                line = readline(limit)
                if not line:
                    break
                if len(line) == limit and line[-1] != "\n":
                    self._physical = len(head) + 1
                    self._skip_rest(line)
                    line = _TOO_LONG
                head.append(line)
        except Exception as err:
            if not _is_read_error(err):
                raise
            self._physical = len(head)
            raise self._read_error(err) from None
        return head

    def _skip_rest(self, line: str) -> None:
        """A line longer than `MAX_LINE_CHARS` (line `_physical`): refused, or with skip_bad_lines
        read to its end a bounded piece at a time and counted."""
        if not self.skip_bad_lines:
            raise SsdlabError(self._too_long_message(line))
        readline = self.text.readline
        limit = MAX_LINE_CHARS + 1
        while True:
            rest = readline(limit)
            if not rest or rest[-1] == "\n":
                break
        c = self.counts
        c.bad += 1
        if c.first_bad is None:
            c.first_bad = f"trace {self.shown!r} line {self._physical}: longer than {MAX_LINE_CHARS:,} characters"

    def _too_long_message(self, line: str) -> str:
        return (f"trace {self.shown!r} line {self._physical}: longer than {MAX_LINE_CHARS:,} characters "
                f"({line[:24]!r}...), which no trace line is; is it a trace, and is it compressed as its name says? "
                f"Pass --skip-bad-lines to count and skip such lines")

    def _read_error(self, err: BaseException) -> SsdlabError:
        where = f"trace {self.shown!r}"
        after = f" after line {self._physical}" if self._physical else ""
        if isinstance(err, UnicodeDecodeError):
            line, byte = self._first_undecodable_line()
            at = f" line {line}" if line else ""
            return SsdlabError(f"{where}{at}: is not text (UTF-8): byte {byte!r} -- is it compressed without a .gz, "
                               f".bz2, .xz or .zst extension, or a binary blktrace file (decode it with blkparse -i "
                               f"first)?")
        kind = self.compression
        if kind is None:
            return SsdlabError(f"{where}: cannot read it{after}: {err}")
        ext = os.path.splitext(self.shown)[1]
        tool = _TOOLS[kind]
        text = str(err)
        if not self._physical and (isinstance(err, gzip.BadGzipFile) or any(
                sign in text for sign in ("Invalid data stream", "format not supported", "Unknown frame descriptor"))):
            return SsdlabError(f"{where}: is not {kind} data ({text}), though its name ends in {ext}; rename it to "
                               f"what it is (no {ext} if it is plain text), or compress it with {tool}")
        if isinstance(err, EOFError):
            return SsdlabError(f"{where}: its {kind} data is cut short{after} ({text}); the file is incomplete: "
                               f"fetch or copy it again (check it with {tool} -t)")
        return SsdlabError(f"{where}: its {kind} data is damaged{after} ({text}); fetch or copy the file again "
                           f"(check it with {tool} -t)")

    def _first_undecodable_line(self) -> Tuple[int, bytes]:
        """The number of the first line that is not UTF-8, and its first bad byte, found by reading
        the file again as bytes (text is decoded in chunks, so the error came with no line); (0, b"")
        when it cannot be found."""
        try:
            raw, _ = open_stream(self.path, "trace")
        except SsdlabError:
            return 0, b""
        with raw:
            try:
                stream = io.BufferedReader(_decompressed(raw, self.compression, self.shown))  # type: ignore[arg-type]
                decoder = codecs.getincrementaldecoder("utf-8")()
                line = 1
                while True:
                    piece = stream.readline(MAX_LINE_CHARS)
                    if not piece:
                        return 0, b""
                    try:
                        decoder.decode(piece)
                    except UnicodeDecodeError as err:
                        return line, err.object[err.start:err.start + 1]
                    if piece.endswith(b"\n"):
                        line += 1
            except Exception:  # a damaged stream: the first error stands
                return 0, b""

    @property
    def position(self) -> int:
        """Bytes of the (compressed) file read so far, for progress."""
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        try:
            self.text.close()
        except Exception:  # a damaged compressed stream may complain again on close
            pass
        self.raw.close()

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def batches(self, batch: int = BATCH) -> Iterator[Batch]:
        """The selected requests, `batch` at a time (the last one shorter)."""
        sel = self.selection
        parse = self.parser
        original = self.original
        allow_header = FORMATS[self.format].header
        c = self.counts
        devices = c.devices
        start_ns = None if sel.start_s is None else round(sel.start_s * 1e9)
        end_ns = None if sel.end_s is None else round(sel.end_s * 1e9)
        limit = sel.limit
        kinds: List[int] = []
        offsets: List[int] = []
        lengths: List[int] = []
        times: List[int] = []
        lines: List[int] = []
        first: Optional[int] = None
        latest = -1
        n = 0
        too_long = MAX_LINE_CHARS  # a line read in full has at most this many characters and its newline
        source = itertools.chain(self._head, iter(functools.partial(self.text.readline, too_long + 1), ""))
        self._head = []
        try:
            for n, line in enumerate(source, start=1):
                if len(line) > too_long and line[-1] != "\n":
                    if line is not _TOO_LONG:  # (the head's stand-in was counted when it was read)
                        self._physical = n
                        self._skip_rest(line)
                    continue
                if line.startswith("#") or not line.strip():
                    continue
                try:
                    r = parse(line)
                except BadLine as err:
                    if allow_header and c.requests == 0 and c.header == 0 and c.bad == 0 and not line[:1].isdigit():
                        c.header += 1  # a row of column names
                        continue
                    c.bad += 1
                    excerpt = line.strip()
                    excerpt = excerpt if len(excerpt) <= 80 else excerpt[:77] + "..."
                    message = f"trace {self.shown!r} line {n}: {err} ({excerpt!r})"
                    if not self.skip_bad_lines:
                        whole = f", and whole ({_TOOLS[self.compression]} -t)" if self.compression else ""
                        raise SsdlabError(f"{message}; is the file in the {FORMATS[self.format].title} format (--format "
                                          f"{self.format}){whole}? Fix the line, pick another --format, or pass "
                                          f"--skip-bad-lines to count and skip such lines")
                    if c.first_bad is None:
                        c.first_bad = message
                    continue
                if r is None:
                    c.no_data += 1
                    continue
                kind, offset, length, t, device = r
                if len(devices) < Counts.MAX_DEVICES or device in devices:
                    devices[device] = devices.get(device, 0) + 1
                if sel.device is not None and device != sel.device:
                    c.other_device += 1
                    continue
                if first is None:
                    first = t
                    self.first_time_ns = t
                if t > latest:
                    latest = t
                since = t - first
                if (start_ns is not None and since < start_ns) or (end_ns is not None and since >= end_ns):
                    c.outside_window += 1
                    continue
                if length == 0:
                    c.zero_length += 1
                    continue
                kinds.append(kind)
                offsets.append(offset)
                lengths.append(length)
                times.append(t)
                lines.append(n)
                c.requests += 1
                if original is not None:
                    original.selected(parse.token, kind)  # type: ignore[attr-defined]
                if len(kinds) >= batch:
                    yield _batch(kinds, offsets, lengths, times, lines)
                    kinds, offsets, lengths, times, lines = [], [], [], [], []
                if limit is not None and c.requests >= limit:
                    break
        except Exception as err:
            if not _is_read_error(err):
                raise
            self._physical = n
            raise self._read_error(err) from None
        c.lines = n
        if isinstance(parse, BlkparseParser):
            c.summary = parse.trailer
        if kinds:
            yield _batch(kinds, offsets, lengths, times, lines)
        if c.requests == 0:
            self._explain_nothing_selected(first, latest)

    def _explain_nothing_selected(self, first: Optional[int], latest: int) -> None:
        """Raises why no request was selected, when the trace can say it (a blkparse capture without
        the chosen action's events, a window beyond the trace); returns otherwise."""
        if isinstance(self.parser, BlkparseParser):
            why = self.parser.missing(self.shown)
            if why is not None:
                raise SsdlabError(why)
        sel = self.selection
        if self.counts.outside_window and first is not None:
            span = (latest - first) / 1e9
            window = f"from {sel.start_s or 0:g} s" + (f" to {sel.end_s:g} s" if sel.end_s is not None else "")
            raise SsdlabError(f"trace {self.shown!r}: no request falls in the window {window} (its requests span "
                              f"{span:.9g} s from the first); choose --from and --to within that span")

    def original_latency(self) -> Optional[Dict[str, Any]]:
        """The original latency of the replayed requests (`OriginalLatency.summary`), when the trace
        records it; call after `batches()` is exhausted."""
        return None if self.original is None else self.original.summary(self.counts.requests)


def _batch(kinds: List[int], offsets: List[int], lengths: List[int], times: List[int], lines: List[int]) -> Batch:
    try:
        return Batch(np.array(kinds, dtype=np.uint8), np.array(offsets, dtype=np.uint64),
                     np.array(lengths, dtype=np.uint64), np.array(times, dtype=np.uint64),
                     np.array(lines, dtype=np.int64))
    except OverflowError:
        big = max(max(offsets), max(lengths), max(times))
        raise SsdlabError(f"a value in the trace ({big}) does not fit 64 bits; is it the right format?") from None


def extent(reader: TraceReader) -> Tuple[int, int]:
    """Reads the whole trace once: the end of its farthest request in bytes, and its request count
    (for ``--fit scale``, which needs the extent before the first request is placed)."""
    far = 0
    for b in reader.batches():
        far = max(far, int((b.offsets + b.lengths).max()))
    return far, reader.counts.requests
