"""The report's tables of summary figures.

One job: pick and format the numbers of each table. A :class:`Table` holds, per cell, the text shown
and the number it came from (None for text cells or absent figures), so tests check the numbers
and ``page.py`` only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from .load import ConsistencyRun, HdtachRun, Run, spare_label

__all__ = ["Cell", "Table", "consistency_table", "hdtach_table"]

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


def _latency(us: float) -> str:
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}"


def _device(run: Run) -> Cell:
    return Cell(run.device or "simulated")


def consistency_table(runs: Sequence[Run]) -> Table | None:
    rows = [r for r in runs if isinstance(r, ConsistencyRun)]
    if not rows:
        return None
    table = Table(
        "summary-consistency",
        ["Run", "Drive", "Device", "Spare area", "Clean IOPS", "Steady mean IOPS", "Steady min IOPS",
         "WA", "Steady WA", "Latency p50 (µs)", "p99 (µs)", "p99.9 (µs)"],
        notes={
            "Clean IOPS": "mean IOPS over the first 10 s of random writes",
            "Steady mean IOPS": "mean IOPS from zoom_start_s to the end",
            "Steady min IOPS": "lowest one-second IOPS from zoom_start_s to the end",
            "WA": "NAND writes ÷ host writes over the random-write phase",
            "Steady WA": "NAND writes ÷ host writes from zoom_start_s to the end",
            "Latency p50 (µs)": "write latency percentiles of the random-write phase, microseconds",
        },
    )
    for run in rows:
        table.rows.append(
            [
                Cell(run.name),
                Cell(run.drive),
                _device(run),
                Cell(spare_label(run.spare_area_pct)),
                number_cell(run.figure("iops_clean"), ",.0f"),
                number_cell(run.figure("iops_steady_mean"), ",.0f"),
                number_cell(run.figure("iops_steady_min"), ",.0f"),
                number_cell(run.figure("write_amplification"), ".2f"),
                number_cell(run.figure("steady_write_amplification"), ".2f"),
                number_cell(run.figure("latency_us.p50"), _latency),
                number_cell(run.figure("latency_us.p99"), _latency),
                number_cell(run.figure("latency_us.p999"), _latency),
            ]
        )
    return table


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
