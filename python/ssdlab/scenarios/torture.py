"""``ssdlab torture``: performance over time & TRIM, the scenario in one module.

HD Tach passes before and after 4 KiB QD32 random-write torture, idle time and a TRIM of the
whole span (the Plextor M5S and Corsair Performance Pro reviews; docs/scenarios.md, *torture*).
Its result, its chart, its run on a real device and its section of the HTML report are hdtach's
(`ssdlab.scenarios.hdtach`: `HdtachResult`, `device_command`, `HdtachRun`); this module holds
what is torture's own:

* its options, declared once (`OPTIONS`: --idle-minutes, --pass-after-torture, --then, --trim);
* its steps on the core (`params_of`, `plan`) and its API function (`torture`);
* its command (`command`) and its sweep entry (the figures of ``results.parquet``);
* and the line that registers it (`SCENARIO`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import click

from ssdlab import cli_values as cv, procedures
from ssdlab.errors import SsdlabError
from ssdlab.scenarios.base import Opt, Scenario, SweepEntry, api_runner, default_of, drive_figures
from ssdlab.scenarios.command import finish, sim_config, simulate
from ssdlab.scenarios.hdtach import (
    FILES,
    HDTACH_BLOCK_BYTES,
    HDTACH_QD,
    HdtachResult,
    HdtachRun,
    check_pass_span,
    device_command,
    no_device_flags,
    pass_params,
    passes_of,
    print_passes,
)
from ssdlab.scenarios.shared import COMPRESSIBILITY, DEVICE, SAMPLE_PCT, SIM, torture_minutes

__all__ = ["OPTIONS", "SCENARIO", "torture"]

NAME = "torture"


class _Actions(Opt):
    """``--then``: a spec gives the actions as a string or a list of strings, each checked by the
    command line's ``--then`` type, given the actions joined as that option takes them."""

    def convert(self, value: Any) -> Any:
        from ssdlab.sweep.scenarios import words

        actions = words(value, Path("."))
        for action in actions:
            if "," in action:
                shown = action if len(action) <= 40 else f"{action[:37]}..."
                raise SsdlabError(f"the action {shown!r} holds a comma; give each action as a string of its own, e.g. "
                                  '["pass", "idle:120"]')
        if actions:
            try:
                self.type.convert(",".join(actions), None, None)  # the very text --then would be given
            except click.BadParameter as err:
                raise SsdlabError(" ".join(str(err.message).split())) from None
        return actions


OPTIONS = (
    torture_minutes(20.0, "Minutes of 4 KiB QD32 random writes after the sequential fill."),
    Opt("idle_minutes", "Idle minutes after the torture (and its pass), then a pass; 0 skips them.",
        type=cv.minutes(True), default=30.0, show_default="30", metavar="MINUTES", range="0 … 166,666 (10^7 s)"),
    Opt("pass_after_torture", "Run a pass right after the torture. A pass rewrites part of every position, so leave "
        "it out to see what idle time alone does.", default=True, show_default=True,
        secondary="--no-pass-after-torture", kind="flag", axis="category", range="true / false"),
    _Actions("then", 'Further actions after the idle pass, comma-separated: "pass" or "idle:MINUTES", e.g. '
             '"pass,idle:120,pass".', type=cv.actions, metavar="ACTIONS", kind="text", axis="category",
             range='"pass" or "idle:MINUTES", comma-separated'),
    Opt("trim", "Finish with a TRIM of the whole span (a format) and a last pass.", default=True, show_default=True,
        secondary="--no-trim", kind="flag", axis="category", range="true / false"),
    COMPRESSIBILITY,
    SAMPLE_PCT,
)


# -- steps -----------------------------------------------------------------------------------------


def _flag(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise SsdlabError(f"{what} must be True or False, got {value!r}")
    return value


def _actions(then: Any) -> List[str]:
    """`then` as a list of actions; a string is split at commas (``"pass,idle:120,pass"``)."""
    if isinstance(then, str):
        return [a.strip() for a in then.split(",")] if then.strip() else []
    if not isinstance(then, Sequence) or not all(isinstance(a, str) for a in then):
        raise SsdlabError(f"then must be a list of actions such as ['pass', 'idle:120'], got {then!r}")
    return [a.strip() for a in then]


def params_of(torture_minutes: Any, idle_minutes: Any, pass_after_torture: Any, then: Any, trim: Any,
              compressibility: Any, block_size: Any, qd: Any, sample_pct: Any) -> Dict[str, Any]:
    """The core's parameters (scenario/torture.rs)."""
    return {
        "torture_minutes": procedures.number(torture_minutes, "torture minutes"),
        "idle_minutes": procedures.number(idle_minutes, "idle minutes"),
        "pass_after_torture": _flag(pass_after_torture, "pass_after_torture"),
        "then": _actions(then),
        "trim": _flag(trim, "trim"),
        "compressibility": procedures.number(compressibility, "compressibility"),
        **pass_params(block_size, qd, sample_pct),
    }


def _idle_action(action: str) -> Optional[float]:
    """The minutes of an ``idle:MINUTES`` action, or None for anything else."""
    if not action.startswith("idle:"):
        return None
    try:
        return float(action[len("idle:") :])
    except ValueError:
        return None


def plan(p: Dict[str, Any], user_bytes: int) -> List[Dict[str, Any]]:
    """The steps the core runs (for progress bars), passes labelled by what came before them."""
    run, label = procedures.run_step, procedures.minutes_label
    steps = [{"step": "secure_erase"}, run("hdtach:clean"), *procedures.fill_and_torture(p["torture_minutes"])]
    history = f"{label(p['torture_minutes'])} torture"
    if p["pass_after_torture"]:
        steps.append(run(f"hdtach:after {history}"))
        history += ", pass"
    if p["idle_minutes"] > 0:
        steps.append({"step": "idle", "seconds": p["idle_minutes"] * 60.0})
        history += f", {label(p['idle_minutes'])} idle"
        steps.append(run(f"hdtach:after {history}"))
        history += ", pass"
    for action in p["then"]:
        if action == "pass":
            steps.append(run(f"hdtach:after {history}"))
            history += ", pass"
        else:
            minutes = _idle_action(action)
            if minutes is None:
                continue  # not an action: the core refuses it before running anything
            steps.append({"step": "idle", "seconds": minutes * 60.0})
            history += f", {label(minutes)} idle"
    if p["trim"]:
        steps += [{"step": "trim"}, run("hdtach:after TRIM")]
    return steps


# -- the API -------------------------------------------------------------------------------------


def torture(
    config: procedures.Config = None,
    *,
    torture_minutes: float = default_of(OPTIONS, "torture_minutes"),
    idle_minutes: float = default_of(OPTIONS, "idle_minutes"),
    pass_after_torture: bool = default_of(OPTIONS, "pass_after_torture"),
    then: Union[Sequence[str], str] = (),
    trim: bool = default_of(OPTIONS, "trim"),
    compressibility: float = default_of(OPTIONS, "compressibility"),
    block_size: Union[int, str] = HDTACH_BLOCK_BYTES,
    qd: int = HDTACH_QD,
    sample_pct: float = default_of(OPTIONS, "sample_pct"),
    seed: int = 1,
    progress: procedures.Progress = False,
    label: Optional[str] = None,
) -> HdtachResult:
    """Performance over time & TRIM (the Plextor M5S and Corsair Performance Pro reviews).

    1. secure erase and a clean HD Tach pass (the baseline);
    2. secure erase, a sequential fill, and `torture_minutes` of 4 KiB QD32 random writes;
    3. a pass (unless `pass_after_torture` is False: a pass rewrites part of every position, which
       hides what idle time alone does);
    4. `idle_minutes` of idle time and a pass (skipped when 0);
    5. the `then` actions in order: ``"pass"`` or ``"idle:MINUTES"`` (a list, or one string such as
       ``"pass,idle:120,pass"``);
    6. with `trim`, a TRIM of the whole span (a format) and a last pass.

    Passes are named by what came before them (``after 20 min torture, pass, 30 min idle``).
    Other arguments as for `hdtach`.
    """
    cfg = procedures.resolve_config(config)
    params = params_of(
        torture_minutes, idle_minutes, pass_after_torture, then, trim, compressibility, block_size, qd, sample_pct
    )
    seed = procedures.check_seed(seed)
    check_pass_span(cfg, params["block_bytes"])
    steps, core, wall = procedures.execute(NAME, cfg, params, seed, progress)
    if label is None:
        label = procedures.compressed(
            f"{cfg.name} · performance over time & TRIM, {procedures.minutes_label(params['torture_minutes'])} torture",
            params["compressibility"],
        )
    return HdtachResult.from_run(
        scenario=NAME, label=label, config=cfg, steps=steps, core_summary=core, params=params, seed=seed,
        wall_seconds=wall,
    )


# -- the command -----------------------------------------------------------------------------------


def command(ctx: click.Context, torture_minutes: float, idle_minutes: float, pass_after_torture: bool,
            then: Optional[List[str]], trim: bool, compressibility: float, sample_pct: float, drive: Optional[str],
            drive_file: Optional[str], capacity: Optional[int], op: Optional[float], gc: Optional[str], seed: int,
            out: Optional[str], report: bool, quiet: bool, device: Optional[str], yes_destroy_data: bool,
            force_signatures: bool) -> None:
    """Performance over time & TRIM: HD Tach passes before and after torture, idle time and TRIM.

    A clean pass; a secure erase, a sequential fill and --torture-minutes of 4 KiB random writes at
    QD32; a pass; --idle-minutes idle and a pass; the --then actions; a TRIM of the whole span and
    a last pass. Each pass is named by what came before it. Writes hdtach.csv, summary.json and
    hdtach.png to the result directory.

    With --device, the same steps run on a real block device or file through fio (idle time is
    real time), with the safety checks of `ssdlab consistency --device`.
    """
    actions = then or []
    what = f"{torture_minutes:g} min torture" + (", pass" if pass_after_torture else "")
    if idle_minutes > 0:
        what += f", {idle_minutes:g} min idle, pass"
    what += "".join(f", {a[len('idle:'):]} min idle" if a.startswith("idle:") else f", {a}" for a in actions)
    what += ", TRIM, pass" if trim else ""
    options = {"torture_minutes": torture_minutes, "idle_minutes": idle_minutes,
               "pass_after_torture": pass_after_torture, "then": actions, "trim": trim}
    if device is not None:
        device_command(ctx, NAME, device, capacity, out, report, quiet, yes_destroy_data, force_signatures,
                       what, **options)
        return
    no_device_flags(yes_destroy_data, force_signatures)
    cfg = sim_config(drive, drive_file, capacity, op, gc)
    options["compressibility"] = compressibility
    options["sample_pct"] = sample_pct
    result, path = simulate(cfg, NAME, options, what, out, quiet,
                            lambda progress: torture(cfg, seed=seed, progress=progress, **options), report)
    if finish(result, path, report, quiet, FILES):
        print_passes(result)


# -- the sweep entry -------------------------------------------------------------------------------


def _sweep_figures(s: Dict[str, Any]) -> Dict[str, Any]:
    """The clean pass, the slowest pass after it, and every pass by its place in the run (names
    change with the options, places do not)."""
    figures = drive_figures(s)
    passes = passes_of(s)
    later = [p for p in passes[1:] if p.get("avg_mb_s") is not None]
    worst = min(later, key=lambda p: p["avg_mb_s"]) if later else None
    figures["clean_avg_mb_s"] = passes[0].get("avg_mb_s") if passes else None
    figures["worst_avg_mb_s"] = None if worst is None else worst["avg_mb_s"]
    figures["worst_pct_of_clean"] = None if worst is None else worst.get("pct_of_clean")
    figures["torture_write_amplification"] = s.get("torture_write_amplification")
    for i, p in enumerate(passes):
        figures[f"pass{i}_name"] = p.get("name")
        figures[f"pass{i}_avg_mb_s"] = p.get("avg_mb_s")
        figures[f"pass{i}_pct_of_clean"] = p.get("pct_of_clean")
    return figures


SCENARIO = Scenario(
    name=NAME,
    options=OPTIONS,
    groups=(SIM, DEVICE),
    command=command,
    context=True,
    result=HdtachResult,
    files=FILES,
    procedure=(torture, params_of, plan),
    sweep=SweepEntry(
        run=api_runner(torture),
        figures=_sweep_figures,
        metrics=(("worst_pct_of_clean", "slowest pass, % of clean"),
                 ("torture_write_amplification", "WA over the torture")),
    ),
    report_runs=(HdtachRun,),  # hdtach's section shows torture's runs (SCENARIO of ssdlab.scenarios.hdtach)
)
