"""The built site (`make docs`, which `make test` runs first) opened in a real headless browser
(Debian's chromium, which `make test` installs where missing): the front page, a user-guide page
and an API page render (their screenshots are not blank; the navigation and the code blocks are
there), and the search box answers "AROW" with the AROW page."""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

SITE = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"
PAGES = ["index.html", "guide/getting-started.html", "generated/cwrs.AROW.html"]


@pytest.fixture(scope="module")
def chromium():
    browser = shutil.which("chromium")
    built = (SITE / "index.html").is_file()
    if os.environ.get("CI") == "true":  # `make test` builds the site and installs the browser
        assert built, "the site is not built: run `make docs`"
        assert browser, "chromium is missing: run `make browser`"
    if not (built and browser):
        pytest.skip("needs the built site (`make docs`) and chromium (`make browser`)")
    return browser


def _run(chromium, *args, url):
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    for _ in range(3):
        done = subprocess.run(
            [chromium, *flags, *args, url], capture_output=True, text=True, timeout=120
        )
        # Headless chromium now and then dies of a signal (a SIGSEGV, once in a CI run, on a
        # page that renders in every other run): run it again. An exit of its own (a page it
        # could not load) fails at once.
        if done.returncode >= 0:
            break
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("page", PAGES)
def test_a_page_renders_with_navigation_and_code(chromium, tmp_path, page):
    import matplotlib.image

    url = (SITE / page).as_uri()
    shot = tmp_path / "page.png"
    _run(chromium, "--window-size=1200,900", f"--screenshot={shot}", url=url)
    pixels = matplotlib.image.imread(shot)[..., :3]
    ink = np.mean(pixels.min(axis=-1) < 0.9)  # the share of pixels that are not near-white
    assert 0.01 < ink < 0.9 and pixels.std() > 0.05, (page, ink, pixels.std())
    dom = _run(chromium, "--virtual-time-budget=5000", "--dump-dom", url=url)
    assert "bd-header" in dom and "<nav" in dom, page
    if page != "index.html":
        assert "<pre" in dom, page


def test_the_search_box_answers_arow(chromium):
    url = (SITE / "search.html").as_uri() + "?q=AROW"
    dom = _run(chromium, "--virtual-time-budget=10000", "--dump-dom", url=url)
    assert "generated/cwrs.AROW.html" in dom


def test_the_rust_reference_renders(chromium, tmp_path):
    import matplotlib.image

    url = (SITE / "rust" / "cwrs" / "model" / "struct.Model.html").as_uri()
    shot = tmp_path / "page.png"
    _run(chromium, "--window-size=1200,900", f"--screenshot={shot}", url=url)
    pixels = matplotlib.image.imread(shot)[..., :3]
    assert 0.01 < np.mean(pixels.min(axis=-1) < 0.9) < 0.9 and pixels.std() > 0.05
    dom = _run(chromium, "--virtual-time-budget=5000", "--dump-dom", url=url)
    assert "<pre" in dom and "Model" in dom
