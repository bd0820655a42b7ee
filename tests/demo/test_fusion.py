"""The demo's CheXpert fusion section writes the same files as ``cxreval fuse`` on the same inputs.

The demo fuses the 5 ground-truth readers of the CheXpert test set with MV, FUSE_OR, FUSE_AND, Dawid-Skene and
MACE over the competition findings and scores each against the published consensus; here the same labels are
written to a file and ``cxreval fuse`` is run as a user would type it. Every file of ``FusionResult.FILES``
either side writes must be in both folders and equal exactly (CSV and Parquet).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cxreval.cli.main import main
from cxreval.demo.data import CHEXPERT_BENCH_READERS, CHEXPERT_COMPETITION, CHEXPERT_GT_READERS
from cxreval.fusion import FusionResult
from cxreval.labels import read_wide_labels, write_labels

from .conftest import assert_same_tables


def _chexpert_labels(cx: Path, out: Path) -> Path:
    """The long label table the demo reads (consensus, radiologists, labellers), written as one CSV."""
    files = {"consensus": "groundtruth.csv"}
    files.update({r: f"radiologists/groundtruth/{r}_gt.csv" for r in CHEXPERT_GT_READERS})
    files.update({r: f"radiologists/benchmark_radiologists/{r}.csv" for r in CHEXPERT_BENCH_READERS})
    files.update(
        {"chexpert_labeler": "labeler/chexpert_labels.csv", "chexbert": "labeler/chexbert_labels.csv"}
    )
    parts = [read_wide_labels(cx / rel, source=src, id_column="Study").table for src, rel in files.items()]
    return write_labels(pd.concat(parts, ignore_index=True), out)


def test_demo_fusion_files_equal_cxreval_fuse(demo_section, shared_data: Path, tmp_path: Path) -> None:
    demo = demo_section("chexpert_fusion")
    labels = _chexpert_labels(shared_data / "chexpert_test", tmp_path / "labels.csv")
    cli = tmp_path / "fuse"
    assert (
        main(
            [
                "fuse",
                "-l",
                str(labels),
                "--readers",
                ",".join(CHEXPERT_GT_READERS),
                "--methods",
                "mv,or,and,ds,mace",
                "--adjudicated",
                "consensus",
                "--findings",
                ",".join(CHEXPERT_COMPETITION),
                "--seed",
                "0",
                "--labels-format",
                "both",
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    files = [f for f in FusionResult.FILES.values() if (demo / f).exists() or (cli / f).exists()]
    # every file a run with a reference and both iterative methods writes (no over-fused state on these readers)
    assert set(FusionResult.FILES.values()) - set(files) == {"fusion_warnings.csv"}
    assert_same_tables(demo, cli, files)
    for name, file in FusionResult.FILES.items():
        if file in files:
            assert tuple(pd.read_csv(cli / file).columns) == FusionResult.FILE_COLUMNS[name], file
    agr = pd.read_csv(cli / FusionResult.FILES["fusion_agreement"])
    # majority vote of the 5 readers is the published consensus: kappa 1 on every row
    assert (agr.loc[agr["method"] == "mv", "kappa_w"] == 1.0).all() and len(agr) == 5 * (5 + 2 * 2)
