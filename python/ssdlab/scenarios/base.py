"""What a scenario module declares: its options (`Opt`, declared once) and itself (`Scenario`).

An option is declared once, as data, and everything that takes it is derived from that
declaration (as fio's ``options.c`` drives its parser, ``--cmdhelp`` and its docs):

* the command line: `Opt.click` is the click option of ``ssdlab COMMAND`` (flag, type, default,
  help, metavar);
* the Python API: `Opt.api` names the keyword of the scenario's API function, whose default is
  `Opt.default`; `api_signature` gives the function's signature from the declarations;
* sweeps: `Opt.sweep_option` is the spec key, whose converter is the very click type the command
  line checks with, so a spec refuses what the command line refuses, with the same reason;
* docs: `Opt.doc_row` is its row of the options table in docs/parameters.md.

A `Scenario` names its command, its options (scenario options first, then the shared groups:
`ssdlab.scenarios.shared`), how the command runs it, and its entry in sweeps and in the report.
`ssdlab.scenarios` keeps the registry the CLI, sweeps, the report and the scorecard iterate.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import click

from ssdlab.errors import SsdlabError

__all__ = ["Opt", "Scenario", "SweepEntry", "api_runner", "api_signature", "apply_options", "default_of",
           "drive_figures"]

# What a TOML spec value must be for each kind of option (a string is never read as a number).
_KINDS = {
    "number": ((int, float), "must be a number"),
    "whole": ((int,), "must be a whole number"),
    "size": ((int, str), 'must be a size such as "16GiB" or a number of bytes'),
    "flag": ((bool,), "must be true or false"),
    "text": ((str,), "must be a string"),
}


@dataclass(frozen=True)
class Opt:
    """One option of a scenario, declared once.

    `key` is the click parameter's name and the sweep spec's key (``torture_minutes``); `flag` the
    command line's spelling (default ``--torture-minutes``); `api` the keyword of the API function
    when it differs from `key` (``duration`` -> ``duration_s``). `type` is the click type that
    reads and checks a value (``ssdlab.cli_values``, bounded by ``ssdlab.limits``); `kind` what
    TOML type a spec gives (``number``, ``whole``, ``size``, ``flag``, ``text``); `axis` how sweep
    charts treat it (``number``, ``size`` or ``category``), None when a sweep cannot vary it.
    `default` is the API's and the command's default (None: the option is unset unless given);
    `show_default` is what ``--help`` shows (click's meaning). `range` is the docs' text of the
    accepted values.
    """

    key: str
    help: str
    type: Any = None
    default: Any = None
    metavar: Optional[str] = None
    flag: Optional[str] = None
    short: Optional[str] = None
    api: Optional[str] = None
    kind: str = "number"
    axis: Optional[str] = "number"
    show_default: Any = None
    is_flag: bool = False
    secondary: Optional[str] = None  # a boolean flag's "off" spelling (``--no-pass-after-torture``)
    multiple: bool = False
    range: str = ""
    argument: bool = False  # a positional argument (replay's TRACE, fio's JOBFILE), not an option
    spec_key: Optional[str] = None  # the sweep spec's key when it differs from `key` (replay's ``from``)
    spec_type: Optional[Callable[[Any, Path], Any]] = None  # reads a spec value (and the spec's directory)
    # when the command line's type cannot: a path relative to the spec, a table

    @property
    def cli_flag(self) -> str:
        if self.argument:
            return self.key
        return self.flag or "--" + self.key.replace("_", "-")

    @property
    def sweep_key(self) -> str:
        return self.spec_key or self.key

    @property
    def api_name(self) -> str:
        return self.api or self.key

    def click(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """The click option decorator of ``ssdlab COMMAND`` (or its argument)."""
        if self.argument:
            return click.argument(self.key, metavar=self.metavar)
        decls: List[str] = [self.cli_flag + (f"/{self.secondary}" if self.secondary else "")]
        if self.short:
            decls.append(self.short)
        decls.append(self.key)
        kwargs: Dict[str, Any] = {"help": self.help}
        if self.is_flag and not self.secondary:
            kwargs["is_flag"] = True
        else:
            if self.type is not None:
                kwargs["type"] = self.type
            if self.metavar is not None:
                kwargs["metavar"] = self.metavar
        if self.default is not None:
            kwargs["default"] = self.default
        if self.show_default is not None:
            kwargs["show_default"] = self.show_default
        if self.multiple:
            kwargs["multiple"] = True
        return click.option(*decls, **kwargs)

    def convert(self, value: Any) -> Any:
        """A spec value checked as the command line checks it (`type`), or `SsdlabError` saying
        why not (the sweep reader adds where the value is)."""
        types, text = _KINDS[self.kind]
        if isinstance(value, bool) and self.kind != "flag":
            raise SsdlabError(text)
        if not isinstance(value, types):
            raise SsdlabError(text)
        if self.kind == "flag" or self.type is None:
            return value
        if isinstance(value, int) and not -2**64 < value < 2**64:
            raise SsdlabError("is beyond 64 bits; give a smaller number")
        try:
            return self.type.convert(value, None, None)
        except click.BadParameter as err:
            raise SsdlabError(" ".join(str(err.message).split())) from None

    def doc_row(self) -> str:
        """Its row of the options table in docs/parameters.md."""
        default = "" if self.default is None else f"`{self.default}`"
        shown = self.metavar if self.argument else self.cli_flag
        return f"| `{shown}` | `{self.api_name}` | {default} | {self.range or self.help} |"


def apply_options(function: Callable[..., Any], options: Sequence[Opt]) -> Callable[..., Any]:
    """Decorates `function` with the click options, the first listed shown first in --help."""
    for option in reversed(options):
        function = option.click()(function)
    return function


def api_signature(options: Sequence[Opt], *, config: bool = True, extra: Sequence[inspect.Parameter] = ()
                  ) -> inspect.Signature:
    """The API function's signature: ``config`` (positional), then the options' keywords with their
    declared defaults, then `extra` (``seed``, ``progress``, ``label``)."""
    params = [inspect.Parameter("config", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)] if config else []
    params += [inspect.Parameter(o.api_name, inspect.Parameter.KEYWORD_ONLY, default=o.default) for o in options]
    return inspect.Signature(params + list(extra))


@dataclass(frozen=True)
class SweepEntry:
    """A scenario's part in sweeps (``ssdlab.sweep``): `run(config, kwargs)` runs one point on a
    worker (the point's drive, and the API keywords of the options it gives) and returns a result
    with ``summary`` and ``save(dir)``; `figures(summary)` gives the point's columns of
    ``results.parquet`` (scalars); `metrics` are the (column, axis title) pairs charted, the main
    one first; `label_keys` the keys the result's own label already names. `required`: the keys
    a spec must give; `prepare(options)` checks and prepares a point's options on the client (after
    the drive's check), `content(options)` is what a point depends on beyond the spec's text (part
    of the spec's hash; None: the drive file); `spec_only`: keys a spec takes that no command option
    has (fio's ``env``)."""

    run: Callable[[Any, Dict[str, Any]], Any]
    figures: Callable[[Dict[str, Any]], Dict[str, Any]]
    metrics: Tuple[Tuple[str, str], ...]
    label_keys: frozenset = frozenset({"drive", "drive_file"})
    reportable: bool = True
    required: Tuple[str, ...] = ()
    prepare: Optional[Callable[[Dict[str, Any]], Dict[str, Any]]] = None
    content: Optional[Callable[[Dict[str, Any]], Any]] = None
    spec_only: Tuple[Opt, ...] = ()


def api_runner(function: Callable[..., Any]) -> Callable[[Any, Dict[str, Any]], Any]:
    """A sweep entry's ``run`` that is the scenario's API function on the point's drive, with the
    point's keywords."""
    def run(cfg: Any, kwargs: Dict[str, Any]) -> Any:
        return function(cfg, **kwargs)
    return run


def drive_figures(summary: Dict[str, Any]) -> Dict[str, Any]:
    """The drive's columns every scenario's sweep table has."""
    return {k: summary.get(k) for k in ("user_capacity_bytes", "op", "gc_policy")}


@dataclass(frozen=True)
class Scenario:
    """A scenario, as the registry knows it.

    `name`: the command (``ssdlab NAME``) and the ``scenario`` of its summary.json. `options`: its
    own options, in --help order. `command`: the command's body, a function of the click
    parameters (its docstring is the command's help). `groups`: the shared option groups after the
    scenario's own (`ssdlab.scenarios.shared`). `result`: the result class (``load``, ``save``).
    `files`: what its result directory holds. `procedure`: (API function, parameters, plan) of a
    procedure the core runs (``ssdlab.procedures``), or None. `sweep`: its `SweepEntry`, or None.
    `report_runs`: the report's run classes that read its results. `report_section`: a function of
    the loaded runs giving its sections of the HTML report (empty when it has none there).
    `order`: the option keys in --help order, when that is not its own options then the groups'
    (``consistency`` interleaves them); empty for that order. `group`: the command group it is a
    subcommand of (``pts``: ``pts-iops`` is ``ssdlab pts iops``), None for a top-level command.
    """

    name: str
    options: Tuple[Opt, ...]
    command: Callable[..., Any]
    groups: Tuple[Tuple[Opt, ...], ...] = ()
    result: Any = None
    files: Tuple[str, ...] = ()
    procedure: Optional[Tuple[Callable[..., Any], Callable[..., Dict[str, Any]], Callable[..., List[Any]]]] = None
    sweep: Optional[SweepEntry] = None
    report_runs: Tuple[Any, ...] = ()
    report_section: Optional[Callable[[Sequence[Any]], List[Any]]] = None
    context: bool = False  # the command takes click's context first
    extra: Dict[str, Any] = field(default_factory=dict)
    order: Tuple[str, ...] = ()
    group: Optional[str] = None

    @property
    def command_name(self) -> str:
        """The command's name on the command line: the scenario's name, less its group's prefix."""
        prefix = f"{self.group}-" if self.group else ""
        return self.name[len(prefix):] if prefix and self.name.startswith(prefix) else self.name

    @property
    def command_path(self) -> Tuple[str, ...]:
        """What follows ``ssdlab`` to run it: ``("pts", "iops")`` or ``("consistency",)``."""
        return (self.group, self.command_name) if self.group else (self.name,)

    def all_options(self) -> Tuple[Opt, ...]:
        return self.options + tuple(o for group in self.groups for o in group)

    def option(self, key: str) -> Opt:
        return next(o for o in self.all_options() if o.key == key)

    def click_command(self) -> click.Command:
        """``ssdlab NAME``, built from the declarations."""
        body = self.command
        if self.context:
            body = click.pass_context(body)
        options = self.all_options()
        if self.order:
            options = tuple(sorted(options, key=lambda o: self.order.index(o.key)))
        return click.command(self.command_name)(apply_options(body, options))



def default_of(options: Sequence[Opt], key: str) -> Any:
    """The declared default of `key` (the one home of a scenario's defaults)."""
    return next(o.default for o in options if o.key == key)


def spec_path(value: Any, spec_dir: Path) -> Path:
    """A path in a spec, relative to the spec's directory."""
    if not isinstance(value, str) or not value:
        raise SsdlabError("must be a file name")
    path = Path(value).expanduser()
    return path if path.is_absolute() else spec_dir / path


def spec_file(value: Any, spec_dir: Path, what: str, hint: str = "") -> Path:
    """A file a spec names (`spec_path`) that must exist: a missing one, and one that cannot even be
    looked at (a name longer than the file system takes, a directory on the way that cannot be
    searched: `Path.is_file` raises those as OSError), are one-line `SsdlabError`s naming `what`."""
    path = spec_path(value, spec_dir)
    text = str(path)
    shown = text if len(text) <= 100 else f"{text[:60]}...({len(text)} characters)"
    try:
        found = path.is_file()
    except OSError as err:
        raise SsdlabError(f"cannot look for the {what} {shown} ({err.strerror or err}); give a path relative to the "
                          f"spec's directory, or an absolute one{hint}") from None
    if not found:
        raise SsdlabError(f"no such {what} ({shown}); give a path relative to the spec's directory, or an absolute "
                          f"one{hint}")
    return path
