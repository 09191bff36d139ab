"""Reading the files a user names: drive files, job files and their includes, result files.

Every such file is read through `read_text` (or `read_bytes`), which opens it without blocking,
accepts only a regular file (a FIFO, a socket, a device or a directory is refused before a byte is
read, so ``/dev/zero`` or a named pipe cannot hang or exhaust memory), reads at most `limit` bytes
(a larger file is refused) and decodes UTF-8 strictly. Every problem is a one-line `SsdlabError`
that names the file and what to do.
"""

from __future__ import annotations

import io
import os
import stat
from typing import Union

from ssdlab.errors import SsdlabError
from ssdlab.sizes import format_size

__all__ = ["TEXT_LIMIT", "DATA_LIMIT", "MAX_JSON_DEPTH", "read_bytes", "read_text", "check_path_text", "open_stream",
           "parse_json", "parse_toml"]

TEXT_LIMIT = 1 << 20
"""Drive files, job files and includes: 1 MiB (the largest shipped one is a few KiB)."""
DATA_LIMIT = 1 << 30
"""Result files read back (CSV, JSON): 1 GiB (a 10^7-second series is about 600 MB of CSV)."""

PathLike = Union[str, "os.PathLike[str]"]


def check_path_text(path: object, what: str) -> str:
    """`path` as a string, refusing what is not a path or not UTF-8 (one line, no traceback)."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise SsdlabError(f"{what}: expected a path, got {type(path).__name__}")
    text = os.fspath(path)
    if not isinstance(text, str):
        text = os.fsdecode(text)
    if text == "":
        raise SsdlabError(f"{what}: the path is empty; give a file name")
    if "\x00" in text:
        raise SsdlabError(f"{what}: the path contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise SsdlabError(f"{what}: the path {text.encode('utf-8', 'surrogateescape')!r} is not valid UTF-8; "
                          f"rename it") from None
    return text


def _open_regular(path: PathLike, what: str) -> tuple[int, str, os.stat_result]:
    """A descriptor of the regular file at `path`, opened without blocking (see the module doc)."""
    shown = check_path_text(path, what)
    try:
        fd = os.open(shown, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SsdlabError(f"{what} {shown!r}: no such file") from None
    except IsADirectoryError:
        raise SsdlabError(f"{what} {shown!r}: is a directory, not a file") from None
    except OSError as err:
        raise SsdlabError(f"{what} {shown!r}: cannot open it: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise SsdlabError(f"{what} {shown!r}: is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a character device" if stat.S_ISCHR(st.st_mode)
                    else "a block device" if stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                    else "not a regular file")
            raise SsdlabError(f"{what} {shown!r}: is {kind}; give a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, shown, st


def open_stream(path: PathLike, what: str) -> tuple["io.BufferedReader", str]:
    """The regular file at `path` opened for streaming, of any size (a trace may be many GB), and
    its name as shown in messages. The same checks as `read_bytes`, without the size bound."""
    fd, shown, _ = _open_regular(path, what)
    return io.open(fd, "rb", buffering=1 << 20), shown  # type: ignore[return-value]


def read_bytes(path: PathLike, what: str, limit: int = TEXT_LIMIT) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (see the module doc)."""
    fd, shown, st = _open_regular(path, what)
    try:
        if st.st_size > limit:
            raise SsdlabError(f"{what} {shown!r}: is {format_size(st.st_size)}, more than the {format_size(limit)} "
                              f"ssdlab reads; is it the right file?")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # a file that grows, or a /proc file that reports size 0
                raise SsdlabError(f"{what} {shown!r}: holds more than the {format_size(limit)} ssdlab reads; "
                                  f"is it the right file?")
        return b"".join(chunks)
    except OSError as err:
        raise SsdlabError(f"{what} {shown!r}: cannot read it: {err.strerror or err}") from None
    finally:
        os.close(fd)


def read_text(path: PathLike, what: str, limit: int = TEXT_LIMIT) -> str:
    """The UTF-8 text of the regular file at `path` (see `read_bytes`)."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SsdlabError(f"{what} {os.fspath(path)!r}: is not UTF-8 text (byte {err.start}); is it the right "
                          f"file?") from None


MAX_JSON_DEPTH = 64
"""The deepest nesting of arrays and objects ssdlab reads in a JSON file it did not just write
(result summaries, a sweep's resume state); its own files nest at most 4 deep."""


def parse_json(text: str, what: str, max_depth: int = MAX_JSON_DEPTH) -> object:
    """`text` parsed as JSON, with nesting bounded by `max_depth` (checked by a scan before the
    parser recurses, so a hostile file cannot reach Python's recursion limit). Every problem is a
    one-line `SsdlabError` naming `what`."""
    depth = 0
    in_string = False
    escaped = False
    for ch in text:  # a plain scan: brackets inside strings do not count
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > max_depth:
                raise SsdlabError(f"{what}: nests arrays or objects more than {max_depth} deep; is it the right "
                                  f"file?")
        elif ch in "]}":
            depth -= 1
    import json

    try:
        return json.loads(text)
    except (ValueError, RecursionError) as err:
        raise SsdlabError(f"{what}: is not valid JSON ({err}); is it the right file?") from None


def _toml_trouble(text: str, err: BaseException) -> str:
    """What a TOML file holds that the parser cannot take although it is TOML: a number too long to
    read (Python reads at most 4300 digits) or nesting too deep for its recursion."""
    import re

    if isinstance(err, RecursionError):
        return "nests arrays or tables too deeply to read; is it the right file?"
    long = re.search(r"[0-9][0-9_]{40,}", text)
    if long is None:
        return f"cannot read it as TOML ({' '.join(str(err).split())[:200]})"
    start = text.rfind("\n", 0, long.start()) + 1
    line = text[start:long.start()]
    key = line.split("=", 1)[0].strip() if "=" in line else ""
    where = f"line {text.count(chr(10), 0, long.start()) + 1}" + (f" ({key[:40]} = ...)" if key else "")
    digits = len(long.group(0).replace("_", ""))
    return (f"{where}: a number of {digits} digits; ssdlab reads whole numbers of at most 64 bits (20 digits), "
            f"such as seed = 1 or capacity = \"16GiB\"")


def parse_toml(text: str, what: str) -> dict:
    """`text` parsed as TOML (drive files, sweep specs). Every problem is a one-line `SsdlabError`
    naming `what`: a syntax error, and also what the parser cannot take although it is TOML (a
    5000-digit number, arrays nested thousands deep), which it raises as ValueError or
    RecursionError."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python < 3.11
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SsdlabError(f"{what} is not valid TOML: {' '.join(str(err).split())}") from None
    except (ValueError, RecursionError) as err:
        raise SsdlabError(f"{what}: {_toml_trouble(text, err)}") from None

