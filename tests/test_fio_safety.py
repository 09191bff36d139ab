"""Data safety: destructive runs refuse devices and files that hold data (ssdlab.fio.safety), and
SMART counter parsing (ssdlab.fio.smart)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ssdlab.errors import SsdlabError
from ssdlab.fio import safety, smart
from ssdlab.fio.safety import check_target

MIB = 2**20
HAVE_MKFS = shutil.which("mkfs.ext4") is not None


def mkfs(path: str) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", path], check=True, capture_output=True)


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text
    return text


# -- regular files ------------------------------------------------------------------------------------


def test_missing_file_is_created_sparse_at_capacity(tmp_path):
    p = tmp_path / "disk.img"
    with pytest.raises(SsdlabError) as e:
        check_target(p)
    assert one_line(e) == f"{p}: no such file; give --capacity to create it at that size"
    t = check_target(p, capacity=64 * MIB)
    assert (t.kind, t.size_bytes, t.created) == ("file", 64 * MIB, True)
    assert p.stat().st_size == 64 * MIB
    assert p.stat().st_blocks == 0  # sparse: nothing written


def test_existing_file_needs_yes_destroy_data(tmp_path):
    p = tmp_path / "data.bin"
    p.write_bytes(os.urandom(MIB))
    with pytest.raises(SsdlabError) as e:
        check_target(p)
    assert one_line(e) == (f"{p}: this test overwrites this existing 1 MiB file; add --yes-destroy-data, or give "
                           f"a path that does not exist yet (with --capacity)")
    t = check_target(p, destroy_ok=True)
    assert t.size_bytes == MIB and not t.created


def test_empty_file_is_free_to_use_with_a_capacity(tmp_path):
    p = tmp_path / "empty.img"
    p.touch()
    with pytest.raises(SsdlabError, match="the file is empty; give --capacity"):
        check_target(p)
    t = check_target(p, capacity=8 * MIB)
    assert t.size_bytes == 8 * MIB and p.stat().st_size == 8 * MIB


@pytest.mark.skipif(not HAVE_MKFS, reason="mkfs.ext4 is not installed")
def test_file_with_a_filesystem_needs_force_signatures(tmp_path):
    p = tmp_path / "fs.img"
    with open(p, "wb") as f:
        f.truncate(32 * MIB)
    mkfs(str(p))
    with pytest.raises(SsdlabError) as e:
        check_target(p, destroy_ok=True)
    assert one_line(e).startswith(f"{p}: refusing: the file holds ext4 at 0x438; choose another path")
    assert "--force-signatures" in str(e.value)
    assert check_target(p, destroy_ok=True, force_signatures=True).size_bytes == 32 * MIB


def test_directories_and_character_devices_are_refused(tmp_path):
    with pytest.raises(SsdlabError, match="is a directory"):
        check_target(tmp_path)
    with pytest.raises(SsdlabError, match="/dev/null: is a character device; give a block device or a regular file"):
        check_target("/dev/null", destroy_ok=True)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(SsdlabError, match="is a FIFO; give a block device or a regular file"):
        check_target(tmp_path / "fifo", destroy_ok=True)
    with pytest.raises(SsdlabError, match="/proc/version: is on the kernel's proc filesystem, not storage"):
        check_target("/proc/version", destroy_ok=True, capacity=64 * MIB)
    with pytest.raises(SsdlabError, match="no such device"):
        check_target("/dev/ssdlab-no-such-disk")


def test_mountinfo_parsing_handles_escapes():
    text = ("36 25 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
            "40 36 7:3 / /mnt/my\\040disk rw - ext4 /dev/loop3 rw\n")
    m = safety.mounts_by_device(text)
    assert m[(8, 1)] == ["/"]
    assert m[(7, 3)] == ["/mnt/my disk"]


# -- block devices (loop devices; root only) --------------------------------------------------------


def _can_loop() -> str:
    if os.geteuid() != 0:
        return "needs root for loop devices"
    if not os.path.exists("/dev/loop-control") or shutil.which("losetup") is None:
        return "no /dev/loop-control or losetup here"
    return ""


LOOP_SKIP = _can_loop()


@contextlib.contextmanager
def loop_device(path: Path, partitions: bool = False):
    args = ["losetup", "--find", "--show"] + (["--partscan"] if partitions else []) + [str(path)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot attach a loop device here: {r.stderr.strip()}")
    dev = r.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "--detach", dev], capture_output=True)


@contextlib.contextmanager
def mounted(dev: str, where: Path):
    where.mkdir(exist_ok=True)
    r = subprocess.run(["mount", dev, str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount here: {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


def backing(tmp_path: Path, size: int = 64 * MIB) -> Path:
    p = tmp_path / "backing.img"
    with open(p, "wb") as f:
        f.truncate(size)
    return p


@pytest.mark.skipif(bool(LOOP_SKIP), reason=LOOP_SKIP or "-")
def test_clean_loop_device_needs_yes_destroy_data(tmp_path):
    with loop_device(backing(tmp_path)) as dev:
        with pytest.raises(SsdlabError) as e:
            check_target(dev)
        text = one_line(e)
        assert text.startswith(f"{dev}: this test overwrites every byte of this device (loop device backed by ")
        assert text.endswith("64 MiB); add --yes-destroy-data if that is what you want")
        t = check_target(dev, destroy_ok=True)
        assert (t.kind, t.size_bytes, t.partition_of) == ("block", 64 * MIB, None)


@pytest.mark.skipif(bool(LOOP_SKIP) or not HAVE_MKFS, reason=LOOP_SKIP or "mkfs.ext4 is not installed")
def test_loop_device_with_a_filesystem_needs_force_signatures(tmp_path):
    with loop_device(backing(tmp_path)) as dev:
        mkfs(dev)
        with pytest.raises(SsdlabError) as e:
            check_target(dev, destroy_ok=True)
        assert one_line(e) == (f"{dev}: refusing: it carries ext4 at 0x438; if that data can go, wipe it with "
                               f"'wipefs -a {dev}' or add --force-signatures")
        assert check_target(dev, destroy_ok=True, force_signatures=True).kind == "block"


@pytest.mark.skipif(bool(LOOP_SKIP) or not HAVE_MKFS, reason=LOOP_SKIP or "mkfs.ext4 is not installed")
def test_mounted_loop_device_is_refused_whatever_the_flags(tmp_path):
    with loop_device(backing(tmp_path)) as dev:
        mkfs(dev)
        with mounted(dev, tmp_path / "mnt") as where:
            with pytest.raises(SsdlabError) as e:
                check_target(dev, destroy_ok=True, force_signatures=True)
            assert one_line(e) == (f"{dev}: refusing: it is mounted on {where}; unmount it (and anything else on "
                                   f"this drive) first -- nothing was written")
            # the file behind it is protected too
            with pytest.raises(SsdlabError, match=rf"refusing: it backs {dev}, which is mounted on {where}"):
                check_target(tmp_path / "backing.img", destroy_ok=True, force_signatures=True)


def write_mbr(img: Path, parts_mib: list) -> None:
    """A DOS partition table with Linux partitions of the given sizes, 1 MiB aligned."""
    mbr = bytearray(512)
    start = 2048
    for i, size in enumerate(parts_mib):
        sectors = size * 2048
        entry = bytes([0, 0xFE, 0xFF, 0xFF, 0x83, 0xFE, 0xFF, 0xFF]) + start.to_bytes(4, "little") + sectors.to_bytes(4, "little")
        mbr[446 + 16 * i: 462 + 16 * i] = entry
        start += sectors
    mbr[510:512] = b"\x55\xaa"
    with open(img, "r+b") as f:
        f.write(mbr)


@pytest.mark.skipif(bool(LOOP_SKIP) or not HAVE_MKFS, reason=LOOP_SKIP or "mkfs.ext4 is not installed")
def test_disk_with_a_mounted_partition_is_refused(tmp_path):
    img = backing(tmp_path, 96 * MIB)
    write_mbr(img, [32, 60])
    with loop_device(img, partitions=True) as dev:
        part = f"{dev}p1"
        if not os.path.exists(part):
            pytest.skip("the kernel did not create partition devices for the loop device")
        mkfs(part)
        # an unmounted partition table is a signature
        with pytest.raises(SsdlabError, match=r"refusing: it carries dos at 0x1fe, ext4 at 0x438 on "):
            check_target(dev, destroy_ok=True)
        t = check_target(f"{dev}p2", destroy_ok=True)
        assert t.partition_of == dev and "is a partition of" in t.notes[0]
        with mounted(part, tmp_path / "mnt") as where:
            with pytest.raises(SsdlabError) as e:
                check_target(dev, destroy_ok=True, force_signatures=True)
            assert one_line(e).startswith(f"{dev}: refusing: {part} is mounted on {where}")


# -- SMART ------------------------------------------------------------------------------------------


def test_smart_nvme_has_host_writes_only():
    w = smart.parse_smart({"nvme_smart_health_information_log": {"data_units_written": 1000}})
    assert (w.host_bytes, w.nand_bytes) == (512_000_000, None)


def _ata(*attrs, model="INTEL SSDSC2CW240A3"):
    return {"model_name": model, "logical_block_size": 512,
            "ata_smart_attributes": {"table": [{"id": i, "name": n, "raw": {"value": v}} for i, n, v in attrs]}}


def test_smart_intel_host_and_nand():
    before = smart.parse_smart(_ata((241, "Host_Writes_32MiB", 100), (249, "NAND_Writes_1GiB", 10)))
    after = smart.parse_smart(_ata((241, "Host_Writes_32MiB", 100 + 64), (249, "NAND_Writes_1GiB", 16)))
    wa = smart.write_amplification(before, after)
    assert wa["host_write_bytes"] == 64 * 32 * MIB
    assert wa["nand_write_bytes"] == 6 * 2**30
    assert wa["write_amplification"] == pytest.approx(3.0)


def test_smart_samsung_lbas_and_micron_pages():
    w = smart.parse_smart(_ata((241, "Total_LBAs_Written", 2048), model="Samsung SSD 840 PRO"))
    assert (w.host_bytes, w.nand_bytes) == (2048 * 512, None)
    b = smart.parse_smart(_ata((246, "Total_LBAs_Written", 0), (247, "Host_Program_Page_Count", 100),
                               (248, "FTL_Program_Page_Count", 50), model="Crucial_CT256M550SSD1"))
    a = smart.parse_smart(_ata((246, "Total_LBAs_Written", 8), (247, "Host_Program_Page_Count", 200),
                               (248, "FTL_Program_Page_Count", 250), model="Crucial_CT256M550SSD1"))
    assert smart.write_amplification(b, a)["write_amplification"] == pytest.approx(3.0)


def test_smart_sandforce_and_nothing():
    w = smart.parse_smart(_ata((241, "Lifetime_Writes_GiB", 5), (233, "SandForce_Internal", 2), model="KINGSTON SV300S37A120G"))
    assert (w.host_bytes, w.nand_bytes) == (5 * 2**30, 2 * 2**30)
    assert smart.parse_smart(_ata((9, "Power_On_Hours", 5))) is None
    assert smart.write_amplification(None, None)["write_amplification"] is None
