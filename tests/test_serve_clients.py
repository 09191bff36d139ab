"""``ssdlab serve`` against fio's nbd engine (verify=crc32c while GC runs), libnbd's tools, and a
fuzzer over the handshake's and the requests' bytes."""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serve_support import CMD_READ, CMD_WRITE, IHAVEOPT, REQUEST_MAGIC, Client, Served, need, run


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
    s = Served(tmp_path, "--once")
    try:
        info = run("nbdinfo", s.uri).stdout
        assert "export-size: 1073741824" in info and "can_multi_conn: true" in info, info
        assert "block_size_minimum: 512" in info and "block_size_maximum: 33554432" in info, info
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
        assert s.wait(60) == 0, s.stderr()
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
    mkfs.ext4, mount, a tree copied; then the chain taken down and built again (so no page cache
    holds the tree), the tree checked and deleted. Root only. TRIM is not asserted: this machine's
    qemu-storage-daemon (10.0.2) answers PUNCH_HOLE on an NBD node with EOPNOTSUPP, so the loop
    device turns discard off (docs/serve.md)."""
    if os.geteuid() != 0:
        pytest.skip("losetup and mount need root")
    need("qemu-storage-daemon", "losetup", "mkfs.ext4", "mount", "umount")
    if not Path("/dev/fuse").exists():
        pytest.skip("no /dev/fuse")
    import hashlib
    import subprocess

    s = Served(tmp_path)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    up: list = []

    def chain(n: int) -> str:
        image, pidfile = tmp_path / f"fuse{n}.img", tmp_path / f"qsd{n}.pid"
        image.touch()
        run("qemu-storage-daemon", "--blockdev",
            f"driver=nbd,node-name=n0,server.type=unix,server.path={s.socket},discard=unmap",
            "--export", f"type=fuse,id=e0,node-name=n0,mountpoint={image},writable=on",
            "--daemonize", "--pidfile", str(pidfile))
        up.append(("qsd", pidfile))
        loop = run("losetup", "--find", "--show", str(image)).stdout.strip()
        up.append(("loop", loop))
        return loop

    def down() -> None:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        while up:
            kind, what = up.pop()
            if kind == "loop":
                subprocess.run(["losetup", "-d", what], capture_output=True)
            elif what.exists():
                os.kill(int(what.read_text()), 15)
                time.sleep(0.5)

    try:
        loop = chain(1)
        run("mkfs.ext4", "-q", "-F", "-E", "nodiscard", loop)
        run("mount", "-o", "discard", loop, str(mnt))
        tree = mnt / "tree"
        sums = {}
        for d in range(4):
            (tree / f"d{d}").mkdir(parents=True)
            for f in range(8):
                data = os.urandom(256 * 1024 + f * 4096 + d)
                (tree / f"d{d}" / f"f{f}").write_bytes(data)
                sums[f"d{d}/f{f}"] = hashlib.sha256(data).hexdigest()
        down()
        loop = chain(2)
        run("mount", "-o", "discard", loop, str(mnt))
        for name, digest in sums.items():
            assert hashlib.sha256((tree / name).read_bytes()).hexdigest() == digest, name
        subprocess.run(["rm", "-rf", str(tree)], check=True)
        down()
        assert s.stop() == 0, s.stderr()
        summary = s.summary()
    finally:
        down()
        s.kill()
    assert summary["host_write_bytes"] > 8 * 2**20 and summary["requests"]["flush"] > 0
    assert summary["host_read_bytes"] > 8 * 2**20, "the tree was read back from the simulated drive"
    assert summary["errors"] == {} and summary["protocol_errors"] == 0
