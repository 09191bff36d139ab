"""What the scenarios that run one of the core's procedures share (``crates/ssdlab/src/scenario/``:
hdtach, torture, used-vs-new, wa, saturation): the argument checks, the step lists progress bars
read, and running a procedure with the GIL released (`execute`). Each procedure's API function,
parameters and plan live in its scenario module (``ssdlab.scenarios``); `procedure_steps` finds
them through the registry.

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

from ssdlab import moved
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


def _procedure(name: str) -> Tuple[Any, Any, Any]:
    """(API function, parameters, plan) of procedure `name`, from its scenario module."""
    from ssdlab import scenarios

    entry = scenarios.get(name)
    if entry is None or entry.procedure is None:
        raise SsdlabError(f"unknown procedure {name!r}; choose one of {', '.join(PROCEDURES)}")
    return entry.procedure


def _params(name: str, options: Dict[str, Any]) -> Dict[str, Any]:
    """The core's parameters for procedure `name` called with keyword arguments `options`; the
    defaults are those of the procedure's function."""
    function, build, _ = _procedure(name)
    signature = inspect.signature(function).parameters
    known = [k for k in signature if k not in ("config", "seed", "progress", "label")]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise SsdlabError(f"{name} has no option {unknown[0]!r}; its options are {', '.join(known)}")
    params: Dict[str, Any] = build(**{**{k: signature[k].default for k in known}, **options})
    return params


def procedure_steps(name: str, config: Config = None, **options: Any) -> List[Dict[str, Any]]:
    """The steps procedure `name` (one of `PROCEDURES`) runs with `options` (the keyword arguments
    of its function), in the core's step format with the core's labels, for inspection and
    progress bars. Only ``step``, the workload ``label`` and ``duration_s``, and idle ``seconds``
    are filled in; invalid options that only the core checks are not refused here."""
    cfg = _resolve_config(config)
    return _procedure(name)[2](_params(name, options), cfg.describe()["user_capacity_bytes"])


# -- running ---------------------------------------------------------------------------------------


def execute(
    name: str, cfg: DriveConfig, params: Dict[str, Any], seed: int, progress: Progress
) -> Tuple[List[StepResult], Dict[str, Any], float]:
    sim = Simulator(cfg, seed)
    started = time.perf_counter()
    steps, summary = sim._run_procedure(name, params, _procedure(name)[2](params, sim.user_bytes), progress)
    return steps, summary, time.perf_counter() - started


def compressed(label: str, compressibility: float) -> str:
    return label if compressibility >= 1 else f"{label}, data compressible to {100 * compressibility:g}%"


_MOVED = {
    "worst_case_wa": "ssdlab.scenarios.wa:worst_case_wa",
    "hdtach": "ssdlab.scenarios.hdtach:hdtach",
    "HDTACH_BLOCK_BYTES": "ssdlab.scenarios.hdtach:HDTACH_BLOCK_BYTES",
    "HDTACH_QD": "ssdlab.scenarios.hdtach:HDTACH_QD",
    "HDTACH_SAMPLE_PCT": "ssdlab.scenarios.hdtach:HDTACH_SAMPLE_PCT",
    "POSITION_BUCKETS": "ssdlab.scenarios.hdtach:POSITION_BUCKETS",
    "torture": "ssdlab.scenarios.torture:torture",
    "used_vs_new": "ssdlab.scenarios.used_vs_new:used_vs_new",
    "OS_REWRITE_PCT": "ssdlab.scenarios.used_vs_new:OS_REWRITE_PCT",
    "saturation": "ssdlab.scenarios.saturation:saturation",
}
"""The procedures' API functions and constants, now in their scenario modules."""


def __getattr__(name: str) -> Any:
    """The names in `_MOVED` resolve to their scenario modules."""
    return moved.resolve(__name__, name, _MOVED)
