"""Every demo section's run.json records ``commands``: the exact ``cxreval`` command lines that, run in order in
an empty folder with the same cache (``$CXREVAL_CACHE``) and data mirror, write the section's tables byte for byte.

``RECORDED`` are the sections whose commands reproduce all their CSV tables; ``PENDING`` the sections whose
inputs are still assembled by the demo's own code (their run.json has ``commands: []``; this list may only
shrink). ``tests/demo/test_every_section.py`` fails on a section in neither.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from .conftest import assert_same_bytes, run_recorded_commands

RECORDED: tuple[str, ...] = (
    "audit",
    "nih_vs_google_agreement",
    "nih_models",
    "nih_decision",
    "nih_subgroups",
    "xqa_published",
    "localization",
    "chexpert_models",
    "chexpert_agreement",
    "chexpert_fusion",
    "localization_real",
    "openi_report_labels",
    "iqa",
    "chexpert_relabelling",
    "chexpert_reader_study",
)
PENDING: tuple[str, ...] = ()


@pytest.mark.parametrize("key", RECORDED)
def test_recorded_commands_write_the_section_tables(key, demo_section, metadata_dir, tmp_path, monkeypatch):
    demo = demo_section(key)
    cli = run_recorded_commands(demo, tmp_path / "user", metadata_dir.parent, monkeypatch)
    csvs = sorted(str(p.relative_to(demo)) for p in demo.rglob("*.csv"))  # subfolders: a second command's
    assert csvs, f"section {key} wrote no table"
    assert_same_bytes(demo, cli, csvs)
    if key == "openi_report_labels":  # the labeller's validation and the Findings-vs-Impression agreement
        assert {"labeller_validation.csv", "findings_vs_impression/agreement.csv"} <= set(csvs)
    if (
        key == "nih_models"
    ):  # Google's macro AUC is finite under the map, on the 935 images both references label
        auc = pd.read_csv(cli / "auc.csv")
        assert auc[(auc.finding == "macro") & (auc.reference == "google_expert")]["auc"].notna().all()
        counts = pd.read_csv(cli / "counts.csv")
        assert (counts["n_studies"] == 935).all()
    commands = json.loads((demo / "run.json").read_text())["commands"]
    assert all(c.startswith("cxreval ") for c in commands)
