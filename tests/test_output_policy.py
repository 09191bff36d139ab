"""The output-path policy (docs/safety.md, "The output-path policy") and result-directory safety.

What the user names as an output (``fio --output``, ``report -o``) is written atomically when it is
a new path or a regular file (through a symbolic link: the file it points to, the link kept), in
place when it is a character device, a FIFO or one of the process's descriptors, and refused when
it is a socket, a block device or a directory; a node is never replaced by a file. Result
directories: another scenario's result is refused, a stale report.html of the same scenario is
removed, long names work, log names stay inside --out, and a failed device run's message points
at nothing that was deleted.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssdlab import cli
from ssdlab.errors import SsdlabError
from ssdlab.paths import contained
from ssdlab.results import ResultStage

sys.path.insert(0, str(Path(__file__).parent))
from fixtures.report_runs import consistency_run, hdtach_run, wa_run  # noqa: E402

ROOT = os.geteuid() == 0
SSDLAB = [sys.executable, "-m", "ssdlab"]
TINY_JOB = "[w]\nrw=randwrite\nbs=4k\nsize=64m\nruntime=1\ntime_based\n"
needs_root = pytest.mark.skipif(not ROOT, reason="device nodes and mounts need root")
# Block-device twins use a major number reserved for local use (240), which no driver claims: if a
# regression ever wrote to the node, the write would fail instead of landing on a real loop device
# another test has attached (the policy refuses it by its type, S_ISBLK, before any open).
BLOCK_RDEV = os.makedev(240, 0)


def run_cli(args: List[str]) -> Tuple[int, str, str]:
    """`ssdlab ARGS` in-process: (status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(args)
    return status, out.getvalue(), err.getvalue()


def one_error_line(status: int, err: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def leftovers(directory: Path) -> List[str]:
    """Hidden temporary files or staging directories ssdlab may have left in `directory`."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".ssdlab") or ".partial" in p.name)


@pytest.fixture(scope="module")
def small_result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return wa_run(tmp_path_factory.mktemp("results") / "wa")


@pytest.fixture(scope="module")
def tiny_job(tmp_path_factory: pytest.TempPathFactory) -> Path:
    job = tmp_path_factory.mktemp("jobs") / "tiny.fio"
    job.write_text(TINY_JOB)
    return job


# -- the targets ---------------------------------------------------------------------------------------


class _FifoReader:
    """A thread that reads a FIFO until its writer closes it. The FIFO is opened (non-blocking)
    before the thread starts, so a writer's non-blocking open finds a reader."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self.fd], [], [], 30)
                if not ready:
                    return
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    return
                self.data += chunk
        finally:
            os.close(self.fd)

    def join(self) -> bytes:
        self.thread.join(30)
        return bytes(self.data)


def _node(path: Path) -> Tuple[int, int]:
    st_ = os.lstat(path)
    return stat.S_IFMT(st_.st_mode), st_.st_rdev


KINDS = ["new", "regular", "link-to-file", "link-chain-to-file", "null-twin", "full-twin", "link-to-null-twin",
         "fifo-reader", "fifo-no-reader", "socket", "block", "link-to-block", "directory", "under-a-file"]
ROOT_KINDS = {"null-twin", "full-twin", "link-to-null-twin", "block", "link-to-block"}


@contextlib.contextmanager
def target_of(kind: str, where: Path, name: str) -> Iterator[Dict[str, Any]]:
    """Makes the output target `kind` named `name` in `where`; yields what the test needs."""
    path = where / name
    info: Dict[str, Any] = {"path": path, "node": None, "reader": None, "file": None}
    sock = None
    if kind == "regular":
        path.write_text("old contents\n")
        os.chmod(path, 0o640)
        info["file"] = path
    elif kind in ("link-to-file", "link-chain-to-file"):
        real = where / "real-file"
        real.write_text("old contents\n")
        if kind == "link-chain-to-file":
            os.symlink("real-file", where / "middle-link")
            os.symlink("middle-link", path)
        else:
            os.symlink(real, path)
        info["file"] = real
    elif kind in ("null-twin", "full-twin", "link-to-null-twin"):
        node = where / "twin" if kind == "link-to-null-twin" else path
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 7 if kind == "full-twin" else 3))
        if kind == "link-to-null-twin":
            os.symlink(node, path)
        info["node"] = node
    elif kind in ("fifo-reader", "fifo-no-reader"):
        os.mkfifo(path)
        info["node"] = path
        if kind == "fifo-reader":
            info["reader"] = _FifoReader(path)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        info["node"] = path
    elif kind in ("block", "link-to-block"):
        node = where / "blk" if kind == "link-to-block" else path
        os.mknod(node, stat.S_IFBLK | 0o600, BLOCK_RDEV)
        if kind == "link-to-block":
            os.symlink(node, path)
        info["node"] = node
    elif kind == "directory":
        path.mkdir()
    elif kind == "under-a-file":
        (where / "plain").write_text("x")
        info["path"] = where / "plain" / name
    if info["node"] is not None:
        info["before"] = _node(info["node"])
    try:
        yield info
    finally:
        if sock is not None:
            sock.close()


@contextlib.contextmanager
def no_write_open_of(node: Optional[Path]) -> Iterator[None]:
    """Fails the test if anything opens `node` for writing while the block runs."""
    if node is None:
        yield
        return
    real_open = os.open
    ident = os.stat(node, follow_symlinks=False)

    def spy(path: Any, flags: int, *a: Any, **k: Any) -> int:
        try:
            same = os.path.samestat(os.stat(path), ident)
        except (OSError, TypeError, ValueError):
            same = False
        assert not (same and flags & (os.O_WRONLY | os.O_RDWR)), f"{path} opened for writing"
        return real_open(path, flags, *a, **k)

    os.open = spy  # type: ignore[assignment]
    try:
        yield
    finally:
        os.open = real_open  # type: ignore[assignment]


NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789 ._-é", min_size=1, max_size=40).filter(
    lambda s: s not in (".", "..", "real-file", "middle-link", "twin", "blk", "plain") and not s.startswith(".ssdlab"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), command=st.sampled_from(["report", "fio"]), name=NAMES)
def test_every_kind_of_output_target_gets_what_the_policy_says(tmp_path_factory: pytest.TempPathFactory,
                                                              small_result: Path, tiny_job: Path, kind: str,
                                                              command: str, name: str) -> None:
    if kind in ROOT_KINDS and not ROOT:
        return
    where = tmp_path_factory.mktemp("out")
    with target_of(kind, where, name) as t:
        path: Path = t["path"]
        argv = (["report", str(small_result), "-o", str(path), "-q"] if command == "report"
                else ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output", str(path)])
        blocked = t["node"] if kind in ("block", "link-to-block") else None
        with no_write_open_of(blocked):
            status, out, err = run_cli(argv)
        written = t["reader"].join() if t["reader"] is not None else None
        expect = b"<!DOCTYPE html" if command == "report" else b"w: (g=0): rw=randwrite"

        if kind in ("new", "regular", "link-to-file", "link-chain-to-file"):
            assert status == 0, err
            real = t["file"] or path
            assert real.read_bytes().startswith(expect)
            if kind == "regular":
                assert stat.S_IMODE(real.stat().st_mode) == 0o640  # the replaced file's permissions kept
            if kind.startswith("link"):
                assert path.is_symlink() and path.resolve() == real.resolve()
        elif kind in ("null-twin", "link-to-null-twin"):
            assert status == 0, err
        elif kind == "full-twin":
            one_error_line(status, err, "No space left on device", name)
        elif kind == "fifo-reader":
            assert status == 0, err
            assert written is not None and written.startswith(expect)
        elif kind == "fifo-no-reader":
            one_error_line(status, err, "nothing is reading the FIFO")
        elif kind == "socket":
            one_error_line(status, err, "socket")
        elif kind in ("block", "link-to-block"):
            one_error_line(status, err, "block device")
        elif kind == "directory":
            if command == "report":  # documented: DIR -> DIR/report.html
                assert status == 0, err
                assert (path / "report.html").read_bytes().startswith(expect)
            else:
                one_error_line(status, err, "is a directory")
        elif kind == "under-a-file":
            one_error_line(status, err, "not a directory")
        else:  # pragma: no cover
            raise AssertionError(kind)

        if t["node"] is not None:  # still the same node: never replaced by a file
            assert _node(t["node"]) == t["before"]
        if kind.startswith("link"):
            assert path.is_symlink()
        assert leftovers(where) == []
        if kind == "directory":
            assert leftovers(path) == []


@needs_root
def test_the_full_twin_fails_with_one_line_and_stays_a_device(tmp_path: Path, small_result: Path,
                                                             tiny_job: Path) -> None:
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    for argv in (["report", str(small_result), "-o", str(full)],
                 ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output", str(full)]):
        status, _, err = run_cli(argv)
        one_error_line(status, err, "No space left on device")
        assert stat.S_ISCHR(os.lstat(full).st_mode) and os.lstat(full).st_rdev == os.makedev(1, 7)


# -- descriptors: /dev/stdout and /dev/fd/N are written where they point, never replaced ----------------


def test_dev_stdout_is_written_to_the_descriptor(tmp_path: Path, tiny_job: Path) -> None:
    log = tmp_path / "stdout.txt"
    log.write_text("before\n")
    with open(log, "a") as f:  # `>> stdout.txt`: the report is appended, nothing is replaced
        r = subprocess.run(SSDLAB + ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output", "/dev/stdout"],
                           stdout=f, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    text = log.read_text()
    assert text.startswith("before\nw: (g=0): rw=randwrite")
    assert os.path.islink("/dev/stdout")  # still the link it was
    r = subprocess.run(SSDLAB + ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output", "/dev/fd/7"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "file descriptor 7, which is not open" in r.stderr


def test_a_link_to_proc_self_fd_is_written_through_not_replaced(tmp_path: Path, tiny_job: Path) -> None:
    """What /dev/stdout is, in a directory of the test's own (so the unfixed code cannot harm /dev)."""
    link = tmp_path / "stdout"
    os.symlink("/proc/self/fd/1", link)
    r = subprocess.run(SSDLAB + ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output", str(link)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("w: (g=0): rw=randwrite")
    assert os.readlink(link) == "/proc/self/fd/1" and leftovers(tmp_path) == []


@needs_root
def test_dev_stdout_on_a_full_device_is_one_error_line(tmp_path: Path, tiny_job: Path) -> None:
    full = tmp_path / "full"
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    for output in (["--output", "/dev/stdout"], []):
        with open(full, "w") as f:
            r = subprocess.run(SSDLAB + ["fio", str(tiny_job), "--capacity", "1GiB", "-q", *output],
                               stdout=f, stderr=subprocess.PIPE, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("ssdlab: error: ") and "No space left" in r.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)


# -- a full file system ---------------------------------------------------------------------------------


@contextlib.contextmanager
def tmpfs(mnt: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted on `mnt` (root only; the test is skipped otherwise)."""
    if not ROOT or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {r.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only)."""
    with tmpfs(tmp_path / "mnt", "64k") as mnt:
        yield mnt


def test_a_full_file_system_fails_the_command_and_leaves_nothing(tiny_fs: Path, small_result: Path,
                                                                tiny_job: Path) -> None:
    status, _, err = run_cli(["report", str(small_result), "-o", str(tiny_fs / "r.html")])  # ~5 MB into 64 KiB
    one_error_line(status, err, "No space left on device", "r.html")
    assert list(tiny_fs.iterdir()) == []
    status, _, err = run_cli(["report", str(small_result), "-o", str(tiny_fs / "a" / "b" / "r.html")])
    one_error_line(status, err, "No space left on device")
    assert list(tiny_fs.iterdir()) == []  # the parents it made are gone too
    (tiny_fs / "fill").write_bytes(b"\0" * (60 * 1024))  # 4 KiB left: less than fio's JSON report
    status, _, err = run_cli(["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output-format", "json",
                              "--output", str(tiny_fs / "r.json")])
    one_error_line(status, err, "No space left on device")
    assert [p.name for p in tiny_fs.iterdir()] == ["fill"]


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_stdout_on_a_full_file_system_is_an_error_not_a_short_file(tiny_fs: Path, tiny_job: Path,
                                                                   unbuffered: str) -> None:
    """With PYTHONUNBUFFERED=1 Python's stdout drops what a short write did not take (exit 0 with
    a truncated file); the CLI's guard makes it one error line and status 2."""
    (tiny_fs / "fill").write_bytes(b"\0" * (60 * 1024))
    env = dict(os.environ, PYTHONUNBUFFERED=unbuffered)
    with open(tiny_fs / "out.json", "w") as f:
        r = subprocess.run(SSDLAB + ["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--output-format", "json"],
                           stdout=f, stderr=subprocess.PIPE, text=True, timeout=60, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "No space left on device" in r.stderr, r.stderr


@needs_root
def test_calibrate_doc_charts_are_not_written_through_a_link_to_a_block_device(tmp_path: Path) -> None:
    from ssdlab import calibrate

    doc = tmp_path / "calibration.md"
    doc.write_text(f"{calibrate.BEGIN}\nold\n{calibrate.END}\n", encoding="utf-8")
    (tmp_path / "runs" / "clean-up-later-consistency").mkdir(parents=True)
    (tmp_path / "runs" / "clean-up-later-consistency" / "steady_linear.png").write_bytes(b"png")
    blk = tmp_path / "blk"
    os.mknod(blk, stat.S_IFBLK | 0o600, BLOCK_RDEV)
    (tmp_path / "img").mkdir()
    os.symlink(blk, tmp_path / "img" / "fidelity-clean-up-later.png")
    card = calibrate.Scorecard(capacity_bytes=calibrate.FULL_SIZE, seed=1)
    card.checks = [calibrate.Check("clean-up-later", "a", "seed", "t", "m", True)]
    with no_write_open_of(blk), pytest.raises(SsdlabError, match="block device"):
        calibrate.update_doc(card, doc, tmp_path / "runs")
    assert _node(blk) == (stat.S_IFBLK, BLOCK_RDEV)
    assert (tmp_path / "img" / "fidelity-clean-up-later.png").is_symlink()


# -- fio --out D --output D -----------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["D", "D/report.txt", "."])
def test_output_overlapping_out_is_refused_up_front(tmp_path: Path, tiny_job: Path, output: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--out", "D", "--output", output])
    one_error_line(status, err, "--out D", "nothing was run")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_output_is_not_written_when_the_result_directory_cannot_be(tmp_path: Path, tiny_job: Path) -> None:
    out = tmp_path / "D"
    (out / "summary.json").mkdir(parents=True)  # the commit refuses this after the run
    status, _, err = run_cli(["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--out", str(out),
                              "--output", str(tmp_path / "report.txt")])
    one_error_line(status, err, "is a directory where the result has a file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["D"] and [p.name for p in out.iterdir()] == ["summary.json"]


# -- a result directory holds one scenario's result ------------------------------------------------------


def test_hdtach_into_a_consistency_directory_is_refused_and_leaves_it_alone(tmp_path: Path) -> None:
    d = consistency_run(tmp_path / "c", duration=60)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    status, _, err = run_cli(["hdtach", "--capacity", "1GiB", "--sample-pct", "1", "-q", "--out", str(d)])
    one_error_line(status, err, "consistency", str(d), "choose another output directory")
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert leftovers(tmp_path) == []


def _stage(target: Path, scenario: str, files: Dict[str, str]) -> ResultStage:
    stage = ResultStage(target)
    (stage.path / "summary.json").write_text(json.dumps({"scenario": scenario}))
    for name, text in files.items():
        (stage.path / name).write_text(text)
    return stage


def test_the_commit_refuses_another_scenarios_directory(tmp_path: Path) -> None:
    """The shared layer itself, whatever the command checked before."""
    d = consistency_run(tmp_path / "c", duration=60)
    before = sorted(p.name for p in d.iterdir())
    stage = _stage(d, "hdtach", {"hdtach.csv": "x"})
    with stage, pytest.raises(SsdlabError, match="holds the result of another scenario \\(consistency"):
        stage.commit()
    assert sorted(p.name for p in d.iterdir()) == before
    assert leftovers(tmp_path) == []


def test_the_same_scenario_replaces_its_files_and_removes_a_stale_report(tmp_path: Path) -> None:
    d = hdtach_run(tmp_path / "h")
    (d / "report.html").write_text("<html>an older run</html>")
    (d / "notes.txt").write_text("mine")
    stage = _stage(d, "torture", {"hdtach.csv": "new", "hdtach.png": "new"})  # torture: the same files
    with stage:
        stage.commit()
    assert sorted(p.name for p in d.iterdir()) == ["hdtach.csv", "hdtach.png", "notes.txt", "summary.json"]
    assert (d / "hdtach.csv").read_text() == "new" and (d / "notes.txt").read_text() == "mine"


def test_a_directory_with_a_foreign_summary_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "summary.json").write_text('{"my": "notes"}')
    stage = _stage(d, "hdtach", {})
    with stage, pytest.raises(SsdlabError, match="not an ssdlab result"):
        stage.commit()
    assert (d / "summary.json").read_text() == '{"my": "notes"}'


def test_a_symlink_where_a_result_file_goes_is_replaced_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("keep me")
    d = tmp_path / "d"
    d.mkdir()
    os.symlink(outside, d / "hdtach.csv")
    stage = _stage(d, "hdtach", {"hdtach.csv": "result"})
    with stage:
        stage.commit()
    assert not (d / "hdtach.csv").is_symlink() and (d / "hdtach.csv").read_text() == "result"
    assert outside.read_text() == "keep me"


def test_a_symlinked_out_on_another_file_system_is_followed(tmp_path: Path, tiny_job: Path) -> None:
    """The staging directory goes next to where the link leads, so the result moves in by rename
    (it used to be staged next to the link: 'Invalid cross-device link')."""
    with tmpfs(tmp_path / "other", "16m") as other:
        (other / "real").mkdir()
        os.symlink(other / "real", tmp_path / "out")
        status, _, err = run_cli(["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--out", str(tmp_path / "out")])
        assert status == 0, err
        assert (other / "real" / "summary.json").is_file() and (tmp_path / "out").is_symlink()
        assert leftovers(other) == [] and leftovers(tmp_path) == []


# -- long names -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("length", [230, 255])
def test_long_output_names_work(tmp_path: Path, tiny_job: Path, small_result: Path, length: int) -> None:
    name = ("r" * length)
    status, _, err = run_cli(["fio", str(tiny_job), "--capacity", "1GiB", "-q", "--out", str(tmp_path / name)])
    assert status == 0, err
    assert (tmp_path / name / "summary.json").is_file()
    page = tmp_path / ("p" * (length - 5) + ".html")
    status, _, err = run_cli(["report", str(small_result), "-o", str(page), "-q"])
    assert status == 0, err
    assert page.is_file() and leftovers(tmp_path) == []


# -- log names stay inside --out -------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["../../esc", "../esc", "logs/../../esc", "a/b/../../../esc"])
def test_a_log_name_leaving_out_is_refused(tmp_path: Path, prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("job.fio").write_text(TINY_JOB + f"write_iops_log={prefix}\n")
    status, _, err = run_cli(["fio", "job.fio", "--capacity", "1GiB", "-q", "--out", "sub/out"])
    one_error_line(status, err, "write_iops_log=", "leads outside")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == ["job.fio"]


def test_in_tree_log_names_work_and_without_out_they_go_where_fio_would(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("job.fio").write_text(TINY_JOB + "write_iops_log=logs/a/../w\nwrite_bw_log=bw\n")
    status, _, err = run_cli(["fio", "job.fio", "--capacity", "1GiB", "-q", "--out", "sub/out"])
    assert status == 0, err
    assert (tmp_path / "sub/out/logs/w_iops.1.log").is_file() and (tmp_path / "sub/out/bw_bw.1.log").is_file()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    Path("job.fio").write_text(TINY_JOB + "write_iops_log=../up\n")
    status, _, err = run_cli(["fio", "job.fio", "--capacity", "1GiB", "-q"])
    assert status == 0, err
    assert (tmp_path / "up_iops.1.log").is_file()  # no --out: relative to the working directory, as fio


def test_contained(tmp_path: Path) -> None:
    os.symlink("/etc", tmp_path / "link")
    assert contained(tmp_path, "a/b", "x") == tmp_path / "a/b"
    assert contained(tmp_path, "a/../b", "x") == tmp_path / "b"
    for bad, why in [("../x", "'..'"), ("/abs", "absolute"), ("a/../../x", "'..'"), ("link/passwd", "symbolic link"),
                     ("x\0y", "NUL"), ("", "empty")]:
        with pytest.raises(SsdlabError, match=why):
            contained(tmp_path, bad, "write_iops_log")


# -- a failed device run points at nothing that was deleted ----------------------------------------------


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_failed_device_run_does_not_point_into_a_removed_staging_directory(tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[w]\nrw=randwrite\nbs=4k\nruntime=1\ntime_based\niodepth=65536\nioengine=io_uring\n")
    # each run its own new target (a run that works leaves its device file, which the next would refuse)
    for argv in (["consistency", "--device", str(tmp_path / "c.img"), "--capacity", "64MiB", "--qd", "65536",
                  "--duration", "1", "-q", "--out", str(tmp_path / "c")],
                 ["fio", str(job), "--device", str(tmp_path / "f.img"), "--capacity", "64MiB", "-q",
                  "--out", str(tmp_path / "f")]):
        status, _, err = run_cli(argv)
        if status == 0:  # this fio and kernel took the queue depth (consistency falls back to libaio): nothing to check
            for p in tmp_path.iterdir():
                if p.name != "job.fio":
                    shutil.rmtree(p) if p.is_dir() else p.unlink()
            continue
        line = one_error_line(status, err, "fio failed")
        assert "ssdlab-stage" not in line and ".partial" not in line
        for word in line.split():
            word = word.strip("()',")
            if word.startswith("/") and "job file and output" in line:
                assert os.path.exists(word), line
        assert sorted(p.name for p in tmp_path.iterdir()) == ["job.fio"]
