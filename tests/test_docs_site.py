"""The documentation site (source directory docs/, configuration docs/conf.py): built with
warnings as errors as README.md says; the Markdown guide pages, the API pages and the executed
gallery present; every page loaded in a headless Chromium with no broken link or image. Slow
(the gallery trains a tiny model): run with --runslow. The browser check needs Chromium and its
driver (Debian: ``apt-get install chromium chromium-driver``) and selenium; it is skipped
without them."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Chromium without a display, a sandbox (root in CI), a GPU, or any traffic of its own.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")
#: What a page shows: the images that did not load and every link, as the browser resolved them.
_PAGE_SCRIPT = """
return {
  images: Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0)).map(img => img.src),
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
};
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for this module's tests (``python -m sphinx -W``)."""
    for module in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser"):
        pytest.importorskip(module)  # the `docs` extra
    env = {**os.environ, "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path_factory.mktemp("site") / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(ROOT / "docs"), str(out)],
        env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


@pytest.mark.slow
def test_docs_site_builds_without_warnings(site):
    out = site
    for page in ("neuralop_fem.training.Trainer", "neuralop_fem.compare",
                 "solvers.DarcyFDSolver", "neuralop_fem.training.TrainConfig"):
        assert (out / "site" / "generated" / f"{page}.html").exists(), page
    trainer = (out / "site" / "generated" / "neuralop_fem.training.Trainer.html").read_text()
    assert "run_dir" in trainer  # the numpydoc Parameters section rendered
    for example in ("plot_generate", "plot_train_and_compare", "plot_inverse"):
        html = (out / "auto_examples" / f"{example}.html").read_text()
        assert "sphx-glr-script-out" in html, example  # executed: its output is on the page
        assert "sphx_glr_" + example in html, example  # and its figures
    guide = _guide_pages()
    assert len(guide) >= 12
    for page in guide:  # every Markdown page of the guide is a page of the site
        assert (out / page).exists(), page
    fmt = (out / "data_format.html").read_text()
    assert "<table" in fmt  # the Markdown tables rendered
    assert 'href="generating_data.html#on-another-machine' in fmt  # links between pages work
    home = (out / "site" / "index.html").read_text()
    for target in ("../training.html", "api.html", "../auto_examples/index.html"):
        assert f'href="{target}' in home, target  # guide, API and gallery in one site


def _guide_pages() -> list[Path]:
    """The site's page of each Markdown page of the guide (``docs/*.md``, ``docs/methods``)."""
    docs = ROOT / "docs"
    return sorted(p.relative_to(docs).with_suffix(".html")
                  for p in [*docs.glob("*.md"), *docs.glob("methods/*.md")])


@pytest.fixture
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free local port (a missing page is a real 404)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # no line per request on stderr
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    """A headless Chromium with a fresh profile, driven by selenium."""
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.skip("needs Chromium and its driver (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=driver_path),
                              options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@functools.cache
def _ids(path: Path) -> frozenset[str]:
    """The element ids of a built page: the anchors a link's ``#fragment`` may name."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return frozenset(re.findall(r"""\bid=["']([^"']+)["']""", text))


def _broken_link(href: str, base: str, site: Path) -> str | None:
    """Why the link ``href`` of a page (resolved by the browser) is broken, or None; links
    out of the site (other hosts, mail) are not followed (no network)."""
    if not href.startswith(base):
        return None
    parts = urllib.parse.urlsplit(href[len(base):])
    target = site / urllib.parse.unquote(parts.path)
    if target.is_dir():
        target = target / "index.html"
    if not target.is_file():
        return "no such page"
    fragment = urllib.parse.unquote(parts.fragment)
    if fragment and target.suffix == ".html" and fragment not in _ids(target):
        return f"no anchor #{fragment} there"
    return None


@pytest.mark.slow
def test_every_page_loads_in_a_browser_without_a_broken_link_or_image(site, served, browser):
    """Each HTML page of the site (the guide's Markdown pages, the API pages, the gallery),
    loaded in headless Chromium: every image it shows has loaded, and every link within the
    site leads to a page that exists and to the anchor it names (a link to a Markdown page or
    a file outside docs/ would not)."""
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if not {"_static", "_sources", "_images"} & set(p.relative_to(site).parts))
    assert "site/index.html" in pages
    for page in _guide_pages():
        assert page.as_posix() in pages, page
    problems, followed = [], 0
    for page in pages:
        browser.get(served + page)
        seen = browser.execute_script(_PAGE_SCRIPT)
        problems += [f"{page}: image {src} did not load" for src in seen["images"]]
        for href in sorted(set(seen["links"])):
            why = _broken_link(href, served, site)
            followed += href.startswith(served)
            if why is not None:
                problems.append(f"{page}: link {href[len(served):]}: {why}")
    assert followed >= len(pages)  # the links were read: every page has a few
    assert not problems, "\n".join(problems[:50])
