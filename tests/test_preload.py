"""pandas and the chart modules load in a background thread while a simulation runs (ssdlab.preload)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


def test_charts_module_loads_in_the_background() -> None:
    out = _run(
        "import sys, ssdlab.cli\n"
        "from ssdlab import preload\n"
        "assert 'ssdlab.plots' not in sys.modules and 'matplotlib' not in sys.modules\n"
        "t = preload.start()\n"
        "assert t.daemon and t.name == 'ssdlab-preload'\n"
        "t.join(60)\n"
        "print('pandas' in sys.modules, 'ssdlab.plots' in sys.modules, 'matplotlib.figure' in sys.modules)\n"
    )
    assert out.stdout.split() == ["True", "True", "True"]


def test_importing_the_cli_imports_no_pandas() -> None:
    # pandas and pyarrow take ~0.3 s to import: the preload thread imports them during the run.
    out = _run("import sys, ssdlab.cli; print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'pyarrow'}))")
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "command, core_call, written",
    [
        (["consistency", "--duration", "2"], "run_consistency", "iops_log.png"),
        (["hdtach", "--torture-minutes", "0"], "run_procedure", "hdtach.png"),
    ],
)
def test_the_cli_reaches_the_core_without_pandas(command: list[str], core_call: str, written: str) -> None:
    # Nothing preloads here, so the only pandas import is the main thread's: it must come after the
    # core is called (when the frames are made), and the result is still saved.
    out = _run(
        "import os, sys, tempfile\n"
        "from ssdlab import _core, cli, preload\n"
        "preload._MODULES = ()\n"
        "seen = []\n"
        "Real = _core.Simulator\n"
        "class Spy:\n"
        "    def __init__(self, *args):\n"
        "        self._real = Real(*args)\n"
        "    def __getattr__(self, name):\n"
        f"        if name == {core_call!r}:\n"
        "            seen.append('pandas' in sys.modules or 'pyarrow' in sys.modules)\n"
        "        return getattr(self._real, name)\n"
        "_core.Simulator = Spy\n"
        "d = os.path.join(tempfile.mkdtemp(), 'r')\n"
        f"status = cli.main({command!r} + ['--capacity', '8GiB', '--out', d, '-q'])\n"
        f"print(status, seen, os.path.exists(os.path.join(d, {written!r})))\n"
    )
    assert out.stdout.split() == ["0", "[False]", "True"]


def test_a_failing_import_is_left_to_the_charts() -> None:
    # The thread stops at the first import that fails and says nothing (no 'Exception in thread' on
    # stderr): the import where the charts are drawn raises it as before.
    out = _run(
        "from ssdlab import preload\n"
        "preload._MODULES = ('ssdlab_no_such_module', 'ssdlab.plots')\n"
        "preload.start().join(60)\n"
        "import sys; print('ssdlab.plots' in sys.modules)\n"
    )
    assert out.stderr == ""
    assert out.stdout.split() == ["False"]


def test_the_cli_preloads_while_it_simulates() -> None:
    # `ssdlab consistency` starts the thread before the run; by the time it saves, plots is loaded.
    out = _run(
        "import sys, threading\n"
        "from ssdlab import cli, preload\n"
        "started = []\n"
        "real = preload.start\n"
        "def spy():\n"
        "    started.append('ssdlab.simulate' in sys.modules)\n"
        "    return real()\n"
        "preload.start = spy\n"
        "import tempfile, os\n"
        "d = os.path.join(tempfile.mkdtemp(), 'r')\n"
        "sys.argv = ['ssdlab', 'consistency', '--capacity', '8GiB', '--duration', '2', '--out', d, '-q']\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print(len(started), os.path.exists(os.path.join(d, 'iops_log.png')))\n"
    )
    assert out.stdout.split() == ["1", "True"]


@pytest.mark.parametrize("command", [
    ["saturation", "--capacity", "1GiB", "--fill-pct", "100"],  # the core returns in ~0.2 s
    ["hdtach", "--capacity", "1GiB", "--torture-minutes", "0"],
])
def test_a_run_shorter_than_the_preload_waits_for_it(tmp_path, command: list[str]) -> None:
    # The core returned while the thread was still importing matplotlib, and the main thread's own
    # chart import met a half-initialised module: a traceback ("partially initialized module
    # 'matplotlib.ticker'") on every short saturation run. The main thread now waits for the thread.
    out = subprocess.run([sys.executable, "-m", "ssdlab", *command, "--out", str(tmp_path / "r"), "-q"],
                         capture_output=True, text=True)
    assert (out.returncode, out.stderr) == (0, "")
    assert any(p.suffix == ".png" for p in (tmp_path / "r").iterdir())


def test_wait_joins_the_thread_start_began() -> None:
    out = _run(
        "import sys\n"
        "from ssdlab import preload\n"
        "t = preload.start()\n"
        "preload.wait()\n"
        "print(t.is_alive(), 'matplotlib.figure' in sys.modules, preload._started)\n"
        "preload.wait()  # nothing under way: returns at once\n"
    )
    assert out.stdout.split() == ["False", "True", "[]"]
