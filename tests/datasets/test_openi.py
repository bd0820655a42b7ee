"""Tests of cxreval.datasets.openi (OpenI reports)."""

from __future__ import annotations

import io
import re
import tarfile

import pytest

from cxreval.datasets.openi import REPORT_COLUMNS, openi_images, openi_mesh, read_openi_reports
from cxreval.exceptions import InvalidParameterError, SchemaError

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


def _xml(rid, *, findings="Heart normal.", impression="No acute disease.", indication="Cough",
         mesh=("normal",), automatic=(), images=("IM-1", "IM-2")):
    m = "".join(f"<major>{t}</major>" for t in mesh) + "".join(f"<automatic>{t}</automatic>" for t in automatic)
    im = "".join(f'<parentImage id="{rid}_{i}"><figureId>F1</figureId></parentImage>' for i in images)
    return XML.format(rid=rid, findings=findings, impression=impression, indication=indication, mesh=m,
                      images=im).encode()


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
    return _tgz(tmp_path, [
        ("ecgen-radiology", None),
        ("ecgen-radiology/10.xml", _xml("CXR10", mesh=("Opacity/lung/upper lobe/right", "Cardiomegaly/mild"),
                                        automatic=("atelectases",))),
        ("ecgen-radiology/2.xml", _xml("CXR2", findings="", images=())),
        ("ecgen-radiology/3.xml", b"<eCitation><uId id='CXR3'></eCitation"),
        ("ecgen-radiology/4.xml", _xml("", images=("a",))),
        ("ecgen-radiology/5.xml", _xml("CXR10")),
        ("ecgen-radiology/readme.txt", b"hello"),
    ])


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
    assert im.to_dict(orient="list") == {"report_id": ["CXR10", "CXR10"], "image_id": ["CXR10_IM-1", "CXR10_IM-2"]}
    mesh = openi_mesh(t)
    assert mesh["code"].tolist() == ["normal", "Opacity/lung/upper lobe/right", "Cardiomegaly/mild"]
    assert mesh["term"].tolist() == ["normal", "Opacity", "Cardiomegaly"]
    assert mesh["qualifiers"].tolist()[1:] == ["lung/upper lobe/right", "mild"]
    assert mesh["qualifiers"].isna().tolist() == [True, False, False]
    assert openi_mesh(t, kind="automatic")["term"].tolist() == ["atelectases"]
    with pytest.raises(InvalidParameterError, match=r"The 'kind' parameter of openi_mesh must be one of "
                                                    r"\['major', 'automatic'\]. Got 'minor' instead"):
        openi_mesh(t, kind="minor")


def test_bad_archives(tmp_path):
    bad = tmp_path / "bad.tgz"
    bad.write_bytes(b"not a tar file")
    with pytest.raises(SchemaError, match=rf"Could not read '{re.escape(str(bad))}' as a tar archive"):
        read_openi_reports(bad)
    empty = _tgz(tmp_path, [("a.txt", b"x")])
    with pytest.raises(SchemaError, match=r"holds no OpenI report \(1 files read, 1 skipped\)"):
        read_openi_reports(empty)
    with pytest.raises(InvalidParameterError, match=r"The 'require_images' parameter of read_openi_reports must be "
                                                    r"a bool. Got 'yes' instead"):
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
