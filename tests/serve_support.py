"""What the ``ssdlab serve`` tests share: a server started as the command (a subprocess, stopped
and reaped by the fixture), and a small NBD client written against the protocol document."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

NBDMAGIC = 0x4E42444D41474943
IHAVEOPT = 0x49484156454F5054
REQUEST_MAGIC = 0x25609513
SIMPLE_REPLY_MAGIC = 0x67446698
OPT_GO, REP_ACK = 7, 1
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH, CMD_TRIM = 0, 1, 2, 3, 4


def need(*tools: str) -> None:
    """Skips the test when a tool cannot be found (scripts/install-test-tools.sh installs them)."""
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (scripts/install-test-tools.sh installs it)")


class Served:
    """``ssdlab serve ARGS`` running in a subprocess, its socket, its result directory."""

    def __init__(self, tmp_path: Path, *args: str, capacity: str = "1GiB", name: str = "run") -> None:
        self.dir = tmp_path
        self.socket = tmp_path / "nbd.sock"
        self.out = tmp_path / name
        self.uri = f"nbd+unix:///?socket={self.socket}"
        cmd = [sys.executable, "-m", "ssdlab", "serve", "--capacity", capacity, "--socket", str(self.socket),
               "--out", str(self.out), *args]
        self.stderr_path = tmp_path / f"{name}.stderr"
        self.stdout_path = tmp_path / f"{name}.stdout"
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=tmp_path)
        deadline = time.monotonic() + 120
        while not self.socket.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"ssdlab serve exited {self.proc.returncode}: {self.stderr()}")
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"ssdlab serve did not start: {self.stderr()}")
            time.sleep(0.05)

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int = signal.SIGINT, timeout: float = 120) -> int:
        """Stops the server with `sig`; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"ssdlab serve did not stop on signal {sig}: {self.stderr()}")

    def wait(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"ssdlab serve did not exit: {self.stderr()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)

    def summary(self) -> Dict[str, Any]:
        return dict(json.loads((self.out / "summary.json").read_text(encoding="utf-8")))


def run(*cmd: str, timeout: float = 600, check: bool = True, cwd: Optional[Path] = None) -> subprocess.CompletedProcess:
    """Runs a client; `cwd` where it may leave files (fio writes its verify state where it runs)."""
    p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, cwd=cwd)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


class Client:
    """A blocking NBD client: fixed newstyle, NBD_OPT_GO, simple replies."""

    def __init__(self, path: Path, timeout: float = 30) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(str(path))
        except OSError:
            self.sock.close()
            raise
        magic, opt, flags = struct.unpack(">QQH", self.recv(18))
        assert (magic, opt) == (NBDMAGIC, IHAVEOPT) and flags & 1
        self.sock.sendall(struct.pack(">I", 1))
        data = struct.pack(">I", 0) + struct.pack(">H", 0)
        self.sock.sendall(struct.pack(">QII", IHAVEOPT, OPT_GO, len(data)) + data)
        self.size = 0
        while True:
            _, _, kind, n = struct.unpack(">QIII", self.recv(20))
            body = self.recv(n)
            if kind == 3 and body[:2] == b"\x00\x00":
                self.size, self.flags = struct.unpack(">QH", body[2:12])
            if kind == REP_ACK:
                break
            assert kind < 1 << 31, f"option error {kind:#x}: {body!r}"
        self.cookie = 0

    def recv(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            out += chunk
        return out

    def request(self, cmd: int, offset: int, length: int, data: bytes = b"", flags: int = 0) -> Tuple[int, bytes]:
        self.cookie += 1
        self.sock.sendall(struct.pack(">IHHQQI", REQUEST_MAGIC, flags, cmd, self.cookie, offset, length) + data)
        magic, err, cookie = struct.unpack(">IIQ", self.recv(16))
        assert magic == SIMPLE_REPLY_MAGIC and cookie == self.cookie
        body = self.recv(length) if cmd == CMD_READ and err == 0 else b""
        return err, body

    def close(self) -> None:
        try:
            self.sock.sendall(struct.pack(">IHHQQI", REQUEST_MAGIC, 0, CMD_DISC, 0, 0, 0))
        except OSError:
            pass
        self.sock.close()


def same_results(a: Path, b: Path, files: List[str], skip: Optional[List[str]] = None) -> None:
    """The result directories hold the same files, the summaries differing only in `skip`."""
    for f in files:
        if f == "summary.json":
            sa, sb = (json.loads((d / f).read_text()) for d in (a, b))
            for k in skip or []:
                sa.pop(k, None)
                sb.pop(k, None)
            assert sa == sb
        else:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


class LoopChain:
    """The issue's chain on an NBD socket (root only): qemu-storage-daemon's FUSE export of the
    NBD node (``discard=unmap``, ``writable=on``), a loop device on the FUSE file, and a mount
    point for a file system on it. `up()` builds it (the loop device's path), `down()` unmounts
    and takes it apart; a test builds it again to read past every page cache."""

    def __init__(self, socket_path: Path, work: Path) -> None:
        self.socket = socket_path
        self.work = work
        self.mnt = work / "mnt"
        self.mnt.mkdir(exist_ok=True)
        self.up_parts: List[Tuple[str, Any]] = []
        self.n = 0

    @staticmethod
    def skip_unless_possible() -> None:
        import os

        if os.geteuid() != 0:
            pytest.skip("losetup and mount need root")
        need("qemu-storage-daemon", "losetup", "mkfs.ext4", "mount", "umount", "fstrim")
        if not Path("/dev/fuse").exists():
            pytest.skip("no /dev/fuse")

    def up(self) -> str:
        self.n += 1
        image, pidfile = self.work / f"fuse{self.n}.img", self.work / f"qsd{self.n}.pid"
        image.touch()
        run("qemu-storage-daemon", "--blockdev",
            f"driver=nbd,node-name=n0,server.type=unix,server.path={self.socket},discard=unmap",
            "--export", f"type=fuse,id=e0,node-name=n0,mountpoint={image},writable=on",
            "--daemonize", "--pidfile", str(pidfile))
        self.up_parts.append(("qsd", pidfile))
        loop = run("losetup", "--find", "--show", str(image)).stdout.strip()
        self.up_parts.append(("loop", loop))
        return loop

    def mount(self, loop: str, *options: str) -> Path:
        args = ["-o", ",".join(options)] if options else []
        run("mount", *args, loop, str(self.mnt))
        self.up_parts.append(("mount", self.mnt))
        return self.mnt

    def down(self) -> None:
        import os

        while self.up_parts:
            kind, what = self.up_parts.pop()
            if kind == "mount":
                subprocess.run(["umount", str(what)], capture_output=True)
            elif kind == "loop":
                subprocess.run(["losetup", "-d", what], capture_output=True)
            elif what.exists():
                pid = int(what.read_text())
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                    time.sleep(0.05)
