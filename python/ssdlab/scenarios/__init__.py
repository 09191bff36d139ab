"""The scenarios, one module each, and the registry the CLI, sweeps, the report and the scorecard
iterate (docs/architecture.md, "Adding a scenario").

A scenario module declares its options once (`ssdlab.scenarios.base.Opt`), its steps, its API
function, its result, its charts, its command, its sweep entry and its report section, and ends
with ``SCENARIO = Scenario(...)``. Adding one is that module plus its line in `MODULES`.

The review procedures (consistency, hdtach, torture, used-vs-new, wa, saturation), PTS's
precondition, trace replay and fio job files live in their modules (the engines of replay and fio
are the packages ``ssdlab.replay`` and ``ssdlab.fio``); ``cli``, ``procedures``, ``results``,
``plots``, ``report`` and ``sweep.scenarios`` keep what they share, and the old public names
(``ssdlab.procedures.hdtach``, ``ssdlab.results.HdtachResult``, ...) resolve to the modules.
"""

from __future__ import annotations

import importlib
from typing import Dict, List, Optional

from ssdlab.scenarios.base import Opt, Scenario, SweepEntry

__all__ = ["MODULES", "Opt", "Scenario", "SweepEntry", "all_scenarios", "get"]

MODULES = (
    "ssdlab.scenarios.consistency",
    "ssdlab.scenarios.hdtach",
    "ssdlab.scenarios.torture",
    "ssdlab.scenarios.used_vs_new",
    "ssdlab.scenarios.wa",
    "ssdlab.scenarios.saturation",
    "ssdlab.scenarios.span",
    "ssdlab.scenarios.precondition",
    "ssdlab.scenarios.pts_iops",
    "ssdlab.scenarios.pts_wsat",
    "ssdlab.scenarios.pts_latency",
    "ssdlab.scenarios.pts_throughput",
    "ssdlab.scenarios.pts_hir",
    "ssdlab.scenarios.pts_xsr",
    "ssdlab.scenarios.pts_cbw",
    "ssdlab.scenarios.pts_dirth",
    "ssdlab.scenarios.pts_all",
    "ssdlab.scenarios.replay",
    "ssdlab.scenarios.fio",
    "ssdlab.scenarios.serve",
)
"""The scenario modules, in the order commands, sweeps and report sections list them."""

_REGISTRY: Dict[str, Scenario] = {}


def all_scenarios() -> List[Scenario]:
    """Every registered scenario, in `MODULES` order (imported on first use)."""
    if not _REGISTRY:
        for name in MODULES:
            entry: Scenario = importlib.import_module(name).SCENARIO
            _REGISTRY[entry.name] = entry
    return list(_REGISTRY.values())


def get(name: str) -> Optional[Scenario]:
    """The scenario called `name`, or None."""
    return next((s for s in all_scenarios() if s.name == name), None)
