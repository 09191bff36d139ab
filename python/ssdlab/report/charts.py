"""The report's charts as plotly specs, and the buttons that switch between them.

One job: from loaded runs, decide what each chart shows: the traces (the numbers), their axes and
titles, and for switchable charts which button combination shows which spec. A :class:`Chart` is
plain data (JSON-ready dicts in plotly.js's own format); ``page.py`` turns it into HTML and the
page's script draws ``specs[i]`` when the buttons select ``keys[i]``.

The consistency charts live in their scenario module (``ssdlab.scenarios.consistency_report``).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from .load import Run

__all__ = [
    "Chart",
    "drive_keys",
]

#: Colours by drive, in the order drives first appear (colour-blind-friendly where it matters).
PALETTE = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d", "#475569")
#: Colours by HD Tach pass, in run order (clean first).
PASS_COLOURS = ("#059669", "#dc2626", "#2563eb", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#475569")

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
GRID = "#e5e7eb"
AXIS = "#9ca3af"


@dataclass
class Chart:
    """A plotly chart, switchable by rows of buttons.

    ``rows`` are ``(row name, button labels)``; ``keys[i]`` holds one button index per row and
    selects ``specs[i]`` (``{"data": [...], "layout": {...}}``). A chart without rows has one spec
    under the key ``()``. The first key is shown first.
    """

    id: str
    specs: list[dict[str, Any]]
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    keys: list[tuple[int, ...]] = field(default_factory=list)
    caption: str = ""

    def __post_init__(self) -> None:
        if not self.keys:
            self.keys = [()] * len(self.specs)
        if len(self.keys) != len(self.specs):
            raise ValueError("a chart needs one key per spec")

    def spec(self, *labels: str) -> dict[str, Any]:
        """The spec shown when the buttons with these labels (one per row) are selected."""
        key = tuple(self.rows[r][1].index(label) for r, label in enumerate(labels))
        return self.specs[self.keys.index(key)]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "keys": [list(k) for k in self.keys], "specs": self.specs}


# --- small helpers -------------------------------------------------------------------------------


def chart_text(text: str) -> str:
    """Plain text for plotly's title/hover markup (which reads <b>, <br>, entities)."""
    return html.escape(text, quote=False)


def chart_title(main: str, sub: str) -> dict[str, Any]:
    return {
        "text": f"<b>{chart_text(main)}</b><br><span style='font-size:13px;color:#6b7280'>{chart_text(sub)}</span>",
        "x": 0.0,
        "xanchor": "left",
        "xref": "paper",
        "font": {"size": 17},
    }


def chart_axis(title: str, **extra: Any) -> dict[str, Any]:
    axis = {
        "title": {"text": title, "standoff": 8},
        "gridcolor": GRID,
        "linecolor": AXIS,
        "zeroline": False,
        "ticks": "outside",
        "tickcolor": AXIS,
        "showline": True,
        "mirror": False,
    }
    axis.update(extra)
    return axis


def chart_layout(title: dict[str, Any], xaxis: dict[str, Any], yaxis: dict[str, Any], **extra: Any) -> dict[str, Any]:
    layout = {
        "title": title,
        "xaxis": xaxis,
        "yaxis": yaxis,
        "height": 440,
        "margin": {"l": 72, "r": 24, "t": 76, "b": 56},
        "font": {"family": FONT, "size": 13, "color": "#111827"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT}},
        "showlegend": False,
        "legend": {"orientation": "h", "x": 1.0, "xanchor": "right", "y": 1.02, "yanchor": "bottom"},
    }
    layout.update(extra)
    return layout


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is at least ``value`` (an axis top)."""
    if value <= 0 or not math.isfinite(value):
        return 1.0
    exp = math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        top = step * 10**exp
        if top >= value * (1 - 1e-12):
            return float(top)
    return float(10 ** (exp + 1))  # pragma: no cover - the loop always returns


def format_bytes(n: float | None) -> str:
    """4096 -> '4 KiB' (binary units, as the CLI's sizes)."""
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"  # pragma: no cover


# --- grouping ------------------------------------------------------------------------------------

#: Fields that can tell apart two runs of one drive at one spare-area setting, in order of preference.
_DISTINGUISHING = (
    ("device", lambda v: str(v)),
    ("gc_policy", lambda v: str(v)),
    ("qd", lambda v: f"QD{v:g}" if isinstance(v, (int, float)) else f"QD{v}"),
    ("block_size", lambda v: f"{format_bytes(v)} blocks" if isinstance(v, (int, float)) else str(v)),
    ("user_capacity_bytes", lambda v: format_bytes(v) if isinstance(v, (int, float)) else str(v)),
    ("duration_s", lambda v: f"{v:g} s" if isinstance(v, (int, float)) else str(v)),
    ("seed", lambda v: f"seed {v}"),
)


def drive_keys(runs: Sequence[Run], setting=lambda r: r.spare_area_pct) -> list[str]:
    """The drive-button label of each run.

    Runs group by ``drive``; when a drive has two runs with the same ``setting`` (the other button
    row, spare area by default), all its runs get the first summary field that tells them apart
    (device, GC policy, QD, ...) appended, else their directory name.
    """
    labels = [r.drive for r in runs]
    by_drive: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        by_drive.setdefault(run.drive, []).append(i)
    for drive, idx in by_drive.items():
        settings = [setting(runs[i]) for i in idx]
        if len(set(settings)) == len(settings):
            continue
        for key, fmt in _DISTINGUISHING:
            values = [runs[i].summary.get(key) for i in idx]
            pairs = list(zip(settings, map(repr, values)))
            if len(set(pairs)) == len(pairs):
                for i, v in zip(idx, values):
                    labels[i] = f"{drive} · {fmt(v)}" if v is not None else drive
                break
        else:
            for i in idx:
                labels[i] = f"{drive} · {runs[i].path.name}"
    # still ambiguous (e.g. same directory name twice): fall back to the unique run names
    seen: dict[tuple[str, Any], int] = {}
    for i, run in enumerate(runs):
        seen[(labels[i], setting(run))] = seen.get((labels[i], setting(run)), 0) + 1
    return [run.name if seen[(lab, setting(run))] > 1 else lab for lab, run in zip(labels, runs)]
