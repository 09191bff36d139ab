"""``ssdlab pts report`` and the PTS sections of ``ssdlab report`` (docs/pts.md, "The PTS report"):
the figures shown are the result directories' own, side by side; bad inputs are one-line errors."""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

import ssdlab
from ssdlab.cli import main
from ssdlab.pts.report import PtsRun, report_section, write_pts_report
from ssdlab.report import load_runs, write_report
from ssdlab.report.page import Grid, Image, Notes
from ssdlab.report.tables import Table
from ssdlab.scenarios.pts_iops import FILES as IOPS_FILES, pts_iops
from ssdlab.scenarios.pts_cbw import pts_cbw
from ssdlab.scenarios.pts_xsr import pts_xsr


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    root = tmp_path_factory.mktemp("pts-runs")
    out = {}
    cfg = ssdlab.load_preset("mlc-256").with_user_capacity("512MiB")
    out["iops-a"] = pts_iops(cfg, round_s=0.02).save(root / "iops-a")
    out["iops-b"] = pts_iops(ssdlab.load_preset("active-gc").with_user_capacity("512MiB"), round_s=0.02,
                             variant="client").save(root / "iops-b")
    out["xsr"] = pts_xsr(cfg, phase_minutes="0.05,0.05,0.05", sample_s=1).save(root / "xsr")
    out["cbw"] = pts_cbw(cfg, round_s=0.02, rounds_max=5).save(root / "cbw")
    return out


def _sections(dirs: List[Path]) -> Dict[str, Any]:
    return {s.id: s for s in report_section(load_runs(dirs))}


def _grid(section: Any, gid: str) -> Grid:
    return next(i for i in section.items if isinstance(i, Grid) and i.id == gid)


def test_runs_side_by_side_with_their_own_figures(runs: Dict[str, Path]) -> None:
    sections = _sections([runs["iops-a"], runs["iops-b"], runs["xsr"]])
    assert list(sections) == ["pts-iops", "pts-xsr"]
    iops = sections["pts-iops"]
    overview = iops.items[0]
    assert isinstance(overview, Table) and len(overview.columns) == 3  # a column per run
    summaries = [json.loads((runs[k] / "summary.json").read_text()) for k in ("iops-a", "iops-b")]
    for key in ("rnd_4k_0_100", "rnd_64k_65_35", "rnd_1m_100_0"):
        row = next(r for r in overview.rows if r[0].text == f"{key}, window average")
        assert [c.value for c in row[1:]] == [s["steady_state"]["tracking"][key]["average"] for s in summaries]
    variant = next(r for r in overview.rows if r[0].text == "variant")
    assert [c.text for c in variant[1:]] == ["PTS-E", "PTS-C"]
    # the determination table: PTS's figures of every tracking variable, as summary.json has them
    det = _grid(iops, "pts-iops-determination")
    assert len(det.columns) == 2
    for (_head, tables), s in zip(det.columns, summaries):
        t = tables[0]
        assert t.columns[1:] == list(s["steady_state"]["tracking"])
        for i, (key, w) in enumerate(s["steady_state"]["tracking"].items(), start=1):
            got = {r[0].text: r[i] for r in t.rows}
            assert got["average"].value == w["average"] and got["data excursion measured"].value == w["range"]
            assert got["slope excursion allowed (10 %)"].value == w["excursion_limit"]
            assert got["slope excursion measured"].value == w["excursion"]
            assert got["determination"].text == ("steady" if w["steady"] else "NOT steady")
    # the set table is iops_table.csv
    sets = _grid(iops, "pts-iops-sets")
    import pandas as pd

    table = pd.read_csv(runs["iops-a"] / "iops_table.csv")
    t = sets.columns[0][1][0]
    assert t.columns[0] == "block size" and t.columns[1:] == list(table.columns[1:])
    for r, rec in zip(t.rows, table.to_dict("records")):
        assert [c.value for c in r[1:]] == pytest.approx([rec[m] for m in table.columns[1:]])
    # every PNG of each result, the 3D plot among them, inlined byte for byte
    pngs = [i for g in iops.items if isinstance(g, Grid) for _h, items in g.columns for i in items
            if isinstance(i, Image)]
    assert len(pngs) == 2 * sum(f.endswith(".png") for f in IOPS_FILES)
    three_d = [p for p in pngs if p.caption == "iops_3d.png"]
    assert len(three_d) == 2 and three_d[0].png == (runs["iops-a"] / "iops_3d.png").read_bytes()
    # the deviations, as each summary lists them
    dev = _grid(iops, "pts-iops-deviations")
    for (_h, items), s in zip(dev.columns, summaries):
        assert isinstance(items[0], Notes) and items[0].lines == s["deviations"] and items[0].lines
    assert any("instead of 60 s" in line for line in dev.columns[0][1][0].lines)
    # XSR: its access groups as the set table
    xsr = sections["pts-xsr"]
    groups = _grid(xsr, "pts-xsr-sets").columns[0][1][0]
    s = json.loads((runs["xsr"] / "summary.json").read_text())
    assert [c.value for c in groups.column("mb_s")] == [g["mb_s"] for g in s["groups"]]


def test_cbw_has_its_section_with_the_tc_x_qd_sweep_as_its_set_table(runs: Dict[str, Path]) -> None:
    sections = _sections([runs["cbw"], runs["iops-a"]])
    assert list(sections) == ["pts-iops", "pts-cbw"]  # the registry's order
    cbw = sections["pts-cbw"]
    s = json.loads((runs["cbw"] / "summary.json").read_text())
    table = _grid(cbw, "pts-cbw-sets").columns[0][1][0]
    assert [c.value for c in table.column("iops")] == [w["iops"] for w in s["window"]]
    assert [c.value for c in table.column("oio")][:2] == [1024, 512]  # TC 32 x QD 32 first
    det = _grid(cbw, "pts-cbw-determination").columns[0][1][0]
    assert det.columns[1:] == list(s["steady_state"]["tracking"])
    pngs = [i.caption for g in cbw.items if isinstance(g, Grid) for _h, items in g.columns for i in items
            if isinstance(i, Image)]
    assert "demand_intensity.png" in pngs and "histograms.png" in pngs


def test_the_page_is_self_contained(runs: Dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["pts", "report", str(runs["iops-a"]), str(runs["iops-b"]), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"Report in {out}"
    page = out.read_text(encoding="utf-8")
    srcs = re.findall(r'<img src="([^"]+)"', page)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)
    assert base64.b64decode(srcs[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    body = page[:page.index('<script type="application/json"')]  # before plotly.js's own text
    assert not re.search(r'(src|href)="https?:', body)
    assert 'id="pts-iops"' in page and "Deviations from the spec" in page


def test_ssdlab_report_has_the_pts_sections(runs: Dict[str, Path], tmp_path: Path) -> None:
    from fixtures.report_runs import review_set

    others = review_set(tmp_path / "others", duration=60)
    out = write_report([*others, runs["iops-a"]], tmp_path / "all.html")
    page = out.read_text(encoding="utf-8")
    assert 'id="pts-iops"' in page and 'id="consistency"' in page
    assert isinstance(next(r for r in load_runs([runs["iops-a"]])), PtsRun)


def test_bad_inputs_are_one_line_errors(runs: Dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from fixtures.report_runs import review_set

    consistency = review_set(tmp_path / "others", duration=60)[0]
    broken = tmp_path / "broken"
    shutil.copytree(runs["iops-a"], broken)
    (broken / "iops_table.csv").unlink()
    cases = [([str(consistency)], "not a PTS one"), ([str(tmp_path / "nothing")], "no such result directory"),
             ([str(tmp_path)], "not an ssdlab result directory"), ([str(broken)], "iops_table.csv")]
    (tmp_path / "empty").mkdir()
    cases[2] = ([str(tmp_path / "empty")], "not an ssdlab result directory")
    for args, needle in cases:
        out = tmp_path / "r.html"
        assert main(["pts", "report", *args, str(runs["iops-a"]), "-o", str(out)]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("ssdlab: error:") and len(err.splitlines()) == 1 and needle in err, (args, err)
        assert not out.exists()
    with pytest.raises(ssdlab.SsdlabError, match="not a PTS one"):
        write_pts_report([consistency], tmp_path / "x.html")
