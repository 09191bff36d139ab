"""Lay a built report out as one self-contained HTML page.

One job: HTML. Everything the page needs is inline: the style sheet, plotly.js itself (from the
installed ``plotly`` package, no CDN) and the chart data, so the file opens from disk with no
network. The output depends only on its input (no dates, no random ids).
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Any

from .assets import CSS, JS
from .charts import Chart
from .load import SsdlabError
from .tables import MISSING, Table

__all__ = ["Grid", "Image", "Notes", "Section", "render", "plotly_js"]


@dataclass
class Image:
    """A PNG chart a result directory holds, inlined as a data: URL (the PTS report's plots)."""

    id: str
    png: bytes
    alt: str
    caption: str = ""


@dataclass
class Notes:
    """A titled list of lines (a run's deviations from a spec)."""

    id: str
    title: str
    lines: list[str] = field(default_factory=list)
    empty: str = "none"


@dataclass
class Grid:
    """Items side by side: one column per run, each under its heading (``columns``)."""

    id: str
    heading: str
    columns: list[tuple[str, list[Any]]] = field(default_factory=list)


@dataclass
class Section:
    id: str
    heading: str
    lede: str = ""
    #: charts, tables, images, notes and grids in display order
    items: list[Any] = field(default_factory=list)


def chart_section(id: str, heading: str, lede: str, chart: Any, table: Any = None) -> list[Section]:
    """A scenario's report section: its chart and, if there is one, its table under it; no section
    when the runs gave no chart."""
    if not chart:
        return []
    return [Section(id, heading, lede, [chart, *([table] if table else [])])]


def plotly_js() -> str:
    """The full plotly.js bundle shipped with the plotly package."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise SsdlabError("report: the plotly package is missing (pip install 'plotly>=5.18')") from None
    return get_plotlyjs()


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null (plotly leaves a gap)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _json_for_script(data: Any) -> str:
    text = json.dumps(_clean(data), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # inside <script>, "</script" would close the element and "<!--" change how it is parsed: "<" only
    # ever appears inside JSON strings, where \u003c means the same
    return text.replace("<", "\\u003c")


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _chart(chart: Chart) -> str:
    out = [f'<figure class="chart" id="figure-{_e(chart.id)}">', f'<div class="plot" id="plot-{_e(chart.id)}" data-chart="{_e(chart.id)}"></div>']
    if chart.rows:
        out.append(f'<div class="switch" role="group" aria-label="data shown" data-chart="{_e(chart.id)}">')
        for r, (name, labels) in enumerate(chart.rows):
            out.append(f'<span class="row-name">{_e(name)}</span><div class="buttons">')
            for i, label in enumerate(labels):
                out.append(
                    f'<button type="button" data-chart="{_e(chart.id)}" data-row="{r}" data-index="{i}" '
                    f'aria-pressed="false">{_e(label)}</button>'
                )
            out.append("</div>")
        out.append("</div>")
    if chart.caption:
        out.append(f"<figcaption>{_e(chart.caption)}</figcaption>")
    out.append("</figure>")
    return "\n".join(out)


def _table(table: Table) -> str:
    numeric = [all(row[i].numeric for row in table.rows) for i in range(len(table.columns))]
    out = [f'<div class="table-wrap"><table id="{_e(table.id)}"><thead><tr>']
    for col, num in zip(table.columns, numeric):
        note = table.notes.get(col)
        attrs = (' class="num"' if num else "") + (f' title="{_e(note)}"' if note else "")
        out.append(f"<th{attrs}>{_e(col)}</th>")
    out.append("</tr></thead><tbody>")
    for row in table.rows:
        out.append("<tr>")
        for cell, num in zip(row, numeric):
            classes = " ".join(c for c in ("num" if num else "", "missing" if cell.text == MISSING else "") if c)
            attrs = f' class="{classes}"' if classes else ""
            if cell.value is not None:
                attrs += f' data-value="{cell.value!r}"'
            out.append(f"<td{attrs}>{_e(cell.text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _image(image: Image) -> str:
    import base64

    data = base64.b64encode(image.png).decode("ascii")
    out = [f'<figure class="image" id="figure-{_e(image.id)}">',
           f'<img src="data:image/png;base64,{data}" alt="{_e(image.alt)}" loading="lazy">']
    if image.caption:
        out.append(f"<figcaption>{_e(image.caption)}</figcaption>")
    out.append("</figure>")
    return "\n".join(out)


def _notes(notes: Notes) -> str:
    items = "".join(f"<li>{_e(line)}</li>" for line in notes.lines) or f'<li class="none">{_e(notes.empty)}</li>'
    return f'<div class="notes" id="{_e(notes.id)}"><h4>{_e(notes.title)}</h4><ul>{items}</ul></div>'


def _grid(grid: Grid) -> str:
    out = [f'<div class="grid-block" id="{_e(grid.id)}">']
    if grid.heading:
        out.append(f"<h3>{_e(grid.heading)}</h3>")
    out.append(f'<div class="grid" style="--columns:{max(len(grid.columns), 1)}">')
    for heading, items in grid.columns:
        out.append(f'<div class="cell"><div class="cell-head">{_e(heading)}</div>')
        out.extend(_item(i) for i in items)
        out.append("</div>")
    out.append("</div></div>")
    return "\n".join(out)


def _item(item: Any) -> str:
    if isinstance(item, Chart):
        return _chart(item)
    if isinstance(item, Table):
        return _table(item)
    if isinstance(item, Image):
        return _image(item)
    if isinstance(item, Notes):
        return _notes(item)
    if isinstance(item, Grid):
        return _grid(item)
    raise TypeError(f"a report section cannot show a {type(item).__name__}")


def render(title: str, intro: str, sections: list[Section], footer: str, *, plotly: str | None = None) -> str:
    """The page. ``plotly`` overrides the inlined plotly.js (tests pass a stub to stay small)."""
    charts = [item for s in sections for item in s.items if isinstance(item, Chart)]
    charts += [i for s in sections for g in s.items if isinstance(g, Grid) for _h, items in g.columns for i in items
               if isinstance(i, Chart)]
    body = []
    for section in sections:
        body.append(f'<section class="card" id="{_e(section.id)}">')
        body.append(f"<h2>{_e(section.heading)}</h2>")
        if section.lede:
            body.append(f'<p class="lede">{_e(section.lede)}</p>')
        for item in section.items:
            body.append(_item(item))
        body.append("</section>")
    nav = "".join(f'<a href="#{_e(s.id)}">{_e(s.heading)}</a>' for s in sections)
    data = _json_for_script({"charts": [c.to_json() for c in charts]})
    js = plotly_js() if plotly is None else plotly
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="generator" content="ssdlab report">',
            f"<title>{_e(title)}</title>",
            f"<style>{CSS}</style>",
            "</head>",
            "<body>",
            '<header class="top"><div class="inner">',
            '<div class="brand">ssdlab</div>',
            f"<h1>{_e(title)}</h1>",
            f'<p class="intro">{_e(intro)}</p>',
            f"<nav>{nav}</nav>",
            "</div></header>",
            "<main>",
            *body,
            "</main>",
            f"<footer>{footer}</footer>",
            f'<script type="application/json" id="ssdlab-report">{data}</script>',
            f'<script type="text/javascript">{js}</script>',
            f'<script type="text/javascript">{JS}</script>',
            "</body>",
            "</html>",
            "",
        ]
    )
