"""The report in a real headless browser: Debian's Chromium driven by Playwright.

Opens a generated report from file:// with every non-file request blocked, clicks each kind of
button and checks that the plotted data and the title change, and saves screenshots in the test's
tmp dir. Needs `scripts/install-test-tools.sh` (apt chromium, pip playwright); skipped, saying so,
only when either is missing. `playwright install` is never needed: the system browser is used.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fixtures.report_runs import review_set
from ssdlab.report import write_report

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed: run scripts/install-test-tools.sh"
)


def _chromium() -> str | None:
    for candidate in (os.environ.get("SSDLAB_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): run scripts/install-test-tools.sh"
)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    return write_report(review_set(root / "runs", duration=600), root / "report.html", title="Browser test")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


def offline_context(browser, attempted: list):
    """A browser context with no network: a request for anything but a file:// URL is recorded in
    ``attempted`` and aborted (and the context is offline besides)."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, offline=True)

    def guard(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            attempted.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    return context


@pytest.fixture()
def attempted() -> list:
    """Network requests the report tried (each one was blocked)."""
    return []


@pytest.fixture()
def page(browser, report_file, attempted):
    """The report, opened offline (see offline_context); fails if it tried the network or threw."""
    errors: list[str] = []
    context = offline_context(browser, attempted)
    page = context.new_page()
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(report_file.as_uri())
    page.wait_for_selector("body[data-ready=true]", timeout=30_000)
    yield page
    assert attempted == [], f"the report tried the network: {attempted}"
    assert errors == [], f"script errors: {errors}"
    context.close()


def shown(page, chart: str) -> dict:
    """What the plotly div of a chart currently draws."""
    return page.evaluate(
        """id => {
            const div = document.getElementById('plot-' + id);
            return {
                names: div.data.map(t => t.name),
                x: Array.from(div.data[0].x).slice(0, 400),
                y: Array.from(div.data[0].y).slice(0, 400),
                title: div.layout.title.text,
                yaxis: div.layout.yaxis.type || 'linear',
                svg: div.querySelectorAll('.main-svg').length,
                points: div.querySelectorAll('.scatterlayer .point, .scatterlayer .js-line, .barlayer .point').length,
            };
        }""",
        chart,
    )


def button(page, chart: str, label: str):
    return page.locator(f'button[data-chart="{chart}"]', has_text=label).first


def pressed(page, chart: str) -> list[str]:
    return page.locator(f'button[data-chart="{chart}"][aria-pressed="true"]').all_inner_texts()


def test_the_network_guard_catches_a_cdn_script(browser):
    """The control for the offline check: a page that loads plotly.js from a CDN is caught."""
    attempted: list[str] = []
    context = offline_context(browser, attempted)
    page = context.new_page()
    page.set_content('<script src="https://cdn.plot.ly/plotly-2.35.2.min.js"></script><p>x</p>')
    assert page.evaluate("typeof window.Plotly") == "undefined"
    assert attempted == ["https://cdn.plot.ly/plotly-2.35.2.min.js"]
    context.close()


def test_report_renders_offline(page, attempted, tmp_path):
    assert page.evaluate("typeof window.Plotly") == "object"  # the inline bundle ran
    assert attempted == []
    for chart in ("consistency-log", "consistency-steady-log", "consistency-steady-linear", "hdtach", "wa",
                  "used-vs-new"):
        now = shown(page, chart)
        assert now["svg"] > 0 and now["points"] > 0, chart
    assert page.title() == "Browser test"
    page.screenshot(path=str(tmp_path / "report-top.png"))
    page.screenshot(path=str(tmp_path / "report-full.png"), full_page=True)
    assert (tmp_path / "report-full.png").stat().st_size > 10_000


@pytest.mark.parametrize("chart", ["consistency-log", "consistency-steady-log", "consistency-steady-linear"])
def test_consistency_buttons_switch_drive_and_spare_area(page, chart, tmp_path):
    first = shown(page, chart)
    assert pressed(page, chart) == ["mlc-256", "Default"]
    assert "mlc-256 · default spare area" in first["title"]
    assert first["yaxis"] == ("linear" if chart.endswith("linear") else "log")

    button(page, chart, "25% Spare Area").click()
    spare = shown(page, chart)
    assert pressed(page, chart) == ["mlc-256", "25% Spare Area"]
    assert "mlc-256 · 25% spare area" in spare["title"]
    assert spare["y"] != first["y"]

    button(page, chart, "tlc-512").click()  # tlc-512 has no 25 % run: the page falls back to Default
    other = shown(page, chart)
    assert pressed(page, chart) == ["tlc-512", "Default"]
    assert "tlc-512 · default spare area" in other["title"]
    assert other["y"] not in (first["y"], spare["y"])
    assert button(page, chart, "25% Spare Area").is_disabled()  # greyed: not measured for this drive
    assert not button(page, chart, "Default").is_disabled()

    button(page, chart, "mlc-256").click()
    assert shown(page, chart) == first
    assert not button(page, chart, "25% Spare Area").is_disabled()
    page.locator(f"#figure-{chart}").screenshot(path=str(tmp_path / f"{chart}.png"))


def test_buttons_of_one_chart_leave_the_others_alone(page):
    before = shown(page, "consistency-steady-log")
    button(page, "consistency-log", "tlc-512").click()
    assert shown(page, "consistency-steady-log") == before


def test_hdtach_buttons_switch_drive_and_pass(page, tmp_path):
    chart = "hdtach"
    overlay = shown(page, chart)
    assert pressed(page, chart) == ["mlc-256", "All passes"]
    assert overlay["names"] == ["clean", "after 20 min torture", "after 30 min idle", "after TRIM"]

    button(page, chart, "after 20 min torture").click()
    torture = shown(page, chart)
    assert torture["names"] == ["after 20 min torture"]
    assert "after 20 min torture" in torture["title"] and "avg" in torture["title"]
    assert torture["y"] != overlay["y"]  # overlay's first trace is the clean pass
    assert torture["x"][:3] == [0, 0.5, 1]

    button(page, chart, "tlc-512").click()
    other = shown(page, chart)
    assert pressed(page, chart) == ["tlc-512", "after 20 min torture"]
    assert other["title"] != torture["title"] and other["y"] != torture["y"]
    assert button(page, chart, "after 30 min idle").is_disabled()  # tlc-512 ran no idle pass

    button(page, chart, "after TRIM").click()
    trim = shown(page, chart)
    assert trim["names"] == ["after TRIM"] and "after TRIM" in trim["title"]
    page.locator("#figure-hdtach").screenshot(path=str(tmp_path / "hdtach.png"))


def test_hover_shows_exact_values(page):
    bar = page.locator("#plot-used-vs-new .barlayer .point").first
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector("#plot-used-vs-new .hoverlayer .hovertext", timeout=5_000)
    text = page.locator("#plot-used-vs-new .hoverlayer").text_content()
    assert "310.0 MB/s" in text and "75,700 IOPS" in text
