"""The documentation site's API reference (docs/api.md) lists every public name of `cwrs`,
`cwrs.dask` and `cwrs.river`, each once, and nothing else: `make docs` (run by `make test`, with
warnings as errors) then gives each its page from its docstring."""

import re
from pathlib import Path

import cwrs
import cwrs.dask
import cwrs.river

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"


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
    for module in (cwrs, cwrs.dask, cwrs.river):
        names = listed.get(module.__name__, [])
        assert sorted(names) == sorted(module.__all__), module.__name__
        assert len(set(names)) == len(names), module.__name__
    assert set(listed) == {"cwrs", "cwrs.dask", "cwrs.river"}
