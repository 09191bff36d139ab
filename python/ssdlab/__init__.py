"""ssdlab: a deterministic SSD simulator.

A Rust core (``ssdlab._core``) simulates NAND timing, a page-mapped FTL and its garbage
collection; this package gives it typed configs, the reviewers' test procedures, result
directories and charts.

    >>> import ssdlab
    >>> drive = ssdlab.load_preset("mlc-256").with_user_capacity(2 * 2**30)
    >>> result = ssdlab.consistency(drive, spare_area_pct=25, duration_s=60)
    >>> path = result.save("runs/example")          # iops.csv, series.csv, summary.json, charts
    >>> ssdlab.torture("idle-gc", torture_minutes=20).save("runs/torture")   # hdtach.csv, hdtach.png, ...
    >>> ssdlab.sweep("study.toml", "runs/study")    # many points on Dask into runs/study/results.parquet
"""

# Run as the console script (its __main__ is the file bin/ssdlab, which imports this package
# first), Ctrl-C and SIGTERM are only noted from here on, until ssdlab._entry.main reports them in
# one line: a signal while the rest of the start-up runs is never a traceback. A program that
# imports ssdlab is not affected (no handler changes). These are the first statements on purpose,
# and none of them before the handlers go in is a point where the interpreter raises a pending
# signal (it looks only on entering this module, on a call and on a loop's jump back: these use
# imports of loaded modules, subscripts and comparisons). A Ctrl-C can still become a traceback
# on entering the module and in the first `signal` call, which checks before it changes the
# handler: a few microseconds, and tests/test_hardening_values.py accepts a traceback there only.
import _signal  # type: ignore[import-not-found,unused-ignore]  # the C module: `signal` would import enum
import sys as _sys

_early_signals: list = []  # noted before ssdlab._entry.main took over
_early_handlers: dict = {}  # the handlers the noting one replaced


def _note_early(signum: int, frame: object) -> None:
    _early_signals.append(signum)


try:
    _main = _sys.modules["__main__"].__file__
    _script = _main in ("ssdlab", "ssdlab-script.py") or _main[-7:] in ("/ssdlab", "\\ssdlab") \
        or _main[-17:] in ("/ssdlab-script.py", "\\ssdlab-script.py")
except (KeyError, AttributeError, TypeError):  # no __main__, or one without a file
    _script = False
if _script:
    try:  # no loop: a jump back is a point where the interpreter raises a pending signal
        _early_handlers[_signal.SIGINT] = _signal.signal(_signal.SIGINT, _note_early)  # EARLY-SIGNALS
        _early_handlers[_signal.SIGTERM] = _signal.signal(_signal.SIGTERM, _note_early)  # EARLY-SIGNALS
    except ValueError:  # not the main thread
        pass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads either)

# Every name is imported on first use (PEP 562), so `import ssdlab` (and the console script's
# entry, ssdlab._entry) costs nothing until a name is used: the CLI then handles Ctrl-C from its
# first moments, while its own imports run (see ssdlab._entry).
_NAMES = {
    "__version__": "ssdlab._core",
    "DriveConfig": "ssdlab.config",
    "load_preset": "ssdlab.config",
    "preset_names": "ssdlab.config",
    "SsdlabError": "ssdlab.errors",
    "hdtach": "ssdlab.scenarios.hdtach",
    "saturation": "ssdlab.scenarios.saturation",
    "torture": "ssdlab.scenarios.torture",
    "used_vs_new": "ssdlab.scenarios.used_vs_new",
    "worst_case_wa": "ssdlab.scenarios.wa",
    "ConsistencyResult": "ssdlab.scenarios.consistency",
    "HdtachResult": "ssdlab.scenarios.hdtach",
    "SaturationResult": "ssdlab.scenarios.saturation",
    "UsedVsNewResult": "ssdlab.scenarios.used_vs_new",
    "WorstCaseWaResult": "ssdlab.scenarios.wa",
    "Simulator": "ssdlab.simulate",
    "StepResult": "ssdlab.simulate",
    "consistency": "ssdlab.scenarios.consistency",
    "ReplayResult": "ssdlab.replay",
}
# `sweep` and `replay` are packages you can call (`ssdlab.sweep(spec, out)`,
# `ssdlab.replay(trace, drive)`).
_LAZY = {"sweep": "ssdlab.sweep", "replay": "ssdlab.replay"}

if TYPE_CHECKING:
    from typing import Any

    from ssdlab._core import __version__
    from ssdlab.config import DriveConfig, load_preset, preset_names
    from ssdlab.errors import SsdlabError
    from ssdlab.replay import ReplayResult
    from ssdlab.scenarios.consistency import ConsistencyResult, consistency
    from ssdlab.scenarios.hdtach import HdtachResult, hdtach
    from ssdlab.scenarios.saturation import SaturationResult, saturation
    from ssdlab.scenarios.torture import torture
    from ssdlab.scenarios.used_vs_new import UsedVsNewResult, used_vs_new
    from ssdlab.scenarios.wa import WorstCaseWaResult, worst_case_wa
    from ssdlab.simulate import Simulator, StepResult


def __getattr__(name: str) -> "Any":
    import importlib

    if name in _LAZY:
        return importlib.import_module(_LAZY[name])
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_NAMES) | set(_LAZY))


__all__ = [
    "ConsistencyResult",
    "DriveConfig",
    "HdtachResult",
    "ReplayResult",
    "SaturationResult",
    "Simulator",
    "SsdlabError",
    "StepResult",
    "UsedVsNewResult",
    "WorstCaseWaResult",
    "__version__",
    "consistency",
    "hdtach",
    "load_preset",
    "preset_names",
    "replay",
    "saturation",
    "sweep",
    "torture",
    "used_vs_new",
    "worst_case_wa",
]
