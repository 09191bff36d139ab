"""The reviewers' other procedures on a simulated drive: HD Tach passes, performance over time &
TRIM (torture), used vs new, and estimated worst-case write amplification.

Each function checks its arguments, runs the core's procedure (``crates/ssdlab/src/scenario/``)
with the GIL released, and returns a result that saves a result directory (docs/results.md).

    >>> import ssdlab
    >>> drive = ssdlab.load_preset("idle-gc").with_user_capacity("8GiB")
    >>> result = ssdlab.torture(drive, torture_minutes=5, idle_minutes=10, pass_after_torture=False)
    >>> [p["name"] for p in result.summary["passes"]]
    ['clean', 'after 5 min torture, 10 min idle', 'after TRIM']
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Dict, List, Optional, Tuple, Union

from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.simulate import Progress, Simulator, StepResult, _check_seed, _number, _resolve_config, _whole

__all__ = [
    "PROCEDURES",
    "procedure_steps",
]

PROCEDURES = ("hdtach", "torture", "used-vs-new", "wa", "saturation")
"""The procedures' names, as the core and the command line spell them."""

Config = Union[DriveConfig, str, None]

# The argument checks scenario modules share (ssdlab.scenarios.*), under their public names.
check_seed, number, resolve_config, whole = _check_seed, _number, _resolve_config, _whole


# -- the core's step lists, for progress bars ------------------------------------------------------


def minutes_label(m: float) -> str:
    """The core's `minutes_label`: "20 min", "1.5 min"."""
    return f"{m:.0f} min" if float(m).is_integer() else f"{float(m)!r} min"


def run_step(label: str, duration_s: Optional[float] = None) -> Dict[str, Any]:
    """A ``run`` step of the core's step list, as progress bars read it (label, duration)."""
    workload: Dict[str, Any] = {"label": label}
    if duration_s is not None:
        workload["duration_s"] = duration_s
    return {"step": "run", "workload": workload}


def fill_and_torture(minutes: float) -> List[Dict[str, Any]]:
    return [{"step": "secure_erase"}, run_step("fill"), run_step(f"torture {minutes_label(minutes)}", minutes * 60.0)]


def _plan(name: str, p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs for procedure `name` with parameters `p` (labels as the core gives
    them; only the fields progress bars read). Mirrors scenario/{hdtach,torture,used_vs_new,wa}.rs;
    tests/test_procedures.py checks it against the core's runs."""
    module = _module_procedure(name)
    if module is not None:
        return module[2](p, user_bytes)
    raise SsdlabError(f"unknown procedure {name!r}; choose one of {', '.join(PROCEDURES)}")


def _module_procedure(name: str) -> Optional[Tuple[Any, Any, Any]]:
    """(API function, parameters, plan) of a procedure that lives in its scenario module."""
    from ssdlab import scenarios

    entry = scenarios.get(name)
    return entry.procedure if entry is not None else None


def _params(name: str, options: Dict[str, Any]) -> Dict[str, Any]:
    """The core's parameters for procedure `name` called with keyword arguments `options`; the
    defaults are those of the procedure's function."""
    module = _module_procedure(name)
    if module is None:
        raise SsdlabError(f"unknown procedure {name!r}; choose one of {', '.join(PROCEDURES)}")
    function, build = module[:2]
    known = [k for k in inspect.signature(function).parameters if k not in ("config", "seed", "progress", "label")]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise SsdlabError(f"{name} has no option {unknown[0]!r}; its options are {', '.join(known)}")
    defaults = {k: inspect.signature(function).parameters[k].default for k in known}
    params: Dict[str, Any] = build(**{**defaults, **options})
    return params


def procedure_steps(name: str, config: Config = None, **options: Any) -> List[Dict[str, Any]]:
    """The steps procedure `name` (one of `PROCEDURES`) runs with `options` (the keyword arguments
    of its function), in the core's step format with the core's labels, for inspection and
    progress bars. Only ``step``, the workload ``label`` and ``duration_s``, and idle ``seconds``
    are filled in; invalid options that only the core checks are not refused here."""
    cfg = _resolve_config(config)
    return _plan(name, _params(name, options), cfg.describe()["user_capacity_bytes"])


# -- running ---------------------------------------------------------------------------------------


def execute(
    name: str, cfg: DriveConfig, params: Dict[str, Any], seed: int, progress: Progress
) -> Tuple[List[StepResult], Dict[str, Any], float]:
    sim = Simulator(cfg, seed)
    started = time.perf_counter()
    steps, summary = sim._run_procedure(name, params, _plan(name, params, sim.user_bytes), progress)
    return steps, summary, time.perf_counter() - started


def compressed(label: str, compressibility: float) -> str:
    return label if compressibility >= 1 else f"{label}, data compressible to {100 * compressibility:g}%"


def __getattr__(name: str) -> Any:
    """`worst_case_wa`, `used_vs_new`, `hdtach` and `torture` moved to their scenario modules; the old names
    still resolve."""
    if name == "worst_case_wa":
        from ssdlab.scenarios.wa import worst_case_wa

        return worst_case_wa
    if name in ("hdtach", "HDTACH_BLOCK_BYTES", "HDTACH_QD", "HDTACH_SAMPLE_PCT", "POSITION_BUCKETS"):
        from ssdlab.scenarios import hdtach

        return getattr(hdtach, name)
    if name == "torture":
        from ssdlab.scenarios.torture import torture

        return torture
    if name in ("used_vs_new", "OS_REWRITE_PCT"):
        from ssdlab.scenarios import used_vs_new

        return getattr(used_vs_new, name)
    if name == "saturation":
        from ssdlab.scenarios.saturation import saturation

        return saturation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
