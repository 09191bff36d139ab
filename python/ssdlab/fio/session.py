"""The frame every run on a real device or file shares (``ssdlab.fio.device``'s procedures and
``ssdlab.fio.devrun``'s job files): erasing and TRIMming the tested range (blkdiscard or ``nvme
format`` on a device, punched holes in a file), the SMART write counters, the safe staging of a
device run (`device_run`: nothing is left behind by a failed run) and a `Session` of fio runs
whose files go to the result's ``fio/`` directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ssdlab import _core
from ssdlab.errors import SsdlabError
from ssdlab.fio import runner, smart
from ssdlab.fio.safety import Target, check_target
from ssdlab.results import ResultStage, check_output_dir
from ssdlab.sizes import parse_size

__all__ = ["Session", "common_summary", "device_run", "fio_time", "open_session", "secure_erase", "smart_writes",
           "target_label", "trim_range"]

PathLike = Union[str, "os.PathLike[str]"]


# -- erase and TRIM -----------------------------------------------------------------------------------

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02


def _punch_hole(path: Path, length: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    fd = os.open(path, os.O_RDWR)
    try:
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
        if libc.fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, length) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        os.fsync(fd)
    finally:
        os.close(fd)


def _blkdiscard(path: Path, length: int) -> Tuple[bool, str]:
    exe = shutil.which("blkdiscard")
    if exe is None:
        return False, "blkdiscard not found (util-linux)"
    r = subprocess.run([exe, "--offset", "0", "--length", str(length), str(path)], capture_output=True, text=True,
                       timeout=3600)
    if r.returncode == 0:
        return True, "blkdiscard"
    return False, (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]


def trim_range(target: Target) -> str:
    """TRIMs the tested range; returns how. Raises `SsdlabError` when it cannot."""
    length = target.size_bytes // 4096 * 4096
    if target.is_file:
        try:
            _punch_hole(target.path, length)
            return "punched holes (fallocate)"
        except OSError as e:
            raise SsdlabError(f"{target.path}: cannot punch holes to TRIM it: {e.strerror or e}") from None
    ok, how = _blkdiscard(target.path, length)
    if not ok:
        raise SsdlabError(f"{target.path}: TRIM (blkdiscard) failed: {how}")
    return how


def secure_erase(target: Target) -> Tuple[str, List[str]]:
    """Returns the method used and notes. A file is emptied by punching holes (or truncating); a
    block device is discarded; whole NVMe namespaces fall back to ``nvme format --ses=1``."""
    notes: List[str] = []
    length = target.size_bytes // 4096 * 4096
    if target.is_file:
        try:
            _punch_hole(target.path, length)
            return "punched holes over the file (fallocate)", notes
        except OSError as e:
            size = target.path.stat().st_size
            os.truncate(target.path, 0)
            os.truncate(target.path, size)
            notes.append(f"punching holes failed ({e.strerror or e}); truncated the file to 0 and back instead")
            return "truncate", notes
    ok, how = _blkdiscard(target.path, length)
    if ok:
        return "blkdiscard of the tested range", notes
    nvme = shutil.which("nvme")
    whole = target.partition_of is None and re.fullmatch(r"nvme\d+n\d+", target.path.name or "")
    if nvme and whole:
        r = subprocess.run([nvme, "format", str(target.path), "--ses=1", "--force"], capture_output=True, text=True,
                           timeout=3600)
        if r.returncode == 0:
            return "nvme format --ses=1", notes
        how += f"; nvme format: {(r.stderr.strip().splitlines() or ['failed'])[-1]}"
    notes.append(f"could not erase {target.path} ({how}); the test starts from the drive's current state")
    return "none", notes


# -- SMART --------------------------------------------------------------------------------------------


def smart_writes(target: Target) -> Optional[smart.SmartWrites]:
    if target.is_file:
        return None
    dev = Path(target.partition_of) if target.partition_of else target.path
    return smart.read_smart(dev)


# -- common helpers -----------------------------------------------------------------------------------


@dataclass
class Session:
    target: Target
    io: runner.IoSetup
    workdir: Path
    progress: bool
    notes: List[str] = field(default_factory=list)
    runs: int = 0

    def base_options(self, size: int) -> Dict[str, Any]:
        return {
            "filename": str(self.target.path.resolve()),
            "ioengine": self.io.engine,
            "direct": 1 if self.io.direct else 0,
            "size": size,
            "thread": True,
            "norandommap": True,
        }

    def run(self, jobs: Sequence[runner.FioJobSpec], size: int, comment: str,
            extra: Optional[Dict[str, Any]] = None) -> runner.FioOutput:
        self.runs += 1
        sub = self.workdir / f"{self.runs:02d}-{jobs[0].name}"
        opts = dict(self.base_options(size), **(extra or {}))
        return runner.run(opts, jobs, sub, progress=self.progress, comment=comment)


@contextlib.contextmanager
def device_run(path: PathLike, *, capacity: Optional[int], yes_destroy_data: bool, force_signatures: bool,
               out_dir: Optional[PathLike]) -> Iterator[Tuple[Target, Optional[ResultStage]]]:
    """The safe frame of every device run: checks fio, the output directory and the target (in that
    order, before anything is written), stages the result directory, and on any error, Ctrl-C or
    SIGTERM removes the staging directory and a file the run created, so a failed run leaves
    nothing behind. The caller commits the stage when the result is complete."""
    runner.fio_path()  # fail early without fio
    if capacity is not None:
        capacity = parse_size(capacity, what="capacity")
    if out_dir is not None:
        check_output_dir(out_dir)
    target = check_target(path, destroy_ok=yes_destroy_data, force_signatures=force_signatures, capacity=capacity)
    stage: Optional[ResultStage] = None
    ok = False
    try:
        stage = ResultStage(out_dir) if out_dir is not None else None
        yield target, stage
        ok = True
    except runner.FioFailed as err:
        if stage is not None and stage.path in err.workdir.parents:  # removed below: point nowhere
            raise SsdlabError(f"{err.brief()} (no result was written to {out_dir})") from None
        raise
    finally:
        if stage is not None and not stage.done:
            stage.discard()
        if not ok and target.created:
            with contextlib.suppress(OSError):
                os.unlink(target.path)


def open_session(target: Target, stage: Optional[ResultStage], progress: bool,
                  on_start: Optional[Callable[[Target], None]] = None, depth: int = 1) -> Session:
    """The session of a device run whose deepest queue is `depth` requests: the IO engine is
    chosen for that depth (`runner.probe_io`), so a documented queue depth never fails in fio's
    engine set-up after the target was erased."""
    if on_start is not None:
        on_start(target)
    io = runner.probe_io(target.path, depth=depth)
    if not io.direct and not target.is_file:
        raise SsdlabError(f"{target.path}: fio cannot open the device with O_DIRECT; refusing a buffered run on a device")
    if stage is not None:
        workdir = stage.path / "fio"
    else:
        import tempfile

        workdir = Path(tempfile.mkdtemp(prefix="ssdlab-fio-"))
    workdir.mkdir(parents=True, exist_ok=True)
    s = Session(target, io, workdir, progress, notes=list(target.notes) + list(io.notes))
    if io.engine == "psync":
        s.notes.append("ioengine=psync keeps one IO in flight: the queue depth is 1 whatever --qd says")
    return s


def fio_time(seconds: float) -> str:
    """A checked duration as fio reads it: whole milliseconds (at least 1)."""
    return f"{max(int(round(seconds * 1000)), 1)}ms"


def target_label(target: Target) -> str:
    return target.name or target.path.name


def common_summary(s: Session, scenario: str, label: str, started: float) -> Dict[str, Any]:
    return {
        "scenario": scenario,
        "label": label,
        "drive": target_label(s.target),
        "device": str(s.target.path),
        "seed": None,
        "ssdlab_version": _core.__version__,
        "wall_seconds": time.perf_counter() - started,
    }
