"""bench/compare_outputs.py: two output folders compared table by table (exit 0 equal, 1 different)."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from cxreval.io import write_table
from cxreval.io._write import write_summary

BENCH = Path(__file__).resolve().parents[1] / "bench" / "compare_outputs.py"


@pytest.fixture(scope="module")
def cmp():
    spec = importlib.util.spec_from_file_location("compare_outputs", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _folder(
    root: Path, *, auc: float = 0.8, when: str = "2026-11-30T20:00:00+00:00", attrs: bool = False
) -> Path:
    root.mkdir()
    df = pd.DataFrame({"finding": ["Edema", "Mass"], "auc": [auc, 0.7]})
    if attrs:
        df.attrs["pairs"] = {"A:B": 1}
    write_table(df, root, "auc")
    write_summary(root, f"# run at {when} in {root}\n")
    (root / "run.json").write_text(json.dumps({"started": when, "argv": [str(root)]}))
    return root


def test_equal_folders_ignore_run_json_times_paths_and_parquet_attrs(cmp, tmp_path):
    a = _folder(tmp_path / "a")
    b = _folder(tmp_path / "b", when="2027-01-01T00:00:01+00:00", attrs=True)
    buf = io.StringIO()
    assert cmp.compare_folders(a, b, out=buf) == 0
    assert (
        "auc.parquet: equal tables, different file metadata (only in one: ['PANDAS_ATTRS'])" in buf.getvalue()
    )
    assert cmp.main([str(a), str(b)]) == 0


def test_a_changed_number_or_a_missing_file_is_a_difference(cmp, tmp_path):
    a = _folder(tmp_path / "a")
    b = _folder(tmp_path / "b", auc=0.81)
    (b / "extra.md").write_text("x\n")
    buf = io.StringIO()
    assert cmp.compare_folders(a, b, out=buf) == 3
    out = buf.getvalue()
    assert "DIFF  auc.csv:" in out and "DIFF  auc.parquet:" in out and f"only in {b}: extra.md" in out
    assert cmp.main([str(a), str(b)]) == 1
    assert cmp.main([str(a)]) == 2


def test_declared_renames_and_new_files(cmp, tmp_path):
    """--rename OLD=NEW compares A's renamed column with B's; --allow-new lists B's extra files as notes."""
    a = _folder(tmp_path / "a")
    b = _folder(tmp_path / "b")
    for root in (a, b):
        for ext in ("csv", "parquet"):
            (root / f"auc.{ext}").unlink()
    write_table(pd.DataFrame({"image_id": ["x", "y"], "auc": [0.8, 0.7]}), a, "auc")
    write_table(pd.DataFrame({"study_id": ["x", "y"], "auc": [0.8, 0.7]}), b, "auc")
    write_table(pd.DataFrame({"n": [1]}), b, "counts")
    assert cmp.main([str(a), str(b)]) == 1
    assert cmp.main([str(a), str(b), "--rename", "image_id=study_id"]) == 1  # counts.* only in B
    buf = io.StringIO()
    assert cmp.compare_folders(a, b, renames={"image_id": "study_id"}, allow_new=True, out=buf) == 0
    assert "renamed image_id -> study_id" in buf.getvalue() and "counts.csv: new in" in buf.getvalue()
    assert cmp.main([str(a), str(b), "--rename", "image_id=study_id", "--allow-new"]) == 0
    write_table(pd.DataFrame({"study_id": ["x", "y"], "auc": [0.8, 0.71]}), b, "auc")
    assert cmp.main([str(a), str(b), "--rename", "image_id=study_id", "--allow-new"]) == 1
    assert cmp.main([str(a), str(b), "--rename", "image_id"]) == 2
