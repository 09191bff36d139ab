"""Running simulations: the `Simulator` (a drive and its state across steps) and the argument
checks the scenarios share. The reviewers' performance-consistency test (`consistency`) lives in
its scenario module, `ssdlab.scenarios.consistency`.

The heavy loops run in Rust with the GIL released; Python only converts what comes back.

    >>> import ssdlab
    >>> sim = ssdlab.Simulator(ssdlab.load_preset("mlc-256").with_user_capacity(2 * 2**30))
    >>> [r.kind for r in sim.run_steps([{"step": "secure_erase"}])]
    ['secure_erase']
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ssdlab import _core, moved, preload
from ssdlab.config import DriveConfig, load_preset, preset_names
from ssdlab.errors import SsdlabError
from ssdlab.progress import ProgressCallback, StepBars

if TYPE_CHECKING:  # pandas is imported where a frame is made (see ssdlab.results)
    import pandas as pd

__all__ = [
    "Simulator",
    "StepResult",
]

NS_PER_S = 1e9
Progress = Union[bool, None, ProgressCallback]


@dataclass(frozen=True)
class StepResult:
    """What one step did.

    `phase` holds the scalars of a workload step (``ios``, ``bytes`` and ``latency`` by direction
    read/write/trim, and ``counters``: the counter growth over the phase); `counters` are the
    drive's cumulative counters after the step. `series` has one row per interval (1 s unless the
    workload sets ``interval_ms``) with ``time_s`` from the step's start and the core's raw
    per-interval counts; it is None for steps that run no workload.
    """

    index: int
    kind: str
    label: str
    start_s: float
    end_s: float
    phase: Optional[Dict[str, Any]]
    counters: Dict[str, int]
    free_blocks: int
    interval_s: Optional[float] = None
    series: Optional[pd.DataFrame] = field(default=None, repr=False, compare=False)
    members: List["StepResult"] = field(default_factory=list, repr=False, compare=False)
    """For a ``run_together`` step: one result per job, in the order given (`phase` and `series`
    are then all the jobs as one: IOs, bytes and series summed, latency distributions merged)."""
    groups: List["StepResult"] = field(default_factory=list, repr=False, compare=False)
    """For a ``run_together`` step with ``report_as``: each reporting group's jobs as one."""

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def _series_frame(raw: Dict[str, Any]) -> tuple[float, pd.DataFrame]:
    import pandas as pd

    interval_s = raw["interval_ns"] / NS_PER_S
    columns = {k: np.asarray(v) for k, v in raw.items() if k != "interval_ns"}
    n = len(next(iter(columns.values()))) if columns else 0
    frame = pd.DataFrame({"time_s": np.arange(n, dtype=np.float64) * interval_s, **columns})
    return interval_s, frame


def _step_result(json_text: str, raw_series: Optional[Dict[str, Any]]) -> StepResult:
    s = json.loads(json_text)
    job_series = raw_series.pop("jobs", None) if raw_series is not None else None
    group_series = raw_series.pop("groups", None) if raw_series is not None else None
    interval_s, frame = _series_frame(raw_series) if raw_series is not None else (None, None)

    def parts(phases: List[Dict[str, Any]], series: Optional[List[Dict[str, Any]]]) -> List[StepResult]:
        out = []
        for phase, raw in zip(phases, series or []):
            _, part_frame = _series_frame(raw)
            out.append(StepResult(
                index=s["index"], kind="run", label=phase["label"], start_s=phase["start_ns"] / NS_PER_S,
                end_s=phase["end_ns"] / NS_PER_S, phase=phase, counters=s["counters_after"],
                free_blocks=s["free_blocks_after"], interval_s=interval_s, series=part_frame))
        return out

    members = parts(s.get("phases", []), job_series)
    groups = parts(s.get("groups", []), group_series)
    return StepResult(
        index=s["index"],
        kind=s["kind"],
        label=s["label"],
        start_s=s["start_ns"] / NS_PER_S,
        end_s=s["end_ns"] / NS_PER_S,
        phase=s["phase"],
        counters=s["counters_after"],
        free_blocks=s["free_blocks_after"],
        interval_s=interval_s,
        series=frame,
        members=members,
        groups=groups,
    )


_MAX_STEP_DEPTH = 32
"""How deeply a step's values may nest (a workload's distribution zones are the deepest: 4)."""


def _step_name(i: int, step: Any) -> str:
    kind = step.get("step") if isinstance(step, dict) else None
    return f"step {i + 1}" + (f" ({kind})" if isinstance(kind, str) else "")


def _check_steps(steps: Sequence[Any]) -> None:
    """Refuses, naming the step (number from 1, and kind) and the field, what JSON cannot carry
    to the core or the core's whole numbers cannot hold: NaN and infinities, whole numbers outside
    0 ... 2**64-1 (and below -2**63), values that are not numbers, strings, lists or dicts, and
    nesting deeper than any step has."""
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise SsdlabError(f"step {i + 1}: expected a dict such as {{'step': 'secure_erase'}}, got "
                              f"{type(step).__name__}")
        name = _step_name(i, step)
        stack: List[tuple[str, Any, int]] = [("", step, 0)]
        while stack:
            path, node, depth = stack.pop()
            if depth > _MAX_STEP_DEPTH:
                raise SsdlabError(f"{name}: {path} is nested more than {_MAX_STEP_DEPTH} levels deep (or refers to "
                                  "itself)")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                if isinstance(node, dict) and not isinstance(key, str):
                    raise SsdlabError(f"{name}: field name {key!r}{' in ' + path if path else ''} is not a string")
                field_path = f"{path}.{key}" if path and isinstance(node, dict) else f"{path}[{key}]" if path else str(key)
                if isinstance(value, bool) or value is None or isinstance(value, str):
                    continue
                if isinstance(value, int):
                    if not -(2**63) <= value < 2**64:
                        raise SsdlabError(f"{name}: {field_path} = {value} is out of range; whole numbers go up to "
                                          f"2**64-1 ({2**64 - 1})")
                elif isinstance(value, float):
                    if not math.isfinite(value):
                        raise SsdlabError(f"{name}: {field_path} must be a finite number, got {value!r}")
                elif isinstance(value, (dict, list, tuple)):
                    stack.append((field_path, value, depth + 1))
                else:
                    raise SsdlabError(f"{name}: {field_path} must be a number, string, list or dict, got "
                                      f"{type(value).__name__}")


_AT_COLUMN = re.compile(r"^(?:steps: )?(?P<what>.*?) at line 1 column (?P<col>[0-9]+)$")


def _steps_json(steps: Sequence[Dict[str, Any]]) -> tuple[str, List[int]]:
    """The steps as one JSON array, and where each step's text starts in it."""
    parts = [json.dumps(step, allow_nan=False) for step in steps]
    starts, at = [], 1
    for part in parts:
        starts.append(at)
        at += len(part) + 2
    return "[" + ", ".join(parts) + "]", starts


def _locate(err: SsdlabError, steps: Sequence[Dict[str, Any]], text: str, starts: List[int]) -> SsdlabError:
    """The core's parse error (``... at line 1 column N``) as one naming the step and the field."""
    m = _AT_COLUMN.match(str(err))
    if m is None:
        return err
    col = int(m.group("col"))  # 1-based, at the offending value's end
    i = max(j for j, start in enumerate(starts) if start < col) if starts and col > starts[0] else 0
    keys = re.findall(r'"((?:[^"\\]|\\.)*)":', text[starts[i]:col])
    what = m.group("what")
    field = f": {keys[-1]}" if keys and keys[-1] != "step" and not what.startswith("missing field") else ""
    return SsdlabError(f"{_step_name(i, steps[i])}{field}: {what}")


def to_json(value: Any, what: str) -> str:
    """`value` as JSON for the core, or `SsdlabError` naming `what` (NaN, objects JSON cannot hold)."""
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise SsdlabError(f"{what} must be plain numbers, strings, lists and dicts: {err}") from None


def _resolve_config(config: Union[DriveConfig, str, None]) -> DriveConfig:
    if config is None:
        return load_preset(preset_names()[0])
    if isinstance(config, str):
        return load_preset(config)
    if isinstance(config, DriveConfig):
        return config
    raise SsdlabError(f"expected a DriveConfig or a preset name, got {type(config).__name__}")


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2**64:
        raise SsdlabError(f"seed must be a whole number from 0 to 2**64-1, got {seed!r}")
    return int(seed)


class _Callback:
    """The callback handed to the core. It is always passed, even with no display, because the
    core checks for Ctrl-C only when it calls back."""

    def __init__(self, progress: Progress, steps: Sequence[Dict[str, Any]]) -> None:
        self.bars: StepBars | None = None
        self.user: ProgressCallback | None = None
        if progress is True:
            self.bars = StepBars(steps)
        elif callable(progress):
            self.user = progress
        elif progress not in (None, False):
            raise SsdlabError(f"progress must be True, False or a callable, got {progress!r}")

    def __call__(self, step: int, fraction: float, sim_seconds: float) -> Optional[bool]:
        if self.bars is not None:
            self.bars(step, fraction, sim_seconds)
        if self.user is not None:
            return self.user(step, fraction, sim_seconds)
        return True

    def close(self) -> None:
        if self.bars is not None:
            self.bars.close()


class Simulator:
    """A simulated drive and its state across steps.

    `config` is a `DriveConfig` or a preset name; `seed` drives every random stream, so the same
    config, seed and steps give the same numbers, bit for bit.
    """

    def __init__(self, config: Union[DriveConfig, str, None] = None, seed: int = 1) -> None:
        self._config = _resolve_config(config)
        self._seed = _check_seed(seed)
        self._core = _core.Simulator(self._config.to_json(), self._seed)

    def __repr__(self) -> str:
        return f"Simulator({self._config.name!r}, seed={self._seed}, user_bytes={self.user_bytes}, now_s={self.now_s:g})"

    @property
    def config(self) -> DriveConfig:
        return self._config

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def user_bytes(self) -> int:
        """User capacity in bytes."""
        return self._core.user_bytes

    @property
    def now_s(self) -> float:
        """The host's simulated clock, in seconds."""
        return self._core.now_ns / NS_PER_S

    def counters(self) -> Dict[str, int]:
        """Cumulative FTL counters (units are 4 KiB mapping units)."""
        counters: Dict[str, int] = json.loads(self._core.counters())
        return counters

    def erase_counts(self) -> np.ndarray:
        """Erase count of every FTL block (a multi-plane block of one die)."""
        return self._core.erase_counts()

    def check_invariants(self) -> None:
        """Raises `SsdlabError` describing the first broken FTL invariant, if any."""
        self._core.check_invariants()

    def enable_store(self, mode: str = "checksums") -> None:
        """Gives the drive a content store (``ssdlab.store``): ``"checksums"`` keeps a 64-bit
        checksum per 512-byte sector written (enough to verify), ``"data"`` the bytes. Sparse:
        memory grows with what is written. Never-written and trimmed sectors read as zeros."""
        self._core.enable_store(mode)

    def store_stats(self) -> Optional[Dict[str, Any]]:
        """The content store's ``mode``, ``sectors``, ``units_held`` (4 KiB units holding
        content) and ``memory_bytes``, or None without a store."""
        raw = self._core.store_stats()
        return None if raw is None else json.loads(raw)

    def check_store(self) -> None:
        """Raises `SsdlabError` if a unit the FTL has unmapped holds content in the store."""
        self._core.check_store()

    def run_steps(self, steps: Sequence[Dict[str, Any]], progress: Progress = None) -> List[StepResult]:
        """Runs `steps` in order and returns one `StepResult` per step.

        Steps use the core's format, e.g. ``{"step": "secure_erase"}``, ``{"step": "idle",
        "seconds": 60}``, ``{"step": "trim", "offset_bytes": 0, "length_bytes": 0}`` or ``{"step":
        "run", "workload": {"rw": "write", "pattern": "random", "duration_s": 30}}`` (workload
        settings not given take the core's defaults). Every step is checked before any runs.

        `progress`: True shows bars on stderr; a callable gets ``(step_index, fraction,
        sim_seconds)`` and stops the run by returning False (the core then raises
        KeyboardInterrupt) or by raising.
        """
        if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence):
            raise SsdlabError("steps must be a list of step dicts, e.g. [{'step': 'secure_erase'}]")
        steps = list(steps)
        _check_steps(steps)
        steps_json, starts = _steps_json(steps)
        callback = _Callback(progress, steps)
        try:
            outputs = self._core.run_steps(steps_json, callback)
        except SsdlabError as err:
            raise _locate(err, steps, steps_json, starts) from None
        finally:
            callback.close()
            preload.wait()  # the preload's imports end before this thread makes frames
        return [_step_result(j, s) for j, s in outputs]

    def _run_consistency(self, params: Dict[str, Any], progress: Progress) -> tuple[List[StepResult], Dict[str, Any]]:
        params_json = to_json(params, "consistency parameters")
        steps = json.loads(_core.consistency_steps(params_json, self.user_bytes))  # checks the params
        callback = _Callback(progress, steps)
        try:
            outputs, summary = self._core.run_consistency(params_json, callback)
        finally:
            callback.close()
            preload.wait()  # the preload's imports end before this thread makes frames
        return [_step_result(j, s) for j, s in outputs], json.loads(summary)

    def _run_procedure(
        self, name: str, params: Dict[str, Any], planned: Sequence[Dict[str, Any]], progress: Progress
    ) -> tuple[List[StepResult], Dict[str, Any]]:
        """Runs the core's procedure `name` (see `ssdlab.procedures`); `planned` are its steps for
        the progress bars. The core checks every step before the first callback."""
        params_json = to_json(params, f"{name} parameters")
        callback = _Callback(progress, list(planned))
        try:
            outputs, summary = self._core.run_procedure(name, params_json, callback)
        finally:
            callback.close()
            preload.wait()  # the preload's imports end before this thread makes frames
        return [_step_result(j, s) for j, s in outputs], json.loads(summary)


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SsdlabError(f"{what} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # a whole number beyond a double's range, e.g. 10**400
        raise SsdlabError(f"{what} must be a finite number, got a {len(str(value))}-digit whole number") from None
    if not math.isfinite(v):
        raise SsdlabError(f"{what} must be a finite number, got {value!r}")
    return v


def _whole(value: Any, what: str, bits: int = 32) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SsdlabError(f"{what} must be a whole number, got {value!r}")
    if not 0 <= int(value) < 2**bits:
        raise SsdlabError(f"{what} {value} is out of range; give a positive whole number")
    return int(value)


_MOVED = {name: f"ssdlab.scenarios.consistency:{name}"
          for name in ("CONSISTENCY_DEFAULTS", "ConsistencyDefaults", "consistency", "consistency_steps")}
"""The consistency test's API and the core's defaults for it, now in its scenario module."""


def __getattr__(name: str) -> Any:
    """The names in `_MOVED` resolve to the consistency scenario module."""
    return moved.resolve(__name__, name, _MOVED)
