"""The golden cases: one small run per scenario and per preset family, whose output files must stay
byte-identical (summary.json less its wall time) across refactors of the Python layer.

`scripts/make-golden.py` runs them and writes `tests/golden/<case>/`; `tests/test_golden.py` runs
them again and compares. Regenerate only for a deliberate change of results, and say so in the
commit (the fixtures were first made with the code before the scenario-module refactor).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, Tuple

# Files compared byte for byte (every CSV, fio's text and logs); JSON files (summary.json, fio's
# JSON) are compared as JSON with only these keys (at any depth) left out: they measure the machine
# or the calendar, not the simulation.
WALL_KEYS = frozenset({"wall_seconds", "requests_per_wall_second", "ssdlab_version", "timestamp", "timestamp_ms",
                       "time"})
COMPARED_SUFFIXES = (".csv", ".json", ".txt", ".log")

# A small trace in MSR Cambridge's format (Timestamp in 100 ns ticks since 1601, host, disk, type,
# offset, size, response time), written by the case itself so no fixture file is needed.
MSR_LINES = [
    f"{128166372000000000 + i * 2500},hm,0,{'Write' if i % 3 else 'Read'},{(i * 7919 % 4096) * 4096},"
    f"{4096 * (1 + i % 4)},100"
    for i in range(2000)
]

FIO_JOB = """\
; a small mixed job: random writes then a 70/30 mix, with logs
[global]
bs=4k
size=256m
ioengine=libaio
direct=1
write_iops_log=w
log_avg_msec=1000

[fill]
rw=write
bs=128k

[mixed]
stonewall
rw=randrw
rwmixread=70
iodepth=16
runtime=20
time_based
"""

SMALL = ["--capacity", "1GiB", "-q"]

# (case name, argv after `ssdlab`, files the case writes before running: name -> text)
CASES: List[Tuple[str, List[str], Dict[str, str]]] = [
    ("consistency-mlc", ["consistency", *SMALL, "--duration", "60"], {}),
    ("consistency-spare25-fifo", ["consistency", *SMALL, "--duration", "40", "--spare-area", "25", "--gc", "fifo",
                                  "--seed", "7"], {}),
    ("consistency-clean-up-later", ["consistency", "--drive", "clean-up-later", "--capacity", "4GiB", "-q",
                                    "--duration", "60"], {}),
    ("consistency-active-gc", ["consistency", "--drive", "active-gc", *SMALL, "--duration", "40"], {}),
    ("consistency-compressing", ["consistency", "--drive", "compressing", *SMALL, "--duration", "40"], {}),
    ("consistency-tlc-enterprise", ["consistency", "--drive", "tlc-enterprise", "--capacity", "2GiB", "-q",
                                    "--duration", "20"], {}),
    ("hdtach-mlc", ["hdtach", *SMALL, "--torture-minutes", "1"], {}),
    ("torture-idle-gc", ["torture", "--drive", "idle-gc", *SMALL, "--torture-minutes", "1", "--idle-minutes", "1"],
     {}),
    ("used-vs-new", ["used-vs-new", *SMALL, "--duration", "10"], {}),
    ("wa-compressing", ["wa", "--drive", "compressing", *SMALL, "--torture-minutes", "1", "--compressibility", "0.5"],
     {}),
    ("saturation-tlc", ["saturation", "--drive", "tlc-dynamic-cache", "--capacity", "8GiB", "-q",
                        "--idle-minutes", "1"], {}),
    ("saturation-qlc-prefill", ["saturation", "--drive", "qlc-hybrid-cache", "--capacity", "8GiB", "-q",
                                "--prefill-pct", "50"], {}),
    ("span-dramless-hmb", ["span", "--drive", "dramless-hmb", "--capacity", "4GiB", "-q", "--hmb-mb", "1",
                           "--min-span", "512MiB", "--seconds", "0.3", "--warmup", "0.2"], {}),
    ("replay-msr", ["replay", "trace.csv", *SMALL], {"trace.csv": "\n".join(MSR_LINES) + "\n"}),
    ("fio-json", ["fio", "job.fio", *SMALL, "--output-format", "json", "--output", "fio-output.json"],
     {"job.fio": FIO_JOB}),
]


def run_case(argv: List[str], files: Dict[str, str], workdir: Path) -> Dict[str, bytes]:
    """Runs one case in `workdir` through the CLI in-process and returns its compared files, by path
    relative to `workdir`, normalised (JSON without `WALL_KEYS`, re-dumped sorted)."""
    from ssdlab.cli import main

    for name, text in files.items():
        (workdir / name).write_text(text, encoding="utf-8")
    old = os.getcwd()
    os.chdir(workdir)
    try:
        status = main([*argv, "--out", "out"])
    finally:
        os.chdir(old)
    if status != 0:
        raise AssertionError(f"ssdlab {' '.join(argv)} exited {status}")
    return {str(p.relative_to(workdir)): normalise(p) for p in sorted(workdir.rglob("*"))
            if p.is_file() and p.suffix in COMPARED_SUFFIXES and p.name not in files}


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in WALL_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def normalise(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".json":
        return json.dumps(_strip(json.loads(data)), indent=1, sort_keys=True).encode() + b"\n"
    return data


def help_texts() -> Dict[str, str]:
    """`ssdlab --help` and `ssdlab COMMAND --help` for every command (and `ssdlab GROUP SUB --help`,
    keyed ``GROUP-SUB``), as printed at 100 columns."""
    from click.testing import CliRunner

    from ssdlab.cli import cli

    runner = CliRunner()
    texts = {"ssdlab": runner.invoke(cli, ["--help"], terminal_width=100).output}
    for name in sorted(cli.commands):
        texts[name] = runner.invoke(cli, [name, "--help"], terminal_width=100).output
        for sub in sorted(getattr(cli.commands[name], "commands", {})):  # a group's subcommands (pts)
            texts[f"{name}-{sub}"] = runner.invoke(cli, [name, sub, "--help"], terminal_width=100).output
    return texts
