"""cxreval.io: the one writer of tidy tables / summary.md and the one Markdown table renderer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cxreval.io import markdown_table, write_table
from cxreval.io._write import SUMMARY_FILE, write_summary


def test_markdown_table_hand_worked():
    df = pd.DataFrame({"finding": ["Mass", "Edema"], "auc": [0.8125, np.nan], "n": [12, 3]})
    assert markdown_table(df) == (
        "| finding | auc | n |\n|---|---|---|\n| Mass | 0.81 | 12 |\n| Edema | nan | 3 |"
    )
    # the AUC-table form of classify/rank: 3 decimals, NaN as an empty cell, float32 formatted too
    assert markdown_table(df.assign(auc=df["auc"].astype(np.float32)), floatfmt="{:.3f}", nan="") == (
        "| finding | auc | n |\n|---|---|---|\n| Mass | 0.812 | 12 |\n| Edema |  | 3 |"
    )
    obj = pd.DataFrame({"x": pd.Series([None, "a"], dtype=object)})
    assert markdown_table(obj).splitlines()[2] == "|  |"
    assert markdown_table(obj, missing=None).splitlines()[2] == "| None |"


def test_write_table_and_summary(tmp_path):
    df = pd.DataFrame({"finding": ["Mass"], "auc": [0.8125]})
    csv = write_table(df, tmp_path, "auc")
    assert csv == tmp_path / "auc.csv"
    pd.testing.assert_frame_equal(pd.read_csv(csv), df)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "auc.parquet"), df)
    write_table(df, tmp_path, "only_csv", parquet=False)
    assert not (tmp_path / "only_csv.parquet").exists()
    p = write_summary(tmp_path, "# title")
    assert p.name == SUMMARY_FILE and p.read_text() == "# title\n"


def test_markdown_table_right_aligned_columns():
    df = pd.DataFrame({"split": ["train"], "images": ["1,234"], "patients": ["56"]})
    assert markdown_table(df, right=["images", "patients"]) == (
        "| split | images | patients |\n|---|---:|---:|\n| train | 1,234 | 56 |"
    )
    import pytest

    from cxreval.exceptions import InvalidParameterError

    with pytest.raises(
        InvalidParameterError,
        match=r"'right' parameter of markdown_table names column\(s\) "
        r"\['imgs'\] that the table does not have",
    ):
        markdown_table(df, right=["imgs"])


def test_split_sizes_and_labeller_tables_use_the_one_renderer():
    """LeakageAudit.sizes_markdown and reports.prf_markdown, hand-worked (formerly hand-rolled '| ' joins)."""
    from cxreval.datasets import audit_split
    from cxreval.labeller import prf_markdown
    from cxreval.labeller._validation import PRF_COLUMNS

    meta = pd.DataFrame(
        {"study_id": [f"s{i}" for i in range(5)], "patient_id": ["p0", "p0", "p1", "p2", "p3"]}
    )
    splits = pd.DataFrame({"study_id": ["s0", "s1", "s2", "s3", "s4"], "split": ["a", "b", "a", "a", "b"]})
    leak = audit_split(splits, meta)
    assert leak.sizes_markdown(unknown=False) == (
        "| split | images | patients |\n|---|---:|---:|\n| a | 3 | 3 |\n| b | 2 | 2 |"
    )
    assert leak.sizes_markdown().splitlines()[:2] == [
        "| split | images | patients | not in metadata |",
        "|---|---:|---:|---:|",
    ]
    row = {
        "finding": "Mass",
        "n_pos": 4,
        "TP": 3,
        "FP": 1,
        "FN": 1,
        "precision": 0.75,
        "precision_low": 0.5,
        "precision_high": 1.0,
        "recall": 0.75,
        "recall_low": 0.25,
        "recall_high": 1.0,
        "f1": 0.75,
        "f1_low": 0.4,
        "f1_high": 0.9,
        "nih_precision": np.nan,
        "nih_recall": 0.4,
        "nih_f1": 0.52,
    }
    assert prf_markdown(pd.DataFrame([row], columns=list(PRF_COLUMNS)), decimals=2) == (
        "| finding | n_pos | TP | FP | FN | precision [95% CI] | recall [95% CI] | F1 [95% CI] | NIH P / R / F1 |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| Mass | 4 | 3 | 1 | 1 | 0.75 [0.50, 1.00] | 0.75 [0.25, 1.00] | 0.75 [0.40, 0.90] | – / 0.40 / 0.52 |"
    )
