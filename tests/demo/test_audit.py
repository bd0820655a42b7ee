"""The demo's audit section writes what ``cxreval data audit chestxray14`` writes on the same files:
``audit.json`` byte for byte (it records the files read, so the paths are the same too) and every table."""

from __future__ import annotations

from cxreval.cli.main import main
from cxreval.datasets._bbox_list import BBOX_FILE
from cxreval.datasets.audit import DatasetAudit
from cxreval.datasets.nih import DATA_ENTRY
from cxreval.demo.data import DemoContext, metadata, pinned

from .conftest import N_RESAMPLES, assert_same_tables


def test_audit_equals_cxreval_data_audit(demo_section, shared_data, metadata_dir, tmp_path):
    demo = demo_section("audit")
    ctx = DemoContext(tmp_path / "ctx", shared_data, metadata_dir.parent, N_RESAMPLES, 0, False)
    split_dir = pinned(ctx, "chestxray14/official_test_list.txt").parent
    assert pinned(ctx, "chestxray14/official_train_val_list.txt").parent == split_dir
    cli = tmp_path / "audit"
    assert (
        main(
            [
                "data",
                "audit",
                "chestxray14",
                "--data-entry",
                str(metadata(ctx, DATA_ENTRY)),
                "--bbox-list",
                str(metadata(ctx, BBOX_FILE)),
                "--split-dir",
                str(split_dir),
                "--cache-dir",
                str(metadata_dir.parent),
                "-o",
                str(cli),
            ]
        )
        == 0
    )
    name = DatasetAudit.FILES["audit"]
    assert (demo / name).read_bytes() == (cli / name).read_bytes()
    tables = [f for k, f in DatasetAudit.FILES.items() if k != "audit"]
    assert set(DatasetAudit.SPLIT_FILES.values()) <= set(tables)  # the official split was audited
    assert_same_tables(demo, cli, tables)
