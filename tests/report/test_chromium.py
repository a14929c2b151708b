"""The report opened in a real browser: headless Chromium loads every figure, logs no error, fetches nothing.

Chromium is Debian's ``chromium`` package; ``.ci/run`` installs it when missing, so on CI these
tests run. Locally they are skipped (with the install command) when it is absent.
"""

from __future__ import annotations

import struct

import pytest

from ._chromium import find_chromium, inspect_page
from ._page import parse_page

pytestmark = pytest.mark.skipif(
    find_chromium() is None,
    reason="headless Chromium not installed (CI installs it: apt-get install -y --no-install-recommends chromium)")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def pdf_pages(data: bytes) -> int:
    return data.count(b"/Type /Page") - data.count(b"/Type /Pages")


@pytest.mark.parametrize("run", ["sound_run", "saturated_run"])
def test_report_loads_in_headless_chromium(request, run, tmp_path):
    folder = request.getfixturevalue(run)
    report = folder / "report.html"
    check = inspect_page(report, width=1200, height=900, pdf=True)
    n_img = len(parse_page(report).imgs)
    assert n_img >= 4 and len(check.images) == n_img
    assert check.broken_images == []
    assert check.console_errors == []
    assert check.requests == [] and check.resources == []
    assert all(i["width"] > 0 and i["height"] > 0 for i in check.images)
    assert check.title.startswith("Identification report")
    w, h = png_size(check.screenshot)
    assert w == 1200 and h >= check.height > 900  # the whole page was captured
    (tmp_path / "report.png").write_bytes(check.screenshot)
    # printable: Chromium's "Print to PDF" gives an A4 document of several pages
    assert check.pdf.startswith(b"%PDF") and pdf_pages(check.pdf) >= 2


def test_the_check_sees_broken_images_errors_and_requests(tmp_path):
    """The browser check is not blind: a broken image, a script error and a remote image are all reported."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>bad</title></head><body>'
                   '<img alt="broken" src="data:image/png;base64,AAAA">'
                   '<img alt="remote" src="http://127.0.0.1:9/x.png">'
                   "<script>no_such_function();</script></body></html>")
    check = inspect_page(bad, full_page=False)
    assert set(check.broken_images) == {"broken", "remote"}
    assert any("exception" in e for e in check.console_errors)
    assert check.requests == ["http://127.0.0.1:9/x.png"]
