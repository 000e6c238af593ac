"""Browser tests: a real JupyterLab driven in headless Chromium (skipped with a reason when missing)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import tiers

from .lab import LabBrowser, browser_unavailable_reason


@pytest.fixture
def lab_browser() -> Iterator[LabBrowser]:
    """A headless Chromium for one test. Not kept for the session: Playwright's sync API leaves its event
    loop set as the thread's running loop while it lives, which breaks every asyncio test after it."""
    reason = browser_unavailable_reason()
    if reason is not None:
        tiers.skip_or_fail("ELYNAV_REQUIRE_BROWSER", reason)
    with LabBrowser.start() as browser:
        yield browser
