"""cxreval.tables: the one writer of tidy tables / summary.md and the one Markdown table renderer (issue 13)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from cxreval.tables import SUMMARY_FILE, markdown_table, write_summary, write_table


def test_markdown_table_hand_worked():
    df = pd.DataFrame({"finding": ["Mass", "Edema"], "auc": [0.8125, np.nan], "n": [12, 3]})
    assert markdown_table(df) == ("| finding | auc | n |\n|---|---|---|\n| Mass | 0.81 | 12 |\n"
                                  "| Edema | nan | 3 |")
    # the AUC-table form of classify/rank: 3 decimals, NaN as an empty cell, float32 formatted too
    assert markdown_table(df.assign(auc=df["auc"].astype(np.float32)), floatfmt="{:.3f}", nan="") == (
        "| finding | auc | n |\n|---|---|---|\n| Mass | 0.812 | 12 |\n| Edema |  | 3 |")
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
