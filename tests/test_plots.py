"""The consistency charts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ssdlab.plots import DPI, FIGSIZE
from ssdlab.scenarios.consistency_result import LOG_FLOOR, consistency_figures


def _iops(values: list) -> pd.DataFrame:
    return pd.DataFrame({"time_s": np.arange(len(values)), "iops": np.asarray(values, dtype=np.int64)})


def test_three_charts_with_the_right_axes() -> None:
    data = _iops([90_000] * 10 + [0, 5, 0] + [9_000, 12_000] * 10)
    figs = consistency_figures(data, title="t", subtitle="s", zoom_start_s=20, steady_mean=10_500)
    assert list(figs) == ["iops_log.png", "steady_log.png", "steady_linear.png"]
    whole, steady_log, steady_linear = (figs[k].axes[0] for k in figs)
    assert whole.get_yscale() == "log" and steady_log.get_yscale() == "log"
    assert steady_linear.get_yscale() == "linear" and steady_linear.get_ylim()[0] == 0
    assert whole.get_xlim() == (0, 33)
    assert steady_log.get_xlim() == (20, 33) == steady_linear.get_xlim()
    assert whole.get_ylim()[0] < LOG_FLOOR  # zero-IOPS seconds stay visible
    assert "Time (s)" == whole.get_xlabel() and "IOPS" in whole.get_ylabel()
    legend = " ".join(t.get_text() for t in figs["iops_log.png"].legends[0].get_texts())
    assert "0 IOPS" in legend and "(2)" in legend
    assert "steady mean 10,500 IOPS" in " ".join(t.get_text() for t in figs["steady_linear.png"].legends[0].get_texts())
    for fig in figs.values():
        assert tuple(fig.get_size_inches()) == FIGSIZE and fig.dpi == DPI


def test_charts_render_without_pyplot(tmp_path: Path) -> None:
    figs = consistency_figures(_iops([1000] * 50), title="t", subtitle="s", zoom_start_s=35)
    for name, fig in figs.items():
        fig.savefig(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 10_000


def test_pyplot_is_never_imported() -> None:
    code = (
        "import sys, ssdlab, ssdlab.plots, ssdlab.cli\n"
        "ssdlab.plots.consistency_figures(__import__('pandas').DataFrame({'time_s': [0, 1], 'iops': [1, 2]}),"
        " title='t', subtitle='s', zoom_start_s=1)\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_zero_legend_without_zeros() -> None:
    figs = consistency_figures(_iops([1000, 2000] * 20), title="t", subtitle="s", zoom_start_s=28)
    legend = " ".join(t.get_text() for t in figs["iops_log.png"].legends[0].get_texts())
    assert "0 IOPS" not in legend
