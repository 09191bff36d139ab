"""The fit report: ``fit.json`` (knobs, what determined each, figures measured vs twin, their
errors), ``fit.png`` (the measured curve and the twin's, one panel per procedure), ``fit.html``,
and what makes the directory one ``ssdlab report`` reads (its "Fit" section,
`ssdlab.fit.report_section`): ``summary.json`` (``scenario`` "fit", the twin, and fit.json's
contents) and ``fit_curves.csv`` (every curve of the overlay: procedure, series, x, y, category)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict

import numpy as np

from ssdlab.fit.engine import FitResult

__all__ = ["CURVE_COLUMNS", "curves", "figure", "report_doc", "save_report"]

CURVE_COLUMNS = ("procedure", "series", "x", "y", "category")
"""fit_curves.csv's columns: ``category`` names a bar (HD Tach pass, PTS figure), empty for a curve."""
PTS_FIGURES = (("latency_us", "QD 1 4 KiB read latency (µs)"), ("iops", "0.5 KiB read IOPS at TC x QD"),
               ("iops_4k", "4 KiB read IOPS at TC x QD"), ("seq_read_mb_s", "1 MiB sequential read MB/s"))
"""The PTS read figures of the overlay, in order (``fit.reads.ReadFigures``)."""


def _clean(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, np.generic):
        return _clean(v.item())
    return v


def report_doc(r: FitResult, twin_file: str = "") -> Dict[str, Any]:
    from ssdlab import __version__

    twin = {"consistency": None if r.twin.consistency is None else r.twin.consistency.as_dict(),
            "saturation": None if r.twin.saturation is None else r.twin.saturation.as_dict(),
            "pts": None if r.twin.reads is None else r.twin.reads.as_dict()}
    if twin["consistency"] is not None:  # times and bytes at the measured capacity
        sc = r.twin.consistency_time_scale
        for key in ("cliff_s", "cliff_bytes"):
            if twin["consistency"][key] is not None:
                twin["consistency"][key] *= sc
    return _clean({
        "ssdlab_version": __version__,
        "twin_file": twin_file,
        "sources": r.measured.get("sources"),
        "knobs": {name: {"value": k.value, "status": k.status, "determined_by": k.by} for name, k in r.table.items()},
        "determined": sorted(n for n, k in r.table.items() if k.status == "determined"),
        "undetermined": sorted(n for n, k in r.table.items() if k.status != "determined"),
        "measured": {k: v for k, v in r.measured.items() if k != "sources"},
        "twin": twin,
        "errors": r.errors,
        "evaluations": r.evaluations,
        "sim_capacity_bytes": r.sim_capacity_bytes,
        "wall_seconds": r.wall_seconds,
    })


def figure(r: FitResult) -> Any:
    """Measured vs twin, one panel per procedure measured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = r.measurements
    panels = []
    if m is not None and m.consistency:
        panels.append("consistency")
    if m is not None and m.saturation:
        panels.append("saturation")
    if m is not None and m.hdtach:
        panels.append("hdtach")
    if r.twin.reads is not None and r.measured.get("pts"):
        panels.append("pts")
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.6 * len(panels)), squeeze=False)
    for ax, name in zip(axes[:, 0], panels):
        if name == "consistency":
            c = m.consistency[0]  # type: ignore[union-attr]
            ax.scatter(np.arange(len(c.iops)), c.iops, s=3, color="tab:blue", label="measured")
            if r.twin.consistency_iops is not None:
                t = np.arange(len(r.twin.consistency_iops)) * r.twin.consistency_time_scale
                ax.scatter(t, r.twin.consistency_iops, s=3, color="tab:orange", label="twin")
            ax.set_yscale("log")
            ax.set_xlabel("time (s)")
            ax.set_ylabel("IOPS")
            e = r.errors
            ax.set_title("consistency: 4 KiB random writes after a fill · errors: "
                         + ", ".join(f"{k} {100 * v:+.1f} %" for k, v in e.items()
                                     if v is not None and k in ("clean_iops", "cliff_bytes", "steady_mean")),
                         fontsize=9)
        elif name == "saturation":
            s = m.saturation[0]  # type: ignore[union-attr]
            ax.plot(s.gb_written, s.mb_s, color="tab:blue", label="measured")
            if r.twin.saturation_curve is not None:
                gb, mb = r.twin.saturation_curve
                ax.plot(gb, mb, color="tab:orange", label="twin")
            ax.set_xlabel("GB written")
            ax.set_ylabel("MB/s")
            e = r.errors
            ax.set_title("saturation: whole-drive write · errors: "
                         + ", ".join(f"{k} {100 * v:+.1f} %" for k, v in e.items()
                                     if v is not None and k in ("cache_gb", "in_cache_mb_s", "after_cache_mb_s",
                                                                "end_mb_s")), fontsize=9)
        elif name == "pts":
            meas, tw = r.measured["pts"], r.twin.reads.as_dict()  # type: ignore[union-attr]
            shown = [(key, label) for key, label in PTS_FIGURES if meas.get(key) and tw.get(key) is not None]
            x = np.arange(len(shown))
            ax.bar(x - 0.2, [100.0] * len(shown), 0.4, color="tab:blue", label="measured")
            ax.bar(x + 0.2, [100 * tw[k] / meas[k] for k, _ in shown], 0.4, color="tab:orange", label="twin")
            ax.set_xticks(x, [f"{label}\n{meas[k]:,.0f}" for k, label in shown], fontsize=7)
            ax.set_ylabel("% of measured")
            ax.set_title("PTS reads (latency, IOPS, throughput tests) · errors: " + ", ".join(
                f"{k} {100 * v:+.1f} %" for k, v in r.errors.items() if v is not None and k.startswith("pts_")),
                fontsize=9)
        else:
            h = m.hdtach[0]  # type: ignore[union-attr]
            names = [n for n, _ in h.passes]
            clean = h.passes[0][1]
            ax.bar(range(len(names)), [100 * v / clean for _, v in h.passes], color="tab:blue", label="measured")
            ax.set_xticks(range(len(names)), names, rotation=20, ha="right", fontsize=7)
            ax.set_ylabel("% of the clean pass")
            ax.set_title(f"HD Tach passes (idle GC: {r.table['idle_gc'].value}, {r.table['idle_gc'].status})",
                         fontsize=9)
        ax.legend(loc="lower right" if name == "pts" else "upper right", fontsize=8)
        ax.grid(alpha=0.3)
    import textwrap

    fig.suptitle("\n".join(textwrap.wrap(f"ssdlab fit: measured vs twin · {r.knobs.description()}", 120)),
                 fontsize=10)
    fig.tight_layout()
    return fig


def html_page(r: FitResult) -> str | None:
    """fit.html: the measured and twin curves of each procedure overlaid, one button per procedure
    (plotly, self-contained); None without plotly (the ``report`` extra)."""
    try:
        import plotly.graph_objects as go
    except ImportError:
        return None
    m = r.measurements
    fig = go.Figure()
    groups: list = []  # (procedure, trace indices, axis titles, log y)
    if m is not None and m.consistency:
        c = m.consistency[0]
        first = len(fig.data)
        fig.add_trace(go.Scattergl(x=np.arange(len(c.iops)), y=c.iops, mode="markers", marker={"size": 3},
                                   name="measured IOPS"))
        if r.twin.consistency_iops is not None:
            t = np.arange(len(r.twin.consistency_iops)) * r.twin.consistency_time_scale
            fig.add_trace(go.Scattergl(x=t, y=r.twin.consistency_iops, mode="markers", marker={"size": 3},
                                       name="twin IOPS"))
        groups.append(("consistency", list(range(first, len(fig.data))), "time (s)", "IOPS", "log"))
    if m is not None and m.saturation:
        s = m.saturation[0]
        first = len(fig.data)
        fig.add_trace(go.Scatter(x=s.gb_written, y=s.mb_s, mode="lines", name="measured MB/s"))
        if r.twin.saturation_curve is not None:
            gb, mb = r.twin.saturation_curve
            fig.add_trace(go.Scatter(x=gb, y=mb, mode="lines", name="twin MB/s"))
        groups.append(("saturation", list(range(first, len(fig.data))), "GB written", "MB/s", "linear"))
    if m is not None and m.hdtach:
        h = m.hdtach[0]
        first = len(fig.data)
        fig.add_trace(go.Bar(x=[n for n, _ in h.passes], y=[100 * v / h.passes[0][1] for _, v in h.passes],
                             name="measured HD Tach % of clean"))
        groups.append(("HD Tach", [first], "pass", "% of the clean pass", "linear"))
    if r.twin.reads is not None and r.measured.get("pts"):
        meas, tw = r.measured["pts"], r.twin.reads.as_dict()
        shown = [(key, label) for key, label in PTS_FIGURES if meas.get(key) and tw.get(key) is not None]
        first = len(fig.data)
        fig.add_trace(go.Bar(x=[label for _, label in shown], y=[100.0] * len(shown), name="measured PTS",
                             text=[f"{meas[k]:,.1f}" for k, _ in shown]))
        fig.add_trace(go.Bar(x=[label for _, label in shown], y=[100 * tw[k] / meas[k] for k, _ in shown],
                             name="twin PTS", text=[f"{tw[k]:,.1f}" for k, _ in shown]))
        groups.append(("PTS reads", [first, first + 1], "figure", "% of measured", "linear"))
    if not groups:
        return None
    buttons = []
    for name, idx, xt, yt, ytype in groups:
        visible = [i in idx for i in range(len(fig.data))]
        errs = ", ".join(f"{k} {100 * v:+.1f} %" for k, v in r.errors.items() if v is not None)
        buttons.append({"label": name, "method": "update",
                        "args": [{"visible": visible}, {"xaxis.title.text": xt, "yaxis.title.text": yt,
                                                        "yaxis.type": ytype,
                                                        "title.text": f"{name}: measured vs twin · {errs}"}]})
    first_name, first_idx, xt, yt, ytype = groups[0]
    for i, trace in enumerate(fig.data):
        trace.visible = i in first_idx
    fig.update_layout(updatemenus=[{"type": "buttons", "direction": "right", "x": 0, "y": 1.15, "xanchor": "left",
                                    "buttons": buttons}],
                      title={"text": f"{first_name}: measured vs twin", "y": 0.97},
                      xaxis_title=xt, yaxis_title=yt, yaxis_type=ytype, template="plotly_white", height=560)
    import html as _html

    def cell(v: Any) -> str:
        return f"<td>{_html.escape(str(v))}</td>"

    rows = "".join(f"<tr>{cell(n)}{cell(k.value)}{cell(k.status)}{cell(k.by)}</tr>" for n, k in r.table.items())
    table = ("<table border=1 cellpadding=4 style='border-collapse:collapse;font:13px sans-serif'>"
             "<tr><th>knob</th><th>value</th><th>status</th><th>determined by</th></tr>" + rows + "</table>")
    body = fig.to_html(full_html=False, include_plotlyjs=True)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>ssdlab fit</title></head><body>"
            f"<h2 style='font:18px sans-serif'>ssdlab fit · {_html.escape(r.knobs.description())}</h2>"
            f"{body}{table}</body></html>")


def curves(r: FitResult) -> Any:
    """Every curve of the overlay as rows of `CURVE_COLUMNS` (the twin's times and GB at the measured
    capacity)."""
    import pandas as pd

    rows: list = []

    def add(proc: str, series: str, xs: Any, ys: Any, cats: Any = None) -> None:
        for i, (x, y) in enumerate(zip(xs, ys)):
            rows.append((proc, series, float(x), float(y), "" if cats is None else cats[i]))

    m = r.measurements
    if m is not None and m.consistency:
        c = m.consistency[0]
        add("consistency", "measured", np.arange(len(c.iops)), c.iops)
        if r.twin.consistency_iops is not None:
            add("consistency", "twin", np.arange(len(r.twin.consistency_iops)) * r.twin.consistency_time_scale,
                r.twin.consistency_iops)
    if m is not None and m.saturation:
        s = m.saturation[0]
        add("saturation", "measured", s.gb_written, s.mb_s)
        if r.twin.saturation_curve is not None:
            add("saturation", "twin", *r.twin.saturation_curve)
    if m is not None and m.hdtach:
        h = m.hdtach[0]
        add("hdtach", "measured", range(len(h.passes)), [100 * v / h.passes[0][1] for _, v in h.passes],
            [n for n, _ in h.passes])
    if r.twin.reads is not None and r.measured.get("pts"):
        meas, tw = r.measured["pts"], r.twin.reads.as_dict()
        shown = [(key, label) for key, label in PTS_FIGURES if meas.get(key) and tw.get(key) is not None]
        add("pts", "measured", range(len(shown)), [meas[k] for k, _ in shown], [label for _, label in shown])
        add("pts", "twin", range(len(shown)), [tw[k] for k, _ in shown], [label for _, label in shown])
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def save_report(r: FitResult, out: Path, twin_file: str = "") -> None:
    """Writes fit.json, fit.png, (with plotly) fit.html, and the summary.json and fit_curves.csv that
    `ssdlab report` reads, into the directory `out` (made if missing)."""
    from ssdlab.outputs import write_output

    out.mkdir(parents=True, exist_ok=True)
    doc = report_doc(r, twin_file)
    write_output(out / "fit.json", json.dumps(doc, indent=2) + "\n", what="fit report")
    sources = [Path(str(x).split(":")[0]).name for x in (doc.get("sources") or [])]
    summary = {"scenario": "fit", "label": f"twin of {', '.join(sources)}"[:120], "drive": r.config().name,
               "device": None, **doc}
    write_output(out / "summary.json", json.dumps(summary, indent=2) + "\n", what="fit report summary")
    write_output(out / "fit_curves.csv", curves(r).to_csv(index=False), what="fit curves")
    fig = figure(r)
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    write_output(out / "fit.png", buf.getvalue(), what="fit chart")
    page = html_page(r)
    if page is not None:
        write_output(out / "fit.html", page, what="fit report page")
    import matplotlib.pyplot as plt

    plt.close(fig)
