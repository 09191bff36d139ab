"""Byte identity: every golden case (tests/golden/cases.py, one small run per scenario and preset
family) writes the same files as the fixtures in tests/golden/, which were made with the code before
the scenario-module refactor; and every command's --help is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from golden.cases import CASES, help_texts, run_case

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name,argv,files", CASES, ids=[c[0] for c in CASES])
def test_case_writes_the_golden_files(tmp_path: Path, name: str, argv: list, files: dict) -> None:
    want = {str(p.relative_to(GOLDEN / name)): p.read_bytes() for p in sorted((GOLDEN / name).rglob("*"))
            if p.is_file()}
    assert want, f"no fixtures for {name}: run scripts/make-golden.py {name}"
    got = run_case(argv, files, tmp_path)
    assert sorted(got) == sorted(want)
    for rel in want:
        assert got[rel] == want[rel], f"{name}: {rel} differs from tests/golden/{name}/{rel}"


def test_every_command_help_is_unchanged() -> None:
    want = {p.stem: p.read_text(encoding="utf-8") for p in (GOLDEN / "help").glob("*.txt")}
    got = help_texts()
    assert sorted(got) == sorted(want)
    for command, text in want.items():
        assert got[command] == text, f"ssdlab {command} --help changed"
