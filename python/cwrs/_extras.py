"""How to install an optional part of cwrs (an extra of pyproject.toml), for the messages that
need one."""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that installs the extra `extra`. cwrs has no release on a package index yet,
    so it is installed from a clone of its repository."""
    return f'pip install ".[{extra}]" in a clone of cwrs (no release on a package index yet)'
