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


def launch_chromium(size: tuple[int, int], dpr: float = 1.0, *, scrollbars: bool = False):
    """Headless Chromium (software canvas: ``--disable-gpu``) at a window size and device pixel ratio
    (``--force-device-scale-factor``), with a fresh profile folder: ``(driver, profile)``; the caller quits
    the driver and removes the folder. No network beyond the page's own (no background, component or sync
    traffic); ``scrollbars`` keeps the page's scrollbars (a report laid out as a reader sees it)."""
    import tempfile

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary, driver_path = chromium_and_driver()
    profile = tempfile.mkdtemp(prefix="cxreval-reader-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        *(() if scrollbars else ("--hide-scrollbars",)),
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
        f"--force-device-scale-factor={dpr}",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver_path), options=opts)
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(120)
    return drv, profile
