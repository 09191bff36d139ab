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

from typing import Any

from ssdlab._core import __version__
from ssdlab.config import DriveConfig, load_preset, preset_names
from ssdlab.errors import SsdlabError
from ssdlab.procedures import hdtach, saturation, torture, used_vs_new, worst_case_wa
from ssdlab.results import ConsistencyResult, HdtachResult, SaturationResult, UsedVsNewResult, WorstCaseWaResult
from ssdlab.simulate import Simulator, StepResult, consistency

# `sweep` and `replay` are packages you can call (`ssdlab.sweep(spec, out)`,
# `ssdlab.replay(trace, drive)`); they are imported on first use, so that `import ssdlab` and the
# CLI's other commands do not pay for them.
_LAZY = {"sweep": "ssdlab.sweep", "replay": "ssdlab.replay"}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _LAZY:
        return importlib.import_module(_LAZY[name])
    if name == "ReplayResult":
        return importlib.import_module("ssdlab.replay").ReplayResult
    raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")

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
