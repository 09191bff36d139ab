"""Progress reporting for simulations: one tqdm bar per step, in simulated seconds.

The core calls ``callback(step_index, fraction, sim_seconds)`` every few thousand requests of a
workload step and once at the end of every step; `StepBars` turns those calls into bars on stderr.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, Callable, Optional, Sequence, TextIO

from tqdm import tqdm

__all__ = ["ProgressCallback", "StepBars", "step_title"]

ProgressCallback = Callable[[int, float, float], Optional[bool]]
"""``callback(step_index, fraction, sim_seconds)``; returning ``False`` or raising stops the run."""

_KIND_TITLES = {"secure_erase": "secure erase", "idle": "idle", "trim": "trim", "write_cache": "write cache"}
_LABEL_PREFIXES = {"hdtach:": "pass ", "test:": "random writes, "}


def step_title(step: dict[str, Any]) -> str:
    """A short name for a step of the core's step list (``{"step": "run", "workload": {...}}``)."""
    kind = step.get("step", "?")
    if kind == "run":
        label = str(step.get("workload", {}).get("label", "")) or "workload"
        for prefix, title in _LABEL_PREFIXES.items():  # the procedures' measuring steps
            if label.startswith(prefix):
                return title + label[len(prefix) :]
        return {"random-write": "random writes"}.get(label, label.replace("-", " "))
    return _KIND_TITLES.get(kind, str(kind))


def _planned_seconds(step: dict[str, Any]) -> float | None:
    if step.get("step") == "idle":
        return float(step["seconds"])
    if step.get("step") == "run":
        duration = step.get("workload", {}).get("duration_s")
        return float(duration) if duration is not None else None
    return None


class _Bar(tqdm):  # type: ignore[type-arg]
    """A tqdm bar with a ``{sim}`` field (simulated seconds) for its bar format."""

    sim = ""

    @property
    def format_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = super().format_dict
        d["sim"] = self.sim
        return d


class StepBars:
    """tqdm bars for a list of steps; call it as the progress callback, then `close()` it.

    `disable=None` hides the bars when `file` is not a terminal (tqdm's rule).
    """

    def __init__(
        self, steps: Sequence[dict[str, Any]], *, file: TextIO | None = None, disable: bool | None = None
    ) -> None:
        self._titles = [step_title(s) for s in steps]
        self._planned = [_planned_seconds(s) for s in steps]
        self._width = max((len(t) for t in self._titles), default=0)
        self._file = file if file is not None else sys.stderr
        self._disable = disable
        self._bar: _Bar | None = None
        self._step = -1

    def _open(self, step: int) -> _Bar:
        if self._bar is not None:
            self._bar.close()
        self._step = step
        title = self._titles[step] if step < len(self._titles) else f"step {step + 1}"
        self._bar = _Bar(
            total=100,
            desc=title.ljust(self._width),
            file=self._file,
            disable=self._disable,
            leave=True,
            ncols=min(shutil.get_terminal_size((100, 20)).columns, 120),
            bar_format="{desc} {percentage:3.0f}%|{bar}| {sim} [{elapsed}<{remaining}]",
        )
        return self._bar

    def __call__(self, step: int, fraction: float, sim_seconds: float) -> bool:
        bar = self._bar if step == self._step and self._bar is not None else self._open(step)
        planned = self._planned[step] if step < len(self._planned) else None
        sim = f"{sim_seconds:,.0f}" if sim_seconds >= 10 else f"{sim_seconds:.1f}"
        bar.sim = f"sim {sim}/{planned:,.0f} s" if planned else f"sim {sim} s"
        bar.update(max(0.0, min(100.0, 100.0 * fraction) - bar.n))
        return True

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> StepBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
