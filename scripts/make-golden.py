#!/usr/bin/env python3
"""Writes tests/golden/<case>/ (and tests/golden/help/) from the current code: the byte-identity
fixtures tests/test_golden.py compares against. Run it only for a deliberate change of results, and
say so in the commit.

Usage: .venv/bin/python scripts/make-golden.py [CASE ...]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from golden.cases import CASES, help_texts, run_case  # noqa: E402


def main(names: list[str]) -> None:
    golden = ROOT / "tests" / "golden"
    for name, argv, files in CASES:
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            got = run_case(argv, files, Path(tmp))
        dest = golden / name
        shutil.rmtree(dest, ignore_errors=True)
        for rel, data in got.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(data)
        print(f"{name}: {len(got)} files, {sum(len(d) for d in got.values()):,} bytes")
    if not names:
        helps = golden / "help"
        shutil.rmtree(helps, ignore_errors=True)
        helps.mkdir()
        for command, text in help_texts().items():
            (helps / f"{command}.txt").write_text(text, encoding="utf-8")
        print(f"help: {len(list(helps.iterdir()))} commands")


if __name__ == "__main__":
    main(sys.argv[1:])
