"""Print the HTML report to PDF with headless Chromium (``chromium --headless --print-to-pdf``).

Chromium is found on ``PATH`` (``chromium``, ``chromium-browser``, ``google-chrome``,
``google-chrome-stable``) or given explicitly; without one, :class:`PdfUnavailableError` says how to
get it. The page's print style sheet puts the key findings alone on the first page.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..exceptions import CxrevalError
from ..outputs._folder import atomic_file

__all__ = ["PdfUnavailableError", "PdfError", "find_chromium", "print_pdf", "CHROMIUM_NAMES"]

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class PdfUnavailableError(CxrevalError):
    """No headless Chromium is available to print the report to PDF."""


class PdfError(CxrevalError):
    """Chromium ran but did not produce the PDF."""


def find_chromium(binary: str | Path | None = None) -> str:
    """The Chromium executable: ``binary`` when given, else the first of :data:`CHROMIUM_NAMES` on PATH.

    Raises
    ------
    PdfUnavailableError
        If none is found; the message names what was looked for and how to install it.
    """
    if binary is not None:
        found = shutil.which(str(binary))
        if found is None:
            raise PdfUnavailableError(
                f"PDF printing: the Chromium executable {str(binary)!r} was not found or is not executable."
            )
        return found
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise PdfUnavailableError(
        "Printing a PDF needs headless Chromium, and none of "
        + ", ".join(CHROMIUM_NAMES)
        + " is on PATH. Install it (Debian/Ubuntu: apt-get install chromium) or open "
        "report.html in a browser and print it to PDF."
    )


def print_pdf(
    page: str | Path,
    out: str | Path,
    *,
    overwrite: bool = False,
    chromium: str | Path | None = None,
    timeout: float = 180.0,
    inputs: Sequence[str | Path] = (),
) -> Path:
    """Print the HTML file ``page`` to the PDF ``out`` (written atomically).

    Raises
    ------
    PdfUnavailableError
        If no Chromium is found (checked first).
    PdfError
        If Chromium fails, times out or writes no PDF.
    """
    exe = find_chromium(chromium)
    page = Path(page).resolve()
    profile = tempfile.mkdtemp(prefix="cxreval-pdf-")
    try:
        with atomic_file(out, overwrite=overwrite, inputs=[page, *inputs]) as tmp:
            cmd = [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--no-pdf-header-footer",
                "--print-to-pdf-no-header",
                "--run-all-compositor-stages-before-draw",
                "--virtual-time-budget=30000",
                f"--print-to-pdf={tmp}",
                page.as_uri(),
            ]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
            except subprocess.TimeoutExpired:
                raise PdfError(
                    f"PDF printing: Chromium did not finish printing {page} within {timeout:g} s."
                ) from None
            if not tmp.is_file() or tmp.stat().st_size == 0 or tmp.read_bytes()[:5] != b"%PDF-":
                tail = (proc.stderr or "").strip().splitlines()[-3:]
                raise PdfError(
                    f"PDF printing: Chromium (exit {proc.returncode}) wrote no PDF for {page}: "
                    + " | ".join(tail)
                )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return Path(out)
