"""The CLI's value types: every option value is read and checked here, by click, before a command
runs, so a bad value is one ``ssdlab: error:`` line naming the option and nothing has been
simulated, created or written. The bounds are `ssdlab.limits` (the core's), stated in
docs/parameters.md.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import click

from ssdlab import limits
from ssdlab.errors import SsdlabError
from ssdlab.sizes import format_size, parse_size

__all__ = ["Actions", "Address", "Checked", "Size", "SEED", "actions", "block_size", "capacity", "duration", "fraction", "minutes", "op", "percent",
           "percent_of_position", "queue_depth", "replay_speed", "test_span", "address"]


class Size(click.ParamType):
    """A byte size such as 4k, 512MiB, 256GB (see ssdlab.sizes); with `multiple`, a positive
    multiple of it (never rounded silently)."""

    name = "size"

    def __init__(self, multiple: Optional[int] = None, positive: bool = True, maximum: Optional[int] = None) -> None:
        self.multiple = multiple
        self.positive = positive
        self.maximum = maximum

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            try:
                n = parse_size(value, what="size")
            except SsdlabError as err:
                self.fail(str(err), param, ctx)
        if self.positive and n <= 0:
            self.fail(f"must be a positive size, got {value!r}", param, ctx)
        if self.multiple and n % self.multiple:
            lower = n // self.multiple * self.multiple
            hint = f" (e.g. {format_size(lower)})" if lower else ""
            self.fail(f"{value!r} is {n} bytes, not a whole number of {format_size(self.multiple)} blocks; give a "
                      f"multiple of {self.multiple}{hint}", param, ctx)
        if self.maximum is not None and n > self.maximum:
            self.fail(f"{value!r} is larger than {format_size(self.maximum)}, the largest request a drive takes in "
                      f"one command (docs/parameters.md, Bounds); give a smaller size", param, ctx)
        return n


class Checked(click.ParamType):
    """A number read as `base` (float or int) and checked by `check(value, what)` from
    `ssdlab.limits`. Text is read by `limits.parse_number`: ASCII digits only (no Unicode digits,
    no ``1_000``), at most 40 characters, finite."""

    def __init__(self, name: str, check: Callable[[Any, str], Any], base: type = float) -> None:
        self.name = name
        self.check = check
        self.base = base

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, str):
            try:
                value = limits.parse_number(value, "value", integer=self.base is int)
            except SsdlabError as err:
                self.fail(str(err).removeprefix("value: "), param, ctx)
        try:
            return self.check(value, "value")
        except SsdlabError as err:
            message = str(err)
            for lead in ("value of ", "value "):  # "value of 1e-30 s is ..." -> "1e-30 s is ..."
                if message.startswith(lead):
                    message = message[len(lead):]
                    break
            self.fail(message.replace("value", "it", 1), param, ctx)


class Address(click.ParamType):
    """A TCP address, ``HOST:PORT`` (``[IPv6]:PORT``), port 0 to 65535 (0: any free port)."""

    name = "HOST:PORT"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> str:
        text = str(value)
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
            self.fail(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:10809; port 0 for any free port)", param, ctx)
        return text


address = Address()


class Actions(click.ParamType):
    """Torture's further actions, comma-separated: ``pass`` or ``idle:MINUTES`` (minutes checked as
    --idle-minutes, above 0). Read as a list of the actions; empty text or an empty item is refused
    (leave the option out for none)."""

    name = "actions"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> List[str]:
        if isinstance(value, list):
            return value
        text = str(value)
        if not text.strip():
            self.fail("the text is empty; leave the option out for no further actions, or give actions such as 'pass,idle:120,pass'",
                      param, ctx)
        actions = []
        for i, raw in enumerate(text.split(","), start=1):
            action = raw.strip()
            if action == "pass":
                actions.append(action)
                continue
            if not action.startswith("idle:"):
                what = "empty" if not action else f"{action!r}"
                self.fail(f"action {i} of {text.strip()!r} is {what}; each action is 'pass' or 'idle:MINUTES', "
                          "separated by commas", param, ctx)
            try:
                limits.minutes(limits.parse_number(action[len("idle:"):], f"action {i} ({action})"),
                               f"action {i} ({action})")
            except SsdlabError as err:
                self.fail(str(err), param, ctx)
            actions.append(action)
        return actions


def _op(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if v <= 0:
        raise SsdlabError(f"{what} must be above 0 (physical/user - 1), got {value!r}")
    return v


def _seed(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
        raise SsdlabError(f"{what} must be a whole number from 0 to 2**64-1, got {value!r}")
    return value


duration = Checked("seconds", lambda v, w: limits.seconds(v, w))
queue_depth = Checked("n", lambda v, w: limits.queue_depth(v, w), base=int)
op = Checked("fraction", _op)
fraction = Checked("fraction", lambda v, w: limits.fraction(v, w))
SEED = Checked("n", _seed, base=int)
capacity = Size()
block_size = Size(multiple=limits.SECTOR_BYTES, maximum=limits.MAX_BLOCK_BYTES)
test_span = Size(multiple=4096)
actions = Actions()
replay_speed = Checked("x", lambda v, w: limits.replay_speed(v, w))


def percent(upper: float = 100.0) -> Checked:
    return Checked("pct", lambda v, w: limits.percent(v, w, upper=upper))


def _position_pct(value: Any, what: str) -> float:
    v = limits.number(value, what)
    if not 0 < v <= 100:
        raise SsdlabError(f"{what} must be above 0 and at most 100, got {value!r}")
    return v


percent_of_position = Checked("pct", _position_pct)


def minutes(allow_zero: bool) -> Checked:
    return Checked("minutes", lambda v, w: limits.minutes(v, w, allow_zero=allow_zero))
