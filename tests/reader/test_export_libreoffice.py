"""The export opened in LibreOffice Calc (headless), formulas evaluated, with a comma, a semicolon or a tab
as the separator (a spreadsheet in any locale): not one cell is a formula. The same import of a file with
formulas in it gives formula cells, so the probe can fail. Skips when ``soffice`` is not installed
(Debian: ``libreoffice-calc-nogui``, which CI installs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from cxreval.reader.export import export_tables

from .test_export import hostile_study

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
pytestmark = pytest.mark.skipif(
    SOFFICE is None, reason="LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui"
)

SEPARATORS = {"comma": 44, "semicolon": 59, "tab": 9}
CONTROL = '=1+1,plain\n"x";=SUM(1;2)\n@SUM(3)\t-4+5\n'
"""Cells that are formulas under each separator: LibreOffice must import them as formulas."""


def _filter(sep: int) -> str:
    """LibreOffice's CSV import options: the separator, ``"`` quotes, UTF-8, from line 1, English (US),
    quoted cells not forced to text, special numbers detected, spaces trimmed, formulas evaluated (the
    13th option): the most a spreadsheet would read as formulas."""
    return f"CSV:{sep},34,76,1,,1033,false,true,false,false,true,-1,true"


def _formula_cells(ods: Path) -> list[str]:
    """The formulas of an OpenDocument spreadsheet (``table:formula`` attributes of its cells)."""
    with zipfile.ZipFile(ods) as zf:
        content = zf.read("content.xml").decode("utf-8")
    return re.findall(r'table:formula="([^"]*)"', content)


def _open_in_calc(files: list[Path], sep: int, out: Path, profile: Path) -> dict[str, list[str]]:
    """``{file name: formulas}`` of ``files`` imported into Calc with the separator ``sep`` and saved."""
    out.mkdir()
    subprocess.run(
        [
            SOFFICE,  # type: ignore[list-item]
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--infilter=" + _filter(sep),
            "--convert-to",
            "ods",
            "--outdir",
            str(out),
            *map(str, files),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    got = {f.stem: _formula_cells(f) for f in out.glob("*.ods")}
    assert sorted(got) == sorted(f.stem for f in files), "LibreOffice did not convert every file"
    return got


def test_libreoffice_finds_no_formula_in_the_export(study_factory, tmp_path: Path) -> None:
    store = hostile_study(study_factory, tmp_path)
    res = export_tables(store)
    store.close()
    flat = tmp_path / "csv"
    flat.mkdir()
    files = []
    for name, text in res.texts.items():
        if name.endswith(".csv"):
            files.append(flat / name.replace("/", "__"))
            files[-1].write_bytes(text.encode("utf-8"))
    assert any("HYPERLINK" in f.read_text(encoding="utf-8") for f in files)
    (flat / "control.csv").write_text(CONTROL, encoding="utf-8")
    profile = tmp_path / "lo-profile"
    for name, sep in SEPARATORS.items():
        got = _open_in_calc([*files, flat / "control.csv"], sep, tmp_path / f"ods-{name}", profile)
        assert got.pop("control"), f"{name}: the control file gave no formula (formulas not evaluated?)"
        assert {f: v for f, v in got.items() if v} == {}, name
