"""docs/parameters.md's table of command options, made from the scenarios' declarations
(`Opt.doc_row`), so the docs cannot drift from the commands. `tests/test_scenarios_registry.py`
checks that the file holds the current table;
``python -m ssdlab.scenarios.docs docs/parameters.md`` writes it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ssdlab.scenarios import all_scenarios

BEGIN = "<!-- command options: made by python -m ssdlab.scenarios.docs; do not edit by hand -->"
END = "<!-- end of command options -->"


def options_table() -> str:
    """One table per scenario: flag, API keyword, default, accepted values (the shared drive and
    result options once, at the end)."""
    lines = []
    for entry in all_scenarios():
        lines += [f"`ssdlab {' '.join(entry.command_path)}`", "", "| option | API keyword | default | accepted values |",
                  "|---|---|---|---|"]
        lines += [o.doc_row() for o in entry.options]
        lines.append("")
    lines += ["Every scenario above also takes the drive and result options:", "",
              "| option | API keyword | default | accepted values |", "|---|---|---|---|"]
    from ssdlab.scenarios.shared import DEVICE, SIM

    lines += [o.doc_row() for o in SIM]
    lines += ["", "and consistency, hdtach and torture the device options (docs/safety.md):", "",
              "| option | API keyword | default | accepted values |", "|---|---|---|---|"]
    lines += [o.doc_row() for o in DEVICE]
    return "\n".join(lines) + "\n"


def with_table(text: str) -> str:
    """`text` (docs/parameters.md) with the block between `BEGIN` and `END` replaced by the table."""
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{options_table()}{END}{tail}"


if __name__ == "__main__":  # pragma: no cover - the doc's maintenance command
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/parameters.md")
    path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
