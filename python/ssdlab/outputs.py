"""The output-path policy: writing a file the user named as an output (``fio --output``,
``report -o``, ``calibrate --doc``), by what the name is (docs/safety.md, "The output-path policy").

* **A new path or a regular file** (also through symbolic links, which are kept): written to a
  temporary file in the same directory (a short name, ``.ssdlab-tmp-<pid>-<hex>``, so any name the
  file system accepts works), flushed with fsync and renamed over the file, so it is complete or
  untouched. A replaced file keeps its permission bits. Missing parent directories are created
  and removed again if the write fails.
* **A character device, a FIFO or a terminal**, and **anything reached through**
  ``/proc/self/fd/N``, ``/dev/fd/N``, ``/dev/stdout`` or ``/dev/stderr`` (the symbolic-link chain
  is walked): written in place, never replaced -- a device or FIFO is opened without ``O_CREAT``
  (a FIFO first non-blocking, so a FIFO with no reader is a one-line error instead of a hang),
  a descriptor of this process is written directly at its offset. Every byte is written; a
  failed write (``ENOSPC`` on ``/dev/full``, ``EPIPE``, ``EIO``) is an `SsdlabError` naming the
  output.
* **A socket, a block device, a directory, a path under something that is not a directory**:
  refused. `check_output_file` refuses them before anything runs (commands call it before a long
  simulation); `write_output` checks again when it writes.

`prepare_output` writes everything but the final rename, so a command that also commits a result
directory can make both appear together (`Pending.commit`) or neither (`Pending.discard`).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import select
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple, Union

from ssdlab.errors import SsdlabError
from ssdlab.inputs import check_path_text

__all__ = ["OutputTarget", "Pending", "check_output_file", "guard_stdout", "prepare_output", "remove_made_dirs",
           "temp_name", "write_output"]

PathLike = Union[str, "os.PathLike[str]"]

FILE = "file"  # a new path or a regular file: written atomically
DEVICE = "device"  # a character device or terminal: written in place
FIFO = "fifo"  # written in place, after checking that something reads it
DESCRIPTOR = "descriptor"  # one of this process's open files (/dev/stdout, /proc/self/fd/N)

_MAX_LINKS = 40
_FD_PATH = re.compile(r"^/proc/(?:self|thread-self|(\d+))(?:/task/\d+)?/fd/(\d+)$")
_CHUNK = 1 << 20
_UNDER_A_FILE = "it is under something that is not a directory; give a path in a directory"


def remove_made_dirs(made: List[Path]) -> None:
    """Removes the directories a write created (`made`, outermost first), innermost first, stopping
    at the first that is not empty (something else was put there meanwhile)."""
    for d in reversed(made):
        try:
            os.rmdir(d)
        except OSError:
            break


def temp_name(kind: str = "tmp") -> str:
    """A short hidden name for a temporary file or staging directory next to a target
    (``.ssdlab-<kind>-<pid>-<hex>``): independent of the target's name, so it always fits."""
    return f".ssdlab-{kind}-{os.getpid()}-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class OutputTarget:
    """Where an output goes, as `check_output_file` classified it."""

    shown: str  # the name as the user gave it
    what: str  # the option, for messages (``--output``, ``report``)
    kind: str  # FILE, DEVICE, FIFO or DESCRIPTOR
    path: Path  # the file (symbolic links followed), device or FIFO; the name as given for a descriptor
    fd: Optional[int] = None  # DESCRIPTOR: this process's descriptor
    missing: Tuple[Path, ...] = ()  # FILE: parent directories to create, outermost first
    mode: Optional[int] = None  # FILE: the permission bits of the file it replaces
    owner: Optional[Tuple[int, int]] = None  # FILE: the replaced file's uid and gid


def _refuse(shown: str, what: str, why: str) -> SsdlabError:
    return SsdlabError(f"cannot write {what} {shown!r}: {why}")


def _walk(shown: str, what: str) -> Tuple[str, Optional[int]]:
    """The path `shown` leads to through symbolic links (each directory part resolved, then the
    last part followed one link at a time), and the descriptor of this process it names, if the
    chain passes through ``/proc/self/fd/N`` (``/dev/stdout``, ``/dev/fd/N``)."""
    try:
        p = shown if os.path.isabs(shown) else os.path.join(os.getcwd(), shown)
    except OSError as err:  # the working directory was removed
        why = f"the working directory is gone ({err.strerror or err}); give an absolute path"
        raise _refuse(shown, what, why) from None
    for _ in range(_MAX_LINKS):
        head, tail = os.path.split(p)
        if tail in ("", ".", ".."):
            raise _refuse(shown, what, "it names a directory; give a file name")
        try:
            p = os.path.join(os.path.realpath(head), tail)
        except OSError as err:
            raise _refuse(shown, what, f"cannot resolve its directory ({err.strerror or err})") from None
        m = _FD_PATH.match(p)
        if m is not None:
            if m.group(1) is not None and int(m.group(1)) != os.getpid():
                raise _refuse(shown, what, "it is another process's open file; give a file, a device or a FIFO")
            return p, int(m.group(2))
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return p, None
        except NotADirectoryError:
            raise _refuse(shown, what, _UNDER_A_FILE) from None
        except OSError as err:
            raise _refuse(shown, what, f"it cannot be examined ({err.strerror or err})") from None
        if not stat.S_ISLNK(st.st_mode):
            return p, None
        p = os.path.join(os.path.dirname(p), os.readlink(p))
    raise _refuse(shown, what, f"more than {_MAX_LINKS} symbolic links (a loop?); give a file name")


def _kind_refused(mode: int) -> Optional[str]:
    if stat.S_ISSOCK(mode):
        return "it is a socket; ssdlab does not write to sockets -- give a file, a character device or a FIFO"
    if stat.S_ISBLK(mode):
        return "it is a block device; ssdlab never writes an output onto a block device -- give a file name"
    if stat.S_ISDIR(mode):
        return "it is a directory; give a file name"
    return None


def _probe_dir(directory: str, shown: str, what: str, make_dir: bool) -> None:
    """Creates and removes a temporary entry in `directory`: the one honest test of writability."""
    probe = os.path.join(directory, temp_name("probe"))
    try:
        if make_dir:
            os.mkdir(probe)
            os.rmdir(probe)
        else:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
            os.unlink(probe)
    except OSError as err:
        why = f"its directory {directory!r} is not writable ({err.strerror or err}); give another path"
        raise _refuse(shown, what, why) from None


def check_output_file(path: PathLike, what: str) -> OutputTarget:
    """Classifies the output `path` by the policy (module doc) and returns where it goes; raises
    `SsdlabError` (one line naming `what` and the path) for what the policy refuses, or when the
    place cannot be written. Nothing is created or opened for writing."""
    shown = check_path_text(path, what)
    real, fd = _walk(shown, what)
    if fd is not None:
        try:
            fst = os.fstat(fd)
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except (OSError, OverflowError):
            raise _refuse(shown, what, f"it names file descriptor {fd}, which is not open") from None
        why = _kind_refused(fst.st_mode)
        if why is not None:
            raise _refuse(shown, what, f"it is file descriptor {fd}, which {why[3:]}")
        if flags & os.O_ACCMODE == os.O_RDONLY:
            raise _refuse(shown, what, f"file descriptor {fd} is open for reading only")
        return OutputTarget(shown, what, DESCRIPTOR, Path(shown), fd=fd)
    st: Optional[os.stat_result]
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise _refuse(shown, what, _UNDER_A_FILE) from None
    except OSError as err:
        raise _refuse(shown, what, f"it cannot be examined ({err.strerror or err})") from None
    if st is None:  # a new path: its parents must be (or become) directories
        missing: List[Path] = []
        parent = os.path.dirname(real)
        while True:
            try:
                pst = os.stat(parent)
            except FileNotFoundError:
                missing.append(Path(parent))
                parent = os.path.dirname(parent)
                continue
            except OSError as err:
                raise _refuse(shown, what, f"it is under something that is not a directory "
                                           f"({err.strerror or err}); give a path in a directory") from None
            break
        if not stat.S_ISDIR(pst.st_mode):
            raise _refuse(shown, what, f"it is under {parent!r}, which is not a directory; give a path in a directory")
        _probe_dir(parent, shown, what, make_dir=bool(missing))
        return OutputTarget(shown, what, FILE, Path(real), missing=tuple(reversed(missing)))
    why = _kind_refused(st.st_mode)
    if why is not None:
        raise _refuse(shown, what, why)
    if stat.S_ISREG(st.st_mode):
        _probe_dir(os.path.dirname(real), shown, what, make_dir=False)
        return OutputTarget(shown, what, FILE, Path(real), mode=stat.S_IMODE(st.st_mode) & 0o777,  # never set-id
                            owner=(st.st_uid, st.st_gid))
    if stat.S_ISCHR(st.st_mode):
        if not os.access(real, os.W_OK):
            raise _refuse(shown, what, "it is a character device this user cannot write; give a file name")
        return OutputTarget(shown, what, DEVICE, Path(real))
    if stat.S_ISFIFO(st.st_mode):
        if not os.access(real, os.W_OK):
            raise _refuse(shown, what, "it is a FIFO this user cannot write; give a file name")
        return OutputTarget(shown, what, FIFO, Path(real))
    raise _refuse(shown, what, "it is neither a file, a character device nor a FIFO; give a file name")


def _error(target: OutputTarget, err: OSError) -> SsdlabError:
    why = err.strerror or str(err)
    if err.errno == errno.EPIPE:
        why += " (nothing reads it any more)"
    return SsdlabError(f"cannot write {target.what} {target.shown!r}: {why}")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view[:_CHUNK])
        except BlockingIOError:  # a descriptor someone left non-blocking: wait until it takes more
            select.select([], [fd], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        view = view[n:]


@dataclass
class Pending:
    """An output written up to its last step: `commit()` makes it appear (the rename of a file;
    nothing for what was written in place), `discard()` removes what `prepare_output` made."""

    target: OutputTarget
    temp: Optional[Path] = None
    made: List[Path] = field(default_factory=list)
    done: bool = False

    @property
    def path(self) -> Path:
        return self.target.path

    def commit(self) -> Path:
        if self.temp is not None and not self.done:
            try:
                os.replace(self.temp, self.target.path)
            except OSError as err:
                self.discard()
                raise _error(self.target, err) from None
            self.temp = None
            try:  # the rename itself on disk (best effort: not every file system syncs directories)
                dfd = os.open(self.target.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
            except OSError:
                pass
        self.done = True
        return self.target.path

    def discard(self) -> None:
        if self.temp is not None:
            try:
                os.unlink(self.temp)
            except OSError:
                pass
            self.temp = None
        remove_made_dirs(self.made)
        self.made = []
        self.done = True

    def __enter__(self) -> "Pending":
        return self

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        if not self.done:
            self.discard()


def _as_bytes(data: Union[str, bytes]) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def prepare_output(path: Union[PathLike, OutputTarget], data: Union[str, bytes], what: str = "output file") -> Pending:
    """Writes `data` (text is UTF-8) to the output `path` by the policy, all but the last step:
    a file is written to its temporary file (renamed by `Pending.commit`), a device, FIFO or
    descriptor is written now. Raises `SsdlabError` naming the output on any failure, leaving
    nothing behind (no temporary file, no directory it created)."""
    shown = path.shown if isinstance(path, OutputTarget) else path
    what = path.what if isinstance(path, OutputTarget) else what
    target = check_output_file(shown, what)  # again: the place may have changed since the check
    raw = _as_bytes(data)
    pending = Pending(target)
    if target.kind == DESCRIPTOR:
        assert target.fd is not None
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        try:
            _write_all(target.fd, raw)
        except OSError as err:
            raise _error(target, err) from None
        pending.done = True
        return pending
    if target.kind in (DEVICE, FIFO):
        flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC
        try:
            if target.kind == FIFO:
                try:
                    fd = os.open(target.path, flags | os.O_NONBLOCK)
                except OSError as err:
                    if err.errno == errno.ENXIO:
                        raise SsdlabError(f"cannot write {what} {target.shown!r}: nothing is reading the FIFO; "
                                          f"start its reader first") from None
                    raise
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
            else:
                fd = os.open(target.path, flags)
            try:
                st = os.fstat(fd)
                if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):  # swapped since the check
                    raise SsdlabError(f"cannot write {what} {target.shown!r}: it changed while being opened; "
                                      f"nothing was written")
                _write_all(fd, raw)
            finally:
                os.close(fd)
        except OSError as err:
            raise _error(target, err) from None
        pending.done = True
        return pending
    try:
        for d in target.missing:
            os.mkdir(d)
            pending.made.append(d)
        pending.temp = target.path.parent / temp_name()
        fd = os.open(pending.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o666 if target.mode is None else 0o600)
        try:
            if target.mode is not None:  # the replaced file's permissions (and owner, when allowed)
                if target.owner is not None and os.geteuid() == 0:
                    try:
                        os.fchown(fd, *target.owner)
                    except OSError:
                        pass
                os.fchmod(fd, target.mode)
            _write_all(fd, raw)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as err:
        pending.discard()
        raise _error(target, err) from None
    except BaseException:
        pending.discard()
        raise
    return pending


def guard_stdout() -> None:
    """Makes a failed write to standard output an error instead of silent loss.

    With ``PYTHONUNBUFFERED=1`` (``python -u``; common in containers and CI) ``sys.stdout`` writes
    straight to a raw file object, and its text layer ignores a short write: on a full file system
    (which first takes part of a write, then fails with ENOSPC) the rest of the output is dropped
    and the command exits 0. A `io.BufferedWriter` in between writes the rest and raises the error,
    which the CLI reports as one line. Call it once before a command prints anything."""
    import io

    global _UNBUFFERED_STDOUT
    stream = sys.stdout
    raw = getattr(stream, "buffer", None)
    if stream is not sys.__stdout__ or not isinstance(stream, io.TextIOWrapper) or not isinstance(raw, io.RawIOBase):
        return
    _UNBUFFERED_STDOUT = stream  # kept alive: closing it would close the raw file the new one writes to
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors,
                                  line_buffering=stream.line_buffering, write_through=True)


_UNBUFFERED_STDOUT: object = None


def write_output(path: Union[PathLike, OutputTarget], data: Union[str, bytes], what: str = "output file") -> Path:
    """Writes `data` to the output `path` by the policy (module doc), completely or not at all;
    returns where it went. Raises `SsdlabError` (one line naming the output) otherwise."""
    pending = prepare_output(path, data, what)
    return pending.commit()
