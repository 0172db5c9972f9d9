"""Sphinx configuration of the cwrs site (built by `make docs` into docs/_build/html).

scikit-learn's stack, for a scikit-learn-style estimator library with a compiled extension:
autodoc imports the built package, so the reference is the docstrings of the code that runs
(the estimators' parameter sections come from the core's rule table); numpydoc renders their
sections; MyST reads the design documents as they are; the pydata theme gives navigation and
search. Warnings are errors (`make docs` passes -W).
"""

import re

import cwrs

project = "cwrs"
author = "the cwrs developers"
release = getattr(cwrs, "__version__", "")
extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples"]
html_theme = "pydata_sphinx_theme"
html_title = "cwrs"
html_theme_options = {"navigation_with_keys": False}

autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# The docstrings name parameters and attributes in `backticks`: code, not cross-references.
default_role = "literal"
myst_heading_anchors = 4
myst_enable_extensions = ["dollarmath"]

# The gallery: docs/examples/*.py run at every build, each drawing its figure; an example that
# fails fails the build.
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "write_computation_times": False,
}

# The docstrings are written for `help()`: Unicode math such as |e| or |ν_p|, and names such as
# n_support_ in prose. For reStructuredText those are a substitution and a link target: escape
# them (outside `literal` text) before numpydoc and docutils read the docstring.
_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")
_ABSOLUTE = re.compile(r"\|([^|\s][^|]*?)\|")
_TRAILING = re.compile(r"\b([A-Za-z][\w]*?)_(?=[\s,.;:)\]]|$)")


def _escape(text):
    parts = _LITERAL.split(text)
    for k in range(0, len(parts), 2):  # the text between literals
        parts[k] = _TRAILING.sub(r"\1\\_", _ABSOLUTE.sub(r"\\|\1\\|", parts[k]))
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines):
    # numpydoc reads "name : type" headers of Parameters/Attributes itself: keep those as written.
    for i, line in enumerate(lines):
        header = re.match(r"^(\w+) : ", line)
        if header:
            lines[i] = line[: header.end()] + _escape(line[header.end():])
        elif not re.match(r"^-+$", line):
            lines[i] = _escape(line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring, priority=100)
