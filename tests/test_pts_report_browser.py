"""``ssdlab pts report`` in a real headless browser (Debian's Chromium through Playwright, as
tests/test_report_browser.py): the page opens from file:// with the network blocked, every
section and plot renders (each inlined PNG decodes to its own size), the runs sit side by side,
and no script fails. Screenshots are saved in the test's tmp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

import ssdlab
from ssdlab.pts.report import write_pts_report
from ssdlab.scenarios.pts_iops import pts_iops
from ssdlab.scenarios.pts_xsr import pts_xsr

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: run scripts/install-test-tools.sh"
)
from test_report_browser import CHROMIUM, offline_context  # noqa: E402

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): run scripts/install-test-tools.sh"
)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pts-report")
    cfg = ssdlab.load_preset("mlc-256").with_user_capacity("512MiB")
    dirs = [pts_iops(cfg, round_s=0.02).save(root / "a"),
            pts_iops(ssdlab.load_preset("active-gc").with_user_capacity("512MiB"), round_s=0.02).save(root / "b"),
            pts_xsr(cfg, phase_minutes="0.05,0.05,0.05", sample_s=1).save(root / "x")]
    return write_pts_report(dirs, root / "report.html", title="PTS browser test")


def test_the_pts_report_opens_and_renders(report_file: Path, tmp_path: Path) -> None:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        attempted: list = []
        errors: list = []
        context = offline_context(browser, attempted)
        page = context.new_page()
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(report_file.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)
        assert page.title() == "PTS browser test"
        assert page.locator("section.card h2").all_inner_texts() == ["PTS IOPS", "PTS cross-stimulus recovery (XSR)"]
        images = page.locator("figure.image img")
        n = images.count()
        assert n == 2 * 6 + 1  # each IOPS run's 6 plots (the 3D one included), XSR's one
        for i in range(n):
            img = images.nth(i)
            img.scroll_into_view_if_needed()
            img.evaluate("i => i.decode()")
            natural = img.evaluate("i => [i.naturalWidth, i.naturalHeight, i.getBoundingClientRect().width]")
            assert natural[0] > 500 and natural[1] > 300 and natural[2] > 200, (i, natural)
        # the two IOPS runs side by side: the same plot of each in one row
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll('#pts-iops-plot-0 .cell'))
                                   .map(c => c.getBoundingClientRect()).map(r => [r.left, r.top, r.width])""")
        assert len(boxes) == 2 and boxes[0][1] == boxes[1][1] and boxes[1][0] >= boxes[0][0] + boxes[0][2]
        det = page.locator("#pts-iops-determination table").first
        assert "determination" in det.inner_text() and "steady" in det.inner_text()
        page.screenshot(path=str(tmp_path / "pts-report.png"), full_page=False)
        page.locator("#pts-iops-plot-5").screenshot(path=str(tmp_path / "pts-3d.png"))
        assert attempted == [], f"the report tried the network: {attempted}"
        assert errors == [], f"script errors: {errors}"
        context.close()
        browser.close()
