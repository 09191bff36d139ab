"""The report's tables of summary figures.

One job: pick and format the numbers of each table. A :class:`Table` holds, per cell, the text shown
and the number it came from (None for text cells or absent figures), so tests check the numbers
and ``page.py`` only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .load import HdtachRun, Run

__all__ = ["Cell", "Table", "hdtach_table"]

MISSING = "—"


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | None = None

    @property
    def numeric(self) -> bool:
        return self.value is not None or self.text == MISSING


@dataclass
class Table:
    id: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    #: the unit or meaning of a column, shown as the header's tooltip
    notes: dict[str, str] = field(default_factory=dict)

    def column(self, name: str) -> list[Cell]:
        i = self.columns.index(name)
        return [row[i] for row in self.rows]


def number_cell(value: float | None, fmt: str | Callable[[float], str]) -> Cell:
    if value is None:
        return Cell(MISSING)
    return Cell(fmt(value) if callable(fmt) else format(value, fmt), value)


def hdtach_table(runs: Sequence[Run]) -> Table | None:
    hruns = [r for r in runs if isinstance(r, HdtachRun)]
    if not hruns:
        return None
    table = Table("summary-hdtach", ["Run", "Pass", "Average MB/s", "Minimum MB/s", "% of clean"])
    for run in hruns:
        for p in run.passes:
            table.rows.append(
                [Cell(run.name), Cell(p.name), number_cell(p.avg_mb_s, ".1f"), number_cell(p.min_mb_s, ".1f"),
                 number_cell(p.pct_of_clean, ".0f")]
            )
    return table
