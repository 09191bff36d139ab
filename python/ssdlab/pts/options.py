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

__all__ = ["MAX_ROUNDS", "MAX_ROUND_S", "SIM_NO_REPORT", "cache_deviations", "cache_label", "check_round_s", "check_rounds_max",
           "round_s", "rounds_max", "variant", "write_cache", "write_cache_enabled"]

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


def write_cache(help_text: str = "The drive's volatile write cache: on (write-back, PTS-C's WCE) or off (write-through, "
                "PTS-E's WCD); default: the variant's.") -> Opt:
    """``--write-cache on|off`` (default: the variant's, PTS-C on, PTS-E off)."""
    return Opt("write_cache", help_text, type=click.Choice(("on", "off")), default=None, kind="text",
               axis="category", range="on / off")


def write_cache_enabled(v: Any, override: Any) -> bool:
    """Whether the write cache is on: `override` (``"on"``/``"off"``) or the variant's setting."""
    if override is None:
        return bool(v.write_cache)
    if override not in ("on", "off"):
        raise SsdlabError(f"write cache must be on or off, got {override!r}")
    return override == "on"


def cache_label(enabled: bool) -> str:
    return "enabled (WCE)" if enabled else "disabled (WCD)"


DEVICE_CACHE = "as the device has it"


def apply_write_cache(sim: Any, v: Any, override: Any, *, on_device: bool) -> str:
    """Sets a simulated drive's write cache to `override` or the variant's setting and returns its
    label for the parameters; a device keeps its own (ssdlab does not set WCE/WCD there), and an
    override for one is refused before anything runs."""
    enabled = write_cache_enabled(v, override)
    if on_device:
        if override is not None:
            raise SsdlabError("--write-cache applies to simulated drives only: a device keeps its own setting "
                              "(set it with nvme set-feature or hdparm -W, then leave --write-cache out)")
        return DEVICE_CACHE
    sim.run_steps([{"step": "write_cache", "enabled": enabled}])
    return cache_label(enabled)


def cache_deviations(params: Any) -> list:
    """The deviation of a write cache set against the variant's (PTS-C: WCE, PTS-E: WCD)."""
    v = VARIANTS[params["variant"]]
    asked = params.get("write_cache_override")
    if asked is None or (asked == "on") == v.write_cache:
        return []
    return [f"write cache {asked}: {v.spec} asks for it {'enabled (WCE)' if v.write_cache else 'disabled (WCD)'}"]
