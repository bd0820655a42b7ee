"""Finding Debian's headless Chromium and chromedriver for the browser tests (no browser download)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def chromium_and_driver() -> tuple[str, str]:
    """Paths of the chromium binary and chromedriver; skips the test with the install hint when absent."""
    binary = next(
        (
            b
            for b in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
            if b and Path(b).exists()
        ),
        None,
    )
    driver = next(
        (d for d in (shutil.which("chromedriver"), "/usr/bin/chromedriver") if d and Path(d).exists()), None
    )
    if binary is None or driver is None:
        pytest.skip(
            "Debian chromium and chromium-driver are not installed "
            "(apt-get install -y chromium chromium-driver); .ci/run installs them"
        )
    return binary, driver
