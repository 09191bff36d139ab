"""Refusing destructive runs on devices and files that hold data.

`check_target(path, ...)` runs before anything is written and either returns a `Target` or raises
`SsdlabError` with one line saying what was found and how to proceed. The rules:

Block device
    * never, whatever the flags: the device, one of its partitions, or anything stacked on it
      (device-mapper, MD RAID, LVM: ``/sys/.../holders``) is mounted or used as swap; or something
      holds it open as a component (a holder exists);
    * without ``--yes-destroy-data``: any device (its model and size are named);
    * without ``--force-signatures``: the device or one of its partitions carries a filesystem,
      RAID, LVM or partition-table signature (``wipefs --no-act``, else ``blkid -p``), or neither
      tool is there to look.
    A partition is accepted but noted: only its range is erased and TRIMmed, and the drive's other
    data still shapes its behaviour.

Regular file
    * a missing file is created at ``--capacity`` (sparse) -- nothing to destroy;
    * an existing non-empty file needs ``--yes-destroy-data``; one that carries a filesystem or
      partition-table signature also needs ``--force-signatures``; one attached to a loop device
      that is mounted is always refused.

Anything else (a directory, a character device, a FIFO, a socket) is refused, and so is a file
on a kernel pseudo-filesystem (``/proc``, ``/sys``, ``/dev``'s devtmpfs, cgroup, debugfs, ...):
such a file is not storage, and writing it changes the system.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.sizes import format_size

__all__ = ["Target", "check_target", "signatures", "mounts_by_device", "block_info"]

SYS_BLOCK = Path("/sys/dev/block")


@dataclass
class Target:
    """A checked place to run a destructive test."""

    path: Path
    kind: str  # "block" or "file"
    size_bytes: int
    created: bool = False
    partition_of: Optional[str] = None  # the whole disk, for a partition
    name: str = ""  # model or file name, for labels
    notes: List[str] = field(default_factory=list)

    @property
    def is_file(self) -> bool:
        return self.kind == "file"


# -- what the system knows about block devices --------------------------------------------------------


def _read(p: Path) -> Optional[str]:
    try:
        return p.read_text().strip()
    except OSError:
        return None


def _unescape(s: str) -> str:
    # /proc/self/mountinfo escapes space, tab, newline and backslash as octal.
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 4 <= len(s) and s[i + 1 : i + 4].isdigit():
            out.append(chr(int(s[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def mounts_by_device(mountinfo: Optional[str] = None) -> Dict[Tuple[int, int], List[str]]:
    """Mount points by device number (major, minor), from /proc/self/mountinfo."""
    text = mountinfo if mountinfo is not None else (_read(Path("/proc/self/mountinfo")) or "")
    out: Dict[Tuple[int, int], List[str]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 5 or ":" not in parts[2]:
            continue
        major, minor = (int(x) for x in parts[2].split(":", 1))
        out.setdefault((major, minor), []).append(_unescape(parts[4]))
        # Some filesystems (btrfs) report an anonymous device number; match the source too.
        if " - " in line:
            tail = line.split(" - ", 1)[1].split()
            if len(tail) >= 2 and tail[1].startswith("/dev/"):
                try:
                    st = os.stat(tail[1])
                    where = _unescape(parts[4])
                    key = (os.major(st.st_rdev), os.minor(st.st_rdev))
                    if stat.S_ISBLK(st.st_mode) and where not in out.get(key, []):
                        out.setdefault(key, []).append(where)
                except OSError:
                    pass
    return out


def _swaps() -> Dict[Tuple[int, int], str]:
    out: Dict[Tuple[int, int], str] = {}
    text = _read(Path("/proc/swaps")) or ""
    for line in text.splitlines()[1:]:
        name = line.split()[0] if line.split() else ""
        try:
            st = os.stat(_unescape(name))
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode):
            out[(os.major(st.st_rdev), os.minor(st.st_rdev))] = name
    return out


@dataclass
class BlockInfo:
    dev: Tuple[int, int]
    name: str  # kernel name, e.g. sda, sda1, loop3, nvme0n1
    sys: Path
    size_bytes: int
    partition: bool
    parent: Optional[str]
    partitions: List["BlockInfo"]
    holders: List["BlockInfo"]
    model: str


def _dev_of(sys_dir: Path) -> Optional[Tuple[int, int]]:
    text = _read(sys_dir / "dev")
    if not text or ":" not in text:
        return None
    a, b = text.split(":", 1)
    return int(a), int(b)


def _block_info(sys_dir: Path, depth: int = 0) -> BlockInfo:
    sys_dir = sys_dir.resolve()
    dev = _dev_of(sys_dir) or (0, 0)
    name = sys_dir.name
    sectors = int(_read(sys_dir / "size") or 0)
    partition = (sys_dir / "partition").exists()
    parent = sys_dir.parent.name if partition else None
    parts = []
    if not partition:
        for child in sorted(sys_dir.iterdir()) if sys_dir.is_dir() else []:
            if (child / "partition").exists():
                parts.append(_block_info(child, depth + 1))
    holders = []
    if depth < 8 and (sys_dir / "holders").is_dir():
        for h in sorted((sys_dir / "holders").iterdir()):
            holders.append(_block_info(h, depth + 1))
    model_dir = sys_dir.parent if partition else sys_dir
    model = " ".join(filter(None, (_read(model_dir / "device" / "vendor"), _read(model_dir / "device" / "model"))))
    if not model and (model_dir / "loop" / "backing_file").exists():
        model = f"loop device backed by {_read(model_dir / 'loop' / 'backing_file')}"
    return BlockInfo(dev, name, sys_dir, sectors * 512, partition, parent, parts, holders, model.strip())


def block_info(path: Path) -> BlockInfo:
    st = os.stat(path)
    major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
    sys_dir = SYS_BLOCK / f"{major}:{minor}"
    if not sys_dir.exists():
        raise SsdlabError(f"{path}: no /sys entry for block device {major}:{minor}; is /sys mounted?")
    return _block_info(sys_dir)


def _walk(info: BlockInfo):
    yield info
    for p in info.partitions:
        yield from _walk(p)
    for h in info.holders:
        yield from _walk(h)


# -- signatures ---------------------------------------------------------------------------------------


def signatures(path: Path) -> Optional[List[str]]:
    """Signatures on `path` as short strings (``"ext4 at 0x438"``), or None when neither wipefs nor
    blkid could look."""
    wipefs = shutil.which("wipefs")
    if wipefs:
        try:
            r = subprocess.run([wipefs, "--no-act", "--json", str(path)], capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                if not r.stdout.strip():
                    return []
                doc = json.loads(r.stdout)
                return [f"{s.get('type', '?')} at {s.get('offset', '?')}" for s in doc.get("signatures", [])]
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
    blkid = shutil.which("blkid")
    if blkid:
        try:
            r = subprocess.run([blkid, "-p", "-o", "export", str(path)], capture_output=True, text=True, timeout=60)
            if r.returncode == 2:  # nothing found
                return []
            if r.returncode == 0:
                kv = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
                found = [kv[k] for k in ("TYPE", "PTTYPE") if k in kv]
                return found or ["an unknown signature"]
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


# -- the check ----------------------------------------------------------------------------------------


def _flags_hint(need: Sequence[str]) -> str:
    return " and ".join(need)


def _check_block(path: Path, destroy_ok: bool, force_signatures: bool) -> Target:
    info = block_info(path)
    shown = str(path)
    mounts = mounts_by_device()
    swaps = _swaps()
    for node in _walk(info):
        where = mounts.get(node.dev)
        if where:
            what = "it" if node is info else f"/dev/{node.name}"
            raise SsdlabError(
                f"{shown}: refusing: {what} is mounted on {where[0]}; unmount it (and anything else on this "
                f"drive) first -- nothing was written"
            )
        if node.dev in swaps:
            raise SsdlabError(f"{shown}: refusing: /dev/{node.name} is in use as swap; swapoff it first -- nothing was written")
    if info.holders:
        names = ", ".join(h.name for h in info.holders)
        raise SsdlabError(
            f"{shown}: refusing: it is in use by {names} (device-mapper, RAID or LVM); take it out of use "
            f"first -- nothing was written"
        )
    for part in info.partitions:
        if part.holders:
            raise SsdlabError(
                f"{shown}: refusing: its partition {part.name} is in use by "
                f"{', '.join(h.name for h in part.holders)}; take it out of use first -- nothing was written"
            )
    size = info.size_bytes
    label = info.model or info.name
    if not destroy_ok:
        raise SsdlabError(
            f"{shown}: this test overwrites every byte of this device ({label}, {format_size(size)}); "
            f"add --yes-destroy-data if that is what you want"
        )
    if not force_signatures:
        found: List[str] = []
        for node in [info] + info.partitions:
            sig = signatures(Path("/dev") / node.name if node is not info else path)
            if sig is None:
                raise SsdlabError(
                    f"{shown}: cannot check it for filesystems (neither wipefs nor blkid works here); install "
                    f"util-linux or add --force-signatures to overwrite it unchecked"
                )
            found += [s if node is info else f"{s} on {node.name}" for s in sig]
        if found:
            raise SsdlabError(
                f"{shown}: refusing: it carries {', '.join(found)}; if that data can go, wipe it with "
                f"'wipefs -a {shown}' or add --force-signatures"
            )
    t = Target(path, "block", size, name=label)
    if info.partition:
        t.partition_of = f"/dev/{info.parent}"
        t.notes.append(
            f"{shown} is a partition of {t.partition_of}: only its range is erased and TRIMmed; the rest of the "
            f"drive still affects the results"
        )
    if size <= 0:
        raise SsdlabError(f"{shown}: the device reports a size of 0 bytes; is there a medium?")
    return t


def _loop_users(path: Path) -> List[str]:
    losetup = shutil.which("losetup")
    if not losetup:
        return []
    try:
        r = subprocess.run([losetup, "-j", str(path)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.split(":", 1)[0] for line in r.stdout.splitlines() if line.startswith("/dev/")]


def _check_file(path: Path, destroy_ok: bool, force_signatures: bool, capacity: Optional[int]) -> Target:
    shown = str(path)
    if not path.exists():
        if capacity is None:
            raise SsdlabError(f"{shown}: no such file; give --capacity to create it at that size")
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise SsdlabError(f"{shown}: cannot create it: {parent} is not a directory")
        try:
            with open(path, "xb") as f:
                f.truncate(capacity)
        except OSError as e:
            raise SsdlabError(f"{shown}: cannot create a {format_size(capacity)} file: {e.strerror or e}") from None
        return Target(path, "file", capacity, created=True, name=path.name,
                      notes=[f"created {shown} ({format_size(capacity)})"])
    st = path.stat()
    size = st.st_size
    for loop in _loop_users(path):
        try:
            info = block_info(Path(loop))
        except (OSError, SsdlabError):
            continue
        mounts = mounts_by_device()
        for node in _walk(info):
            if node.dev in mounts:
                raise SsdlabError(
                    f"{shown}: refusing: it backs {loop}, which is mounted on {mounts[node.dev][0]}; unmount and "
                    f"detach it first -- nothing was written"
                )
    if size > 0:
        if not destroy_ok:
            raise SsdlabError(
                f"{shown}: this test overwrites this existing {format_size(size)} file; add --yes-destroy-data, "
                f"or give a path that does not exist yet (with --capacity)"
            )
        if not force_signatures:
            sig = signatures(path)
            if sig:
                raise SsdlabError(
                    f"{shown}: refusing: the file holds {', '.join(sig)}; choose another path, remove the file, "
                    f"or add --force-signatures"
                )
    target_size = capacity if capacity is not None else size
    if target_size <= 0:
        raise SsdlabError(f"{shown}: the file is empty; give --capacity to set the test size")
    notes = []
    if capacity is not None and capacity > size:
        try:
            os.truncate(path, capacity)
        except OSError as e:
            raise SsdlabError(f"{shown}: cannot grow the file to {format_size(capacity)}: {e.strerror or e}") from None
        notes.append(f"grew {shown} from {format_size(size)} to {format_size(capacity)}")
    return Target(path, "file", target_size, name=path.name, notes=notes)


PSEUDO_FILESYSTEMS = frozenset({
    "proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2", "configfs",
    "pstore", "efivarfs", "bpf", "fusectl", "binfmt_misc", "mqueue", "autofs", "rpc_pipefs", "nsfs", "hugetlbfs",
    "selinuxfs", "smackfs", "nfsd",
})


def filesystem_type(path: Path, mountinfo: Optional[str] = None) -> Optional[str]:
    """The type of the filesystem holding `path` (or its nearest existing parent), from
    /proc/self/mountinfo; None when unknown."""
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    try:
        dev = os.stat(p).st_dev
    except OSError:
        return None
    text = mountinfo if mountinfo is not None else (_read(Path("/proc/self/mountinfo")) or "")
    want = f"{os.major(dev)}:{os.minor(dev)}"
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == want and " - " in line:
            return line.split(" - ", 1)[1].split()[0]
    return None


def _not_pseudo(p: Path) -> None:
    fs = filesystem_type(p)
    if fs in PSEUDO_FILESYSTEMS:
        raise SsdlabError(f"{p}: is on the kernel's {fs} filesystem, not storage; give a block device or a file on a "
                          f"disk filesystem -- nothing was written")


def check_target(path: os.PathLike | str, *, destroy_ok: bool = False, force_signatures: bool = False,
                 capacity: Optional[int] = None) -> Target:
    """Checks `path` for a destructive test (see the module doc); creates a missing file."""
    from ssdlab.inputs import check_path_text

    p = Path(check_path_text(path, "device"))
    if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0):
        raise SsdlabError(f"{p}: capacity must be a positive whole number of bytes, got {capacity!r}")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if str(path).startswith("/dev/"):
            raise SsdlabError(f"{p}: no such device") from None
        _not_pseudo(p)
        return _check_file(p, destroy_ok, force_signatures, capacity)
    except PermissionError:
        raise SsdlabError(f"{p}: permission denied; run as a user who may write it (often root)") from None
    if stat.S_ISBLK(st.st_mode):
        if not os.access(p, os.R_OK | os.W_OK):
            raise SsdlabError(f"{p}: permission denied; run as a user who may write it (often root)")
        t = _check_block(p, destroy_ok, force_signatures)
        if capacity is not None:
            if capacity > t.size_bytes:
                raise SsdlabError(f"{p}: --capacity {format_size(capacity)} is larger than the device ({format_size(t.size_bytes)})")
            t.notes.append(f"testing the first {format_size(capacity)} of {format_size(t.size_bytes)}")
            t.size_bytes = capacity
        return t
    if stat.S_ISREG(st.st_mode):
        _not_pseudo(p)
        return _check_file(p, destroy_ok, force_signatures, capacity)
    if stat.S_ISDIR(st.st_mode):
        raise SsdlabError(f"{p}: is a directory; give a block device or a file path")
    kind = ("a character device" if stat.S_ISCHR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
            else "a socket" if stat.S_ISSOCK(st.st_mode) else "neither a block device nor a regular file")
    raise SsdlabError(f"{p}: is {kind}; give a block device or a regular file -- nothing was written")
