"""The scenario registry (docs/architecture.md, "Adding a scenario"): every scenario's command,
API defaults, sweep keys and docs table come from its one declaration of options."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import click
import pytest

from ssdlab.cli import cli
from ssdlab.scenarios import MODULES, all_scenarios, get
from ssdlab.scenarios.docs import with_table
from ssdlab.sweep.scenarios import SCENARIOS as SWEEP

DOCS = Path(__file__).resolve().parent.parent / "docs" / "parameters.md"
ENTRIES = all_scenarios()


def command_of(entry) -> click.Command:
    """The click command of `entry`: ``ssdlab NAME``, or ``ssdlab GROUP NAME`` for a group's (pts)."""
    command = cli.commands[entry.command_path[0]]
    for part in entry.command_path[1:]:
        command = command.commands[part]
    return command


def test_every_module_registers_one_scenario_the_cli_lists() -> None:
    assert len(ENTRIES) == len(MODULES) == len({e.name for e in ENTRIES})
    for entry in ENTRIES:
        assert get(entry.name) is entry and command_of(entry).name == entry.command_name


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_the_command_is_built_from_the_declarations(entry) -> None:
    params = {p.name: p for p in command_of(entry).params if p.name != "help"}
    declared = {o.key: o for o in entry.all_options()}
    assert set(params) == set(declared)
    for key, option in declared.items():
        param = params[key]
        assert option.cli_flag in param.opts
        if option.default is not None and not option.is_flag:
            want = option.type.convert(option.default, None, None) if isinstance(option.default, str) and \
                option.type is not None else option.default
            assert param.type.convert(param.default, None, None) == want, key


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.procedure or e.name in ("consistency", "precondition",
                                                                                   "pts-iops", "pts-wsat", "pts-latency",
                                                                                   "pts-throughput", "pts-hir", "pts-xsr")],
                         ids=lambda e: e.name)
def test_the_api_defaults_are_the_declared_ones(entry) -> None:
    function = entry.procedure[0] if entry.procedure else getattr(
        importlib.import_module(f"ssdlab.scenarios.{entry.name.replace('-', '_')}"), entry.name.replace("-", "_"))
    signature = inspect.signature(function)
    for option in entry.options:
        if option.api_name in signature.parameters and option.default is not None:
            assert signature.parameters[option.api_name].default == option.default, option.key


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.sweep is not None], ids=lambda e: e.name)
def test_the_sweep_keys_are_the_declared_ones(entry) -> None:
    sweep_keys = set(SWEEP[entry.name].keys)
    # a key may be spelled differently in a spec (replay's --from is ``from``), and fio's ``env`` is
    # a spec's only (no command option sets a job file's variables)
    declared = {o.sweep_key for o in entry.options + entry.sweep.spec_only if o.axis is not None}
    drive = {"drive", "drive_file", "capacity", "op", "gc", "seed"}
    assert sweep_keys == declared | drive


def test_a_sweep_key_refuses_what_the_command_refuses() -> None:
    from ssdlab.sweep.scenarios import BadValue

    option = SWEEP["precondition"].option("passes")
    with pytest.raises(BadValue, match="from 1 to 16"):
        option.convert(0, Path("."))
    with pytest.raises(click.BadParameter, match="from 1 to 16"):
        cli.commands["precondition"].params[2].type.convert("0", None, None)


def test_the_docs_table_is_the_declarations() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert with_table(text) == text, "run: python -m ssdlab.scenarios.docs docs/parameters.md"
