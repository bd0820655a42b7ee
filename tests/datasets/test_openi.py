"""Tests of cxreval.datasets.openi (OpenI reports)."""

from __future__ import annotations

import io
import re
import tarfile

import pandas as pd
import pytest

from cxreval.datasets._openi_mesh import MESH_RULES, MeshRule
from cxreval.datasets.openi import (
    REPORT_COLUMNS,
    openi_images,
    openi_mesh,
    openi_mesh_labels,
    read_openi_reports,
)
from cxreval.exceptions import InvalidParameterError, SchemaError
from cxreval.findings import CHESTXRAY14
from cxreval.labels import validate_label_table
from cxreval.labels._long import LABEL_COLUMNS

XML = """<?xml version="1.0" encoding="utf-8"?>
<eCitation>
  <uId id="{rid}"/>
  <MedlineCitation><Article><Abstract>
    <AbstractText Label="COMPARISON">None.</AbstractText>
    <AbstractText Label="INDICATION">{indication}</AbstractText>
    <AbstractText Label="FINDINGS">{findings}</AbstractText>
    <AbstractText Label="IMPRESSION">{impression}</AbstractText>
  </Abstract></Article></MedlineCitation>
  <MeSH>{mesh}</MeSH>
  {images}
</eCitation>
"""


def _xml(
    rid,
    *,
    findings="Heart normal.",
    impression="No acute disease.",
    indication="Cough",
    mesh=("normal",),
    automatic=(),
    images=("IM-1", "IM-2"),
):
    m = "".join(f"<major>{t}</major>" for t in mesh) + "".join(
        f"<automatic>{t}</automatic>" for t in automatic
    )
    im = "".join(f'<parentImage id="{rid}_{i}"><figureId>F1</figureId></parentImage>' for i in images)
    return XML.format(
        rid=rid, findings=findings, impression=impression, indication=indication, mesh=m, images=im
    ).encode()


def _tgz(tmp_path, members):
    p = tmp_path / "reports.tgz"
    with tarfile.open(p, "w:gz") as tf:
        for name, data in members:
            if data is None:
                info = tarfile.TarInfo(name)
                info.type = tarfile.DIRTYPE
                tf.addfile(info)
                continue
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return p


@pytest.fixture()
def archive(tmp_path):
    return _tgz(
        tmp_path,
        [
            ("ecgen-radiology", None),
            (
                "ecgen-radiology/10.xml",
                _xml(
                    "CXR10",
                    mesh=("Opacity/lung/upper lobe/right", "Cardiomegaly/mild"),
                    automatic=("atelectases",),
                ),
            ),
            ("ecgen-radiology/2.xml", _xml("CXR2", findings="", images=())),
            ("ecgen-radiology/3.xml", b"<eCitation><uId id='CXR3'></eCitation"),
            ("ecgen-radiology/4.xml", _xml("", images=("a",))),
            ("ecgen-radiology/5.xml", _xml("CXR10")),
            ("ecgen-radiology/readme.txt", b"hello"),
        ],
    )


def test_reads_sections_images_mesh_and_reports_skips(archive):
    res = read_openi_reports(archive)
    t = res.table
    assert t.columns.tolist() == list(REPORT_COLUMNS)
    assert t["report_id"].tolist() == ["CXR2", "CXR10"]  # numeric order of the id
    r10 = t.set_index("report_id").loc["CXR10"]
    assert r10["findings"] == "Heart normal." and r10["impression"] == "No acute disease."
    assert r10["comparison"] == "None." and r10["indication"] == "Cough"
    assert r10["image_ids"] == "CXR10_IM-1|CXR10_IM-2" and r10["n_images"] == 2
    assert r10["mesh_major"] == "Opacity/lung/upper lobe/right|Cardiomegaly/mild"
    assert r10["mesh_automatic"] == "atelectases" and r10["file"] == "ecgen-radiology/10.xml"
    r2 = t.set_index("report_id").loc["CXR2"]
    assert r2["n_images"] == 0 and r2["findings"] != r2["findings"]  # empty section -> missing (NaN)
    rep = res.report
    assert rep.n_read == 6 and rep.n_kept == 2 and rep.n_dropped == 4
    dropped = rep.dropped.set_index("value")["reason"].to_dict()
    assert dropped["ecgen-radiology/3.xml"].startswith("malformed XML")
    assert dropped["ecgen-radiology/4.xml"] == "no report id (<uId id=...>)"
    assert dropped["ecgen-radiology/5.xml"] == "duplicate report id 'CXR10' (first in ecgen-radiology/10.xml)"
    assert dropped["ecgen-radiology/readme.txt"] == "not an XML file"
    assert "1 reports have no image" in rep.notes


def test_require_images_skips_and_reports(archive):
    res = read_openi_reports(archive, require_images=True)
    assert res.table["report_id"].tolist() == ["CXR10"]
    assert res.report.reasons()["no image (require_images=True)"] == 1


def test_folder_input_gives_same_table(archive, tmp_path):
    d = tmp_path / "x"
    with tarfile.open(archive) as tf:
        tf.extractall(d, filter="data")
    a = read_openi_reports(archive).table.drop(columns="file")
    b = read_openi_reports(d).table.drop(columns="file")
    assert a.equals(b)


def test_images_and_mesh_tables(archive):
    t = read_openi_reports(archive).table
    im = openi_images(t)
    assert im.to_dict(orient="list") == {
        "report_id": ["CXR10", "CXR10"],
        "image_id": ["CXR10_IM-1", "CXR10_IM-2"],
    }
    mesh = openi_mesh(t)
    assert mesh["code"].tolist() == ["normal", "Opacity/lung/upper lobe/right", "Cardiomegaly/mild"]
    assert mesh["term"].tolist() == ["normal", "Opacity", "Cardiomegaly"]
    assert mesh["qualifiers"].tolist()[1:] == ["lung/upper lobe/right", "mild"]
    assert mesh["qualifiers"].isna().tolist() == [True, False, False]
    assert openi_mesh(t, kind="automatic")["term"].tolist() == ["atelectases"]
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'kind' parameter of openi_mesh must be one of "
        r"\['major', 'automatic'\]. Got 'minor' instead",
    ):
        openi_mesh(t, kind="minor")


def test_bad_archives(tmp_path):
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"not a tar file")
    with pytest.raises(SchemaError, match=rf"Could not read '{re.escape(str(bad))}' as a tar archive"):
        read_openi_reports(bad)
    empty = _tgz(tmp_path, [("a.txt", b"x")])
    with pytest.raises(SchemaError, match=r"holds no OpenI report \(1 files read, 1 skipped\)"):
        read_openi_reports(empty)
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'require_images' parameter of read_openi_reports must be "
        r"a bool. Got 'yes' instead",
    ):
        read_openi_reports(empty, require_images="yes")  # type: ignore[arg-type]


def test_real_openi_archive(metadata_dir):
    res = read_openi_reports(metadata_dir / "NLMCXR_reports.tgz")
    t = res.table
    assert len(t) == 3955 and res.report.n_dropped == 0 and t["report_id"].is_unique
    assert t["n_images"].eq(0).sum() == 104
    assert "104 reports have no image" in res.report.notes
    # every report has at least one MeSH major code; sections are mostly present
    assert (t["mesh_major"] != "").all()
    assert t["impression"].notna().sum() == 3955 - 34 and t["findings"].notna().sum() == 3955 - 530
    first = t.iloc[0]
    assert first["report_id"] == "CXR1" and first["indication"] == "Positive TB test"
    assert first["image_ids"] == "CXR1_1_IM-0001-3001|CXR1_1_IM-0001-4001" and first["mesh_major"] == "normal"
    # MeSH major codes against an independent regex count over the raw XML
    codes = []
    with tarfile.open(metadata_dir / "NLMCXR_reports.tgz") as tf:
        for m in tf:
            if m.isfile():
                codes += re.findall(r"<major>([^<]*)</major>", tf.extractfile(m).read().decode())
    mesh = openi_mesh(t)
    assert len(mesh) == len(codes)
    assert mesh["term"].value_counts()["normal"] == sum(c.split("/")[0].strip() == "normal" for c in codes)


# ---------------------------------------------------------------------------------------------- MeSH labels


def _reports(rows):
    """A reports table as read_openi_reports returns: (report_id, image_ids, mesh_major)."""
    return pd.DataFrame(rows, columns=["report_id", "image_ids", "mesh_major"])


MESH_TABLE = _reports(
    [
        ("CXR1", "CXR1_a|CXR1_b", "normal"),
        ("CXR2", "CXR2_a", "Pulmonary Atelectasis/base/left|Lung/hypoinflation|Cardiomegaly/borderline"),
        ("CXR3", "", "No Indexing"),
        ("CXR4", "CXR4_a", ""),
        ("CXR5", "CXR5_a", "Thickening/pleura/apex|Thickening/bronchi|Mass/breast/large|Nodule/lung"),
        (
            "CXR6",
            "CXR6_a",
            "Cardiac Shadow/enlarged/borderline|Cardiomegaly/mild|subcutaneous  EMPHYSEMA/neck",
        ),
        ("CXR7", "", "Pleural Effusion/right|Hydropneumothorax/right"),
    ]
)


def _states(t):
    return {(r.study_id, r.finding): int(r.state) for r in t.itertuples()}


def test_mesh_labels_mapping_qualifiers_normal_and_drops():
    res = openi_mesh_labels(reports=MESH_TABLE)
    t = res.table
    assert t.columns.tolist() == list(LABEL_COLUMNS) and str(t["state"].dtype) == "Int8"
    assert t["study_id"].unique().tolist() == ["CXR1", "CXR2", "CXR5", "CXR6", "CXR7"]
    assert (t["patient_id"] == t["study_id"]).all() and (t["source"] == "openi_mesh").all()
    assert t.groupby("study_id", sort=False)["finding"].agg(tuple).map(lambda f: f == CHESTXRAY14).all()
    validate_label_table(t)  # canonical, no duplicates, one patient per study
    s = _states(t)
    pos = {k for k, v in s.items() if v == 2}
    unc = {k for k, v in s.items() if v == 1}
    assert pos == {
        ("CXR2", "Atelectasis"),
        ("CXR5", "Pleural Thickening"),
        ("CXR5", "Nodule"),
        ("CXR6", "Cardiomegaly"),
        ("CXR7", "Effusion"),
        ("CXR7", "Pneumothorax"),
    }
    # borderline -> uncertain; a positive code for the same finding wins (CXR6); Lung/hypoinflation,
    # Thickening/bronchi, Mass/breast and Subcutaneous Emphysema assert none of the findings
    assert unc == {("CXR2", "Cardiomegaly")}
    assert all(v == 0 for (sid, _), v in s.items() if sid == "CXR1")  # normal: all negative
    rep = res.report
    assert rep.n_read == 7 and rep.n_kept == 5
    assert rep.dropped.to_dict(orient="list") == {
        "row": [2, 3],
        "value": ["CXR3", "CXR4"],
        "reason": ["only unusable MeSH major codes ['No Indexing']", "no MeSH major code"],
    }
    unm = next(n for n in rep.notes if n.startswith("unmapped MeSH headings"))
    assert unm.endswith("4 headings: Lung 1, Mass 1, Thickening 1, subcutaneous  EMPHYSEMA 1")
    assert "patient_id = report id: OpenI has no patient identifiers linking reports" in rep.notes
    assert "2 matching codes carry an uncertain qualifier ['borderline']" in rep.notes


def test_mesh_labels_options():
    t = openi_mesh_labels(
        reports=MESH_TABLE,
        uncertain_qualifiers=(),
        findings=["Cardiomegaly", "Pleural_Thickening"],
        source="mesh",
    ).table
    assert t["finding"].unique().tolist() == ["Cardiomegaly", "Pleural Thickening"] and set(t["source"]) == {
        "mesh"
    }
    assert _states(t)[("CXR2", "Cardiomegaly")] == 2
    rule = MeshRule("Lung", "Atelectasis", qualifier="hypoinflation")
    t = openi_mesh_labels(reports=MESH_TABLE, rules=[rule], findings=["Atelectasis"]).table
    assert {k for k, v in _states(t).items() if v == 2} == {("CXR2", "Atelectasis")}
    # unit='image': one row per image, patient = report; reports without images are dropped
    res = openi_mesh_labels(reports=MESH_TABLE, unit="image", findings=["Nodule"])
    t = res.table
    assert t["study_id"].tolist() == ["CXR1_a", "CXR1_b", "CXR2_a", "CXR5_a", "CXR6_a"]
    assert t["patient_id"].tolist() == ["CXR1", "CXR1", "CXR2", "CXR5", "CXR6"]
    assert t["state"].tolist() == [0, 0, 0, 2, 0]
    assert res.report.reasons()["no image (unit='image')"] == 1 and res.report.n_kept == 4
    img = openi_images(MESH_TABLE)  # the same report -> image links as openi_images
    assert set(zip(img["image_id"], img["report_id"])) >= set(zip(t["study_id"], t["patient_id"]))


def test_mesh_labels_from_archive_and_bad_input(archive):
    res = openi_mesh_labels(archive)
    assert res.table["study_id"].unique().tolist() == ["CXR2", "CXR10"]
    assert _states(res.table)[("CXR10", "Cardiomegaly")] == 2 and res.report.source == str(archive)
    assert any(n.startswith("read_openi_reports skipped 4 archive files") for n in res.report.notes)
    with pytest.raises(
        InvalidParameterError, match=r"openi_mesh_labels takes either 'path' or 'reports', not both"
    ):
        openi_mesh_labels(archive, reports=MESH_TABLE)
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'findings' parameter of openi_mesh_labels names "
        r"\['Fracture'\], which no MeSH rule maps to",
    ):
        openi_mesh_labels(reports=MESH_TABLE, findings=["Effusion", "Fracture"])
    with pytest.raises(SchemaError, match=r"Unknown finding|not a known finding|'Kidney'"):
        openi_mesh_labels(reports=MESH_TABLE, findings=["Kidney"])
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'findings' parameter of openi_mesh_labels must be a "
        r"non-empty sequence of finding names. Got 'Mass' instead",
    ):
        openi_mesh_labels(reports=MESH_TABLE, findings="Mass")
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'unit' parameter of openi_mesh_labels must be one of "
        r"\['report', 'image'\]. Got 'patient' instead",
    ):
        openi_mesh_labels(reports=MESH_TABLE, unit="patient")
    with pytest.raises(
        InvalidParameterError, match=r"The 'uncertain_qualifiers' parameter .* Got 'borderline'"
    ):
        openi_mesh_labels(reports=MESH_TABLE, uncertain_qualifiers="borderline")
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'rules' parameter of openi_mesh_labels must be a "
        r"non-empty sequence of MeshRule",
    ):
        openi_mesh_labels(reports=MESH_TABLE, rules={"Mass": "Mass"})  # type: ignore[arg-type]
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'reports' parameter of openi_mesh_labels must be the "
        r"DataFrame of read_openi_reports\(\). Got list instead",
    ):
        openi_mesh_labels(reports=[1])  # type: ignore[arg-type]
    with pytest.raises(
        SchemaError, match=r"OpenI reports table is missing required column\(s\) \['mesh_major'\]"
    ):
        openi_mesh_labels(reports=MESH_TABLE.drop(columns="mesh_major"))


def test_mesh_rules_findings_are_canonical():
    assert {r.finding for r in MESH_RULES} == set(CHESTXRAY14)
    assert MESH_RULES[0].to_dict() == {
        "heading": "Pulmonary Atelectasis",
        "finding": "Atelectasis",
        "qualifier": None,
        "exclude": [],
    }


def test_real_openi_mesh_labels(metadata_dir):
    from cxreval.datasets import load_dataset

    reports = read_openi_reports(metadata_dir / "NLMCXR_reports.tgz").table
    res = openi_mesh_labels(reports=reports)
    t, rep = res.table, res.report
    # every report accounted for: 95 coded 'No Indexing' only; the rest kept (Wang et al. retrieved 3,851)
    assert rep.n_read == 3955 and rep.n_kept == 3860 and rep.n_kept + rep.n_dropped == rep.n_read
    assert rep.reasons() == {"only unusable MeSH major codes ['No Indexing']": 95}
    assert len(t) == 3860 * 14 and t["study_id"].nunique() == 3860
    # independent counts with str.contains over the raw '|'-joined MeSH strings
    raw = reports.set_index("report_id")["mesh_major"]
    state = t.pivot(index="study_id", columns="finding", values="state")
    card = raw.str.contains(r"(?:^|\|)Cardiomegaly(?:/|\||$)") | raw.str.contains(
        r"(?:^|\|)Cardiac Shadow/enlarged"
    )
    card_bl = raw.str.split("|").map(
        lambda cs: [
            c for c in cs if c.startswith(("Cardiomegaly", "Cardiac Shadow/enl", "Cardiac Shadow/borderline"))
        ]
    )
    card_pos = card_bl.map(lambda cs: any("borderline" not in c for c in cs))
    assert int((state["Cardiomegaly"] == 2).sum()) == int(card_pos.sum()) == 345
    assert int((state["Cardiomegaly"] >= 1).sum()) == int(
        (card | raw.str.contains("Cardiac Shadow/borderline")).sum()
    )
    atel = raw.str.contains(r"(?:^|\|)Pulmonary Atelectasis")
    assert int((state["Atelectasis"] == 2).sum()) == int(atel.sum()) == 332
    eff = raw.str.contains(r"(?:^|\|)Pleural Effusion(?:/|\||$)")
    eff_pos = raw.str.split("|").map(
        lambda cs: any(c.startswith("Pleural Effusion") and "borderline" not in c for c in cs)
    )
    assert int((state["Effusion"] >= 1).sum()) == int(eff.sum())
    assert int((state["Effusion"] == 2).sum()) == int(eff_pos.sum()) == 160
    normal = raw[raw == "normal"].index
    assert len(normal) == 1391 and (state.loc[normal] == 0).all().all()
    assert any(
        n.startswith("unmapped MeSH headings (codes in kept reports), 102 headings: Lung 568, Opacity 536")
        for n in rep.notes
    )
    # through the registry, from the fetched archive
    via = load_dataset("openi_mesh", cache_dir=metadata_dir.parent)
    pd.testing.assert_frame_equal(via.table, t)


def test_mesh_labels_half_of_the_tuning_split():
    from cxreval.datasets.openi import openi_tuning_split

    every = openi_mesh_labels(reports=MESH_TABLE, half="all")
    assert every.table["study_id"].unique().tolist() == ["CXR1", "CXR2", "CXR5", "CXR6"]  # CXR7 has no image
    assert every.report.dropped["value"].tolist() == ["CXR3", "CXR4", "CXR7"]
    assert every.report.reasons()["no image (the tuning split holds reports with images)"] == 1
    dev_ids, held_ids = openi_tuning_split(["CXR1", "CXR2", "CXR5", "CXR6"])
    dev = openi_mesh_labels(reports=MESH_TABLE, half="development")
    held = openi_mesh_labels(reports=MESH_TABLE, half="held-out")
    assert dev.table["study_id"].unique().tolist() == dev_ids.tolist()
    assert held.table["study_id"].unique().tolist() == held_ids.tolist()
    assert not set(dev_ids) & set(held_ids) and dev.report.n_kept + held.report.n_kept == every.report.n_kept
    assert held.report.reasons()[
        "in the development half (cxreval.datasets.openi.openi_tuning_split)"
    ] == len(dev_ids)
    full = every.table.set_index(["study_id", "finding"])["state"]
    part = held.table.set_index(["study_id", "finding"])["state"]
    assert part.equals(full.loc[part.index])  # the same labels, fewer reports
    with pytest.raises(InvalidParameterError, match="'half' parameter of openi_mesh_labels"):
        openi_mesh_labels(reports=MESH_TABLE, half="heldout")
