"""The demo's OpenI section writes what ``cxreval label-reports`` and ``cxreval agree`` write.

- ``labeller_validation``: ``cxreval data export openi_mesh --half held-out -o MESH`` (the OpenI MeSH labels of the
  held-out half of the reports with images, ``openi_tuning_split``), then ``cxreval label-reports --reports
  NLMCXR_reports.tgz --sections whole --validate-against MESH/labels.csv --findings chestxray8``;
- the Findings-vs-Impression agreement, prevalence and flows (the subfolder ``findings_vs_impression``):
  ``cxreval label-reports --sections findings,impression --vocabulary chexpert``, then ``cxreval agree
  --studies common`` on its ``labels.csv`` with the XQA finding sets (a section a report lacks is ``missing``, so
  the pair compares the reports with both sections).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cxreval.agreement import SourceComparisonResult
from cxreval.cli.main import main
from cxreval.datasets.openi import read_openi_reports
from cxreval.labeller import LabellerValidationResult, ReportLabelsResult

from .conftest import N_RESAMPLES, assert_same_tables


@pytest.fixture(scope="module")
def demo(demo_section) -> Path:
    """The demo's OpenI section, built once for the session."""
    return demo_section("openi_report_labels")


def _reports(metadata_dir: Path) -> tuple[Path, pd.DataFrame]:
    tgz = metadata_dir / "NLMCXR_reports.tgz"
    assert tgz.is_file(), f"{tgz} missing from the fetched metadata"
    return tgz, read_openi_reports(tgz).table


def test_openi_labeller_validation_equals_label_reports(demo, metadata_dir, tmp_path):
    tgz, _ = _reports(metadata_dir)
    assert (
        main(
            [
                "data",
                "export",
                "openi_mesh",
                "--half",
                "held-out",
                "--cache-dir",
                str(metadata_dir.parent),
                "-o",
                str(tmp_path / "mesh"),
            ]
        )
        == 0
    )
    ref = tmp_path / "mesh" / "labels.csv"
    cli = tmp_path / "labels"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(tgz),
                "--sections",
                "whole",
                "--validate-against",
                str(ref),
                "--findings",
                "chestxray8",
                "--n-resamples",
                str(N_RESAMPLES),
                "--seed",
                "0",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    assert_same_tables(demo, cli, LabellerValidationResult.FILES.values())
    assert set(ReportLabelsResult.FILES.values()) <= {p.name for p in cli.iterdir()}


def test_openi_findings_vs_impression_equals_label_reports_then_agree(demo, metadata_dir, tmp_path):
    tgz, rep = _reports(metadata_dir)
    lab = tmp_path / "labels"
    assert (
        main(
            [
                "label-reports",
                "--reports",
                str(tgz),
                "--sections",
                "findings,impression",
                "--vocabulary",
                "chexpert",
                "-o",
                str(lab),
            ]
        )
        == 0
    )
    cli = tmp_path / "agree"
    assert (
        main(
            [
                "agree",
                "--labels",
                str(lab / ReportLabelsResult.FILES["labels"]),
                "--pairs",
                "report_findings:report_impression",
                "--findings",
                "xqa",
                "--finding-set",
                "selected=xqa_selected",
                "--finding-set",
                "all=xqa",
                "--studies",
                "common",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    assert_same_tables(demo / "findings_vs_impression", cli, SourceComparisonResult.FILES.values())
    both = (
        (rep["findings"].fillna("").str.strip() != "") & (rep["impression"].fillna("").str.strip() != "")
    ).sum()
    prevalence = pd.read_csv(cli / "prevalence.csv")
    # every finding's states are counted on the reports with both sections, nothing else
    assert (prevalence.groupby(["source", "finding"])["count"].sum() == both).all()
