"""A sweep's summary charts (``DIR/charts/*.png``) and its interactive report (``DIR/report.html``).

For each of the scenario's metrics (`Scenario.metrics`; for ``fio``, the last job's write IOPS):

* ``lines-<metric>.png`` when a varying key is numeric (spare area, OP, capacity, duration, ...):
  the metric over the first such key, one line per combination of the other varying keys (colour
  for the first of them, dashes for the last: "lines per policy/preset");
* ``heatmap-<metric>.png`` when two or more keys vary: the metric over two of them (the numeric
  key across, the last other key down), one panel per combination of the rest;
* ``bars-<metric>.png`` when a single key varies and it is not numeric.

Failed points are gaps in lines and grey "failed" cells in heatmaps; the subtitle counts them.
The report is ``ssdlab report`` over the points that ran (scenarios it reads: all but ``fio``).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ssdlab.results import _write_atomically
from ssdlab.sizes import parse_size
from ssdlab.sweep.points import _text
from ssdlab.sweep.spec import SweepSpec

__all__ = ["CHARTS", "MAX_LINES", "MAX_PANELS", "write_charts", "write_points_report"]

CHARTS = "charts"
MAX_LINES = 16
"""More combinations than this are not drawn as lines (the chart would be unreadable)."""
MAX_PANELS = 6
DPI = 110
_STYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def metrics(spec: SweepSpec, table: pd.DataFrame) -> List[Tuple[str, str]]:
    """The (column, title) pairs to chart: the scenario's, where the table has numbers."""
    chosen = list(spec.scenario.metrics)
    if not chosen:  # fio: the columns depend on the job file
        iops = [c for c in table.columns if str(c).endswith("_write_iops")]
        chosen = [(iops[-1], f"{iops[-1].rsplit('_write_iops', 1)[0]}: write IOPS")] if iops else []
    return [(c, t) for c, t in chosen if c in table and pd.to_numeric(table[c], errors="coerce").notna().any()]


def _axes(spec: SweepSpec, table: pd.DataFrame) -> Tuple[List[str], List[str]]:
    """The varying keys with more than one value, split into numeric and the others."""
    numeric, other = [], []
    for key in spec.varying:
        values = [p.values.get(key) for p in spec.points]
        if len({repr(v) for v in values}) < 2:
            continue
        option = spec.scenario.option(key)
        kind = option.axis if option is not None else "category"
        if kind in ("number", "size") and all(_position(kind, v) is not None for v in values):
            numeric.append(key)
        else:
            other.append(key)
    return numeric, other


def _position(kind: str, value: Any) -> Optional[float]:
    if isinstance(value, bool) or value is None:
        return None
    if kind == "size":
        try:
            return float(parse_size(value, what="size"))
        except ValueError:
            return None
    return float(value) if isinstance(value, (int, float)) else None


def _fmt(value: float) -> str:
    if not np.isfinite(value):
        return ""
    a = abs(value)
    return f"{value:,.0f}" if a >= 100 else f"{value:.1f}" if a >= 10 else f"{value:.2f}"


def _figure(title: str, size: Tuple[float, float] = (10.0, 5.0)) -> Figure:
    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle(title, fontsize=13, fontweight="bold")
    return fig


def _caption(ax: Axes, text: str) -> None:
    """The sweep's one-line description under the title, as the scenario charts have it."""
    ax.set_title(text, fontsize=9, color="#555555")


def _style(ax: Axes) -> None:
    ax.grid(True, color="#d0d0d0", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _subtitle(spec: SweepSpec, table: pd.DataFrame) -> str:
    base = ", ".join(f"{k} {_text(k, v)}" for k, v in spec.base.items())
    failed = int(table["error"].notna().sum())
    fail = f" · {failed} of {len(table)} points failed (see the error column)" if failed else ""
    return f"{spec.scenario.name} sweep" + (f" · {base}" if base else "") + f" · {len(table)} points{fail}"


def _label(values: Dict[str, Any]) -> str:
    return ", ".join(f"{k} {_text(k, v)}" for k, v in values.items()) or "all points"


def _numbers(table: pd.DataFrame, column: str) -> np.ndarray:
    values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    return np.where(table["error"].isna().to_numpy(), values, np.nan)


def _rows(spec: SweepSpec, table: pd.DataFrame) -> List[Dict[str, Any]]:
    """Each table row's point values as the spec wrote them."""
    by_name = {p.name: p.values for p in spec.points}
    return [by_name[name] for name in table["point"]]


def _key(row: Dict[str, Any], keys: Sequence[str]) -> Tuple[str, ...]:
    return tuple(_text(k, row.get(k)) for k in keys)


def _lines(spec: SweepSpec, table: pd.DataFrame, column: str, title: str, x: str,
           groups: List[str]) -> Optional[Figure]:
    option = spec.scenario.option(x)
    kind = option.axis if option is not None else "number"
    rows = _rows(spec, table)
    xs = np.array([_position(kind, r.get(x)) for r in rows], dtype=np.float64)
    ys = _numbers(table, column)
    keys = [_key(r, groups) for r in rows]
    combos = list(dict.fromkeys(keys))
    if len(combos) > MAX_LINES:
        return None
    fig = _figure(f"{title} by {x}")
    ax = fig.add_subplot()
    _style(ax)
    _caption(ax, _subtitle(spec, table))
    split = len(groups) - 1 if len(groups) > 1 else len(groups)  # colour keys, then the dashed one
    colours = list(dict.fromkeys(c[:split] for c in combos))
    dashes = list(dict.fromkeys(c[-1] for c in combos)) if len(groups) > 1 else []
    for i, combo in enumerate(combos):
        mask = np.array([k == combo for k in keys])
        order = np.argsort(xs[mask], kind="stable")
        colour = f"C{colours.index(combo[:split]) % 10}"
        style = _STYLES[dashes.index(combo[-1]) % len(_STYLES)] if dashes else "-"
        ax.plot(xs[mask][order], ys[mask][order], linestyle=style, marker=_MARKERS[i % len(_MARKERS)],
                color=colour, label=_label(dict(zip(groups, combo))), linewidth=1.8, markersize=6, alpha=0.85,
                markerfacecolor="none" if i % 2 else colour)
    if kind == "size":
        ticks = sorted({(float(pos), _text(x, r.get(x))) for pos, r in zip(xs, rows)})
        ax.set_xticks([t for t, _ in ticks], [lab for _, lab in ticks])
    ax.set_xlabel(x)
    ax.set_ylabel(title)
    ax.set_ylim(bottom=0)
    if groups:
        fig.legend(loc="outside lower center", ncols=min(len(combos), 4), fontsize=8, frameon=False, handlelength=4)
    return fig


def _heatmap(spec: SweepSpec, table: pd.DataFrame, column: str, title: str, x: str, y: str,
             rest: List[str]) -> Optional[Figure]:
    rows = _rows(spec, table)
    values = _numbers(table, column)
    failed = table["error"].notna().to_numpy()
    xv = list(dict.fromkeys(_text(x, r.get(x)) for r in rows))
    yv = list(dict.fromkeys(_text(y, r.get(y)) for r in rows))
    panels = list(dict.fromkeys(_key(r, rest) for r in rows))
    if len(panels) > MAX_PANELS:
        return None
    width = min(max(3.0 + 1.2 * len(xv) * len(panels), 8.0), 16.0)
    fig = _figure(f"{title}: {y} × {x}", (width, 3.0 + 0.5 * len(yv)))
    fig.supxlabel(_subtitle(spec, table), fontsize=9, color="#555555")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    finite = values[np.isfinite(values)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    image = None
    for ax, panel in zip(axes, panels):
        grid = np.full((len(yv), len(xv)), np.nan)
        bad = np.zeros((len(yv), len(xv)), bool)
        for row, value, fail in zip(rows, values, failed):
            if _key(row, rest) != panel:
                continue
            r, c = yv.index(_text(y, row.get(y))), xv.index(_text(x, row.get(x)))
            grid[r, c], bad[r, c] = value, fail
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
        ax.set_facecolor("#dddddd")
        for r, c in itertools.product(range(len(yv)), range(len(xv))):
            if bad[r, c]:
                ax.text(c, r, "failed", ha="center", va="center", fontsize=8, color="#aa0000")
            elif np.isfinite(grid[r, c]):
                light = (grid[r, c] - vmin) / ((vmax - vmin) or 1) > 0.6
                ax.text(c, r, _fmt(grid[r, c]), ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
        ax.set_xticks(range(len(xv)), xv)
        ax.set_yticks(range(len(yv)), yv if ax is axes[0] else [""] * len(yv))
        ax.set_xlabel(x)
        if ax is axes[0]:
            ax.set_ylabel(y)
        if rest:
            ax.set_title(_label(dict(zip(rest, panel))), fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.9, label=title)
    return fig


def _bars(spec: SweepSpec, table: pd.DataFrame, column: str, title: str, key: str) -> Figure:
    fig = _figure(f"{title} by {key}")
    ax = fig.add_subplot()
    _style(ax)
    _caption(ax, _subtitle(spec, table))
    labels = [_text(key, r.get(key)) for r in _rows(spec, table)]
    values = _numbers(table, column)
    ax.bar(range(len(labels)), np.nan_to_num(values), color="C0")
    for i, v in enumerate(values):
        ax.text(i, 0 if not np.isfinite(v) else v, "failed" if not np.isfinite(v) else _fmt(v), ha="center",
                va="bottom", fontsize=8, color="#aa0000" if not np.isfinite(v) else "black")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel(key)
    ax.set_ylabel(title)
    return fig


def _slug(column: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", column).strip("-")


def figures(spec: SweepSpec, table: pd.DataFrame) -> Dict[str, Figure]:
    """The charts of a finished sweep, keyed by file name (none for a table without numbers)."""
    out: Dict[str, Figure] = {}
    if table.empty:
        return out
    numeric, other = _axes(spec, table)
    varying = [k for k in spec.varying if k in numeric or k in other]
    for column, title in metrics(spec, table):
        slug = _slug(column)
        if numeric:
            x = numeric[0]
            fig = _lines(spec, table, column, title, x, [k for k in varying if k != x])
            if fig is not None:
                out[f"lines-{slug}.png"] = fig
        if len(varying) >= 2:
            x = numeric[0] if numeric else varying[0]
            y = [k for k in varying if k != x][-1]
            rest = [k for k in varying if k not in (x, y)]
            fig = _heatmap(spec, table, column, title, x, y, rest)
            if fig is not None:
                out[f"heatmap-{slug}.png"] = fig
        elif len(varying) == 1 and not numeric:
            out[f"bars-{slug}.png"] = _bars(spec, table, column, title, varying[0])
    return out


def write_charts(out: Path, spec: SweepSpec, table: pd.DataFrame) -> List[Path]:
    """Writes ``DIR/charts/*.png`` (atomically, replacing the previous ones); returns their paths."""
    made = figures(spec, table)
    if not made:
        return []

    def write(staging: Path) -> None:
        for name, fig in made.items():
            fig.savefig(staging / name)

    target = _write_atomically(out / CHARTS, write)
    return [target / name for name in made]


def write_points_report(out: Path, spec: SweepSpec, table: pd.DataFrame) -> Optional[Path]:
    """``DIR/report.html`` over the points that ran, when the report reads the scenario's results."""
    from ssdlab.report import write_report
    from ssdlab.sweep.table import POINTS

    ok: Sequence[str] = [p for p, e in zip(table["point"], table["error"]) if e is None or e != e]
    if not spec.scenario.reportable or not ok:
        return None
    failed = len(table) - len(ok)
    title = f"Sweep {Path(spec.source).stem}: {spec.scenario.name}, {len(ok)} points" + (
        f" ({failed} more failed: see results.parquet)" if failed else "")
    return write_report([out / POINTS / name for name in ok], out / "report.html", title)
