"""The comparison design from the CLI beyond classify/rank: ``agree --studies common --finding-map`` and
``fuse [--adjudicated] --studies common`` (the default of both) keep, per finding, the studies every compared
source labels."""

from __future__ import annotations

import pandas as pd
import pytest

from _factories import label_table
from cxreval.agreement import compare_sources
from cxreval.agreement._compare import common_study_labels
from cxreval.cli.main import main
from cxreval.exceptions import SchemaError
from cxreval.labels import write_labels


def _labels() -> pd.DataFrame:
    """Sources A and C on 30 studies, B on the first 20; Nodule and Mass positive or negative."""
    return label_table(
        {"A": 30, "B": 20, "C": 30},
        ("Nodule", "Mass"),
        sources=("A", "B", "C"),
        states=("positive", "negative"),
        seed=1,
    )


def test_common_study_labels_keeps_the_studies_every_source_labels():
    t = _labels()
    c = common_study_labels(t, ["A", "B"])
    assert set(c.source) == {"A", "B"} and c.groupby("source").study_id.nunique().tolist() == [20, 20]
    disjoint = t.assign(study_id=t.study_id.where(t.source != "B", "b" + t.study_id))
    with pytest.raises(SchemaError, match="no study is labelled by every source labelling finding 'Nodule'"):
        common_study_labels(disjoint, ["A", "B"])


def test_agree_studies_common_equals_the_library_on_common_studies(tmp_path):
    t = _labels()
    lp = write_labels(t, tmp_path / "l.csv")
    out = tmp_path / "agree"
    assert main(["agree", "-l", str(lp), "--pairs", "A:B,A:C", "--studies", "common", "-o", str(out)]) == 0
    prev = pd.read_csv(out / "prevalence.csv")
    lib = compare_sources(common_study_labels(t, ["A", "B", "C"]), "A:B,A:C", studies="each")
    pd.testing.assert_frame_equal(prev, lib.prevalence.table.reset_index(drop=True), check_dtype=False)
    agr = pd.read_csv(out / "agreement.csv")
    assert set(agr.loc[~agr.finding.isin(["macro", "micro"]), "n"]) == {20}  # A:C alone would compare 30


def test_agree_finding_map(tmp_path):
    t = _labels()
    lp = write_labels(t, tmp_path / "l.csv")
    m = tmp_path / "m.yaml"
    m.write_text("findings:\n  Nodule or Mass: any(Nodule, Mass)\n")
    out = tmp_path / "agree"
    assert main(["agree", "-l", str(lp), "--pairs", "A:C", "--finding-map", str(m), "-o", str(out)]) == 0
    assert set(pd.read_csv(out / "agreement.csv")["finding"]) <= {"Nodule or Mass", "macro", "micro"}
    assert pd.read_csv(out / "finding_map.csv")["sources"].tolist() == ["Nodule | Mass"]


def test_fuse_studies_common_restricts_to_the_studies_every_reader_labels(tmp_path):
    t = _labels()
    lp = write_labels(t, tmp_path / "l.csv")
    for studies in ([], ["--studies", "common"]):  # common is the default
        bare = tmp_path / f"readers{len(studies)}"
        args = ["fuse", "-l", str(lp), "--readers", "A,B", "--methods", "mv", *studies, "-o", str(bare)]
        assert main(args) == 0
        assert pd.read_csv(bare / "fused_labels.csv")["study_id"].nunique() == 20  # B labels 20 of A's 30
    each = tmp_path / "each"
    args = [
        "fuse",
        "-l",
        str(lp),
        "--readers",
        "A,B",
        "--methods",
        "mv",
        "--studies",
        "each",
        "-o",
        str(each),
    ]
    assert main(args) == 0
    assert pd.read_csv(each / "fused_labels.csv")["study_id"].nunique() == 30
    out = tmp_path / "fuse"
    assert (
        main(
            [
                "fuse",
                "-l",
                str(lp),
                "--readers",
                "A,C",
                "--methods",
                "mv",
                "--adjudicated",
                "B",
                "--studies",
                "common",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    fused = pd.read_csv(out / "fused_labels.csv")
    assert fused["study_id"].nunique() == 20
