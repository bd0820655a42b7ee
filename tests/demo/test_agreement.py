"""The demo's agreement sections write what ``cxreval agree`` writes on the same label table.

Each section's label table (built by :mod:`cxreval.demo.data` from the reference data, as the demo builds it) is
written to a file with :func:`cxreval.labels.write_labels`; ``cxreval agree`` on that file, with the options the
demo's call corresponds to, must write the same agreement, prevalence, flows and omissions tables, exactly.
"""

from __future__ import annotations

from pathlib import Path

from cxreval.agreement import (
    AgreementTableResult,
    FlowsResult,
    OmissionsResult,
    PrevalenceResult,
)
from cxreval.cli.main import main
from cxreval.datasets.chexpert import load_labels
from cxreval.demo.data import (
    CHEXPERT_BENCH_READERS,
    CHEXPERT_COMPETITION,
    CHEXPERT_GT_READERS,
    DemoContext,
    chexpert_labels,
)
from cxreval.labels import write_labels

from .conftest import N_RESAMPLES, assert_same_tables


def _context(tmp_path: Path, shared_data: Path, metadata_dir: Path) -> DemoContext:
    """The context the demo sections of ``run_demo_section`` get (same mirror, cache, seed)."""
    return DemoContext(tmp_path / "ctx", shared_data, metadata_dir.parent, N_RESAMPLES, 0, False)


def _agree(tmp_path: Path, labels: Path, name: str, *options: str) -> Path:
    out = tmp_path / name
    assert main(["agree", "--labels", str(labels), "--out", str(out), *options]) == 0
    return out


def test_chexpert_agreement_equals_cxreval_agree(demo_section, shared_data, metadata_dir, tmp_path):
    """Agreement and prevalence of every reader and labeler with the consensus; flows (and omissions) of a second
    run on the two pairs the demo draws."""
    demo = demo_section("chexpert_agreement")
    chexpert_labels(_context(tmp_path, shared_data, metadata_dir))  # the files the demo reads are there
    labels = load_labels(
        shared_data / "chexpert_test"
    ).table  # what `cxreval data export chexpert_test` writes
    labels = labels[labels["finding"].isin(CHEXPERT_COMPETITION)]
    lp = write_labels(labels, tmp_path / "chexpert_labels.parquet")
    others = [
        *CHEXPERT_GT_READERS,
        *CHEXPERT_BENCH_READERS,
        "chexpert_labeler",
        "chexbert",
    ]  # the demo's pairs
    assert sorted(others) == sorted(s for s in dict.fromkeys(labels["source"]) if s != "consensus")
    findings = ",".join(
        CHEXPERT_COMPETITION
    )  # in this order (the demo's run.json `commands` read the same way)
    cli = _agree(
        tmp_path,
        lp,
        "agree",
        "--pairs",
        ",".join(f"consensus:{s}" for s in others),
        "--intersect",
        "-f",
        findings,
    )
    assert_same_tables(demo, cli, [*AgreementTableResult.FILES.values(), *PrevalenceResult.FILES.values()])
    cli = _agree(
        tmp_path,
        lp,
        "flows",
        "--pairs",
        "consensus:chexpert_labeler,consensus:bc4",
        "--intersect",
        "-f",
        findings,
    )
    assert_same_tables(demo, cli, [*FlowsResult.FILES.values(), *OmissionsResult.FILES.values()])
