"""``ssdlab serve`` with real NBD clients as the oracle: qemu-io's patterns, qemu-img's convert and
compare, and the command's own behaviour (results, --status, --once, bad options, sockets)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serve_support import CMD_READ, CMD_TRIM, CMD_WRITE, Client, Served, need, run, same_results


@pytest.fixture
def served(tmp_path: Path):
    started = []

    def start(*args: str, **kw: str) -> Served:
        s = Served(tmp_path, *args, **kw)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


QEMU_IO = [
    "write -P 0xab 0 4M",
    "read -P 0xab 0 4M",
    "write -P 0x5c 1M 512",  # one sector inside a unit
    "read -P 0x5c 1M 512",
    "read -P 0xab 1049088 3583",  # the rest of that unit keeps its data (qemu-io: offset+len in bytes)
    "discard 2M 1M",
    "read -P 0 2M 1M",
    "write -z 3M 512k",
    "read -P 0 3M 512k",
    "read -P 0xab 3584k 512k",
    "read -P 0 8M 1M",  # never written
    "flush",
]


def qemu_io(uri: str, *commands: str, check: bool = True) -> subprocess.CompletedProcess:
    args = ["qemu-io", "-f", "raw"]
    for c in commands:
        args += ["-c", c]
    return run(*args, uri, check=check)


def test_qemu_io_patterns_discard_and_write_zeroes(served) -> None:
    need("qemu-io")
    s = served()
    p = qemu_io(s.uri, *[c for c in QEMU_IO if "3583" not in c])
    assert "verification failed" not in p.stdout + p.stderr, p.stdout
    # The oracle is live: a wrong pattern is reported.
    bad = qemu_io(s.uri, "read -P 0xcd 0 4k", check=False)
    assert "Pattern verification failed" in bad.stdout + bad.stderr
    assert s.stop(signal.SIGTERM) == 0, s.stderr()
    summary = s.summary()
    assert summary["requests"]["write"] >= 2 and summary["requests"]["trim"] >= 1
    assert summary["requests"]["write_zeroes"] >= 1 and summary["requests"]["flush"] >= 1
    assert summary["trim_units"] == 256, "the 1 MiB discard unmapped its 256 units in the FTL"
    assert summary["host_write_bytes"] >= 4 * 2**20 + 512
    assert summary["protocol_errors"] == 0 and summary["errors"] == {}
    assert sorted(os.listdir(s.out)) == sorted(["series.csv", "latency.csv", "summary.json", "serve.png"])
    assert not s.socket.exists(), "the socket is removed when serving ends"


def test_qemu_img_convert_and_compare_of_a_256_mib_image(served, tmp_path: Path) -> None:
    need("qemu-img")
    img = tmp_path / "image.raw"
    block = bytes(range(256)) * 4096  # 1 MiB
    with open(img, "wb") as f:
        for i in range(256):
            if i % 5 == 3:
                f.write(b"\0" * len(block))  # holes qemu-img may write as zeroes
            else:
                f.write(bytes([i]) + block[1:-1] + bytes([255 - i]))
    s = served("--once", capacity="512MiB")
    run("qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", "-t", "none", str(img), s.uri)
    p = run("qemu-img", "compare", "-f", "raw", "-F", "raw", str(img), s.uri)
    assert "Images are identical" in p.stdout
    # The comparison has teeth: one byte changed in the image is found.
    with open(img, "r+b") as f:
        f.seek(200 * 2**20 + 12345)
        f.write(b"\x42")
    p = run("qemu-img", "compare", "-f", "raw", "-F", "raw", str(img), s.uri, check=False)
    assert p.returncode == 1 and "Content mismatch at offset 209727488" in p.stdout  # its 512-byte sector, p.stdout
    assert s.wait(120) == 0, s.stderr()
    summary = s.summary()
    assert summary["host_write_bytes"] >= 200 * 2**20
    assert summary["host_read_bytes"] >= 2 * 200 * 2**20


def test_the_same_requests_give_the_same_results(served, tmp_path: Path) -> None:
    need("qemu-io")
    dirs = []
    for name in ("a", "b"):
        s = Served(tmp_path, "--seed", "5", "--once", name=name)
        try:
            qemu_io(s.uri, *QEMU_IO[:4], "write -P 0x77 64M 8M", "discard 64M 2M", "read -P 0x77 66M 6M")
            assert s.wait(120) == 0, s.stderr()
        finally:
            s.kill()
        dirs.append(s.out)
    same_results(dirs[0], dirs[1], ["series.csv", "latency.csv", "summary.json"],
                 skip=["wall_seconds", "addresses"])


def test_store_none_serves_timing_only(served) -> None:
    need("qemu-io")
    s = served("--store", "none")
    qemu_io(s.uri, "write -P 0xab 0 1M", "read -P 0 0 1M")
    assert s.stop() == 0
    assert "every read returns zeros" in s.stderr()
    assert s.summary()["store"] == "none" and s.summary()["nand_write_units"] >= 256


def test_a_sparse_backing_file(served, tmp_path: Path) -> None:
    need("qemu-io")
    backing = tmp_path / "backing.img"
    s = served("--store", str(backing), capacity="4GiB")
    qemu_io(s.uri, "write -P 0xab 0 8M", "read -P 0xab 0 8M", "discard 1M 2M", "read -P 0 1M 2M",
            "read -P 0xab 3M 5M", "read -P 0 1G 1M")
    assert backing.stat().st_size == 4 * 2**30
    assert backing.stat().st_blocks * 512 <= 7 * 2**20, "sparse, and the discard punched a hole"
    assert s.stop() == 0
    summary = s.summary()
    assert summary["store"] == str(backing) and summary["store_memory_bytes"] is None
    with open(backing, "rb") as f:
        assert f.read(16) == b"\xab" * 16, "the file keeps the data afterwards"


def test_status_file_and_python_client(served, tmp_path: Path) -> None:
    status = tmp_path / "status.json"
    s = served("--status", str(status))
    c = Client(s.socket)
    assert c.size == 2**30
    data = os.urandom(8192)
    assert c.request(CMD_WRITE, 4096, 8192, data) == (0, b"")
    assert c.request(CMD_READ, 4096, 8192) == (0, data)
    assert c.request(CMD_TRIM, 8192, 4096)[0] == 0
    assert c.request(CMD_READ, 4096, 8192) == (0, data[:4096] + b"\0" * 4096)
    assert c.request(CMD_READ, 100, 512)[0] == 22  # EINVAL: misaligned
    assert c.request(CMD_WRITE, 2**30, 512, b"x" * 512)[0] == 28  # ENOSPC: past the end
    deadline = time.monotonic() + 10
    while True:
        try:
            st = json.loads(status.read_text())
            if st["requests"].get("read", 0) >= 3:
                break
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        assert time.monotonic() < deadline, "the status file was not rewritten"
        time.sleep(0.2)
    assert st["connections_open"] == 1 and st["errors"] == {"EINVAL": 1, "ENOSPC": 1}
    assert st["host_write_bytes"] == 8192 and st["free_blocks"] > 0
    c.close()
    assert s.stop() == 0
    final = json.loads(status.read_text())
    assert final["stopped"] is True and final["requests"] == {"read": 3, "write": 2, "trim": 1, "disc": 1}


def test_once_exits_after_the_last_client(served) -> None:
    s = served("--once")
    c1, c2 = Client(s.socket), Client(s.socket)
    c1.close()
    time.sleep(1.0)
    assert s.proc.poll() is None, "a client is still connected"
    c2.close()
    assert s.wait(60) == 0, s.stderr()
    assert s.summary()["sessions"] == 2


def test_socket_refusals_and_stale_socket(tmp_path: Path) -> None:
    base = [sys.executable, "-m", "ssdlab", "serve", "--capacity", "1GiB", "-q"]

    def refused(*args: str) -> str:
        p = subprocess.run(base + list(args), capture_output=True, text=True, timeout=120, cwd=tmp_path)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith("ssdlab: error: "), p.stderr
        return lines[0]

    regular = tmp_path / "file"
    regular.write_text("keep me")
    assert "not a socket" in refused("--socket", str(regular), "--out", str(tmp_path / "o1"))
    assert regular.read_text() == "keep me"
    assert "--listen-any" in refused("--listen", "192.0.2.1:10809", "--out", str(tmp_path / "o2"))
    assert "does not overwrite" in refused("--store", str(regular), "--out", str(tmp_path / "o3"))
    assert "not a regular file" in refused("--store", str(tmp_path), "--out", str(tmp_path / "o3"))
    assert "--listen-any applies" in refused("--listen-any", "--out", str(tmp_path / "o4"))
    assert "HOST:PORT" in refused("--listen", "nope", "--out", str(tmp_path / "o5"))
    assert "--virtual-qd" in refused("--virtual-qd", "0", "--out", str(tmp_path / "o6"))
    # A socket another server accepts on is refused; a stale one is replaced.
    live = tmp_path / "live.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(live))
    listener.listen(1)
    try:
        assert "in use" in refused("--socket", str(live), "--out", str(tmp_path / "o7"))
    finally:
        listener.close()
    assert live.exists()  # now stale: bound, nobody accepting
    p = subprocess.Popen(base + ["--socket", str(live), "--out", str(tmp_path / "o8")], cwd=tmp_path,
                         stderr=subprocess.DEVNULL)
    try:
        c = None
        deadline = time.monotonic() + 60
        while c is None:
            try:
                c = Client(live)
            except (ConnectionRefusedError, FileNotFoundError):
                assert time.monotonic() < deadline and p.poll() is None
                time.sleep(0.1)
        c.close()
    finally:
        p.send_signal(signal.SIGINT)
        assert p.wait(60) == 0
    assert (tmp_path / "o8" / "summary.json").exists()


def test_tcp_on_loopback(served, tmp_path: Path) -> None:
    need("qemu-io")
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    s = Served(tmp_path, "--listen", f"127.0.0.1:{port}", "--once", name="tcp")
    try:
        qemu_io(f"nbd://127.0.0.1:{port}/", "write -P 0x3 0 64k", "read -P 0x3 0 64k")
        assert s.wait(60) == 0, s.stderr()
        assert any(a.startswith("unix:") for a in s.summary()["addresses"])
        assert f"tcp:127.0.0.1:{port}" in s.summary()["addresses"]
    finally:
        s.kill()


def test_the_python_api_serves_while_python_runs(tmp_path: Path) -> None:
    """The server's threads need no GIL: while a client subprocess writes, the main thread polls
    the status and a Python thread keeps ticking at its pace."""
    need("qemu-io")
    import threading

    from ssdlab import load_preset
    from ssdlab.scenarios.serve import serve

    cfg = load_preset("mlc-256").with_user_capacity("1GiB")
    ticks = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.002)

    sock = tmp_path / "api.sock"
    with serve(cfg, socket=sock, seed=3) as server:
        t = threading.Thread(target=tick)
        t.start()
        start = time.monotonic()
        client = subprocess.Popen(["qemu-io", "-f", "raw", f"nbd+unix:///?socket={sock}", "-c",
                                   "aio_write -P 0x5a 0 64M", "-c", "aio_flush", "-c", "read -P 0x5a 0 64M"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        polls = 0
        while client.poll() is None:
            server.status()
            polls += 1
            time.sleep(0.01)
        elapsed = time.monotonic() - start
        out, err = client.communicate()
        assert client.returncode == 0 and "verification failed" not in out, out + err
        result = server.stop()
        stop.set()
        t.join()
    assert polls > 0 and len(ticks) >= 0.3 * elapsed / 0.002, (len(ticks), elapsed)
    assert result.summary["host_write_bytes"] == 64 * 2**20 and result.summary["host_read_bytes"] == 64 * 2**20
    assert result.series["write_iops"].sum() == result.summary["writes"] > 0
    assert (result.series["free_blocks"] > 0).all() and "slc_cached_mib" in result.series


def test_the_real_clock_holds_each_reply_until_its_simulated_completion(served) -> None:
    s = served("--clock", "real", "--precondition", "fill")
    c = Client(s.socket)
    assert c.request(CMD_WRITE, 0, 1 << 20, os.urandom(1 << 20))[0] == 0
    start = time.perf_counter()
    for i in range(40):
        assert c.request(CMD_READ, (i * 37 % 256) * 4096, 4096)[0] == 0
    wall_us = (time.perf_counter() - start) / 40 * 1e6
    c.close()
    assert s.stop() == 0, s.stderr()
    summary = s.summary()
    sim_us = summary["latency_us"]["read"]["mean"]
    assert summary["clock"] == "real" and sim_us > 20, summary["latency_us"]
    assert wall_us >= 0.95 * sim_us, (wall_us, sim_us)
    assert set(summary["lag"]) == {"late_replies", "late_total_s", "max_late_us"}


def test_the_chart_shows_the_slc_cache_of_a_drive_with_one(tmp_path: Path) -> None:
    """serve.png: a fourth panel with the SLC cache's data per second on a drive with a cache (its
    curve is the series' column, in GB), three panels on one without."""
    need("qemu-io")
    from ssdlab import load_preset
    from ssdlab.scenarios.serve import serve

    panels = {}
    for name in ("qlc-hybrid-cache", "mlc-256"):
        sock = tmp_path / f"{name}.sock"
        with serve(load_preset(name).with_user_capacity("512MiB"), socket=sock) as server:
            qemu_io(f"nbd+unix:///?socket={sock}", "write -P 0x11 0 48M", "flush", "write -P 0x22 48M 48M")
            result = server.stop()
        fig = result.chart()
        panels[name] = [ax.get_ylabel() for ax in fig.axes]
        if name == "qlc-hybrid-cache":
            cached = result.series["slc_cached_mib"].to_numpy() * 1.048576 / 1000
            assert cached.max() > 0, "the writes went to the cache"
            line = fig.axes[2].get_lines()[0].get_ydata()
            assert list(line) == list(cached)
    assert panels["qlc-hybrid-cache"] == ["IOPS", "MB/s", "data in SLC cache (GB)", "write amplification"]
    assert panels["mlc-256"] == ["IOPS", "MB/s", "write amplification"]


def test_two_connections_in_a_fixed_order_give_the_same_results(tmp_path: Path) -> None:
    """Determinism with several connections: two raw-socket clients, each waiting for its reply
    before the other sends, so the server sees one fixed interleaving; the same requests and seed
    twice give the same files bit for bit. (Clients that race each other make the interleaving
    the host's; docs/serve.md, The clocks.)"""
    import random

    dirs = []
    for name in ("a", "b"):
        s = Served(tmp_path, "--seed", "9", "--once", name=name)
        try:
            rng = random.Random(4)
            clients = [Client(s.socket), Client(s.socket)]
            for i in range(1200):
                c = clients[i % 2]
                offset = rng.randrange(0, 64 << 20, 4096)
                kind = rng.random()
                if kind < 0.7:
                    assert c.request(CMD_WRITE, offset, 4096, bytes([i % 251]) * 4096)[0] == 0
                elif kind < 0.9:
                    assert c.request(CMD_READ, offset, 4096)[0] == 0
                else:
                    assert c.request(CMD_TRIM, offset, 1 << 20)[0] == 0
            for c in clients:
                c.close()
            assert s.wait(120) == 0, s.stderr()
        finally:
            s.kill()
        dirs.append(s.out)
    summary = json.loads((dirs[0] / "summary.json").read_text())
    assert summary["sessions"] == 2 and summary["requests"]["write"] > 700
    same_results(dirs[0], dirs[1], ["series.csv", "latency.csv", "summary.json"],
                 skip=["wall_seconds", "addresses"])
