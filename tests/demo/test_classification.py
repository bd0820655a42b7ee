"""Demo == CLI: the demo's AUC sections write exactly the files of ``cxreval classify`` on the same
inputs: every file of :class:`~cxreval.stats.AUCResult` (``auc``, ``counts``, ``dropped``)."""

from __future__ import annotations

import pandas as pd

from cxreval.cli.main import main
from cxreval.stats import AUCResult

from .auc_inputs import chexpert_inputs, common
from .conftest import assert_same_tables


def test_chexpert_models_equal_classify(demo_section, shared_data, metadata_dir, tmp_path):
    demo = demo_section("chexpert_models")
    args, refs = chexpert_inputs(tmp_path, shared_data, metadata_dir)
    cli = tmp_path / "classify"
    assert main(["classify", *args, *common(), "-o", str(cli)]) == 0
    assert_same_tables(demo, cli, AUCResult.FILES.values())
    assert list(pd.unique(pd.read_csv(cli / AUCResult.FILES["auc"])["reference"])) == refs
