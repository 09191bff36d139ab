"""Hardening (issue 12): every input kind -- CLI values, drive files, job files, input files,
result paths, the Python API -- gets exit 2 with one line and no traceback, or runs correctly;
nothing is left half-written. Property-based with hypothesis where the input space is large,
with an oracle (the documented bounds, docs/parameters.md "Bounds") deciding which values must run.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssdlab
from ssdlab import cli, limits
from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.fio import devrun
from ssdlab.fio import jobfile as jf
from ssdlab.fio.safety import Target
from ssdlab.fio.planner import plan as make_plan
from ssdlab.results import ResultStage
from ssdlab.scenarios import command as scenario_command

SSDLAB = [sys.executable, "-m", "ssdlab"]
GIB = 2**30
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def no_hang(seconds: int = 20) -> Iterator[None]:
    """Fails the test instead of hanging it (a FIFO read, /dev/zero)."""

    def fire(signum: int, frame: Any) -> None:
        raise AssertionError(f"no answer within {seconds} s: the input hung the program")

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class Accepted(Exception):
    """Raised at the first progress call: the core accepted every step, the run would start."""


def run_cli(args: List[str], monkeypatch: Optional[pytest.MonkeyPatch] = None) -> Tuple[Any, str]:
    """`ssdlab ARGS` in-process: (exit status or "accepted", stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()), no_hang():
        try:
            status = cli.main(args)
        except Accepted:
            status = "accepted"
    return status, err.getvalue()


def assert_refused(status: Any, err: str, *needles: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err and "panicked" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def stop_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands run until the core accepted their steps, then stop (without -q)."""

    def first_call(self: Any, step: int, fraction: float, sim_seconds: float) -> bool:
        raise Accepted()

    monkeypatch.setattr(scenario_command.Progress, "__call__", first_call)  # every command's progress


# -- CLI values ---------------------------------------------------------------------------------------

NASTY = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e30", "1e-300", "-0", "0", "", " ", "0x10", "1e309", "4097",
                     "3GiB", "é", "1e7", "10000001", "166666", "166667", "65536", "65537", "99.999", "100",
                     "-1", "0.5", "1.9e10", "1e20"]),
    st.text(max_size=6),
)


def _float(text: str) -> Optional[float]:
    """The number the CLI reads (limits.parse_number: ASCII, at most 40 characters, finite), or None."""
    try:
        return float(limits.parse_number(text, "value"))
    except ssdlab.SsdlabError:
        return None


def _int(text: str) -> Optional[int]:
    try:
        return int(limits.parse_number(text, "value", integer=True))
    except ssdlab.SsdlabError:
        return None


MINS = limits.MIN_SECONDS  # 1 ms: the shortest duration that can be run and recorded


# (command, option, oracle: does the documented range accept this text?)
MAXS = limits.MAX_SERIES_SECONDS
CLI_VALUES = [
    ("consistency", "--duration", lambda t: (v := _float(t)) is not None and MINS <= v <= MAXS),
    ("consistency", "--qd", lambda t: (v := _int(t)) is not None and 1 <= v <= 65536),
    ("consistency", "--spare-area", lambda t: (v := _float(t)) is not None and 0 <= v < 100),
    ("hdtach", "--torture-minutes", lambda t: (v := _float(t)) is not None and (v == 0 or MINS <= v * 60 <= MAXS)),
    ("wa", "--torture-minutes", lambda t: (v := _float(t)) is not None and MINS <= v * 60 <= MAXS),
    ("torture", "--idle-minutes", lambda t: (v := _float(t)) is not None and (v == 0 or MINS <= v * 60 <= MAXS)),
    ("wa", "--compressibility", lambda t: (v := _float(t)) is not None and 0 < v <= 1),
    ("used-vs-new", "--os-pct", lambda t: (v := _float(t)) is not None and 0 <= v < 90),
]


@pytest.mark.parametrize("command,option,accepts", CLI_VALUES, ids=[f"{c} {o}" for c, o, _ in CLI_VALUES])
@FAST
@given(value=NASTY)
def test_cli_values_are_refused_in_one_line_or_run(stop_at_start: None, tmp_path: Path, command: str, option: str,
                                                   accepts: Any, value: str) -> None:
    out = tmp_path / "out"
    args = [command, "--capacity", "2GiB", option, value, "--out", str(out)]
    if option != "--duration" and command in ("consistency", "used-vs-new"):
        args += ["--duration", "1"]
    status, err = run_cli(args)
    if accepts(value):
        if status != "accepted":  # only the core's refusal of a combination with the drive's size
            line = assert_refused(status, err)
            assert "leaves nothing to test" in line or "test span" in line, line
    else:  # refused by the CLI's value layer, which names the option, before the core is asked
        assert_refused(status, err, "NUL character" if "\x00" in value else option)
    assert not out.exists()  # nothing half-written, accepted or not


@pytest.mark.parametrize("args,needle", [
    (["consistency", "--duration", "1.9e10"], "--duration"),
    (["consistency", "--duration", "1e20"], "--duration"),
    (["wa", "--torture-minutes", "1e30"], "--torture-minutes"),
    (["hdtach", "--torture-minutes", "-1"], "--torture-minutes"),
    (["torture", "--torture-minutes", "nan"], "--torture-minutes"),
    (["consistency", "--qd", "0"], "--qd"),
    (["consistency", "--qd", "100000"], "--qd"),
    (["used-vs-new", "--test-span", "4097"], "not a whole number of 4 KiB blocks"),
    (["consistency", "--block-size", "4097"], "multiple of 512"),
    (["consistency", "--drive", "\udcff"], "not valid UTF-8"),
    (["report", "x", "-o", "r.html", "--title", "\udcff"], "not valid UTF-8"),
    (["consistency", "--out", "o\udcff"], "not valid UTF-8"),
])
def test_issue_examples_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: List[str],
                                    needle: str) -> None:
    monkeypatch.chdir(tmp_path)
    status, err = run_cli(args + (["--capacity", "2GiB"] if args[0] != "report" else []))
    assert_refused(status, err, needle)
    assert list(tmp_path.iterdir()) == []


def test_op_of_ten_is_accepted_as_documented(stop_at_start: None, tmp_path: Path) -> None:
    status, err = run_cli(["consistency", "--capacity", "2GiB", "--op", "10", "--out", str(tmp_path / "o")])
    assert status == "accepted", err


def test_a_valid_value_runs_to_a_complete_result(tmp_path: Path) -> None:
    out = tmp_path / "o"
    status, err = run_cli(["consistency", "--capacity", "2GiB", "--duration", "2", "--qd", "65536", "-q",
                           "--out", str(out)])
    assert status == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted(ssdlab.results.CONSISTENCY_FILES)


# -- drive files --------------------------------------------------------------------------------------

FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([1e300, 1e-300, 0.0, -1.0, 1e6,
                                                                                     1e-3, 0.01, 1e6 + 1]))
TOML_VALUES = {
    ("timing", "read_us"): FLOATS, ("timing", "program_us"): FLOATS, ("timing", "erase_us"): FLOATS,
    ("timing", "channel_mb_s"): FLOATS, ("host", "link_mb_s"): FLOATS, ("host", "command_overhead_us"): FLOATS,
    ("ftl", "op"): FLOATS,
    ("geometry", "channels"): st.integers(-1, 2**33), ("geometry", "dies_per_channel"): st.integers(-1, 2**33),
    ("geometry", "blocks_per_plane"): st.integers(-1, 2**33), ("geometry", "page_bytes"): st.integers(-1, 2**33),
}


def _toml_value(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
    return str(v)


def _within_bounds(cfg: DriveConfig) -> bool:
    t, h = cfg.timing, cfg.host
    ops = [t.read_us, t.program_us, t.erase_us]
    return (all(1e-3 <= x <= 1e6 for x in ops) and 0 <= h.command_overhead_us <= 1e6 and t.channel_mb_s >= 0.01
            and h.link_mb_s >= 0.01)


@FAST
@given(values=st.dictionaries(st.sampled_from(sorted(TOML_VALUES)), st.none(), max_size=4).flatmap(
    lambda keys: st.fixed_dictionaries({k: TOML_VALUES[k] for k in keys})))
def test_drive_files_are_refused_in_one_line_or_simulate(tmp_path: Path, values: dict) -> None:
    sections: dict = {}
    for (section, key), v in values.items():
        sections.setdefault(section, []).append(f"{key} = {_toml_value(v)}")
    text = "".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items())
    path = tmp_path / "d.toml"
    path.write_text(text)
    try:
        cfg = DriveConfig.from_toml_file(path).with_user_capacity(2 * GIB)
    except SsdlabError as e:
        assert "\n" not in str(e)
        return
    assert _within_bounds(cfg), text
    sim = ssdlab.Simulator(cfg)
    with no_hang(60):
        (step,) = sim.run_steps([{"step": "run", "workload": {"rw": "write", "io_limit": 256, "duration_s": 5}}])
    assert step.phase is not None
    assert step.phase["ios"][1] == 256 or step.duration_s >= 5


@pytest.mark.parametrize("toml,needle", [
    ("[timing]\nprogram_us = 1e300\n", "timing.program_us must be from 0.001"),
    ("[host]\nlink_mb_s = 1e-300\n", "host.link_mb_s must be a finite number of at least 0.01"),
    ("[geometry]\nchannels = 4294967295\ndies_per_channel = 4294967295\n", "16 TiB"),
])
def test_out_of_bounds_drive_files(tmp_path: Path, toml: str, needle: str) -> None:
    (tmp_path / "d.toml").write_text(toml)
    with pytest.raises(SsdlabError, match=needle.replace(".", r"\.")):
        DriveConfig.from_toml_file(tmp_path / "d.toml")


# -- special files as inputs --------------------------------------------------------------------------


def _special(tmp_path: Path, kind: str) -> str:
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo")
        return str(tmp_path / "fifo")
    if kind == "dir":
        (tmp_path / "adir").mkdir()
        return str(tmp_path / "adir")
    if kind == "big":
        with open(tmp_path / "big", "wb") as f:
            f.truncate(2**21)
        return str(tmp_path / "big")
    return {"zero": "/dev/zero", "proc": "/proc/self/mountinfo"}[kind]


SPECIAL = ["fifo", "zero", "dir", "big"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_special_drive_and_job_files_are_refused_without_blocking(tmp_path: Path, kind: str) -> None:
    path = _special(tmp_path, kind)
    status, err = run_cli(["consistency", "--drive-file", path, "--capacity", "2GiB", "-q",
                           "--out", str(tmp_path / "o")])
    assert_refused(status, err, "drive file")
    status, err = run_cli(["fio", path, "--capacity", "2GiB", "-q"])
    assert_refused(status, err, "job file")
    (tmp_path / "job.fio").write_text(f"[w]\ninclude {path}\nrw=write\n")
    status, err = run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "2GiB", "-q"])
    assert_refused(status, err, "job.fio:2:")


@pytest.mark.parametrize("kind", SPECIAL)
def test_special_result_files_are_refused_without_blocking(tmp_path: Path, short_run: Any, kind: str) -> None:
    run = short_run.save(tmp_path / "run")
    (run / "summary.json").unlink()
    target = _special(tmp_path, kind)
    if kind == "dir":
        (run / "summary.json").mkdir()
    else:
        (run / "summary.json").symlink_to(target)
    status, err = run_cli(["report", str(run), "-o", str(tmp_path / "r.html"), "-q"])
    assert_refused(status, err, "summary.json")
    assert not (tmp_path / "r.html").exists()


# -- job files: ${VAR} and control characters ---------------------------------------------------------

SMUGGLE = st.builds(lambda a, sep, b: a + sep + b, st.text(max_size=5),
                    st.sampled_from(["\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\x00", "${X}"]),
                    st.sampled_from(["filename=/etc/passwd", "directory=/", "[evil]", "exec_prerun=rm"]))


@FAST
@given(value=st.one_of(SMUGGLE, st.text(max_size=12)), where=st.sampled_from(["description", "name", "bs"]))
def test_expanded_values_never_add_lines_or_options(value: str, where: str) -> None:
    text = f"[global]\n{where}=${{V}}\n[w]\nrw=randwrite\nsize=8m\n"
    try:
        parsed = jf.parse_string(text, env={"V": value, "X": "y"})
    except SsdlabError as e:
        assert "\n" not in str(e)
        return
    # accepted: the value is one line of text and stays inside its option
    assert not any(c in value for c in "\n\r\x0b\x0c\x1c\x85\u2028\x00") and "${" not in value
    options = [o for s in parsed.sections for o in s.options]
    assert [o.key for o in options] == [jf.opts.canonical(where), "rw", "size"]
    assert options[0].value == value


@FAST
@given(value=st.one_of(SMUGGLE, st.text(max_size=12)))
def test_the_device_job_file_names_only_the_target(tmp_path: Path, value: str) -> None:
    """Whatever a job value holds, the job file fio would run names the target once and nothing else."""
    text = "[global]\ndescription=${V}\nfilename=/dev/sda\n[w]\nrw=randwrite\nsize=8m\ndirectory=/\n"
    try:
        parsed = jf.parse_string(text, env={"V": value})
        plan = make_plan(parsed, 64 * 2**20)
    except SsdlabError:
        return
    target = Target(tmp_path / "t.img", "file", 64 * 2**20)
    fio_text, _ = devrun.job_file_text(parsed, plan, target, None, [])
    devrun._only_target(fio_text, target)  # raises if anything but the target is named
    lines = fio_text.split("\n")
    assert [ln for ln in lines if ln.startswith(("filename", "directory"))] == [f"filename={target.path.resolve()}"]


def test_the_last_check_refuses_a_second_filename(tmp_path: Path) -> None:
    target = Target(tmp_path / "t.img", "file", 64 * 2**20)
    text = f"[global]\nfilename={target.path.resolve()}\n[w]\nrw=write\nfilename=/tmp/other\n"
    with pytest.raises(SsdlabError, match="refusing to run fio: its job file would name .*filename=/tmp/other"):
        devrun._only_target(text, target)


@pytest.mark.parametrize("value,needle", [
    ("x\nfilename=/other.img", "control character"),
    ("${HOME}", "'${'"),
    ("\udcff", "not valid UTF-8"),
])
def test_env_values_that_could_smuggle_are_refused(value: str, needle: str) -> None:
    with pytest.raises(SsdlabError, match=needle.replace("$", r"\$").replace("{", r"\{")) as e:
        jf.parse_string("[w]\ndescription=${D}\n", env={"D": value})
    assert str(e.value).startswith("job.fio:2:")


@pytest.mark.parametrize("line", ["descr\x0biption=x", "rw=write\x85filename=/x", "rw=\x00write"])
def test_control_characters_in_job_lines_are_refused(line: str) -> None:
    with pytest.raises(SsdlabError, match="job.fio:2: the line holds a control character"):
        jf.parse_string(f"[w]\n{line}\n")


@pytest.mark.parametrize("job,needle", [
    ("[w]\nrw=write\nbs=4k\nsize=1m\nio_size=16000p\nloops=2\n", "more than the 2**64-1 bytes"),
    ("[w]\nrw=write\nbs=4k\nsize=1m\nloops=1000000000000\n", "loops=1000000000000: must be at most 4294967295"),
    ("[w]\nrw=write\nbs=1m\nsize=1g\nloops=10000000\n", "ssdlab simulates for jobs without runtime="),
    ("[w]\nrw=randwrite\nbs=4k\nruntime=1000000000d\ntime_based\n", "job.fio:4:"),
    ("[w]\nrw=randwrite\nbs=4k\nruntime=100000000\ntime_based\n", "series intervals"),
])
def test_huge_job_values_are_refused(tmp_path: Path, job: str, needle: str) -> None:
    (tmp_path / "job.fio").write_text(job)
    status, err = run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "2GiB", "-q"])
    assert_refused(status, err, needle)


# -- result directories -------------------------------------------------------------------------------


def test_a_failing_save_leaves_nothing(tmp_path: Path, short_run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    calls = []

    def boom(self: Any, *a: Any, **k: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt  # Ctrl-C (or SIGTERM, which ssdlab raises the same way) mid-save
        Path(a[0]).write_bytes(b"png")

    monkeypatch.setattr(Figure, "savefig", boom)
    with pytest.raises(KeyboardInterrupt):
        short_run.save(tmp_path / "deep" / "out")
    assert list(tmp_path.iterdir()) == []  # no staging directory, no parent it created


def test_a_directory_where_a_result_file_goes_is_refused_before_anything_moves(tmp_path: Path,
                                                                              short_run: Any) -> None:
    out = tmp_path / "D"
    (out / "summary.json").mkdir(parents=True)
    with pytest.raises(SsdlabError, match="is a directory where the result has a file"):
        short_run.save(out)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["D", "summary.json"]


def test_fio_out_is_atomic(tmp_path: Path) -> None:
    (tmp_path / "job.fio").write_text("[w]\nrw=randwrite\nbs=4k\nruntime=2\ntime_based\nwrite_iops_log=w\n")
    out = tmp_path / "D"
    (out / "summary.json").mkdir(parents=True)
    status, err = run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "2GiB", "-q", "--out", str(out)])
    assert_refused(status, err, "is a directory where the result has a file")
    assert [p.name for p in out.iterdir()] == ["summary.json"]
    status, err = run_cli(["fio", str(tmp_path / "job.fio"), "--capacity", "2GiB", "-q", "--out",
                           str(tmp_path / "ok"), "--output", str(tmp_path / "ok.txt")])
    assert status == 0, err
    assert {"fio.json", "fio.txt", "summary.json", "iops.csv", "series.csv", "w_iops.1.log"} <= {
        p.name for p in (tmp_path / "ok").iterdir()}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("delay", [0.5, 1.5, 2.5])
def test_sigterm_leaves_a_complete_result_or_nothing(tmp_path: Path, delay: float) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[w]\nrw=randwrite\nbs=4k\nruntime=900\ntime_based\n[r]\nstonewall\nrw=randread\nbs=4k\n"
                   "runtime=900\ntime_based\n")
    proc = subprocess.Popen(SSDLAB + ["fio", str(job), "--capacity", "4GiB", "-q", "--out", str(tmp_path / "o")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    left = sorted(p.name for p in tmp_path.iterdir())
    if (tmp_path / "o").exists():
        assert {"fio.json", "fio.txt", "summary.json", "iops.csv", "series.csv"} <= {
            p.name for p in (tmp_path / "o").iterdir()}
    elif proc.returncode != -signal.SIGTERM:  # -15: it came before ssdlab installed its handler
        assert proc.returncode == 143 and err.strip().splitlines()[-1] == "ssdlab: terminated", err
    assert left in (["job.fio"], ["job.fio", "o"]), left


@pytest.mark.parametrize("out", ["", None, 3])
def test_save_refuses_what_is_not_a_directory_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   short_run: Any, out: Any) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SsdlabError, match="output directory"):
        short_run.save(out)
    assert list(tmp_path.iterdir()) == []


def test_report_refuses_an_empty_file_name(tmp_path: Path, short_run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    run = short_run.save(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    status, err = run_cli(["report", str(run), "-o", ""])
    assert_refused(status, err, "file name is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_result_stage_refuses_a_file_path(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(SsdlabError, match="exists and is not a directory"):
        ResultStage(tmp_path / "f")


# -- the Python API -----------------------------------------------------------------------------------


def _sim() -> Any:
    return ssdlab.Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("2GiB"))


@pytest.mark.parametrize("call,needle", [
    (lambda: DriveConfig.from_json(123), "expected JSON text"),
    (lambda: DriveConfig.from_json("[" * 100000), "not valid JSON"),
    (lambda: jf.parse_string(None), "expected the job file's text"),
    (lambda: jf.parse(None), "expected a path"),
    (lambda: DriveConfig.from_toml_file(None), "expected a path"),
    (lambda: ssdlab.report.write_report(42, "x.html"), "expected result directories"),
    (lambda: ssdlab.fio.device.consistency_on_device("t.img", capacity=64 * 2**20, qd=0), "queue depth must be"),
    (lambda: ssdlab.fio.device.consistency_on_device("t.img", capacity=16 * 2**20, block_size="32MiB"),
     "larger than the 16 MiB"),
    (lambda: ssdlab.fio.device.consistency_on_device("t.img", capacity=64 * 2**20, block_size="3GiB"),
     "larger than 32 MiB, the largest request"),
    (lambda: ssdlab.fio.device.hdtach_on_device("t.img", capacity=64 * 2**20, torture_minutes=-1),
     "torture must be zero or more"),
    (lambda: ssdlab.fio.device.torture_on_device("t.img", capacity=64 * 2**20, then=["idle:1e30"]),
     "idle of 1e+30 min"),
    (lambda: _sim().run_steps([{"step": "run", "workload": {"interval_ms": 1e-9, "duration_s": 1}}]),
     "interval_ms must be at least 1"),
    (lambda: _sim().run_steps([{"step": "run", "workload": {"pattern": "sequential", "position_buckets": 2**32 - 1,
                                                             "io_limit": 10}}]), "position buckets"),
    (lambda: _sim().run_steps([{"step": "idle", "seconds": 6e8}, {"step": "idle", "seconds": 6e8}]),
     "step 2: the run's durations add up"),
    (lambda: ssdlab.used_vs_new(_sim().config, test_span=4097, duration_s=1), "whole number of 4 KiB blocks"),
])
def test_api_mistakes_are_ssdlab_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: Any,
                                        needle: str) -> None:
    import ssdlab.fio.device  # noqa: F401
    import ssdlab.report  # noqa: F401

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SsdlabError) as e:
        call()
    assert "\n" not in str(e.value)
    assert needle in str(e.value)
    assert list(tmp_path.iterdir()) == []  # and nothing was created


def test_write_report_takes_one_directory_as_a_string(tmp_path: Path, short_run: Any) -> None:
    run = short_run.save(tmp_path / "run")
    page = ssdlab.report.write_report(str(run), tmp_path / "r.html")
    assert page.stat().st_size > 10_000


# -- memory limits ------------------------------------------------------------------------------------


@pytest.mark.skipif(subprocess.run(["which", "prlimit"], capture_output=True).returncode != 0, reason="no prlimit")
def test_an_address_space_limit_refuses_a_big_drive_in_one_line() -> None:
    r = subprocess.run(["prlimit", f"--as={3 * GIB}", "--"] + SSDLAB + ["consistency", "--capacity", "2TB", "-q",
                                                                      "--duration", "1", "--out", "/nonexistent/x"],
                       capture_output=True, text=True, timeout=120)
    line = assert_refused(r.returncode, r.stderr, "mapping tables")
    # the limit, not the machine's MemAvailable, is what the message reports as available
    m = re.search(r"only ([0-9.]+) (B|KiB|MiB|GiB|TiB) is available", line)
    assert m is not None, line
    available = float(m.group(1)) * 1024 ** ["B", "KiB", "MiB", "GiB", "TiB"].index(m.group(2))
    assert available < 3 * GIB


def test_a_failing_report_leaves_no_result_either(tmp_path: Path) -> None:
    out = tmp_path / "D"
    (out / "report.html").mkdir(parents=True)
    status, err = run_cli(["wa", "--capacity", "2GiB", "--torture-minutes", "0.1", "-q", "--report", "--out", str(out)])
    assert_refused(status, err, "report")
    assert [p.name for p in out.iterdir()] == ["report.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["D"]
