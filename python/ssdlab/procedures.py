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
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from ssdlab.config import DriveConfig
from ssdlab.errors import SsdlabError
from ssdlab.results import HdtachResult
from ssdlab.simulate import Progress, Simulator, StepResult, _check_seed, _number, _resolve_config, _whole
from ssdlab.sizes import format_size, parse_size

__all__ = [
    "HDTACH_BLOCK_BYTES",
    "HDTACH_QD",
    "HDTACH_SAMPLE_PCT",
    "POSITION_BUCKETS",
    "PROCEDURES",
    "hdtach",
    "procedure_steps",
    "torture",
]

PROCEDURES = ("hdtach", "torture", "used-vs-new", "wa", "saturation")
"""The procedures' names, as the core and the command line spell them."""

HDTACH_BLOCK_BYTES = 128 * 1024
"""Request size of an HD Tach pass (the core's `HdTach::default().block_bytes`)."""
HDTACH_QD = 1
"""Queue depth of an HD Tach pass."""
POSITION_BUCKETS = 200
"""Positions recorded per pass: one per 0.5 % of the span (the core's `hdtach::BUCKETS`)."""
HDTACH_SAMPLE_PCT = 50.0
"""Percent of each position an HD Tach pass writes (the core's `hdtach::SAMPLE_PCT`)."""

_UNIT = 4096

Config = Union[DriveConfig, str, None]

# The argument checks scenario modules share (ssdlab.scenarios.*), under their public names.
check_seed, number, resolve_config, whole = _check_seed, _number, _resolve_config, _whole


# -- argument checks -------------------------------------------------------------------------------


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise SsdlabError(f"{what} must be True or False, got {value!r}")
    return value


def _actions(then: Any) -> List[str]:
    """`then` as a list of actions; a string is split at commas (``"pass,idle:120,pass"``)."""
    if isinstance(then, str):
        return [a.strip() for a in then.split(",")] if then.strip() else []
    if not isinstance(then, Sequence) or not all(isinstance(a, str) for a in then):
        raise SsdlabError(f"then must be a list of actions such as ['pass', 'idle:120'], got {then!r}")
    return [a.strip() for a in then]


def _pass_params(block_size: Any, qd: Any, sample_pct: Any) -> Dict[str, Any]:
    pct = _number(sample_pct, "sample percentage")
    if not 0 < pct <= 100:
        raise SsdlabError(f"an HD Tach pass writes a percentage of each position in (0, 100], got {sample_pct!r}")
    return {
        "block_bytes": parse_size(block_size, what="pass block size"),
        "queue_depth": _whole(qd, "pass queue depth"),
        "sample_pct": pct,
    }


def _check_pass_span(cfg: DriveConfig, block_bytes: int) -> None:
    """Refuses a drive too small for an HD Tach pass: every 0.5 % bucket needs a request."""
    span = cfg.describe()["user_capacity_bytes"] // _UNIT * _UNIT
    if block_bytes and span // block_bytes < POSITION_BUCKETS:
        need = POSITION_BUCKETS * block_bytes
        raise SsdlabError(
            f"the drive's {format_size(span)} user span is too small for an HD Tach pass: its {POSITION_BUCKETS} "
            f"position buckets need at least {format_size(need)} ({POSITION_BUCKETS} requests of "
            f"{format_size(block_bytes)}); use a larger capacity"
        )


def _hdtach_params(
    torture_minutes: Any, compressibility: Any, block_size: Any, qd: Any, sample_pct: Any
) -> Dict[str, Any]:
    return {
        "torture_minutes": _number(torture_minutes, "torture minutes"),
        "compressibility": _number(compressibility, "compressibility"),
        **_pass_params(block_size, qd, sample_pct),
    }


def _torture_params(
    torture_minutes: Any,
    idle_minutes: Any,
    pass_after_torture: Any,
    then: Any,
    trim: Any,
    compressibility: Any,
    block_size: Any,
    qd: Any,
    sample_pct: Any,
) -> Dict[str, Any]:
    return {
        "torture_minutes": _number(torture_minutes, "torture minutes"),
        "idle_minutes": _number(idle_minutes, "idle minutes"),
        "pass_after_torture": _flag(pass_after_torture, "pass_after_torture"),
        "then": _actions(then),
        "trim": _flag(trim, "trim"),
        "compressibility": _number(compressibility, "compressibility"),
        **_pass_params(block_size, qd, sample_pct),
    }


# -- the core's step lists, for progress bars ------------------------------------------------------


def _minutes(m: float) -> str:
    """The core's `minutes_label`: "20 min", "1.5 min"."""
    return f"{m:.0f} min" if float(m).is_integer() else f"{float(m)!r} min"


def _idle_action(action: str) -> Optional[float]:
    """The minutes of an ``idle:MINUTES`` action, or None for anything else."""
    if not action.startswith("idle:"):
        return None
    try:
        return float(action[len("idle:") :])
    except ValueError:
        return None


def run_step(label: str, duration_s: Optional[float] = None) -> Dict[str, Any]:
    """A ``run`` step of the core's step list, as progress bars read it (label, duration)."""
    workload: Dict[str, Any] = {"label": label}
    if duration_s is not None:
        workload["duration_s"] = duration_s
    return {"step": "run", "workload": workload}


def fill_and_torture(minutes: float) -> List[Dict[str, Any]]:
    return [{"step": "secure_erase"}, run_step("fill"), run_step(f"torture {_minutes(minutes)}", minutes * 60.0)]


def _plan(name: str, p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs for procedure `name` with parameters `p` (labels as the core gives
    them; only the fields progress bars read). Mirrors scenario/{hdtach,torture,used_vs_new,wa}.rs;
    tests/test_procedures.py checks it against the core's runs."""
    if name == "hdtach":
        steps = [{"step": "secure_erase"}, run_step("hdtach:clean")]
        if p["torture_minutes"] != 0:
            steps += fill_and_torture(p["torture_minutes"])
            steps.append(run_step(f"hdtach:after {_minutes(p['torture_minutes'])} torture"))
        return steps
    if name == "torture":
        steps = [{"step": "secure_erase"}, run_step("hdtach:clean"), *fill_and_torture(p["torture_minutes"])]
        history = f"{_minutes(p['torture_minutes'])} torture"
        if p["pass_after_torture"]:
            steps.append(run_step(f"hdtach:after {history}"))
            history += ", pass"
        if p["idle_minutes"] > 0:
            steps.append({"step": "idle", "seconds": p["idle_minutes"] * 60.0})
            history += f", {_minutes(p['idle_minutes'])} idle"
            steps.append(run_step(f"hdtach:after {history}"))
            history += ", pass"
        for action in p["then"]:
            if action == "pass":
                steps.append(run_step(f"hdtach:after {history}"))
                history += ", pass"
            else:
                minutes = _idle_action(action)
                if minutes is None:
                    continue  # not an action: the core refuses it before running anything
                steps.append({"step": "idle", "seconds": minutes * 60.0})
                history += f", {_minutes(minutes)} idle"
        if p["trim"]:
            steps += [{"step": "trim"}, run_step("hdtach:after TRIM")]
        return steps
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
    module = _module_procedure(name) if name not in _PROCEDURES else None
    if name not in _PROCEDURES and module is None:
        raise SsdlabError(f"unknown procedure {name!r}; choose one of {', '.join(PROCEDURES)}")
    function, build = _PROCEDURES[name] if module is None else module[:2]
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


def hdtach(
    config: Config = None,
    *,
    torture_minutes: float = 0.0,
    compressibility: float = 1.0,
    block_size: Union[int, str] = HDTACH_BLOCK_BYTES,
    qd: int = HDTACH_QD,
    sample_pct: float = HDTACH_SAMPLE_PCT,
    seed: int = 1,
    progress: Progress = False,
    label: Optional[str] = None,
) -> HdtachResult:
    """HD Tach's write test: secure erase, then one sequential pass over the user span in
    `block_size` requests at queue depth `qd`, recording MB/s at every 0.5 % of the span. Like HD
    Tach, which tests areas spread over the drive, a pass writes the first `sample_pct` percent of
    each 0.5 % position (100: every LBA).

    With `torture_minutes` > 0: then a secure erase, a sequential fill and `torture_minutes` of
    4 KiB QD32 random writes, and a second pass (``after N min torture``). `compressibility` is the
    compressed size of the data written as a fraction of its size (1: incompressible; only a
    compressing drive cares). `progress` and `label` as for `ssdlab.consistency`; the default
    label is ``"<drive> · HD Tach"``.
    """
    cfg = _resolve_config(config)
    params = _hdtach_params(torture_minutes, compressibility, block_size, qd, sample_pct)
    seed = _check_seed(seed)
    _check_pass_span(cfg, params["block_bytes"])
    steps, core, wall = execute("hdtach", cfg, params, seed, progress)
    if label is None:
        label = f"{cfg.name} · HD Tach"
        if params["torture_minutes"]:
            label += f", clean and after {_minutes(params['torture_minutes'])} torture"
        label = compressed(label, params["compressibility"])
    return HdtachResult.from_run(
        scenario="hdtach", label=label, config=cfg, steps=steps, core_summary=core, params=params, seed=seed,
        wall_seconds=wall,
    )


def torture(
    config: Config = None,
    *,
    torture_minutes: float = 20.0,
    idle_minutes: float = 30.0,
    pass_after_torture: bool = True,
    then: Union[Sequence[str], str] = (),
    trim: bool = True,
    compressibility: float = 1.0,
    block_size: Union[int, str] = HDTACH_BLOCK_BYTES,
    qd: int = HDTACH_QD,
    sample_pct: float = HDTACH_SAMPLE_PCT,
    seed: int = 1,
    progress: Progress = False,
    label: Optional[str] = None,
) -> HdtachResult:
    """Performance over time & TRIM (the Plextor M5S and Corsair Performance Pro reviews).

    1. secure erase and a clean HD Tach pass (the baseline);
    2. secure erase, a sequential fill, and `torture_minutes` of 4 KiB QD32 random writes;
    3. a pass (unless `pass_after_torture` is False: a pass rewrites part of every position, which
       hides what idle time alone does);
    4. `idle_minutes` of idle time and a pass (skipped when 0);
    5. the `then` actions in order: ``"pass"`` or ``"idle:MINUTES"`` (a list, or one string such as
       ``"pass,idle:120,pass"``);
    6. with `trim`, a TRIM of the whole span (a format) and a last pass.

    Passes are named by what came before them (``after 20 min torture, pass, 30 min idle``).
    Other arguments as for `hdtach`.
    """
    cfg = _resolve_config(config)
    params = _torture_params(
        torture_minutes, idle_minutes, pass_after_torture, then, trim, compressibility, block_size, qd, sample_pct
    )
    seed = _check_seed(seed)
    _check_pass_span(cfg, params["block_bytes"])
    steps, core, wall = execute("torture", cfg, params, seed, progress)
    if label is None:
        label = compressed(
            f"{cfg.name} · performance over time & TRIM, {_minutes(params['torture_minutes'])} torture",
            params["compressibility"],
        )
    return HdtachResult.from_run(
        scenario="torture", label=label, config=cfg, steps=steps, core_summary=core, params=params, seed=seed,
        wall_seconds=wall,
    )


_PROCEDURES: Dict[str, Tuple[Any, Any]] = {
    "hdtach": (hdtach, _hdtach_params),
    "torture": (torture, _torture_params),
}


def __getattr__(name: str) -> Any:
    """`worst_case_wa` and `used_vs_new` moved to their scenario modules; the old names still resolve."""
    if name == "worst_case_wa":
        from ssdlab.scenarios.wa import worst_case_wa

        return worst_case_wa
    if name in ("used_vs_new", "OS_REWRITE_PCT"):
        from ssdlab.scenarios import used_vs_new

        return getattr(used_vs_new, name)
    if name == "saturation":
        from ssdlab.scenarios.saturation import saturation

        return saturation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
