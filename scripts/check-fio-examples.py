#!/usr/bin/env python3
"""Runs fio's own example job files on a simulated drive and says, for each, what fio and ssdlab make of it.

Usage: scripts/check-fio-examples.py [EXAMPLES_DIR] [--capacity SIZE] [--capacity-for NAME=SIZE ...]
                                    [--timeout S] [--only NAME ...] [--skip NAME ...]

EXAMPLES_DIR is the ``examples`` directory of fio's source (default /tmp/fio-examples/examples; get
it with ``git clone https://github.com/axboe/fio`` -- the files are fio's, not ssdlab's, and are not
copied into this project). The jobs whose every ``ioengine=`` is a local block-IO engine (sync, psync,
pvsync, libaio, io_uring, null) or that name none are selected; for each the table gives:

* fio: what ``fio --parse-only JOB`` (the installed fio, run in EXAMPLES_DIR) says -- "parses" or its
  first error line;
* ssdlab: what ``ssdlab fio JOB --capacity SIZE`` (default 128GiB, a simulated drive large enough for
  every example's regions but one; ``--capacity-for NAME=SIZE`` gives a job its own, and
  cross-stripe-verify.fio gets the 30 x 124 GiB its comment assumes unless told otherwise) does --
  "runs" with the simulated seconds' wall time, or the one-line
  refusal ("runs, N job(s) ended in error" when, as fio does, ssdlab reports jobs that ended in an
  IO or verify error and exits with their number). A run that takes longer than --timeout seconds
  (default 900) is stopped and shown as such.

Exit status 0 when every example fio parses runs on the simulated drive, except the zoned ones,
whose refusal names the missing zoned model; 1 otherwise (the table says which).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
LOCAL_ENGINES = {"sync", "psync", "pvsync", "libaio", "io_uring", "null"}
# Jobs whose regions need more than the default drive: the capacity their own comments assume.
OWN_CAPACITY = {"cross-stripe-verify.fio": "3720GiB"}  # "assumes the drive is at around 30 * 124G"


def engines(path: Path) -> List[str]:
    """The ioengine values the job file names (fio's line rules: a ';' or '#' starts a comment)."""
    found = []
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        for mark in ";#":
            line = line.split(mark, 1)[0]
        m = re.match(r"ioengine\s*=\s*(\S+)", line.strip())
        if m:
            found.append(m.group(1).split(":")[0])
    return found


def fio_parse(path: Path) -> str:
    r = subprocess.run(["fio", "--parse-only", path.name], cwd=path.parent, capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 0:
        return "parses"
    lines = [ln.strip() for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
    return "refuses: " + (lines[0] if lines else f"exit {r.returncode}")


def ssdlab_run(path: Path, capacity: str, timeout: float) -> Tuple[str, float]:
    cmd = [sys.executable, "-m", "ssdlab", "fio", str(path), "--capacity", capacity, "-q",
           "--output-format", "json", "--output", os.devnull]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=path.parent, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    except subprocess.TimeoutExpired:
        return f"stopped after {timeout:g} s (still simulating)", time.monotonic() - start
    took = time.monotonic() - start
    if r.returncode == 0:
        return "runs", took
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("ssdlab: error: ")]
    if not lines and 0 < r.returncode < 128 and "Traceback" not in r.stderr:
        # ssdlab fio, like fio, exits with the number of jobs that ended in error (the run happened)
        first = (r.stderr.strip().splitlines() or ["?"])[0]
        return f"runs, {r.returncode} job(s) ended in error as fio reports it: {first}", took
    text = lines[0][len("ssdlab: error: "):] if lines else (r.stderr.strip().splitlines() or ["?"])[-1]
    return "refuses: " + text.replace(str(path.parent) + "/", ""), took


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples", nargs="?", default="/tmp/fio-examples/examples", help="fio's examples directory")
    ap.add_argument("--capacity", default="128GiB", help="the simulated drive's capacity (default 128GiB)")
    ap.add_argument("--capacity-for", nargs="*", default=[], metavar="NAME=SIZE",
                    help="a job's own drive capacity (default: cross-stripe-verify.fio=3720GiB)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds a simulated run may take (default 900)")
    ap.add_argument("--only", nargs="*", help="only these job files (names)")
    ap.add_argument("--skip", nargs="*", default=[], help="leave these job files (names) out")
    args = ap.parse_args(argv)
    own = dict(OWN_CAPACITY)
    for item in args.capacity_for:
        name, eq, size = item.partition("=")
        if not eq or not name or not size:
            ap.error(f"--capacity-for wants NAME=SIZE, got {item!r}")
        own[name] = size
    where = Path(args.examples)
    if not where.is_dir():
        print(f"check-fio-examples: {where} is not a directory; clone fio (https://github.com/axboe/fio) and give "
              f"its examples directory", file=sys.stderr)
        return 2
    jobs = [p for p in sorted(where.glob("*.fio")) if set(engines(p)) <= LOCAL_ENGINES]
    if args.only:
        jobs = [p for p in jobs if p.name in args.only]
    jobs = [p for p in jobs if p.name not in args.skip]
    rows = []
    failed = []
    print(f"| job | ioengine | fio {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()} "
          f"--parse-only | ssdlab fio --capacity {args.capacity} (or the job's own) |")
    print("|---|---|---|---|")
    for p in jobs:
        fio = fio_parse(p)
        capacity = own.get(p.name, args.capacity)
        mine, took = ssdlab_run(p, capacity, args.timeout)
        shown = f"runs ({took:.0f} s)" if mine == "runs" else \
            f"{mine.replace('runs,', f'runs ({took:.0f} s),', 1)}" if mine.startswith("runs") else mine
        rows.append((p.name, fio, mine))
        if capacity != args.capacity:
            shown = f"--capacity {capacity}: {shown}"
        print(f"| {p.name} | {', '.join(sorted(set(engines(p)))) or '(default)'} | {fio} | {shown} |", flush=True)
        zoned = "zoned model" in mine
        if fio == "parses" and not mine.startswith("runs") and not zoned:
            failed.append(p.name)
    parses = [r for r in rows if r[1] == "parses"]
    runs = [r for r in parses if r[2].startswith("runs")]
    print(f"\n{len(rows)} local block-IO jobs; fio parses {len(parses)}; ssdlab runs {len(runs)} of those; "
          f"refused: {', '.join(failed) or 'none'} (besides the zoned ones)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
