"""Session-wide reporting of the test suite."""

from _shared_data import MISSING, SHARED_DATASETS


def pytest_terminal_summary(terminalreporter):
    """One line when tests were skipped because the shared data sets are missing: the folder
    they were looked for in, and how to point elsewhere."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if MISSING in str(getattr(report, "longrepr", ""))
    ]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: the shared data sets are not in {SHARED_DATASETS} "
            "(set CWRS_SHARED_DATASETS to their folder)",
            yellow=True,
            bold=True,
        )
