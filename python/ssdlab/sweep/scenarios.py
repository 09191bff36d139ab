"""The scenarios a sweep can run, and the options each takes.

A scenario is an entry in `SCENARIOS`: its options (the spec keys, named after the command line's
options: ``spare_area`` is ``--spare-area``), how the client checks and prepares them, how a worker
runs one point, and which summary figures become the columns of ``results.parquet``. Every
scenario comes from its module's `SweepEntry` (``ssdlab.scenarios``); `register(Scenario(...))`
adds one from elsewhere; nothing else in the sweep package names a scenario.

The split of the work between the two sides: `Option.convert` and `Scenario.prepare` run on the
client, before anything runs, and turn spec values into what the run needs (sizes into bytes, a
drive file into its settings, a job file into its parsed form), so a mistake in the spec is one
error line and workers on other machines need none of the spec's files. `Scenario.run` runs on a
worker and returns a result with ``summary`` and ``save(dir)``, the same objects the commands save.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from ssdlab.config import GC_POLICIES, DriveConfig, load_preset, preset_names
from ssdlab.errors import SsdlabError
from ssdlab.sizes import parse_size

__all__ = ["DRIVE_OPTIONS", "SCENARIOS", "BadValue", "Option", "Scenario", "drive_config", "flag", "number", "path",
           "register", "scenario", "size", "whole", "words"]


class BadValue(SsdlabError):
    """A spec value an option refuses; the message says what is wrong and how to mend it (the spec
    reader adds where the value is)."""


Converter = Callable[[Any, Path], Any]


@dataclass(frozen=True)
class Option:
    """One spec key. `convert(value, spec_dir)` checks a value and returns what the run gets
    (relative paths resolve under `spec_dir`); `axis` says how charts treat the key: ``number``
    (a numeric x axis), ``size`` (a numeric axis of bytes, labelled as written) or ``category``."""

    key: str
    convert: Converter
    axis: str = "category"


# -- converters: spec values -> run values ---------------------------------------------------------


def _number(value: Any, spec_dir: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadValue("must be a number")
    if not math.isfinite(value):
        raise BadValue("must be a finite number")
    return float(value)


def _whole(value: Any, spec_dir: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadValue("must be a whole number")
    return value


def _seed(value: Any, spec_dir: Path) -> int:
    seed = _whole(value, spec_dir)
    if not 0 <= seed < 2**64:
        raise BadValue("must be from 0 to 2**64-1")
    return seed


def _size(value: Any, spec_dir: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BadValue('must be a size such as "16GiB" or a number of bytes')
    try:
        return parse_size(value, what="size")
    except SsdlabError as err:
        raise BadValue(str(err)) from None


def _flag(value: Any, spec_dir: Path) -> bool:
    if not isinstance(value, bool):
        raise BadValue("must be true or false")
    return value


def _words(value: Any, spec_dir: Path) -> List[str]:
    """A string or a list of strings (``then``, ``section``)."""
    if isinstance(value, str):
        return [w.strip() for w in value.split(",") if w.strip()]
    if isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = [w.strip() for w in value]
        if "" in words:
            raise BadValue("holds an empty string; give each item a name, or remove it")
        return words
    raise BadValue("must be a string or a list of strings")


@dataclass(frozen=True)
class CliValue:
    """The converter of a command-line option: the very click type `ssdlab COMMAND --PARAM` checks
    its value with (``ssdlab.cli_values``, bounded by ``ssdlab.limits``), so a spec refuses what
    the command line refuses, with the same reason. `kind` says what TOML type the key takes:
    ``number`` (an int or a float), ``whole`` (an int) or ``size`` (a size string or a number of
    bytes); a TOML string is never read as a number (``qd = "32"`` is a mistake, as in a typed
    file it would be)."""

    command: str
    param: str
    kind: str = "number"

    def __call__(self, value: Any, spec_dir: Path) -> Any:
        import click

        if isinstance(value, bool):
            raise BadValue(_KIND_TEXT[self.kind])
        if self.kind == "whole" and not isinstance(value, int):
            raise BadValue(_KIND_TEXT[self.kind])
        if self.kind == "number" and not isinstance(value, (int, float)):
            raise BadValue(_KIND_TEXT[self.kind])
        if self.kind == "size" and not isinstance(value, (int, str)):
            raise BadValue(_KIND_TEXT[self.kind])
        if isinstance(value, int) and not -2**64 < value < 2**64:
            raise BadValue("is beyond 64 bits; give a smaller number")
        try:
            return self.type().convert(value, None, None)
        except click.BadParameter as err:
            raise BadValue(" ".join(str(err.message).split())) from None
        except SsdlabError as err:
            raise BadValue(str(err)) from None

    def type(self) -> Any:
        """The click type of the command's option (looked up when first used: importing the CLI
        costs ~60 ms, and only a spec's client needs it)."""
        from ssdlab.cli import cli

        command = cli.commands[self.command]
        return next(p for p in command.params if p.name == self.param).type


_KIND_TEXT = {"number": "must be a number", "whole": "must be a whole number",
              "size": 'must be a size such as "16GiB" or a number of bytes'}


def _preset(value: Any, spec_dir: Path) -> str:
    if not isinstance(value, str) or value not in preset_names():
        raise BadValue(f"not a drive preset; choose one of {', '.join(preset_names())} (see `ssdlab drives`)")
    return value


def _gc(value: Any, spec_dir: Path) -> str:
    if not isinstance(value, str) or value not in GC_POLICIES:
        raise BadValue(f"not a GC policy; choose one of {', '.join(GC_POLICIES)}")
    return value


def _path(value: Any, spec_dir: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise BadValue("must be a file name")
    path = Path(value).expanduser()
    return path if path.is_absolute() else spec_dir / path


def _drive_file(value: Any, spec_dir: Path) -> Dict[str, Any]:
    """The drive file's settings (a dict: workers build the config from it, wherever they run)."""
    try:
        return DriveConfig.from_toml_file(_path(value, spec_dir)).to_dict()
    except BadValue:
        raise
    except SsdlabError as err:
        raise BadValue(str(err)) from None


number, whole, size, flag, words, path = _number, _whole, _size, _flag, _words, _path
"""The converters, for scenarios registered elsewhere (docs/sweeps.md, "Adding a scenario")."""


# -- drives ----------------------------------------------------------------------------------------

DRIVE_OPTIONS: Tuple[Option, ...] = (
    Option("drive", _preset),
    Option("drive_file", _drive_file),
    Option("capacity", CliValue("consistency", "capacity", "size"), "size"),
    Option("op", CliValue("consistency", "op"), "number"),
    Option("gc", _gc),
    Option("seed", CliValue("consistency", "seed", "whole"), "number"),
)
"""The simulated-drive options every scenario takes (the commands' --drive ... --seed)."""


def _check_drive(options: Mapping[str, Any]) -> None:
    if "drive" in options and "drive_file" in options:
        raise SsdlabError("give either drive or drive_file, not both")


def drive_config(options: Mapping[str, Any]) -> DriveConfig:
    """The point's drive, built as the commands build it: preset or file, then GC policy, OP,
    capacity."""
    if "drive_file" in options:
        cfg = DriveConfig.from_dict(options["drive_file"], what="drive file")
    else:
        cfg = load_preset(options.get("drive", preset_names()[0]))
    return cfg.adjusted(gc_policy=options.get("gc"), op=options.get("op"), capacity=options.get("capacity"))


def _api_kwargs(options: Mapping[str, Any], names: Mapping[str, str]) -> Dict[str, Any]:
    """The API function's keyword arguments: spec key -> argument name, for the keys given (the
    others keep the function's defaults, as the commands' do)."""
    return {arg: options[key] for key, arg in names.items() if key in options}


# -- the registry ----------------------------------------------------------------------------------


def _as_given(options: Dict[str, Any]) -> Dict[str, Any]:
    return options


def _drive_file_content(options: Dict[str, Any]) -> Any:
    return options.get("drive_file")


@dataclass(frozen=True)
class Scenario:
    """A scenario a sweep can run.

    `run(options)` runs one point on a worker (options as converted and prepared) and returns a
    result with a ``summary`` dict and ``save(out_dir)``. `figures(summary)` gives the point's
    columns of the table (scalars). `metrics` are the (column, axis title) pairs charted, first
    the main one. `label_keys` are the keys the result's own label already names; the point's
    label adds the other varying keys. `reportable`: ``ssdlab report`` reads its results.
    `content(prepared options)` is what a point depends on beyond the spec's text (the contents of
    the files it names), as plain data: it is part of the spec's hash, so an edited drive or job
    file counts as a changed spec.
    """

    name: str
    options: Tuple[Option, ...]
    run: Callable[[Dict[str, Any]], Any]
    figures: Callable[[Dict[str, Any]], Dict[str, Any]]
    metrics: Tuple[Tuple[str, str], ...]
    required: Tuple[str, ...] = ()
    prepare: Callable[[Dict[str, Any]], Dict[str, Any]] = _as_given
    label_keys: FrozenSet[str] = frozenset({"drive", "drive_file"})
    reportable: bool = True
    content: Callable[[Dict[str, Any]], Any] = _drive_file_content

    def option(self, key: str) -> Optional[Option]:
        return next((o for o in self.options if o.key == key), None)

    @property
    def keys(self) -> List[str]:
        return [o.key for o in self.options]


SCENARIOS: Dict[str, Scenario] = {}
"""Scenario name (as the spec's ``scenario`` spells it) -> `Scenario`."""


def register(entry: Scenario) -> Scenario:
    """Adds (or replaces) a scenario; returns it."""
    SCENARIOS[entry.name] = entry
    return entry


def scenario(name: Any) -> Scenario:
    if not isinstance(name, str) or name not in SCENARIOS:
        raise SsdlabError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")
    return SCENARIOS[name]


def _drive_figures(summary: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: summary.get(k) for k in ("user_capacity_bytes", "op", "gc_policy")}


def _prepare_drive(options: Dict[str, Any]) -> Dict[str, Any]:
    _check_drive(options)
    return options


# the scenarios that live in their own module (ssdlab.scenarios): their options come from the one
# declaration the command line is built from


def _declared(option: Any) -> Option:
    """A spec key from a scenario module's option declaration (`ssdlab.scenarios.base.Opt`)."""

    def convert(value: Any, spec_dir: Path) -> Any:
        try:
            return option.spec_type(value, spec_dir) if option.spec_type is not None else option.convert(value)
        except BadValue:
            raise
        except SsdlabError as err:
            raise BadValue(str(err)) from None

    return Option(option.sweep_key, convert, option.axis or "category")


def _module_scenario(entry: Any) -> Scenario:
    sweep = entry.sweep
    own = tuple(_declared(o) for o in entry.options + sweep.spec_only if o.axis is not None)
    api = {o.sweep_key: o.api_name for o in entry.options}
    api["seed"] = "seed"

    def run(options: Dict[str, Any]) -> Any:
        return sweep.run(drive_config(options), _api_kwargs(options, api))

    def prepare(options: Dict[str, Any]) -> Dict[str, Any]:
        options = _prepare_drive(options)
        return sweep.prepare(options) if sweep.prepare is not None else options

    return Scenario(name=entry.name, options=DRIVE_OPTIONS + own, run=run, figures=sweep.figures,
                    metrics=sweep.metrics, required=sweep.required, prepare=prepare, label_keys=sweep.label_keys,
                    reportable=sweep.reportable, content=sweep.content or _drive_file_content)


def _register_modules() -> None:
    from ssdlab.scenarios import all_scenarios

    for entry in all_scenarios():
        if entry.sweep is not None:
            register(_module_scenario(entry))
    order = ("consistency", "hdtach", "torture", "used-vs-new", "wa", "saturation", "fio", "replay")
    ranked = sorted(SCENARIOS, key=lambda n: order.index(n) if n in order else len(order))
    for name in ranked:  # the order messages and docs list them in
        SCENARIOS[name] = SCENARIOS.pop(name)


_register_modules()
