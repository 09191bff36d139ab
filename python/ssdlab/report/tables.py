"""The report's tables of summary figures.

One job: pick and format the numbers of each table. A :class:`Table` holds, per cell, the text shown
and the number it came from (None for text cells or absent figures), so tests check the numbers
and ``page.py`` only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

__all__ = ["Cell", "Table"]

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
