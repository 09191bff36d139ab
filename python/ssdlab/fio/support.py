"""docs/fio.md's option support table, made from the option registry (`ssdlab.fio.options`, one
declaration per option with its status and reason), so the docs cannot drift from what ssdlab does.
`tests/test_fio_options.py` checks that the file holds the current table;
``python -m ssdlab.fio.support docs/fio.md`` writes it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ssdlab.fio import options as opts
from ssdlab.fio.options import OptionSpec

BEGIN = "<!-- option support: made by python -m ssdlab.fio.support; do not edit by hand -->"
END = "<!-- end of option support -->"
STATUS = {opts.SIM: "supported", opts.HOST: "accepted, no effect on a simulated drive", opts.REFUSED: "refused"}


def row(o: OptionSpec) -> str:
    """One option's row: name (alias), status, what the simulator does with it or why not."""
    names = f"`{o.name}`" + (f" (`{o.alias}`)" if o.alias else "")
    status = STATUS[o.kind]
    if o.newer:
        status += f" (fio {opts.FIO_VERSION} lacks it)"
    if o.absent:
        status += " (the tested fio build lacks it)"
    where = f"only with ioengine={', '.join(o.engines)}: " if o.engines else ""
    note = f"{where}{o.help}".replace("|", "\\|")
    return f"| {names} | {status} | {note} |"


def support_table() -> str:
    """Every option, by name."""
    lines = ["| option (alias) | status | what the simulator does, or why not |", "|---|---|---|"]
    lines += [row(o) for o in sorted(opts.OPTIONS.values(), key=lambda o: o.name)]
    return "\n".join(lines) + "\n"


def with_table(text: str) -> str:
    """`text` (docs/fio.md) with the block between `BEGIN` and `END` replaced by the table."""
    head, found, rest = text.partition(BEGIN)
    if not found:
        raise ValueError(f"no '{BEGIN}' line")
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{support_table()}{END}{tail}"


if __name__ == "__main__":  # pragma: no cover - the doc's maintenance command
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/fio.md")
    path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
