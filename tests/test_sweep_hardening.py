"""Sweeps under bad input: every mistake is exit status 2 and one ``ssdlab: error:`` line before
anything runs or is written, a stopped sweep prints one line and leaves nothing half-written, and
nothing a spec says can make a sweep write outside its directory.

Refusals run in-process (through `ssdlab.cli.main`) and start no cluster; the signal tests start
``ssdlab sweep`` as a process with one tiny point and two local workers; the silent scheduler is a
socket on 127.0.0.1 that accepts and never answers, closed when its test ends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssdlab
from ssdlab.cli import main
from ssdlab.errors import SsdlabError
from ssdlab.sweep import execute, load_spec
from ssdlab.sweep import table as tbl
from ssdlab.sweep.execute import Outcome
from ssdlab.sweep.points import point_name
from ssdlab.sweep.spec import MAX_POINTS

TINY = 'scenario = "consistency"\n[base]\ncapacity = "512MiB"\nduration = 2\n[grid]\ngc = ["fifo"]\n'


def _one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err
    return lines[0]


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str) -> str:
    """Runs ``ssdlab sweep`` on `text`: exit 2, one line, and no output directory."""
    (tmp_path / "s.toml").write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(out), *args]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert not out.exists()
    return line


# -- 1. unbounded work ---------------------------------------------------------------------------


def test_a_grid_of_a_million_points_is_refused_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = ", ".join(str(i) for i in range(1, 1001))
    text = f'scenario = "consistency"\n[base]\ncapacity = "1GiB"\n[grid]\nseed = [{values}]\nduration = [{values}]\n'
    started = time.monotonic()
    line = _refused(tmp_path, capsys, text)
    assert time.monotonic() - started < 5
    assert "seed 1000 x duration 1000 makes 1,000,000 points, more than the 10,000 one sweep may have" in line
    assert MAX_POINTS == 10_000


def test_the_maximum_counts_the_points_entries_and_is_reached_exactly() -> None:
    grid = {"seed": list(range(100)), "duration": list(range(1, 101))}
    assert len(load_spec({"scenario": "consistency", "grid": grid}).points) == MAX_POINTS
    with pytest.raises(SsdlabError, match=r"x 2 \[\[points\]\] makes 20,000 points"):
        load_spec({"scenario": "consistency", "grid": grid, "points": [{"qd": 1}, {"qd": 2}]})
    # counted from the lengths alone: a product no machine could build is refused as fast
    long = list(range(1, 100_001))
    started = time.monotonic()
    with pytest.raises(SsdlabError, match=r"seed 100000 x duration 100000 x qd 100000 makes about 10\^15 points"):
        load_spec({"scenario": "consistency", "grid": {"seed": long, "duration": long, "qd": long}})
    assert time.monotonic() - started < 1


# -- 2. workers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", ["99999999999999999999999", str(execute.max_workers() + 1)])
def test_too_many_workers_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: str) -> None:
    line = _refused(tmp_path, capsys, TINY, "--workers", workers)
    assert "'--workers'" in line and f"must be at most {execute.max_workers()}" in line


@pytest.mark.parametrize("workers", [10**23, 0, -1, True, 2.0, "2"])
def test_the_api_refuses_a_bad_worker_count(tmp_path: Path, workers: Any) -> None:
    with pytest.raises(SsdlabError, match=r"^workers must be "):
        ssdlab.sweep({"scenario": "consistency", "grid": {"gc": ["fifo"]}}, tmp_path / "out", workers=workers)
    assert not (tmp_path / "out").exists()


# -- 3. a scheduler that accepts and never answers ------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never writes a byte; closed (with the
    connections it holds) when the test ends, and after 60 s whatever happens."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held: List[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        deadline = time.monotonic() + 60
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def test_a_scheduler_that_never_answers_is_one_line_within_the_timeout(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, silent_port: int) -> None:
    monkeypatch.setattr(execute, "CONNECT_TIMEOUT_S", 2)  # the documented 10 s, shortened for the test
    started = time.monotonic()
    line = _refused(tmp_path, capsys, TINY, "--scheduler", f"tcp://127.0.0.1:{silent_port}")
    assert time.monotonic() - started < 2 + 8
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{silent_port}" in line
    assert "did not complete Dask's handshake within 2 s" in line


def test_the_handshake_timeout_is_the_documented_ten_seconds() -> None:
    assert execute.CONNECT_TIMEOUT_S == 10
    assert "within 10 s" in (Path(__file__).parents[1] / "docs" / "sweeps.md").read_text(encoding="utf-8")


# -- 4. every point's options checked as the command line checks them ------------------------------


JOB = "[w]\nrw=randwrite\nbs=4k\nsize=64m\nruntime=1\ntime_based\n"


@pytest.mark.parametrize("text, message", [
    ('scenario = "consistency"\n[base]\ncapacity = "1GiB"\n[grid]\nqd = [32, 0]\n',
     "[grid] qd[1] = 0: must be from 1 to 65536, got 0"),
    ('scenario = "consistency"\n[grid]\nspare_area = [0, 100]\n',
     "[grid] spare_area[1] = 100: must be at least 0 and below 100 percent, got 100"),
    ('scenario = "consistency"\n[grid]\nblock_size = ["4k", "6100"]\n',
     "[grid] block_size[1] = \"6100\": '6100' is 6100 bytes, not a whole number of 512 B blocks"),
    ('scenario = "consistency"\n[grid]\nduration = [0]\n', "[grid] duration[0] = 0: must be positive"),
    ('scenario = "torture"\n[grid]\nthen = [["pass"], ["../../x"]]\n', "[grid] then[1] = [\"../../x\"]: "),
    ('scenario = "torture"\n[grid]\nthen = [["pass"], ["../../x"]]\n', "'pass' or 'idle:MINUTES'"),
    ('scenario = "torture"\n[base]\nthen = "pass,idle:-5"\n[grid]\ngc = ["fifo"]\n', "[base] then = \"pass,idle:-5\": "),
    ('scenario = "torture"\n[base]\nthen = "pass,idle:-5"\n[grid]\ngc = ["fifo"]\n', "idle:-5"),
    ('scenario = "wa"\n[grid]\ncompressibility = [0]\n', "[grid] compressibility[0] = 0: must be above 0 and at most 1"),
    ('scenario = "fio"\n[base]\njobfile = "exec.fio"\n[grid]\ngc = ["fifo"]\n',
     "point gc=fifo: {dir}/exec.fio:2: option 'exec_prerun' is not supported by the simulator"),
    ('scenario = "fio"\n[base]\njobfile = "job.fio"\n[grid]\nsection = ["w", "../../x"]\n',
     "point section=x: section '../../x': {dir}/job.fio has no job section of that name; its sections are w"),
    ('scenario = "fio"\n[base]\njobfile = "job.fio"\ncapacity = "1GiB"\n[grid]\nop = [0.1, 0]\n',
     "[grid] op[1] = 0: must be above 0"),
])
def test_a_point_option_the_cli_refuses_is_a_spec_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                      message: str) -> None:
    (tmp_path / "job.fio").write_text(JOB, encoding="utf-8")
    (tmp_path / "exec.fio").write_text("[w]\nexec_prerun=touch pwned\nrw=write\nsize=1m\n", encoding="utf-8")
    line = _refused(tmp_path, capsys, text)
    assert message.format(dir=tmp_path) in line, line
    assert line.startswith(f"ssdlab: error: {tmp_path / 's.toml'}: ")
    assert not (tmp_path / "pwned").exists()


def test_the_spec_checks_are_the_cli_checks() -> None:
    """A spec's numbers go through the very click types of the command's options."""
    import click

    from ssdlab.cli import cli
    from ssdlab.sweep.scenarios import SCENARIOS, CliValue

    checked = 0
    for sc in SCENARIOS.values():
        for option in sc.options:
            if isinstance(option.convert, CliValue):
                command = cli.commands[option.convert.command]
                assert option.convert.type() is next(p for p in command.params if p.name == option.convert.param).type
                assert not isinstance(option.convert.type(), type(click.STRING))
                checked += 1
    from ssdlab.scenarios import all_scenarios

    for entry in all_scenarios():  # a scenario module's spec keys convert with its declarations' types (Opt)
        command = cli.commands[entry.command_path[0]]
        for part in entry.command_path[1:]:  # a group's subcommand (ssdlab pts iops)
            command = command.commands[part]
        for opt in entry.options:
            if opt.axis is not None and opt.type is not None:
                assert opt.type is next(p for p in command.params if p.name == opt.key).type
                assert not isinstance(opt.type, type(click.STRING))
                checked += 1
    assert checked >= 30


def test_legitimate_values_still_load(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text(JOB, encoding="utf-8")
    spec = load_spec({"scenario": "torture", "base": {"capacity": "1GiB", "then": "pass,idle:120"},
                      "grid": {"torture_minutes": [1, 2.5], "idle_minutes": [0, 30]}})
    assert len(spec.points) == 4 and spec.points[0].prepared["then"] == ["pass", "idle:120"]
    fio = load_spec({"scenario": "fio", "base": {"jobfile": str(tmp_path / "job.fio"), "capacity": "1GiB"},
                     "grid": {"section": ["w"], "seed": [1, 2]}})
    assert [p.name for p in fio.points] == ["section=w,seed=1", "section=w,seed=2"]


# -- 5. point directories stay inside points/ ------------------------------------------------------


def _spec() -> Any:
    return load_spec({"scenario": "consistency", "base": {"capacity": "1GiB", "duration": 2}, "grid": {"gc": ["fifo"]}})


@pytest.mark.parametrize("link", ["points", "charts"])
def test_a_linked_points_or_charts_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       link: str) -> None:
    spec = _spec()
    out = tmp_path / "out"
    tbl.open_dir(out, spec, ssdlab.__version__)  # a sweep directory of this very spec, no point run yet
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / link).symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SsdlabError, match=f"{link} is a symbolic link; a sweep writes its {link} only inside"):
        ssdlab.sweep(spec, out, workers=1)
    with pytest.raises(SsdlabError, match="is a symbolic link"):
        tbl.save_point(out, spec, Outcome(spec.points[0].name, error="x"))
    assert list(elsewhere.iterdir()) == []


def test_point_names_and_result_files_cannot_leave_their_directory(tmp_path: Path) -> None:
    spec = _spec()
    out = tmp_path / "out"
    tbl.open_dir(out, spec, ssdlab.__version__)
    for name in ("../../x", "/etc", "a/../../b"):
        with pytest.raises(SsdlabError, match="sweep point"):
            tbl.point_dir(out, name)
    # a point directory that is a link inside points/ leading out is not written through
    (out / "points").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (out / "points" / spec.points[0].name).symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(SsdlabError, match="leads outside"):
        tbl.save_point(out, spec, Outcome(spec.points[0].name, error="x"))
    (out / "points" / spec.points[0].name).unlink()
    with pytest.raises(SsdlabError, match="a result file: '../../escape' leads outside"):
        tbl.save_point(out, spec, Outcome(spec.points[0].name, files={"../../escape": b"x"}))
    assert list((tmp_path / "elsewhere").iterdir()) == [] and not (tmp_path / "escape").exists()
    assert [p.name for p in (out / "points").iterdir()] == []  # nothing half-written either


@given(st.dictionaries(st.sampled_from(["then", "section", "drive", "gc", "x/y"]),
                       st.one_of(st.text(max_size=30), st.sampled_from(["..", "../../x", "/", ".", "a/../../b", "~"]),
                                 st.lists(st.text(max_size=10), max_size=3)),
                       min_size=1, max_size=3))
@settings(max_examples=200, deadline=None)
def test_a_point_name_is_one_safe_component(values: Dict[str, Any]) -> None:
    name = point_name(values)
    assert name not in ("", ".", "..") and "/" not in name and "\0" not in name
    assert Path(name).name == name and len(name.encode()) <= 255


# -- 6. resume state, huge numbers, signals ------------------------------------------------------


@pytest.mark.parametrize("where", ["manifest", "record"])
def test_deeply_nested_resume_state_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               where: str) -> None:
    (tmp_path / "s.toml").write_text(TINY, encoding="utf-8")
    spec = load_spec(tmp_path / "s.toml")
    out = tmp_path / "out"
    tbl.open_dir(out, spec, ssdlab.__version__)
    deep = "[" * 200_000 + "]" * 200_000
    if where == "manifest":
        (out / tbl.MANIFEST).write_text(deep, encoding="utf-8")
    else:
        record = out / "points" / spec.points[0].name / tbl.POINT_RECORD
        record.parent.mkdir(parents=True)
        record.write_text(deep, encoding="utf-8")
    listing = sorted(str(p) for p in out.rglob("*"))
    assert main(["sweep", str(tmp_path / "s.toml"), "--out", str(out), "--workers", "1"]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "nests arrays or objects more than 64 deep" in line and "ssdlab did not write it" in line
    assert sorted(str(p) for p in out.rglob("*")) == listing


@pytest.mark.parametrize("value, message", [
    ("9" * 400, r"\[grid\] seed\[0\]: a number of 400 digits is beyond 64 bits"),
    ("9" * 5000, r"line 6 \(seed = \.\.\.\): a number of 5000 digits; ssdlab reads whole numbers of at most 64 bits"),
    ("1e400", r"\[grid\] seed\[0\] = inf: must be a whole number"),
    ("-" + "9" * 400, r"\[grid\] seed\[0\]: a number of 400 digits is beyond 64 bits"),
])
def test_huge_numbers_are_one_line_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str,
                                                 message: str) -> None:
    import re

    line = _refused(tmp_path, capsys, TINY.replace('gc = ["fifo"]', f"seed = [{value}]"))
    assert re.search(message, line), line
    assert len(line) < 400


def test_huge_and_infinite_floats_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(tmp_path, capsys, TINY.replace("duration = 2", "duration = 1e400"))
    assert "[base] duration = inf: must be a finite number" in line
    line = _refused(tmp_path, capsys, TINY.replace("duration = 2", "duration = nan"))
    assert "[base] duration = nan: must be a finite number" in line


def _start(tmp_path: Path, spec: str) -> "subprocess.Popen[str]":
    (tmp_path / "s.toml").write_text(spec, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "ssdlab", "sweep", "s.toml", "--out", "out", "--workers", "2", "-q"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)  # its own process group: the signal reaches it and its workers, as Ctrl-C does


# one point that runs for many seconds: every signal below lands while the cluster starts or the point runs
LONG = 'scenario = "consistency"\n[base]\ncapacity = "512MiB"\nduration = 20000\n[grid]\ngc = ["fifo"]\n'


@pytest.mark.parametrize("signum, status, said, delays", [
    (signal.SIGINT, 130, "ssdlab: interrupted", (0.5, 0.9, 1.3)),
    (signal.SIGTERM, 143, "ssdlab: terminated", (0.7, 1.5)),
])
def test_a_signal_while_the_cluster_starts_is_one_line_and_leaves_nothing(
        tmp_path: Path, signum: int, status: int, said: str, delays: Any) -> None:
    for delay in delays:
        proc = _start(tmp_path, LONG)
        time.sleep(delay)
        os.killpg(proc.pid, signum)
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert proc.returncode == status, (delay, err)
        assert err.splitlines() == [said], (delay, err)  # no Dask traceback, from the client or a worker
        assert not (tmp_path / "out").exists(), delay  # no point finished: nothing to resume, nothing left


def test_a_stopped_sweep_keeps_its_finished_points(tmp_path: Path) -> None:
    # the first point fails at once (a drive cannot be built that small), which finishes it; the second runs on
    spec = 'scenario = "consistency"\n[base]\nduration = 20000\n[grid]\ncapacity = ["256MiB", "512MiB"]\n'
    proc = _start(tmp_path, spec)
    record = tmp_path / "out" / "points" / "capacity=256MiB" / tbl.POINT_RECORD
    deadline = time.monotonic() + 60
    while not record.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.splitlines() == ["ssdlab: sweep stopped; its finished points are kept in out: run the same command "
                                "to resume", "ssdlab: interrupted"]
    assert "is too small for drive" in json.loads(record.read_text(encoding="utf-8"))["error"]
    assert sorted(p.name for p in (tmp_path / "out" / "points").iterdir()) == ["capacity=256MiB"]
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"sweep.json", "points", "results.parquet"}


# -- 7. the Python API's arguments ---------------------------------------------------------------


@pytest.mark.parametrize("args, kwargs, message", [
    ((None, "out"), {}, "sweep spec: expected a TOML file's path, a dict of the spec's tables or a SweepSpec"),
    ((42, "out"), {}, "got int"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}}, None), {}, "out must be a directory's path"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}}, 3.5), {}, "out must be a directory's path"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}}, "out"), {"scheduler": 8786}, "scheduler must be a Dask"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}}, "out"), {"progress": "yes"}, "progress must be True or False"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}}, "out"), {"events": 3}, "events must be a function"),
    (({"scenario": ["wa"], "grid": {"gc": ["fifo"]}}, "out"), {}, 'scenario = \\["wa"\\]: not a scenario'),
    (({"scenario": "wa", "grid": {"gc": ("fifo",)}}, "out"), {}, "a tuple is not a spec value"),
    (({"scenario": "wa", "grid": {"gc": ["fifo"]}, "base": {"seed": 10**5000}}, "out"), {},
     r"\[base\] seed: a number of 5001 digits is beyond 64 bits"),
    (({"scenario": "wa", "grid": {"gc": [{1: 2}]}}, "out"), {}, "the table key 1 is not a string"),
])
def test_bad_api_arguments_are_ssdlab_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: Any,
                                            kwargs: Dict[str, Any], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SsdlabError, match=message) as err:
        ssdlab.sweep(*args, **kwargs)
    assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


# -- the spec loader under arbitrary values ------------------------------------------------------

_SCALARS = st.one_of(
    st.booleans(),
    st.integers(),
    st.integers(min_value=-10**450, max_value=10**450),
    st.sampled_from([2**64, 2**64 - 1, -2**64, 0, -1]),
    st.sampled_from([1, -1]).map(lambda sign: sign * 10**5000),  # no decimal text in Python 3.11
    st.floats(),  # nan, inf, -0.0 and the rest
    st.text(max_size=40),
    st.sampled_from(["../../x", "..", "/", "/dev/zero", "/etc/passwd", "a/../../b", "\u2028", "idle:1", "pass",
                     "idle:1e400", "idle:nan", "mlc-256", "16GiB", "4k", "9" * 5000, "fifo", "x\x00y", "~root"]),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=5), inner, max_size=2)),
                       max_leaves=6)


@given(scenario=st.sampled_from(["consistency", "torture", "fio", "saturation", "wa"]),
       base=st.dictionaries(st.sampled_from(["capacity", "qd", "then", "section", "duration", "op", "seed",
                                             "drive_file", "spare_area", "env", "block_size"]), _VALUES, max_size=3),
       grid=st.dictionaries(st.sampled_from(["gc", "torture_minutes", "drive", "idle_minutes", "sequential_jobs",
                                             "compressibility", "fill_pct", "pattern"]),
                            st.lists(_VALUES, min_size=1, max_size=3), min_size=1, max_size=2))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_the_spec_loader_accepts_or_says_one_line(tmp_path_factory: pytest.TempPathFactory, scenario: str,
                                                 base: Dict[str, Any], grid: Dict[str, Any]) -> None:
    root = tmp_path_factory.getbasetemp() / "loader"
    root.mkdir(exist_ok=True)
    (root / "job.fio").write_text(JOB, encoding="utf-8")
    if scenario == "fio":
        base = {**base, "jobfile": str(root / "job.fio")}
    before = set(os.listdir(root))
    try:
        spec = load_spec({"scenario": scenario, "base": base, "grid": grid})
    except SsdlabError as err:
        assert "\n" not in str(err) and len(str(err)) < 2000
    else:
        for point in spec.points:
            assert tbl.point_dir(root / "out", point.name).parent == root / "out" / "points"
    assert set(os.listdir(root)) == before  # loading writes nothing


# -- 8. another cluster on the machine (issue 22 re-probe) ---------------------------------------


def test_a_held_dask_port_is_not_a_warning_on_stderr(tmp_path: Path) -> None:
    """Dask's scheduler serves HTTP on 8787 by default, even without a dashboard; with the port
    held (a second sweep, a notebook's cluster) Dask warned in four lines on stderr ("Port 8787 is
    already in use ..."), so a stopped sweep's one line came with four others."""
    held: Any = socket.socket()
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        held.bind(("0.0.0.0", 8787))
        held.listen(1)
    except OSError:  # someone holds it already: the condition of the test holds
        held.close()
        held = None
    try:
        (tmp_path / "s.toml").write_text(TINY, encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "ssdlab", "sweep", "s.toml", "--out", "out", "--workers", "1", "-q"],
                              cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    finally:
        if held is not None:
            held.close()
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert (tmp_path / "out" / "results.parquet").is_file()


@pytest.mark.parametrize("key", ["drive_file", "capacity", "then", "jobfile", "trace"])
@pytest.mark.parametrize("char", ["9", "a"])
def test_a_huge_value_quoted_back_by_a_points_check_is_short_in_the_api_too(key: str, char: str) -> None:
    """The CLI's error line shortened a 5000-digit value, but the API's message quoted it whole from
    the check it came from (``drive file '/.../9999...': cannot open it``, ``size '9999...' is too
    large``): 10 KB messages; and a job file or trace named by 5000 characters was an OSError
    (ENAMETOOLONG from Path.is_file). The spec's messages are shortened where they are made."""
    scenario = {"jobfile": "fio", "then": "torture", "trace": "replay"}.get(key, "consistency")
    with pytest.raises(SsdlabError) as err:
        load_spec({"scenario": scenario, "base": {key: char * 5000}, "grid": {"gc": ["fifo"]}})
    message = str(err.value)
    assert "\n" not in message and len(message) < 400, message
    assert char * 101 not in message
