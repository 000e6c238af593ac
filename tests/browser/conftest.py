"""Browser tests: a real JupyterLab driven in headless Chromium (skipped with a reason when missing)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .lab import LabBrowser, browser_unavailable_reason


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "browser: drives JupyterLab in headless Chromium (skipped without Chromium or Playwright)"
    )


@pytest.fixture(scope="session")
def lab_browser() -> Iterator[LabBrowser]:
    """One headless Chromium for the session; each notebook opens in a fresh browser context."""
    reason = browser_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with LabBrowser.start() as browser:
        yield browser
