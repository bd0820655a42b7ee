"""OpenI (Indiana University chest X-ray collection) radiology reports with their MeSH codes.

Citation: Demner-Fushman D, Kohli MD, Rosenman MB, et al. Preparing a collection of radiology examinations
for distribution and retrieval. J Am Med Inform Assoc 2016;23(2):304-310. doi:10.1093/jamia/ocv080.
Data: https://openi.nlm.nih.gov/faq (``NLMCXR_reports.tgz``, licence CC BY-NC-ND 4.0); the archive ships
in the torchxrayvision wheel (``cxreval data fetch``).

File layout: one XML file per report (``ecgen-radiology/<n>.xml``, 3,955 reports). Each holds

- ``<uId id="CXR1"/>`` — the report id;
- ``<AbstractText Label="COMPARISON|INDICATION|FINDINGS|IMPRESSION">`` — the report sections (an
  empty element means the section is absent; de-identification replaced words by ``XXXX``);
- ``<MeSH><major>…</major><automatic>…</automatic></MeSH>`` — human-assigned MeSH-based codes
  (``major``; e.g. ``Opacity/lung/upper lobe/right``: a term then its qualifiers, or ``normal``) and
  codes assigned automatically (``automatic``);
- ``<parentImage id="CXR1_1_IM-0001-3001">`` — the images of the examination (frontal and lateral).

There are no patient identifiers: a report is one examination of one patient, and the report id is
the unit a bootstrap resamples.

Encoding in cxreval: :func:`read_openi_reports` returns one row per report with the four sections as
text (missing when empty), the image ids and MeSH codes joined by ``|``. :func:`openi_images` and
:func:`openi_mesh` explode those into long tables. Every file of the archive that is not turned into a
report is listed in the read report with the reason (not XML, malformed XML, no report id, duplicate
report id, no image when images are required).

Examples
--------
>>> res = read_openi_reports()                                      # doctest: +SKIP
>>> len(res.table), res.report.n_dropped                             # doctest: +SKIP
(3955, 0)
"""

from __future__ import annotations

import os
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import check_columns
from ..exceptions import InvalidParameterError, SchemaError
from ..results import ReadReport, ReadResult
from .fetch import metadata_path

__all__ = ["OPENI_FILE", "SECTIONS", "REPORT_COLUMNS", "read_openi_reports", "openi_images", "openi_mesh"]

OPENI_FILE = "NLMCXR_reports.tgz"
SECTIONS: tuple[str, ...] = ("comparison", "indication", "findings", "impression")
REPORT_COLUMNS: tuple[str, ...] = ("report_id", "file", "n_images", "image_ids", *SECTIONS,
                                   "mesh_major", "mesh_automatic")


def _members(p: Path) -> Iterator[tuple[str, bytes | None]]:
    """``(name, bytes)`` for every file in a .tgz or a folder; directories are not files and are skipped."""
    if p.is_dir():
        for f in sorted(x for x in p.rglob("*") if x.is_file()):
            yield str(f.relative_to(p)), f.read_bytes()
        return
    try:
        with tarfile.open(p, "r:*") as tf:
            for m in tf:
                if m.isdir():
                    continue
                fh = tf.extractfile(m) if m.isfile() else None
                yield m.name, (fh.read() if fh is not None else None)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise SchemaError(f"Could not read {str(p)!r} as a tar archive of OpenI XML reports: {exc}") from exc


def _text(el: ET.Element | None) -> str | None:
    if el is None:
        return None
    t = "".join(el.itertext()).strip()
    return t or None


def _parse(data: bytes) -> dict[str, object]:
    root = ET.fromstring(data)
    uid = root.find("uId")
    rid = uid.get("id", "").strip() if uid is not None else ""
    out: dict[str, object] = {"report_id": rid}
    extra_sections = []
    for s in SECTIONS:
        out[s] = None
    for at in root.iter("AbstractText"):
        label = (at.get("Label") or "").strip().lower()
        if label in SECTIONS:
            out[label] = _text(at)
        else:
            extra_sections.append(label or "<no label>")
    mesh = root.find("MeSH")
    major = [t for t in (_text(e) for e in (mesh.findall("major") if mesh is not None else [])) if t]
    auto = [t for t in (_text(e) for e in (mesh.findall("automatic") if mesh is not None else [])) if t]
    images = [im.get("id", "").strip() for im in root.findall("parentImage")]
    out.update({"image_ids": [i for i in images if i], "mesh_major": major, "mesh_automatic": auto,
                "_extra_sections": extra_sections})
    return out


def read_openi_reports(path: str | os.PathLike[str] | None = None, *,
                       cache_dir: str | os.PathLike[str] | None = None,
                       require_images: bool = False) -> ReadResult:
    """Read the OpenI reports (``NLMCXR_reports.tgz``, or a folder of its XML files) into a table.

    Parameters
    ----------
    path : path, optional
        The ``.tgz`` archive or a folder holding the extracted XML files; default the fetched copy.
    cache_dir : path, optional
        Cache directory override.
    require_images : bool, default=False
        Skip (and report) reports without any image (104 of the released 3,955).

    Returns
    -------
    res : ReadResult
        ``res.table`` has :data:`REPORT_COLUMNS`: ``report_id`` (``CXR1``), ``file`` (member name),
        ``n_images``, ``image_ids`` (``|``-joined), the four sections (text or missing) and
        ``mesh_major`` / ``mesh_automatic`` (``|``-joined codes), sorted by the number in the report id.
        ``res.report`` counts files read (``n_read``) and kept, and lists every skipped file
        (``row``: position in the archive, ``reason``, ``value``: file name).

    Raises
    ------
    SchemaError
        The archive cannot be read, or it holds no report.
    DataUnavailableError
        Not fetched and no path given.
    """
    if not isinstance(require_images, bool):
        raise InvalidParameterError(f"The 'require_images' parameter of read_openi_reports must be a bool. "
                                    f"Got {require_images!r} instead.")
    p = metadata_path(OPENI_FILE, cache_dir=cache_dir, path=path)
    rows, dropped = [], []
    seen: dict[object, str] = {}
    extra: dict[str, int] = {}
    n_read = 0
    for i, (name, data) in enumerate(_members(p)):
        n_read += 1

        def drop(reason: str, _i: int = i, _name: str = name) -> None:
            dropped.append({"row": _i, "reason": reason, "value": _name})

        if data is None:
            drop("not a regular file")
            continue
        if not name.lower().endswith(".xml"):
            drop("not an XML file")
            continue
        try:
            rec = _parse(data)
        except ET.ParseError as exc:
            drop(f"malformed XML ({exc})")
            continue
        if not rec["report_id"]:
            drop("no report id (<uId id=...>)")
            continue
        if rec["report_id"] in seen:
            drop(f"duplicate report id {rec['report_id']!r} (first in {seen[rec['report_id']]})")
            continue
        if require_images and not rec["image_ids"]:
            drop("no image (require_images=True)")
            continue
        seen[rec["report_id"]] = name
        for s in rec.pop("_extra_sections"):  # type: ignore[attr-defined]
            extra[s] = extra.get(s, 0) + 1
        rec["file"] = name
        rows.append(rec)
    if not rows:
        raise SchemaError(f"{str(p)!r} holds no OpenI report ({n_read} files read, {len(dropped)} skipped).")
    df = pd.DataFrame(rows)
    df["n_images"] = df["image_ids"].map(len).astype(int)
    for c in ("image_ids", "mesh_major", "mesh_automatic"):
        df[c] = df[c].map("|".join)
    num = pd.to_numeric(df["report_id"].str.extract(r"(\d+)$", expand=False), errors="coerce")
    df = df.assign(_n=num).sort_values(["_n", "report_id"], kind="stable").drop(columns="_n")
    table = df[list(REPORT_COLUMNS)].reset_index(drop=True)
    for c in ("report_id", "file", "image_ids", *SECTIONS, "mesh_major", "mesh_automatic"):
        table[c] = table[c].astype("str")
    notes = [f"{int((table['n_images'] == 0).sum())} reports have no image"] if not require_images else []
    if extra:
        notes.append(f"sections other than {list(SECTIONS)} ignored: {extra}")
    report = ReadReport(str(p), n_read, len(table), dropped=pd.DataFrame(dropped, columns=["row", "reason", "value"]),
                        notes=tuple(notes))
    return ReadResult(table, report)


def _check_reports(reports: object, func: str) -> None:
    if not isinstance(reports, pd.DataFrame):
        raise InvalidParameterError(f"The 'reports' parameter of {func} must be the DataFrame of "
                                    f"read_openi_reports(). Got {type(reports).__name__} instead.")


def openi_images(reports: pd.DataFrame) -> pd.DataFrame:
    """``report_id, image_id``: one row per image of each report (reports without images give no row)."""
    _check_reports(reports, "openi_images")
    check_columns(reports, ("report_id", "image_ids"), where="OpenI reports table")
    ids = reports["image_ids"].fillna("").str.split("|")
    out = pd.DataFrame({"report_id": reports["report_id"].to_numpy(), "image_id": ids.to_numpy()}).explode("image_id")
    out = out[out["image_id"].fillna("") != ""]
    return out.reset_index(drop=True).astype("str")


def openi_mesh(reports: pd.DataFrame, *, kind: str = "major") -> pd.DataFrame:
    """``report_id, code, term, qualifiers``: one row per MeSH code of each report.

    ``term`` is the part of the code before the first ``/`` (``Opacity`` in ``Opacity/lung/upper lobe/right``)
    and ``qualifiers`` the rest (missing when none). ``kind`` is ``'major'`` (human) or ``'automatic'``.
    """
    if kind not in ("major", "automatic"):
        raise InvalidParameterError(f"The 'kind' parameter of openi_mesh must be one of ['major', 'automatic']. "
                                    f"Got {kind!r} instead.")
    _check_reports(reports, "openi_mesh")
    col = f"mesh_{kind}"
    check_columns(reports, ("report_id", col), where="OpenI reports table")
    codes = reports[col].fillna("").str.split("|")
    out = pd.DataFrame({"report_id": reports["report_id"].to_numpy(), "code": codes.to_numpy()}).explode("code")
    out = out[out["code"].fillna("") != ""].reset_index(drop=True)
    parts = out["code"].str.split("/", n=1)
    out["term"] = parts.str[0].str.strip()
    out["qualifiers"] = parts.str[1].where(parts.str.len() > 1, np.nan)
    return out.astype({"report_id": "str", "code": "str", "term": "str"})
