"""Reading a trace file as a stream of requests, in batches of NumPy arrays, in bounded memory.

The file is opened like every file ssdlab reads (`ssdlab.inputs.open_stream`: a regular file
only, never blocking) but not size-bounded: a trace may be many GB. Compression is chosen by the
extension (``.gz``, ``.bz2``, ``.xz``/``.lzma``, ``.zst``/``.zstd``). Lines are parsed one at a
time by the format's parser (`ssdlab.replay.formats`); selected requests are gathered into
batches of `BATCH` for the core. Only the batch, the parser's state and the counts are held.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ssdlab.errors import SsdlabError
from ssdlab.inputs import open_stream
from ssdlab.replay.formats import FORMATS, BadLine, blkparse_parser, sniff

__all__ = ["BATCH", "Batch", "Selection", "TraceReader", "compression_of"]

BATCH = 1 << 16
SNIFF_LINES = 20

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
    return zstandard.ZstdDecompressor().stream_reader(raw)  # type: ignore[no-any-return]


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
    devices: Dict[str, int] = field(default_factory=dict)
    first_bad: Optional[str] = None

    MAX_DEVICES = 1000


class TraceReader:
    """A trace file read once, front to back (`batches()`); `counts` grow as it goes."""

    def __init__(self, path: Any, fmt: str = "auto", *, selection: Optional[Selection] = None,
                 skip_bad_lines: bool = False, blkparse_action: str = "D") -> None:
        self.raw, self.shown = open_stream(path, "trace")
        try:
            self.size = os.fstat(self.raw.fileno()).st_size
            self.compression = compression_of(self.shown)
            self.text = io.TextIOWrapper(_decompressed(self.raw, self.compression, self.shown), encoding="utf-8",
                                         errors="strict", newline=None)
            self._head: List[str] = []
            self.sniffed: Optional[str] = None
            if fmt == "auto":
                self._head = self._read_head()
                name, why = sniff(self._head)
                if name is None:
                    raise SsdlabError(f"trace {self.shown!r}: cannot tell its format: {why}; name it with --format")
                self.format = name
                self.sniffed = why
            elif fmt in FORMATS:
                self.format = fmt
            else:
                raise SsdlabError(f"unknown trace format {fmt!r}; choose auto, {', '.join(FORMATS)}")
        except BaseException:
            self.raw.close()
            raise
        self.parser: Callable[[str], Any] = (blkparse_parser(blkparse_action) if self.format == "blkparse"
                                              else FORMATS[self.format].make_parser())
        self.selection = selection or Selection()
        self.skip_bad_lines = skip_bad_lines
        self.counts = Counts()
        self.first_time_ns: Optional[int] = None

    def _read_head(self) -> List[str]:
        head = []
        try:
            for _ in range(SNIFF_LINES):
                line = self.text.readline()
                if not line:
                    break
                head.append(line)
        except (UnicodeDecodeError, OSError, EOFError, lzma.LZMAError) as err:
            raise self._read_error(err) from None
        return head

    def _read_error(self, err: BaseException) -> SsdlabError:
        if isinstance(err, UnicodeDecodeError):
            return SsdlabError(f"trace {self.shown!r}: is not text (UTF-8) -- is it compressed without a .gz, .bz2, "
                               f".xz or .zst extension, or a binary blktrace file (run blkparse on it first)?")
        return SsdlabError(f"trace {self.shown!r}: cannot read it ({self.compression or 'uncompressed'}): {err}")

    @property
    def position(self) -> int:
        """Bytes of the (compressed) file read so far, for progress."""
        try:
            return self.raw.tell()
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        self.text.close()
        self.raw.close()

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lines(self) -> Iterator[str]:
        yield from self._head
        self._head = []
        try:
            yield from self.text
        except (UnicodeDecodeError, OSError, EOFError, lzma.LZMAError) as err:
            raise self._read_error(err) from None
        except Exception as err:  # zstandard's ZstdError and others from a damaged file
            raise self._read_error(err) from None

    def batches(self, batch: int = BATCH) -> Iterator[Batch]:
        """The selected requests, `batch` at a time (the last one shorter)."""
        sel = self.selection
        parse = self.parser
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
        n = 0
        for n, line in enumerate(self._lines(), start=1):
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
                    raise SsdlabError(f"{message}; is it a {FORMATS[self.format].title} trace? Fix the line, pick "
                                      f"another --format, or pass --skip-bad-lines to count and skip such lines")
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
            if len(kinds) >= batch:
                yield _batch(kinds, offsets, lengths, times, lines)
                kinds, offsets, lengths, times, lines = [], [], [], [], []
            if limit is not None and c.requests >= limit:
                break
        c.lines = n
        if kinds:
            yield _batch(kinds, offsets, lengths, times, lines)


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
