"""The documentation site.

- Its API reference (docs/api.md) lists every public name of `cwrs`, `cwrs.bandit`, `cwrs.dask`
  and `cwrs.river`, each once, and nothing else: `make docs` (run by `make test`, with warnings as
  errors) then gives each its page from its docstring.
- The built site (`make docs`) has a rustdoc page for every item the Rust crate exports at its
  root and every public module, and no internal link of any page, Sphinx's or rustdoc's, points
  to a file or an anchor that is not there.
"""

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import cwrs
import cwrs.bandit
import cwrs.dask
import cwrs.river

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
SITE = ROOT / "docs" / "_build" / "html"
CRATE_ROOT = ROOT / "crates" / "cwrs" / "src" / "lib.rs"


def _listed():
    """{module: [names]} of the autosummary blocks of docs/api.md."""
    listed: dict[str, list[str]] = {}
    module = None
    for line in API.read_text(encoding="utf-8").splitlines():
        current = re.match(r"\.\. currentmodule:: ([\w.]+)", line)
        if current:
            module = current.group(1)
        entry = re.match(r"   (\w+)$", line)
        if entry and module is not None:
            listed.setdefault(module, []).append(entry.group(1))
    return listed


def test_the_api_reference_lists_every_public_name_once():
    listed = _listed()
    for module in (cwrs, cwrs.bandit, cwrs.dask, cwrs.river):
        names = listed.get(module.__name__, [])
        assert sorted(names) == sorted(module.__all__), module.__name__
        assert len(set(names)) == len(names), module.__name__
    assert set(listed) == {"cwrs", "cwrs.bandit", "cwrs.dask", "cwrs.river"}


@pytest.fixture(scope="module")
def site():
    built = (SITE / "index.html").is_file()
    if os.environ.get("CI") == "true":  # `make test` builds the site first
        assert built, "the site is not built: run `make docs`"
    if not built:
        pytest.skip("needs the built site (`make docs`)")
    return SITE


class _Page(HTMLParser):
    """The ids and the links (href and src) of one HTML page."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if value and ((name == "href" and tag in ("a", "link")) or name == "src"):
                self.links.append(value)


def _pages(site):
    parsed = {}
    for path in site.rglob("*.html"):
        if "_static" in path.parts:
            continue  # the theme's templates, not pages
        page = _Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        parsed[path.resolve()] = page
    return parsed


def test_no_internal_link_of_the_site_is_broken(site):
    pages = _pages(site)
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("javascript:"):
                continue  # external: not this site's to check
            if re.search(r"/(trait|type)\.impl/.*\.js$", parts.path):
                continue  # rustdoc's optional list of implementors in other crates
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: {link} (no such file)")
            elif parts.fragment and target.suffix == ".html":
                fragment = parts.fragment
                ids = pages[target].ids
                # rustdoc's source pages number their lines by script (#10-20), not by id.
                numbered = re.fullmatch(r"\d+(-\d+)?", fragment) and "/src/" in str(target)
                if fragment not in ids and unquote(fragment) not in ids and not numbered:
                    broken.append(f"{path.relative_to(site)}: {link} (no such anchor)")
    assert not broken, f"{len(broken)} broken links, the first: " + "\n".join(broken[:20])
    assert len(pages) > 100  # the site and the crate's reference were both read


def test_every_export_of_the_rust_crate_has_its_page(site):
    source = CRATE_ROOT.read_text(encoding="utf-8")
    # Modules hidden from the documentation (#[doc(hidden)], the tests' helpers) aside.
    modules = re.findall(r"(?<!#\[doc\(hidden\)\]\n)^pub mod (\w+);", source, re.M)
    exported = []
    for group in re.findall(r"^pub use [\w:]+::(\{[^}]*\}|\w+);", source, re.M):
        exported += re.findall(r"\w+", group)
    assert modules and exported
    crate = site / "rust" / "cwrs"
    for module in modules:
        assert (crate / module / "index.html").is_file(), module
    listing = (crate / "all.html").read_text(encoding="utf-8")
    for name in exported:
        pages = list(crate.rglob(f"*.{name}.html"))
        assert pages, f"no rustdoc page for cwrs::{name}"
        assert f">{name}<" in (crate / "index.html").read_text(encoding="utf-8"), name
    assert "struct.Model.html" in listing
