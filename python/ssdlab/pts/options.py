"""The options the PTS tests share, declared once: the variant, the rounds' bounds and length, and
the drive options without ``--report`` (the HTML report has no PTS section yet: docs/pts.md,
*Missing*). Each test's module passes its own help text, which says what a round is there."""

from __future__ import annotations

from typing import Any

import click

from ssdlab import cli_values as cv, limits
from ssdlab.errors import SsdlabError
from ssdlab.pts import steady
from ssdlab.pts.rounds import VARIANTS
from ssdlab.scenarios.base import Opt
from ssdlab.scenarios.shared import SIM

__all__ = ["MAX_ROUNDS", "MAX_ROUND_S", "SIM_NO_REPORT", "check_round_s", "check_rounds_max", "round_s", "rounds_max", "variant"]

SIM_NO_REPORT = tuple(o for o in SIM if o.key != "report")
"""The drive options without --report."""
MAX_ROUNDS = 100
MAX_ROUND_S = 3600.0


def check_rounds_max(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not steady.WINDOW <= value <= MAX_ROUNDS:
        raise SsdlabError(f"{what} must be a whole number from {steady.WINDOW} (one measurement window) to "
                          f"{MAX_ROUNDS}, got {value!r}")
    return value


def check_round_s(value: Any, what: str) -> float:
    return limits.seconds(value, what, maximum=MAX_ROUND_S)


def variant(help_text: str) -> Opt:
    """``--variant client|enterprise`` (default enterprise)."""
    return Opt("variant", help_text, type=click.Choice(tuple(VARIANTS)), default="enterprise", show_default=True,
               kind="text", axis="category", range="client / enterprise")


def rounds_max(help_text: str) -> Opt:
    """``--rounds-max N``: rounds after which a test that is not steady stops (PTS: 25)."""
    return Opt("rounds_max", help_text, type=cv.Checked("n", check_rounds_max, base=int), default=steady.ROUNDS_MAX,
               show_default=True, metavar="N", kind="whole", range=f"{steady.WINDOW} … {MAX_ROUNDS}")


def round_s(help_text: str) -> Opt:
    """``--round-s SECONDS``: each point's length (PTS: 60)."""
    return Opt("round_s", help_text, type=cv.Checked("seconds", check_round_s), default=60.0, show_default="60",
               metavar="SECONDS", range=f"0.001 … {MAX_ROUND_S:g}")
