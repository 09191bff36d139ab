"""Shared fixtures: a small drive (the default design scaled to 2 GiB, one die) and a few short
consistency runs, computed once per session."""

from __future__ import annotations

from typing import Dict

import pytest

import ssdlab

SMALL_BYTES = 2 * 2**30


@pytest.fixture(scope="session")
def small_drive() -> ssdlab.DriveConfig:
    return ssdlab.load_preset(ssdlab.preset_names()[0]).with_user_capacity(SMALL_BYTES)


@pytest.fixture(scope="session")
def short_run(small_drive: ssdlab.DriveConfig) -> ssdlab.ConsistencyResult:
    return ssdlab.consistency(small_drive, duration_s=30, seed=1)


@pytest.fixture(scope="session")
def runs_120s(small_drive: ssdlab.DriveConfig) -> Dict[int, ssdlab.ConsistencyResult]:
    """120 s consistency runs with 0 % and 25 % spare area."""
    return {pct: ssdlab.consistency(small_drive, spare_area_pct=pct, duration_s=120, seed=1) for pct in (0, 25)}
