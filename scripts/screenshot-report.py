"""Screenshot an `ssdlab report` HTML file for the README: the top of the page at 1400 x 1250.

    .venv/bin/python scripts/screenshot-report.py REPORT.html OUT.png

Uses Playwright with the system Chromium (scripts/install-test-tools.sh installs both), offline,
as the browser test does.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: screenshot-report.py REPORT.html OUT.png", file=sys.stderr)
        return 2
    report, out = Path(argv[0]).resolve(), Path(argv[1])
    if not report.is_file():
        print(f"error: {report} is not a file; write one with `ssdlab report RUN_DIR... -o FILE`", file=sys.stderr)
        return 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("error: Chromium is not installed; run scripts/install-test-tools.sh", file=sys.stderr)
        return 2
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(viewport={"width": 1400, "height": 1250}, offline=True).new_page()
        page.goto(report.as_uri())
        page.wait_for_selector(".js-plotly-plot")
        page.wait_for_timeout(500)  # let plotly finish drawing
        page.screenshot(path=str(out))
        browser.close()
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
