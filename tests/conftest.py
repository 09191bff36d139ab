"""Shared fixtures."""

from __future__ import annotations

import pytest

import ssdlab

SMALL_BYTES = 2 * 2**30


@pytest.fixture(scope="session")
def small_drive() -> ssdlab.DriveConfig:
    return ssdlab.load_preset(ssdlab.preset_names()[0]).with_user_capacity(SMALL_BYTES)
