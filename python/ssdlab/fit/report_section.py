"""The fit's part of the HTML report (``ssdlab report TWIN-fit/ ...``): the run class that reads a
fit report directory (`FitRun`: its ``summary.json`` and ``fit_curves.csv``), the measured-vs-twin
overlay with one button per procedure (`chart`), the knobs' table (`table`) and the section
(`report_section`).

The fit is not a scenario (it reads several result directories and writes a drive file), so it is
registered with the report in ``ssdlab.report.load.OTHER_RESULTS`` rather than through a
``Scenario``; the section has the same shape as a scenario's (a chart with its buttons, a table).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence, Tuple

from ssdlab.errors import SsdlabError
from ssdlab.report.charts import PALETTE, Chart, chart_axis, chart_layout, chart_text, chart_title
from ssdlab.report.load import Run
from ssdlab.report.page import Section
from ssdlab.report.tables import Cell, Table

__all__ = ["PROCEDURES", "FitRun", "REPORT_RUNS", "chart", "report_section", "table"]

PROCEDURES = {
    # procedure in fit_curves.csv: (button, x axis, y axis, log y, the errors shown in the title)
    "consistency": ("Consistency", "Time (s)", "IOPS", True, ("clean_iops", "cliff_bytes", "steady_mean")),
    "saturation": ("Saturation", "Data written (GB)", "Write speed (MB/s)", False,
                   ("cache_gb", "in_cache_mb_s", "after_cache_mb_s", "end_mb_s")),
    "hdtach": ("HD Tach", "Pass", "% of the clean pass", False, ()),
    "pts": ("PTS reads", "Figure", "Measured value (twin beside it)", True,
            ("pts_read_latency_us", "pts_read_iops_512", "pts_read_iops_4k", "pts_seq_read_mb_s")),
}
"""The overlay's procedures, in button order."""
MEASURED, TWIN = PALETTE[0], PALETTE[1]


@dataclass
class FitRun(Run):
    """A fit report directory: the knobs and errors (summary.json, as fit.json) and the overlay's
    curves (fit_curves.csv), by procedure and series (measured, twin)."""

    scenario_names = ("fit",)
    kind = "fit"
    curves: Dict[str, Dict[str, Tuple[List[float], List[float], List[str]]]] = field(default_factory=dict)

    def _read(self) -> None:
        self._require("knobs", "errors")
        if not isinstance(self.summary["knobs"], dict) or not isinstance(self.summary["errors"], dict):
            raise SsdlabError(f"{self.path / 'summary.json'}: 'knobs' and 'errors' must be objects")
        frame = self._csv("fit_curves.csv", ("procedure", "series", "x", "y", "category"), ("x", "y"))
        frame["category"] = frame["category"].fillna("").astype(str)
        for (proc, series), rows in frame.groupby(["procedure", "series"], sort=False):
            self.curves.setdefault(str(proc), {})[str(series)] = (
                rows["x"].tolist(), rows["y"].tolist(), rows["category"].tolist())


def _errors(run: FitRun, keys: Sequence[str]) -> str:
    errs = run.summary.get("errors") or {}
    parts = [f"{k} {100 * v:+.1f} %" for k in keys if isinstance(errs.get(k), (int, float))
             for v in (errs[k],)]
    return "errors (twin / measured − 1): " + ", ".join(parts) if parts else "measured only"


def _trace(name: str, colour: str, xs: List[float], ys: List[float], cats: List[str], kind: str) -> Dict[str, Any]:
    if kind == "bar":
        return {"type": "bar", "name": name, "x": cats, "y": ys, "marker": {"color": colour},
                "hovertemplate": f"{chart_text(name)}<br>%{{x}}: <b>%{{y:,.1f}}</b><extra></extra>"}
    mode = "markers" if kind == "markers" else "lines"
    trace: Dict[str, Any] = {"type": "scattergl" if kind == "markers" else "scatter", "mode": mode, "name": name,
                             "x": xs, "y": ys,
                             "hovertemplate": f"{chart_text(name)}<br>%{{x:,.1f}}: <b>%{{y:,.0f}}</b><extra></extra>"}
    if kind == "markers":
        trace["marker"] = {"color": colour, "size": 4}
    else:
        trace["line"] = {"color": colour, "width": 2}
    return trace


def chart(runs: Sequence[Run]) -> Chart | None:
    """Measured against twin, one spec per (fit, procedure): a row of procedure buttons (and a
    row of fit buttons when the report holds several fits)."""
    fits = [r for r in runs if isinstance(r, FitRun)]
    if not fits:
        return None
    procs = [p for p in PROCEDURES if any(p in r.curves for r in fits)]
    if not procs:
        return None
    specs: List[Dict[str, Any]] = []
    keys: List[Tuple[int, ...]] = []
    for fi, run in enumerate(fits):
        for pi, proc in enumerate(procs):
            label, xt, yt, log, errs = PROCEDURES[proc]
            kind = "markers" if proc == "consistency" else "bar" if proc in ("hdtach", "pts") else "lines"
            data = [_trace(f"{series} ({run.name})" if len(fits) > 1 else series,
                           MEASURED if series == "measured" else TWIN, *run.curves[proc][series], kind)
                    for series in ("measured", "twin") if series in run.curves.get(proc, {})]
            yaxis = chart_axis(yt, type="log") if log else chart_axis(yt, rangemode="tozero")
            specs.append({"data": data, "layout": chart_layout(
                chart_title(f"{run.name}: {label.lower()}, measured vs twin", _errors(run, errs)),
                chart_axis(xt), yaxis, showlegend=True, barmode="group")})
            keys.append((pi, fi) if len(fits) > 1 else (pi,))
    rows = [("Procedure", [PROCEDURES[p][0] for p in procs])]
    if len(fits) > 1:
        rows.append(("Fit", [r.name for r in fits]))
    return Chart("fit", specs, rows, keys)


def table(runs: Sequence[Run]) -> Table | None:
    """The knobs of every fit: value, status (determined, undetermined, assumed) and by what."""
    fits = [r for r in runs if isinstance(r, FitRun)]
    if not fits:
        return None
    out = Table("fit-knobs", ["Fit", "Knob", "Value", "Status", "Determined by"],
                notes={"Status": "determined by a measurement, undetermined (the design's), or assumed"})
    for run in fits:
        for name, k in run.summary["knobs"].items():
            k = k if isinstance(k, dict) else {}
            out.rows.append([Cell(run.name), Cell(str(name)), Cell(str(k.get("value"))), Cell(str(k.get("status"))),
                             Cell(str(k.get("determined_by") or ""))])
    return out


def report_section(runs: Sequence[Run]) -> List[Section]:
    """The report's "Fit: measured vs twin" section."""
    c = chart(runs)
    if c is None:
        return []
    lede = ("ssdlab fit's twin of a measured drive: each procedure's measured curve and the twin's, one button "
            "per procedure, titled with the figures' errors; the table says which knobs each measurement "
            "determined and which stayed the design's.")
    t = table(runs)
    return [Section("fit", "Fit: measured vs twin", lede, [c, *([t] if t else [])])]


REPORT_RUNS = (FitRun,)
"""The run classes `ssdlab.report` reads fit report directories with."""
