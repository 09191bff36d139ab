"""``ssdlab serve`` against fio's nbd engine (verify=crc32c while GC runs), libnbd's tools, and a
fuzzer over the handshake's and the requests' bytes."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serve_support import CMD_READ, CMD_WRITE, IHAVEOPT, REQUEST_MAGIC, Client, LoopChain, Served, need, run


def test_fio_randwrite_verifies_crc32c_after_gc_ran_many_times(tmp_path: Path) -> None:
    need("fio")
    if "uri" not in run("fio", "--enghelp=nbd").stdout:
        pytest.skip("this fio has no nbd engine")
    s = Served(tmp_path)
    try:
        uri = s.uri
        common = ["--ioengine=nbd", f"--uri={uri}", "--rw=randwrite", "--bs=4k", "--iodepth=32", "--size=1g"]
        # Two capacities of random writes first: the drive is full and GC cleans all the time.
        run("fio", "--name=churn", *common, "--io_size=2g", "--norandommap", "--randrepeat=1", cwd=tmp_path)
        p = run("fio", "--name=verify", *common, "--verify=crc32c", "--do_verify=1", "--randrepeat=0", cwd=tmp_path)
        assert "err= 0" in p.stdout, p.stdout
        assert "verify" not in p.stderr.lower(), p.stderr
        assert s.stop() == 0, s.stderr()
        summary = s.summary()
    finally:
        s.kill()
    assert summary["requests"]["write"] == 3 * 262144 and summary["requests"]["read"] == 262144
    blocks = summary["user_capacity_bytes"] * (1 + summary["op"]) / (2 * 256 * 8192)  # two-plane blocks
    assert summary["erases"] > 3 * blocks, "GC erased every block several times over"
    assert summary["gc_write_units"] > summary["host_write_units"] / 4
    assert 1.2 < summary["write_amplification"] < 4


def test_libnbd_tools(tmp_path: Path) -> None:
    need("nbdinfo", "nbdcopy")
    # Stopped by a signal, not --once: four client processes one after the other, and on a loaded
    # machine one may start later than --once waits for a client that reconnects.
    s = Served(tmp_path)
    try:
        info = run("nbdinfo", s.uri).stdout
        assert "export-size: 1073741824" in info and "can_multi_conn: true" in info, info
        assert "block_size_minimum: 512" in info and "block_size_maximum: 33554432" in info, info
        assert "can_fast_zero: true" in info and "can_trim: true" in info, info
        src = tmp_path / "src.raw"
        src.write_bytes(os.urandom(8 << 20))
        run("nbdcopy", str(src), s.uri)
        # BLOCK_STATUS (base:allocation): the 8 MiB copied are data, the rest a hole of zeros.
        extents = run("nbdinfo", "--map", s.uri).stdout.split("\n")
        assert extents[0].split() == ["0", str(8 << 20), "0", "data"], extents
        assert extents[1].split()[:3] == [str(8 << 20), str((1 << 30) - (8 << 20)), "3"], extents
        back = tmp_path / "back.raw"
        run("nbdcopy", "--", s.uri, str(back))
        assert back.read_bytes()[: 8 << 20] == src.read_bytes()
        assert set(back.read_bytes()[8 << 20 : 16 << 20]) == {0}
        assert s.stop() == 0, s.stderr()
    finally:
        s.kill()


# -- the fuzzer ------------------------------------------------------------------------------------


def _option(opt: int, data: bytes) -> bytes:
    return struct.pack(">QII", IHAVEOPT, opt, len(data)) + data


_GO = _option(7, struct.pack(">IH", 0, 0))
_HANDSHAKES = st.one_of(
    st.binary(max_size=200),  # anything at all
    st.builds(lambda flags, rest: struct.pack(">I", flags) + rest, st.integers(0, 2**32 - 1), st.binary(max_size=100)),
    st.builds(lambda opts, tail: struct.pack(">I", 1) + b"".join(opts) + tail,
              st.lists(st.builds(_option, st.integers(0, 20), st.binary(max_size=40)), max_size=5),
              st.binary(max_size=40)),
)
_REQUEST = st.builds(
    lambda magic, flags, cmd, cookie, off, length, tail: struct.pack(">IHHQQI", magic, flags, cmd, cookie, off,
                                                                      length) + tail,
    st.sampled_from([REQUEST_MAGIC, REQUEST_MAGIC, REQUEST_MAGIC, 0, 0x12560953]),
    st.sampled_from([0, 1, 2, 4, 0xFFFF]),
    st.integers(0, 12),
    st.integers(0, 2**64 - 1),
    st.one_of(st.sampled_from([0, 512, 4096, 2**30 - 512, 2**30, 2**64 - 512]), st.integers(0, 2**64 - 1)),
    st.one_of(st.sampled_from([0, 512, 4096, 2**25, 2**25 + 512, 2**32 - 1]), st.integers(0, 2**32 - 1)),
    st.binary(max_size=64),
)
_TRANSMISSION = st.builds(lambda reqs: struct.pack(">I", 1) + _GO + b"".join(reqs), st.lists(_REQUEST, max_size=6))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory):
    s = Served(tmp_path_factory.mktemp("fuzz"))
    yield s
    s.kill()


def _blast(path: Path, data: bytes) -> None:
    """Sends `data` as a client would, reads whatever comes back for a moment, hangs up."""
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(0.2)
    try:
        c.connect(str(path))
        c.sendall(data)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            if not c.recv(1 << 16):
                break
    except OSError:
        pass
    finally:
        c.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(_HANDSHAKES, _TRANSMISSION))
def test_fuzzed_bytes_leave_the_server_serving(fuzzed: Served, data: bytes) -> None:
    _blast(fuzzed.socket, data)
    assert fuzzed.proc.poll() is None, fuzzed.stderr()
    # Another connection still works: a write and its read back.
    c = Client(fuzzed.socket)
    try:
        payload = os.urandom(4096)
        assert c.request(CMD_WRITE, 1 << 20, 4096, payload) == (0, b"")
        assert c.request(CMD_READ, 1 << 20, 4096) == (0, payload)
    finally:
        c.close()


def test_after_the_fuzzer_the_counts_add_up(fuzzed: Served) -> None:
    assert fuzzed.stop() == 0, fuzzed.stderr()
    s = fuzzed.summary()
    assert s["connections"] > 100 and s["sessions"] > 50
    assert s["protocol_errors"] > 0 and sum(s["errors"].values()) > 0
    assert "Traceback" not in fuzzed.stderr() and "panicked" not in fuzzed.stderr()


def test_ext4_through_fuse_and_a_loop_device(tmp_path: Path) -> None:
    """The issue's chain: qemu-storage-daemon's FUSE export of the NBD drive, a loop device on it,
    mkfs.ext4, mount -o discard, a tree copied; then the chain taken down and built again (so no
    page cache holds the tree), the tree checked and deleted: the delete's online discards reach
    the drive. Root only."""
    LoopChain.skip_unless_possible()
    import hashlib

    s = Served(tmp_path)
    chain = LoopChain(s.socket, tmp_path)
    try:
        loop = chain.up()
        run("mkfs.ext4", "-q", "-F", "-E", "nodiscard", loop)
        mnt = chain.mount(loop, "discard")
        tree = mnt / "tree"
        sums = {}
        for d in range(4):
            (tree / f"d{d}").mkdir(parents=True)
            for f in range(8):
                data = os.urandom(256 * 1024 + f * 4096 + d)
                (tree / f"d{d}" / f"f{f}").write_bytes(data)
                sums[f"d{d}/f{f}"] = hashlib.sha256(data).hexdigest()
        chain.down()
        mnt = chain.mount(chain.up(), "discard")
        for name, digest in sums.items():
            assert hashlib.sha256((mnt / "tree" / name).read_bytes()).hexdigest() == digest, name
        subprocess.run(["rm", "-rf", str(mnt / "tree")], check=True)
        chain.down()
        assert s.stop() == 0, s.stderr()
        summary = s.summary()
    finally:
        chain.down()
        s.kill()
    tree_bytes = sum(256 * 1024 + f * 4096 + d for d in range(4) for f in range(8))
    assert summary["host_write_bytes"] > tree_bytes and summary["requests"]["flush"] > 0
    assert summary["host_read_bytes"] > tree_bytes, "the tree was read back from the simulated drive"
    # mount -o discard: ext4 discards the deleted files' blocks (whole 4 KiB blocks of the tree,
    # beyond what mkfs zeroed before it) as NBD write-zeroes that may unmap.
    assert summary["host_trim_bytes"] >= tree_bytes - 32 * 4096, summary["host_trim_bytes"]
    assert summary["errors"] == {} and summary["protocol_errors"] == 0


TREE_FILES, TREE_FILE_BYTES, FILE_BYTES = 75, 4 << 20, 150 << 20


def _fstrim_sequence(tmp_path: Path, trim: bool) -> Dict[str, Any]:
    """One run of the fstrim sequence on a fresh 512 MiB drive served in this process: mkfs.ext4
    (no discard), a tree of 300 MiB copied and a 150 MiB file written (ext4 is then ~95 % full),
    the tree deleted, fstrim (when `trim`), then 16 KiB random overwrites of the file, 3x its size,
    with O_DIRECT. Returns fstrim's count and the server's status before fstrim, before the
    overwrites and after them."""
    from ssdlab import load_preset
    from ssdlab.config import DriveConfig
    from ssdlab.scenarios.serve import serve

    work = tmp_path / ("trim" if trim else "keep")
    work.mkdir()
    # mlc-256 on 2 x 2 dies: at 512 MiB its blocks keep 100 units (on its 32 dies, 16), so random
    # 16 KiB overwrites leave blocks partly valid, as on a full-size drive.
    d = load_preset("mlc-256").to_dict()
    d["geometry"].update(channels=2, dies_per_channel=2)
    cfg = DriveConfig.from_dict(d).with_user_capacity("512MiB")
    out: Dict[str, Any] = {"fstrim": 0}
    block = os.urandom(TREE_FILE_BYTES)
    with serve(cfg, socket=work / "nbd.sock", seed=7) as server:
        chain = LoopChain(work / "nbd.sock", work)
        try:
            loop = chain.up()
            # Inode tables and journal zeroed by mkfs itself: ext4lazyinit would otherwise zero
            # them after mount, in the background, as write-zeroes that reach the drive as TRIMs
            # at a time of the kernel's choosing (6 MiB of them in one run, during the overwrites).
            run("mkfs.ext4", "-q", "-F", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0", loop)
            mnt = chain.mount(loop)
            for i in range(TREE_FILES):
                (mnt / "tree" / f"d{i % 8}").mkdir(parents=True, exist_ok=True)
                (mnt / "tree" / f"d{i % 8}" / f"f{i}").write_bytes(i.to_bytes(8, "little") + block[8:])
            # fio's default random generator: offsets repeat at random (an LFSR would overwrite
            # the file in the same order each pass, which a drive sees as sequential).
            fio = ["fio", "--name=b", f"--filename={mnt / 'b'}", f"--size={FILE_BYTES}", "--direct=1",
                   "--ioengine=libaio", "--iodepth=8", "--randrepeat=1", "--norandommap"]
            run(*fio, "--rw=write", "--bs=1m", cwd=work)
            run("sync")  # the tree reaches the drive before it is deleted (not only the page cache)
            subprocess.run(["rm", "-rf", str(mnt / "tree")], check=True)
            run("sync")
            out["before_fstrim"] = server.status()
            if trim:
                said = run("fstrim", "-v", str(mnt)).stdout  # "/mnt: 337.2 MiB (353562624 bytes) trimmed"
                out["fstrim"] = int(said.split("(")[1].split()[0])
            out["before"] = server.status()
            run(*fio, "--rw=randwrite", "--bs=16k", f"--io_size={3 * FILE_BYTES}", cwd=work)
            run("sync")
            out["after"] = server.status()
        finally:
            chain.down()
        out["summary"] = server.stop().summary
    return out


def _phase(r: Dict[str, Any], a: str, b: str, key: str) -> int:
    return int(r[b][key] - r[a][key])


def test_fstrim_through_fuse_and_a_loop_device_reaches_the_ftl_and_wa_falls(tmp_path: Path) -> None:
    """The issue's fstrim check: the same ext4 sequence twice (a tree and a file written, the tree
    deleted, the file overwritten at random), once with fstrim after the delete. fstrim's discards
    reach the server as NBD write-zeroes that may unmap (qemu's FUSE export turns the loop device's
    PUNCH_HOLE into them, and only where the server offers FAST_ZERO), the FTL drops the deleted
    tree's pages, and the overwrites then cost GC almost nothing."""
    LoopChain.skip_unless_possible()
    need("fio")
    kept, trimmed = _fstrim_sequence(tmp_path, trim=False), _fstrim_sequence(tmp_path, trim=True)
    tree = TREE_FILES * TREE_FILE_BYTES
    # fstrim trims the file system's free space: at least the deleted tree, at most the export.
    assert tree <= trimmed["fstrim"] <= 512 << 20
    # Every byte fstrim reports reached the drive as a TRIM (within a 4 KiB block at each end of
    # the free extents ext4 may round differently from the loop device), and none without it.
    assert abs(_phase(trimmed, "before_fstrim", "before", "host_trim_bytes") - trimmed["fstrim"]) <= 1 << 20
    assert _phase(kept, "before_fstrim", "after", "host_trim_bytes") == 0
    for r in (kept, trimmed):
        assert r["summary"]["errors"] == {} and r["summary"]["protocol_errors"] == 0
        assert r["before_fstrim"]["host_write_bytes"] >= tree + FILE_BYTES
        assert _phase(r, "before", "after", "host_write_bytes") >= 3 * FILE_BYTES
    wa = {name: _phase(r, "before", "after", "nand_write_units") * 4096
          / _phase(r, "before", "after", "host_write_bytes") for name, r in (("kept", kept), ("trimmed", trimmed))}
    gc = {name: _phase(r, "before", "after", "gc_write_units") for name, r in (("kept", kept), ("trimmed", trimmed))}
    # Without fstrim the drive still holds the deleted tree: ~88 % of its NAND valid, so the
    # overwrites GC hard (measured WA 1.57). With it ~30 % is valid and GC finds empty blocks
    # (measured 1.004): the WA falls by a third or more, the GC copies by 95 % or more.
    assert wa["kept"] > 1.3 and wa["trimmed"] < 1.05, wa
    assert gc["trimmed"] < 0.05 * gc["kept"], gc
