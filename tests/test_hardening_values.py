"""Hardening: CLI values, signals at start-up, result and report reading, and the Python API.

Every bad input is exit status 2 and one ``ssdlab: error:`` line (or, in the API, one
`SsdlabError`), with no traceback and nothing written; a legitimate input works. The bounds are
docs/parameters.md's ("Bounds"): block sizes up to 32 MiB, durations from 1 ms, replay speeds from
10^-9 to 10^9, drive-file delays up to 10^9 s; the signal guarantee is docs/safety.md's.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ssdlab
from ssdlab import _core, cli, limits
from ssdlab import cli_values as cv
from ssdlab.errors import SsdlabError
from ssdlab.results import ConsistencyResult
from ssdlab.scenarios.hdtach import HdtachResult
from ssdlab.simulate import Simulator

SSDLAB = Path(sys.executable).parent / "ssdlab"  # the console script
SMALL = ["--capacity", "1GiB"]
_outs = itertools.count()


class Accepted(Exception):
    """Raised at the core's first progress call: every check passed, the run would start."""


@pytest.fixture
def stop_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulations stop at their first progress call (the core calls back only once it has
    accepted every step), so accepted values cost no simulated time."""

    def first_call(self: Any, step: int, fraction: float, sim_seconds: float) -> bool:
        raise Accepted()

    monkeypatch.setattr(ssdlab.simulate._Callback, "__call__", first_call)

    def server_start(self: Any, *args: Any, **kwargs: Any) -> None:  # ssdlab serve: accepted, never listens
        raise Accepted()

    from ssdlab.scenarios import serve

    monkeypatch.setattr(serve.Server, "__init__", server_start)


def run(args: List[str]) -> Tuple[Any, str]:
    """``ssdlab ARGS`` in-process: (exit status, or "accepted"; stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status: Any = cli.main(args)
        except Accepted:
            status = "accepted"
    return status, err.getvalue()


def refused(status: Any, err: str, *needles: str) -> str:
    """Asserts exit 2 with exactly one ``ssdlab: error:`` line holding every needle; returns it."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("ssdlab: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def one_line(err: BaseException, *needles: str) -> str:
    text = str(err)
    assert "\n" not in text, text
    for needle in needles:
        assert needle in text, text
    return text


# -- 1. values that were accepted silently ---------------------------------------------------------


def test_a_block_size_beyond_the_largest_command_is_refused(stop_at_start: None, tmp_path: Path) -> None:
    out = tmp_path / "out"
    for command in ("consistency", "saturation"):
        for size in ("1GiB", "64MiB", str(limits.MAX_BLOCK_BYTES + 4096)):
            line = refused(*run([command, *SMALL, "--block-size", size, "--out", str(out)]), "--block-size")
            assert "32 MiB" in line and "one command" in line
    assert run(["consistency", *SMALL, "--block-size", "32MiB", "--out", str(out)])[0] == "accepted"
    assert not out.exists()
    # the core refuses it too (a job file, the API), before anything runs
    assert limits.MAX_BLOCK_BYTES == 32 * 2**20
    sim = Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"))
    with pytest.raises(SsdlabError) as e:
        sim.run_steps([{"step": "run", "workload": {"block_bytes": limits.MAX_BLOCK_BYTES + 4096}}])
    one_line(e.value, "one command")
    with pytest.raises(SsdlabError) as e:
        ssdlab.consistency(sim.config, block_size="1TiB", duration_s=1)
    one_line(e.value, "one command")
    with pytest.raises(SsdlabError) as e:
        limits.block_size("1GiB")
    one_line(e.value, "32 MiB")


def test_test_spans_are_not_request_sizes(stop_at_start: None, tmp_path: Path) -> None:
    status, err = run(["used-vs-new", *SMALL, "--test-span", "100MiB", "--duration", "1", "--out", str(tmp_path / "o")])
    assert status == "accepted", err


@pytest.mark.parametrize("then", ["", " ", ",", "pass,,pass", "pass,", "idle:", "idle:1e-30", "idle:nan",
                                  "idle:\u0661", "sleep:5"])
def test_torture_then_must_name_actions(stop_at_start: None, tmp_path: Path, then: str) -> None:
    refused(*run(["torture", *SMALL, "--then", then, "--out", str(tmp_path / "o")]), "--then")
    assert not (tmp_path / "o").exists()


def test_torture_then_runs_its_actions(stop_at_start: None, tmp_path: Path) -> None:
    status, err = run(["torture", *SMALL, "--then", " pass , idle:0.5 ", "--out", str(tmp_path / "o")])
    assert status == "accepted", err


def trace(tmp_path: Path, seconds: float = 1.0) -> Path:
    """A two-request MSR trace `seconds` apart (times in 100 ns units)."""
    t0 = 128166372003061629
    path = tmp_path / "t.csv"
    path.write_text(f"{t0},hm,1,Write,0,4096,1\n{t0 + int(seconds * 1e7)},hm,1,Write,8192,4096,1\n")
    return path


@pytest.mark.parametrize("speed", ["1e-30", "1e-15", "1e-10", "2e9", "1e300", "0", "-1", "nan", "inf"])
def test_replay_speeds_that_would_break_the_clock_are_refused(tmp_path: Path, speed: str) -> None:
    line = refused(*run(["replay", str(trace(tmp_path)), *SMALL, "--speed", speed, "--out", str(tmp_path / "o")]),
                   "--speed")
    assert not (tmp_path / "o").exists()
    if speed in ("1e-30", "1e-15"):
        assert "from 1e-09 to 1e+09" in line


def test_a_slow_replay_stops_at_the_clock_bound_instead_of_wrapping(tmp_path: Path) -> None:
    # 1e-9 is allowed, but it stretches 2 s of trace to 2e9 s: refused where the trace gets there
    # (the core checks before the time becomes a clock value; it used to saturate and wrap).
    line = refused(*run(["replay", str(trace(tmp_path, 2.0)), *SMALL, "--speed", "1e-9", "-q",
                         "--out", str(tmp_path / "o")]), "raise --speed")
    assert "2000000000 simulated seconds" in line
    assert not (tmp_path / "o").exists()
    status, err = run(["replay", str(trace(tmp_path, 1e-3)), *SMALL, "--speed", "1e-3", "-q",
                       "--out", str(tmp_path / "ok")])
    assert status == 0, err
    assert json.loads((tmp_path / "ok" / "summary.json").read_text())["out_of_order"] == 0
    with pytest.raises(SsdlabError) as e:
        ssdlab.replay(trace(tmp_path), "mlc-256", speed=1e-15)
    one_line(e.value, "speed")


def test_the_core_refuses_bad_speeds_itself() -> None:
    sim = Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"))
    for speed in (1e-30, 1e-15, 2e9):
        with pytest.raises(SsdlabError) as e:
            sim._core.replay_start(json.dumps({"label": "r", "interval_ms": 1000.0,
                                               "timing": {"mode": "trace", "speed": speed}}))
        one_line(e.value, "speed must be a factor from 1e-9")


@pytest.mark.parametrize("command,option,value", [
    ("consistency", "--duration", "1e-30"),
    ("consistency", "--duration", "0.0009"),
    ("hdtach", "--torture-minutes", "1e-9"),
    ("torture", "--idle-minutes", "1e-6"),
])
def test_durations_below_a_millisecond_are_refused(tmp_path: Path, command: str, option: str, value: str) -> None:
    device = tmp_path / "F"
    line = refused(*run([command, "--device", str(device), "--capacity", "64MiB", option, value,
                         "--out", str(tmp_path / "o")]), option, "shorter than 1 ms")
    assert "1e" in line or "0.0009" in line
    assert not device.exists() and not (tmp_path / "o").exists()  # nothing created, not even the file


def test_durations_of_a_millisecond_and_zero_where_allowed_run(stop_at_start: None, tmp_path: Path) -> None:
    for args in (["consistency", "--duration", "0.001"], ["hdtach", "--torture-minutes", "0"],
                 ["torture", "--idle-minutes", "0"]):
        status, err = run([*args, *SMALL, "--out", str(tmp_path / f"o{next(_outs)}")])
        assert status == "accepted", err


def drive_file(tmp_path: Path, table: str, body: str) -> Path:
    path = tmp_path / "d.toml"
    path.write_text(f"[{table}]\n{body}\n")
    return path


@pytest.mark.parametrize("value", ["1.7e10", "1.9e10", "1e300", "1000000001", "-1", "nan", "inf"])
def test_drive_file_delays_must_fit_the_clock(tmp_path: Path, value: str) -> None:
    # 1.7e10 s fits a u64 of ns and 1.9e10 s saturates it: both mean "never" and gave different
    # results; now both are refused, naming the key.
    for table, body, key in (("ftl.idle_gc", f"delay_s = {value}\nduty = 0.5", "ftl.idle_gc.delay_s"),
                             ("ftl.slc_cache", f"static_pct = 1\ndynamic_share = 0.5\nidle_fold_delay_s = {value}",
                              "ftl.slc_cache.idle_fold_delay_s")):
        path = drive_file(tmp_path, table, body)
        refused(*run(["consistency", "--drive-file", str(path), *SMALL, "--out", str(tmp_path / "o")]), key)
        assert not (tmp_path / "o").exists()


def test_drive_file_delays_up_to_the_bound_run(stop_at_start: None, tmp_path: Path) -> None:
    for value in ("0", "10", "1e9"):
        path = drive_file(tmp_path, "ftl.idle_gc", f"delay_s = {value}\nduty = 0.5")
        status, err = run(["consistency", "--drive-file", str(path), *SMALL, "--out", str(tmp_path / f"o{value}")])
        assert status == "accepted", err


def test_the_core_bounds_the_delay_without_the_python_layer() -> None:
    cfg = ssdlab.load_preset("idle-gc").to_dict()
    for delay in (1.7e10, 1.9e10, 1e300):
        cfg["ftl"]["idle_gc"]["delay_s"] = delay
        with pytest.raises(SsdlabError) as e:
            _core.describe_config(json.dumps(cfg))
        one_line(e.value, "ftl.idle_gc.delay_s must be from 0 to 1e9 seconds")


# -- 2. tracebacks where one line belongs ------------------------------------------------------------


@pytest.fixture(scope="module")
def result_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("runs") / "c"
    ssdlab.consistency(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"), duration_s=3).save(d)
    return d


def copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix in (".csv", ".json"):
            (dst / f.name).write_bytes(f.read_bytes())
    return dst


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(depth=st.integers(1, 200_000), brackets=st.sampled_from(["[]", "{}", "[{"]))
def test_nested_json_in_a_summary_is_one_line(result_dir: Path, tmp_path_factory: pytest.TempPathFactory,
                                              depth: int, brackets: str) -> None:
    d = copy_run(result_dir, tmp_path_factory.mktemp("nested") / "c")
    if brackets == "[{":
        text = '[{"a":' * depth + "1" + "}]" * depth
    else:
        text = brackets[0] * depth + brackets[1] * depth
    (d / "summary.json").write_text(text)
    status, err = run(["report", str(d), "-o", str(d.parent / "r.html")])
    refused(status, err, "summary.json")
    assert not (d.parent / "r.html").exists()
    for cls in (ConsistencyResult, HdtachResult):
        with pytest.raises(SsdlabError) as e:
            cls.load(d)
        one_line(e.value)


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e400", "9" * 5000, "Infinity", "", "lots"])
def test_a_non_finite_number_in_a_csv_names_the_file_and_column(result_dir: Path, tmp_path: Path, value: str) -> None:
    d = copy_run(result_dir, tmp_path / "c")
    rows = (d / "iops.csv").read_text().splitlines()
    rows[2] = rows[2].split(",")[0] + "," + value
    (d / "iops.csv").write_text("\n".join(rows) + "\n")
    line = refused(*run(["report", str(d), "-o", str(tmp_path / "r.html")]), "iops.csv", "'iops'", "line 3")
    assert len(line) < 300
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(SsdlabError) as e:
        ConsistencyResult.load(d)
    one_line(e.value, "iops.csv", "'iops'", "line 3")


def test_a_symlink_loop_as_a_report_input_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    os.symlink("a", "a")
    os.symlink("c", "b")
    os.symlink("b", "c")
    for name in ("a", "b"):
        refused(*run(["report", name, "-o", "r.html"]), name, "loop of symbolic links")
    assert not Path("r.html").exists()


# -- signals at start-up ---------------------------------------------------------------------------

_PREAMBLE = re.compile(r'^\s*(import re|import sys|from ssdlab\._entry import main)\s*$', re.M)


def _interpreter_preamble(err: str, script: str, early: bool = False) -> bool:
    """Whether a traceback on stderr comes from before any ssdlab code ran: Python's own start-up,
    or the generated console script's ``import re`` / ``from ssdlab._entry import main`` line
    (frames only in the script, the standard library and the frozen import machinery)."""
    if "Fatal Python error" in err and "init_" in err:  # the interpreter's own initialisation
        return True
    files = re.findall(r'File "([^"]+)"', err)
    stdlib = os.path.dirname(os.__file__)
    return bool(files) and all(f == script or f.startswith("<frozen") or (f.startswith(stdlib) and "site-packages"
                                                                          not in f) for f in files) \
        and (bool(_PREAMBLE.search(err)) or (early and _IGNORED_IN_IMPORT.match(err) is not None)
             or err.startswith(_ARGV0_CHECK) or err.rstrip().endswith(f'File "{script}", line 0, in <module>\n'
                                                                     "KeyboardInterrupt"))


# Two more of the interpreter's own, seen when the signal comes within ~10 ms of the start: its
# check whether the script is a zip file to put on sys.path, and its entry into the script (line 0).
_ARGV0_CHECK = "Failed checking if argv[0] is an import path entry\n"


def _signal_at_line(module: str, line: int, sig: int) -> str:
    """A script that sends itself `sig` as ssdlab/`module` reaches `line` while it imports
    ssdlab._entry (line 8 of the script sends it)."""
    return ("import os, sys\n"
            "def tracer(frame, event, arg):\n"
            f"    if not frame.f_code.co_filename.endswith('ssdlab/{module}'):\n"
            "        return None\n"
            "    def local(frame, event, arg):\n"
            f"        if event == 'line' and frame.f_lineno == {line}:\n"
            "            sys.settrace(None)\n"
            f"            os.kill(os.getpid(), {int(sig)})\n"
            "        return local\n"
            "    return local\n"
            "sys.settrace(tracer)\n"
            "from ssdlab._entry import main\n")


def _before_the_early_handlers(err: str, script: str) -> bool:
    """Whether a KeyboardInterrupt traceback ends in ssdlab/__init__.py before its handlers are in:
    the interpreter raises a pending signal on entering the module and in the first `signal` call
    (which checks before it changes the handler), a window of microseconds no Python code can
    close. Every other frame is the script's, the standard library's or the import machinery's."""
    source = (Path(__file__).parents[1] / "python" / "ssdlab" / "__init__.py").read_text(encoding="utf-8")
    last = max(n for n, text in enumerate(source.splitlines(), start=1) if text.endswith("# EARLY-SIGNALS"))
    frames = re.findall(r'File "([^"]+)", line (\d+)', err)
    if not frames or not err.rstrip().endswith("KeyboardInterrupt"):
        return False
    *outer, (inner, line) = frames
    stdlib = os.path.dirname(os.__file__)
    return inner.replace("\\", "/").endswith("/ssdlab/__init__.py") and int(line) <= last and all(
        f.startswith("<frozen") or (f.startswith(stdlib) and "site-packages" not in f) or f == script
        for f, _ in outer)


def test_nothing_before_the_early_handlers_can_raise_a_pending_signal() -> None:
    # The window _before_the_early_handlers accepts holds only the module's entry and the `signal`
    # calls: no other call, no loop (a jump back), in the statements before the handlers go in.
    import dis

    path = Path(__file__).parents[1] / "python" / "ssdlab" / "__init__.py"
    source = path.read_text(encoding="utf-8")
    marks = [n for n, text in enumerate(source.splitlines(), start=1) if text.endswith("# EARLY-SIGNALS")]
    assert len(marks) == 2, marks
    checks = [(i.opname, i.positions.lineno) for i in dis.get_instructions(compile(source, str(path), "exec"))
              if i.positions.lineno is not None and i.positions.lineno <= marks[-1]
              and (i.opname in ("CALL", "RESUME", "CALL_FUNCTION_EX") or "BACKWARD" in i.opname
                   or i.opname.startswith("IMPORT_") and i.argval not in ("_signal", "sys"))]
    assert checks == [("RESUME", 0), ("CALL", marks[0]), ("CALL", marks[1])], checks


def test_the_window_before_the_early_handlers_is_told_from_ssdlab_code(tmp_path: Path) -> None:
    # A real traceback from the window: a tracer sends SIGINT at the first `signal` call, before the
    # handlers are in. The tracer's own frame (innermost: the signal is raised where os.kill
    # returns) is cut out, leaving what a signal from outside leaves. The same text with the frame
    # moved past the handlers, or into another ssdlab module, is ssdlab's code: not the window.
    source = (Path(__file__).parents[1] / "python" / "ssdlab" / "__init__.py").read_text(encoding="utf-8").splitlines()
    first = next(n for n, text in enumerate(source, start=1) if text.endswith("# EARLY-SIGNALS"))
    after = next(n for n, text in enumerate(source, start=1) if text.startswith("TYPE_CHECKING = False"))
    script = tmp_path / "ssdlab"
    script.write_text(_signal_at_line("__init__.py", first, signal.SIGINT), encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    tracer_frame = f'  File "{script}", line 8, in local\n    os.kill(os.getpid(), {int(signal.SIGINT)})\n'
    assert r.returncode == -signal.SIGINT and tracer_frame in r.stderr, r.stderr
    err = r.stderr.replace(tracer_frame, "")
    assert f'ssdlab/__init__.py", line {first}, in <module>' in err
    assert _before_the_early_handlers(err, str(script))
    past = err.replace(f", line {first}, in <module>", f", line {after}, in <module>")
    assert not _before_the_early_handlers(past, str(script))
    assert not _before_the_early_handlers(err.replace("ssdlab/__init__.py", "ssdlab/_entry.py"), str(script))
    assert not _interpreter_preamble(err, str(script), early=True)


# Ctrl-C while Python's start-up imports a module (site, encodings, the script's `import re`) can
# land in the import lock's weakref callback, which the interpreter reports as "Exception ignored"
# and then carries on. It names no ssdlab frame, so it is only told apart from ssdlab's own
# imports by time: those start after Python's start-up (~20 ms; the CLI's imports take ~300 ms).
_IGNORED_IN_IMPORT = re.compile(r'Exception ignored in: <function _get_module_lock\.<locals>\.cb at 0x[0-9a-f]+>\n'
                                r'Traceback \(most recent call last\):\n'
                                r'  File "<frozen importlib\._bootstrap>", line \d+, in cb\n'
                                r'KeyboardInterrupt: ?\n\Z')


def test_the_entry_point_imports_nothing_heavy_before_its_handlers() -> None:
    code = ("import sys; import ssdlab._entry; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('ssdlab', 'click', 'numpy', 'pandas', 'pydantic', 'enum', 'typing', 'signal')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout.replace("'", '"')) == ["ssdlab", "ssdlab._entry"]
    assert "ssdlab._entry:main" in Path(__file__).parents[1].joinpath("pyproject.toml").read_text()


@pytest.mark.parametrize("sig,status,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_the_cli_imports_is_one_line(sig: int, status: int, word: str) -> None:
    # Deterministic: the signal arrives while ssdlab.cli imports click (where a KeyboardInterrupt
    # used to escape as a traceback, or as "Exception ignored" from the import machinery).
    code = (
        "import builtins, os, sys\n"
        "real = builtins.__import__\n"
        "def hook(name, *a, **k):\n"
        f"    if name == 'click' and 'click' not in sys.modules: os.kill(os.getpid(), {int(sig)})\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = hook\n"
        "from ssdlab._entry import main\n"
        "sys.argv = ['ssdlab', 'drives']\n"
        "sys.exit(main())\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == status, r.stderr
    assert r.stderr == f"ssdlab: {word}\n" and r.stdout == ""


@pytest.mark.parametrize("module, statement", [("__init__.py", "TYPE_CHECKING = False"),
                                               ("_entry.py", "EXIT_INTERRUPTED = 130"),
                                               ("_entry.py", "class _Terminated(KeyboardInterrupt):")])
@pytest.mark.parametrize("sig,status,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_while_the_package_and_entry_module_import_is_one_line(tmp_path: Path, module: str, statement: str,
                                                                        sig: int, status: int, word: str) -> None:
    # Deterministic: the signal arrives while the console script imports ssdlab and ssdlab._entry,
    # at a statement after the package's first ones (the re-probe of issue 22 saw KeyboardInterrupt
    # tracebacks from _entry's class and def statements under load: main() had not set its handlers
    # yet). The script is named ssdlab, as the installed one.
    source = (Path(__file__).parents[1] / "python" / "ssdlab" / module).read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(source, start=1) if text.startswith(statement))
    script = tmp_path / "ssdlab"
    script.write_text(_signal_at_line(module, line, sig) + "sys.settrace(None)\n"
                      "sys.argv = ['ssdlab', 'drives']\nsys.exit(main())\n", encoding="utf-8")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == status, r.stderr
    assert r.stderr == f"ssdlab: {word}\n" and r.stdout == ""


def test_importing_the_entry_module_in_a_program_changes_no_handler() -> None:
    code = ("import signal, sys\nbefore = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)\n"
            "import ssdlab._entry\n"
            "assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.skipif(not SSDLAB.exists(), reason="the console script is not installed")
def test_signals_at_start_up_never_print_a_traceback() -> None:
    """`ssdlab consistency --help` and `ssdlab drives`, sent SIGINT or SIGTERM 0.01 to 0.8 s after
    they start: exit 130 / 143 with one line, or 0 if they finished first; never a traceback from
    ssdlab's code or its imports. (A signal before Python runs any of ssdlab's code kills it
    by the signal, -2 / -15: the shell's 130 / 143.)"""
    script = str(SSDLAB)
    cases = [(sig, args, delay) for sig in (signal.SIGINT, signal.SIGTERM)
             for args in (["consistency", "--help"], ["drives"])
             for delay in (0.01, 0.04, 0.1, 0.18, 0.3, 0.5, 0.8)]  # the last two: a loaded machine starts slowly
    outcomes: Dict[Tuple[str, int], int] = {}
    for batch in range(0, len(cases), 10):  # ten at a time: each takes well under a second
        procs: List[Tuple[subprocess.Popen, int, List[str], float, float]] = []
        with contextlib.ExitStack() as reap:  # a failed assertion still reaps the batch's processes
            _signal_batch(reap, script, cases[batch:batch + 10], procs, outcomes)
    assert outcomes.get(("SIGINT", 130), 0) > 0 and outcomes.get(("SIGTERM", 143), 0) > 0, outcomes


def _signal_batch(reap: contextlib.ExitStack, script: str, cases: List[Tuple[int, List[str], float]],
                  procs: List[Tuple[subprocess.Popen, int, List[str], float, float]],
                  outcomes: Dict[Tuple[str, int], int]) -> None:
    for sig, args, delay in cases:
        p = subprocess.Popen([script, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        reap.enter_context(p)  # Popen.__exit__ closes the pipe and waits
        reap.callback(lambda p=p: p.poll() is None and p.kill())
        procs.append((p, sig, args, delay, time.monotonic()))
    for p, sig, args, delay, started in procs:
        time.sleep(max(0.0, started + delay - time.monotonic()))
        p.send_signal(sig)
    for p, sig, args, delay, _ in procs:
        _, err = p.communicate(timeout=60)
        code = 130 if sig == signal.SIGINT else 143
        key = (signal.Signals(sig).name, p.returncode)
        outcomes[key] = outcomes.get(key, 0) + 1
        if "Traceback" in err or "Exception ignored" in err or "Fatal Python error" in err:
            assert _interpreter_preamble(err, script, early=delay <= 0.04) or _before_the_early_handlers(err, script), \
                (args, delay, err)
            continue
        assert p.returncode in (0, code, -sig), (args, delay, p.returncode, err)
        if p.returncode == code:
            assert err.strip() in ("ssdlab: interrupted", "ssdlab: terminated"), (args, delay, err)


def test_the_entry_puts_back_the_handlers_it_found(capsys: pytest.CaptureFixture[str]) -> None:
    from ssdlab import _entry

    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert _entry.main(["drives"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    assert "mlc-256" in capsys.readouterr().out


# -- 3. the Python API -------------------------------------------------------------------------------


@pytest.mark.parametrize("data,needle", [
    ({1: 2}, "setting name 1 is not a string"),
    ({"geometry": {1: 2}}, "setting name 1 in geometry"),
    ({"ftl": {"idle_gc": {("a",): 1}}}, "in ftl.idle_gc"),
])
def test_from_dict_names_a_key_that_is_not_a_string(data: Dict[Any, Any], needle: str) -> None:
    with pytest.raises(SsdlabError) as e:
        ssdlab.DriveConfig.from_dict(data)
    one_line(e.value, needle)


@pytest.mark.parametrize("call", [
    lambda cfg: ssdlab.consistency(cfg, duration_s=10**400),
    lambda cfg: ssdlab.consistency(cfg, spare_area_pct=-(10**400)),
    lambda cfg: ssdlab.hdtach(cfg, torture_minutes=10**400),
    lambda cfg: ssdlab.saturation(cfg, fill_pct=10**400),
])
def test_huge_whole_numbers_in_the_api_are_ssdlab_errors(call: Any) -> None:
    with pytest.raises(SsdlabError) as e:
        call(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"))
    one_line(e.value, "finite number")


@pytest.mark.parametrize("steps,needle", [
    ([{"step": "idle", "seconds": float("nan")}], "step 1 (idle): seconds must be a finite number"),
    ([{"step": "secure_erase"}, {"step": "trim", "offset_bytes": 2**64, "length_bytes": 0}],
     "step 2 (trim): offset_bytes = 18446744073709551616 is out of range"),
    ([{"step": "run", "workload": {"duration_s": float("inf")}}], "step 1 (run): workload.duration_s"),
    ([{"step": "run", "workload": {"offset_bytes": 2**64}}], "step 1 (run): workload.offset_bytes"),
    ([{"step": "secure_erase"}, {"step": "run", "workload": {"offset_bytes": -1}}],
     "step 2 (run): offset_bytes: invalid value: integer `-1`"),
    ([{"step": "secure_erase"}, {"step": "idle", "seconds": "x"}], "step 2 (idle): seconds: invalid type"),
    ([{"step": "run", "workload": {"block_sizes": [{"bytes": 4096, "pct": {1, 2}}]}}],
     "step 1 (run): workload.block_sizes[0].pct must be a number"),
    ([{"step": "idle", "seconds": 1}, 5], "step 2: expected a dict"),
])
def test_run_steps_names_the_step_and_the_field(steps: List[Any], needle: str) -> None:
    sim = Simulator(ssdlab.load_preset("mlc-256").with_user_capacity("1GiB"))
    with pytest.raises(SsdlabError) as e:
        sim.run_steps(steps)
    one_line(e.value, needle)


def test_saving_under_a_name_too_long_for_the_file_system(result_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = ConsistencyResult.load(result_dir)
    for name in ("x" * 300, "d/" + "é" * 200, "a/" * 2100):
        with pytest.raises(SsdlabError) as e:
            result.save(name)
        one_line(e.value, "too long for the file system", "ENAMETOOLONG")
    assert list(tmp_path.iterdir()) == []
    assert result.save("x" * 255).is_dir()  # the longest name the file system takes works
    status, err = run(["consistency", *SMALL, "--duration", "1", "-q", "--out", "y" * 300])
    refused(status, err, "too long for the file system")
    status, err = run(["report", str(result_dir), "-o", "z" * 300])
    refused(status, err, "too long for the file system")


# -- property: every numeric option of every simulated command ---------------------------------------


def _numeric_options() -> List[Tuple[str, str]]:
    """(command, option) for every option whose type is one of ssdlab.cli_values' types."""
    out = []
    for name, command in sorted(cli.cli.commands.items()):
        for p in command.params:
            if isinstance(p, click.Option) and isinstance(p.type, (cv.Checked, cv.Size)):
                out.append((name, p.opts[0]))
    return out


NUMERIC_OPTIONS = _numeric_options()

# must be refused by every numeric option: not ASCII, not finite, or longer than 40 characters
ALWAYS_REFUSED = ["nan", "inf", "-inf", "NaN", "Infinity", "1e400", "-1e400", "9" * 5000, "1" + "0" * 400,
                  "\u0661\u0662", "\u0663.\u0665", "\U0001d7d7", "\uff11", "1_000", "0x10", "", " ", "1e+", "--"]
NASTY = st.one_of(
    st.sampled_from(ALWAYS_REFUSED + ["1e-30", "1e300", "-1e300", "0", "-0", "1e-3", "4097", "1e9", "65537",
                                      "18446744073709551616", "-1", "99.99", "100", "0.5", "1.9e10"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(2**80), 2**80).filter(lambda n: abs(n) < 10**6 or abs(n) > 10**19).map(str),
    st.text(alphabet=st.characters(categories=["Nd", "No", "Zs", "Pd"]), max_size=4),
)


def base_args(command: str, tmp_path: Path) -> List[str]:
    """A quick, valid invocation of `command` (the option under test comes after and wins)."""
    out = ["--out", str(tmp_path / f"o{next(_outs)}")]
    if command == "replay":
        return [command, str(trace(tmp_path)), *SMALL, "-q", *out]
    if command == "fio":
        job = tmp_path / "job.fio"
        job.write_text("[w]\nrw=randwrite\nbs=4k\nnumber_ios=64\n")
        return [command, str(job), *SMALL, "--output", str(tmp_path / "fio.txt"), *out]
    if command == "serve":
        return [command, *SMALL, "--socket", str(tmp_path / "s.sock"), "-q", *out]
    if command == "predict":  # a drive file, and no result directory (--json is its only file)
        from ssdlab.fit.twin import to_toml

        twin = tmp_path / "twin.toml"
        if not twin.exists():
            twin.write_text(to_toml(ssdlab.load_preset("mlc-256")))
        return [command, str(twin), *SMALL, "--duration", "1", "-q"]
    extra = {"consistency": ["--duration", "1"], "used-vs-new": ["--duration", "1"],
             "torture": ["--torture-minutes", "0.01", "--idle-minutes", "0"], "wa": ["--torture-minutes", "0.01"],
             "calibrate": ["--quiet"]}.get(command, [])
    return [command, *SMALL, *extra, *([] if command == "calibrate" else ["-q"]), *out]


def check_value(command: str, option: str, value: str, tmp_path: Path) -> Any:
    status, err = run([*base_args(command, tmp_path), option, value])
    assert "Traceback" not in err, err
    if status not in (0, "accepted"):
        refused(status, err)
    if value in ALWAYS_REFUSED or re.search(r"[^\x00-\x7f]", value):
        line = refused(status, err)
        assert option in line or "NUL" in line, line
    return status


def test_every_numeric_option_refuses_what_is_not_an_ascii_finite_number(stop_at_start: None,
                                                                         tmp_path: Path) -> None:
    assert len(NUMERIC_OPTIONS) > 40 and ("replay", "--speed") in NUMERIC_OPTIONS
    for command, option in NUMERIC_OPTIONS:
        for value in ALWAYS_REFUSED:
            check_value(command, option, value, tmp_path)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(NUMERIC_OPTIONS), value=NASTY)
def test_numeric_options_exit_0_or_2_with_one_line(stop_at_start: None, tmp_path: Path, which: Tuple[str, str],
                                                   value: str) -> None:
    check_value(*which, value, tmp_path)
