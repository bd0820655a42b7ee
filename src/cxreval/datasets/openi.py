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
:func:`openi_mesh` explode those into long tables. :func:`openi_mesh_labels` turns the human MeSH major
codes into a cxreval label source (``openi_mesh``) through the explicit rules of :data:`MESH_RULES`. Every file of the archive that is not turned into a
report is listed in the read report with the reason (not XML, malformed XML, no report id, duplicate
report id, no image when images are required).

Examples
--------
>>> res = read_openi_reports()                                      # doctest: +SKIP
>>> len(res.table), res.report.n_dropped                             # doctest: +SKIP
(3955, 0)
"""

from __future__ import annotations

import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import is_str_sequence
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import CHESTXRAY14, canonical_findings
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns
from ._fetch import metadata_path
from ._openi_mesh import _NORMAL, MESH_RULES, UNUSABLE_MESH, MeshRule, _norm

__all__ = [
    "OPENI_TUNING_SEED",
    "read_openi_reports",
    "openi_mesh",
    "openi_mesh_labels",
]

OPENI_FILE = "NLMCXR_reports.tgz"
SECTIONS: tuple[str, ...] = ("comparison", "indication", "findings", "impression")
REPORT_COLUMNS: tuple[str, ...] = (
    "report_id",
    "file",
    "n_images",
    "image_ids",
    *SECTIONS,
    "mesh_major",
    "mesh_automatic",
)


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
    out.update(
        {
            "image_ids": [i for i in images if i],
            "mesh_major": major,
            "mesh_automatic": auto,
            "_extra_sections": extra_sections,
        }
    )
    return out


def read_openi_reports(
    path: PathLike | None = None, *, cache_dir: PathLike | None = None, require_images: bool = False
) -> ReadResult:
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
        raise InvalidParameterError(
            f"The 'require_images' parameter of read_openi_reports must be a bool. "
            f"Got {require_images!r} instead."
        )
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
    report = ReadReport(
        str(p),
        n_read,
        len(table),
        dropped=pd.DataFrame(dropped, columns=["row", "reason", "value"]),
        notes=tuple(notes),
    )
    return ReadResult(table, report)


def _check_reports(reports: object, func: str) -> None:
    if not isinstance(reports, pd.DataFrame):
        raise InvalidParameterError(
            f"The 'reports' parameter of {func} must be the DataFrame of "
            f"read_openi_reports(). Got {type(reports).__name__} instead."
        )


def openi_images(reports: pd.DataFrame) -> pd.DataFrame:
    """``report_id, image_id``: one row per image of each report (reports without images give no row)."""
    _check_reports(reports, "openi_images")
    check_columns(reports, ("report_id", "image_ids"), where="OpenI reports table")
    ids = reports["image_ids"].fillna("").str.split("|")
    out = pd.DataFrame({"report_id": reports["report_id"].to_numpy(), "image_id": ids.to_numpy()}).explode(
        "image_id"
    )
    out = out[out["image_id"].fillna("") != ""]
    return out.reset_index(drop=True).astype("str")


def openi_mesh(reports: pd.DataFrame, *, kind: str = "major") -> pd.DataFrame:
    """``report_id, code, term, qualifiers``: one row per MeSH code of each report.

    ``term`` is the part of the code before the first ``/`` (``Opacity`` in ``Opacity/lung/upper lobe/right``)
    and ``qualifiers`` the rest (missing when none). ``kind`` is ``'major'`` (human) or ``'automatic'``.
    """
    if kind not in ("major", "automatic"):
        raise InvalidParameterError(
            f"The 'kind' parameter of openi_mesh must be one of ['major', 'automatic']. Got {kind!r} instead."
        )
    _check_reports(reports, "openi_mesh")
    col = f"mesh_{kind}"
    check_columns(reports, ("report_id", col), where="OpenI reports table")
    codes = reports[col].fillna("").str.split("|")
    out = pd.DataFrame({"report_id": reports["report_id"].to_numpy(), "code": codes.to_numpy()}).explode(
        "code"
    )
    out = out[out["code"].fillna("") != ""].reset_index(drop=True)
    parts = out["code"].str.split("/", n=1)
    out["term"] = parts.str[0].str.strip()
    out["qualifiers"] = parts.str[1].where(parts.str.len() > 1, np.nan)
    return out.astype({"report_id": "str", "code": "str", "term": "str"})


# --------------------------------------------------------------------------------------------------
# MeSH major codes -> label source


OPENI_HALVES: tuple[str, ...] = ("development", "held-out", "all")
"""The values of ``openi_mesh_labels(half=...)`` and ``cxreval data export openi_mesh --half``."""


def _keep_half(
    keep: np.ndarray, report_ids: np.ndarray, images: np.ndarray, half: str, dropped: list[dict[str, object]]
) -> None:
    """Clear ``keep`` for the reports outside ``half`` of the tuning split, listing each in ``dropped``."""
    for i in np.flatnonzero(keep & (images == "")).tolist():
        dropped.append(
            {
                "row": i,
                "reason": "no image (the tuning split holds reports with images)",
                "value": report_ids[i],
            }
        )
        keep[i] = False
    if half == "all":
        return
    dev, held = openi_tuning_split(report_ids[keep].tolist())
    other, name = (set(held), "held-out") if half == "development" else (set(dev), "development")
    for i in np.flatnonzero(keep).tolist():
        if report_ids[i] in other:
            dropped.append(
                {
                    "row": i,
                    "reason": f"in the {name} half (cxreval.datasets.openi.openi_tuning_split)",
                    "value": report_ids[i],
                }
            )
            keep[i] = False


def _validate_mesh_labels(
    findings: object, rules: object, uncertain_qualifiers: object, unit: object, source: object
) -> tuple[tuple[str, ...], tuple[MeshRule, ...], frozenset[str]]:
    func = "openi_mesh_labels"
    if rules is None:
        rules = MESH_RULES
    if (
        not isinstance(rules, Sequence)
        or isinstance(rules, str)
        or not rules
        or not all(isinstance(r, MeshRule) for r in rules)
    ):
        raise InvalidParameterError(
            f"The 'rules' parameter of {func} must be a non-empty sequence of MeshRule or "
            f"None. Got {rules!r} instead."
        )
    if isinstance(findings, str) or not isinstance(findings, Sequence) or not findings:
        raise InvalidParameterError(
            f"The 'findings' parameter of {func} must be a non-empty sequence of finding "
            f"names. Got {findings!r} instead."
        )
    fs, _ = canonical_findings(findings, where=f"the 'findings' parameter of {func}")
    if len(set(fs)) != len(fs):
        raise InvalidParameterError(f"The 'findings' parameter of {func} repeats a finding: {list(fs)}.")
    ruled = {canonical_findings([r.finding], where=f"MeshRule {r.heading!r}")[0][0] for r in rules}
    missing = [f for f in fs if f not in ruled]
    if missing:
        raise InvalidParameterError(
            f"The 'findings' parameter of {func} names {missing}, which no MeSH rule maps "
            f"to; the rules cover {sorted(ruled)}. Pass rules= with a MeshRule for them."
        )
    if not is_str_sequence(uncertain_qualifiers):
        raise InvalidParameterError(
            f"The 'uncertain_qualifiers' parameter of {func} must be a sequence of str "
            f"(e.g. ('borderline',) or ()). Got {uncertain_qualifiers!r} instead."
        )
    if unit not in ("report", "image"):
        raise InvalidParameterError(
            f"The 'unit' parameter of {func} must be one of ['report', 'image']. Got {unit!r} instead."
        )
    if not isinstance(source, str) or not source:
        raise InvalidParameterError(
            f"The 'source' parameter of {func} must be a non-empty str. Got {source!r} instead."
        )
    return fs, tuple(rules), frozenset(_norm(q) for q in uncertain_qualifiers)


def openi_mesh_labels(
    path: PathLike | None = None,
    *,
    reports: pd.DataFrame | None = None,
    cache_dir: PathLike | None = None,
    findings: Sequence[str] | None = None,
    rules: Sequence[MeshRule] | None = None,
    uncertain_qualifiers: Sequence[str] = ("borderline",),
    unit: str = "report",
    source: str = "openi_mesh",
    half: str | None = None,
) -> ReadResult:
    """OpenI's human MeSH major codes as a long label table (source ``openi_mesh``).

    Each MeSH major code ``Heading/qualifier/...`` of a report is matched against ``rules`` (default
    :data:`MESH_RULES`). A finding is **positive** in a report when one of its codes matches a rule for
    it, **uncertain** when every matching code carries one of ``uncertain_qualifiers`` (default
    ``borderline``: ``Cardiomegaly/borderline``), and **negative** otherwise. The codes were assigned by
    human coders and assert presence, so the labels are negation-free by construction (the text-mined
    labels of ChestX-ray14 needed negation rules). ``normal`` asserts no finding: such a report is
    negative for every finding. This is the kind of human annotation that Wang et al. (2017) used as
    the gold standard for the ChestX-ray8 text-mining labeller.

    Parameters
    ----------
    path : path, optional
        ``NLMCXR_reports.tgz`` (or a folder of its XML files); default the fetched copy. Not with ``reports``.
    reports : pandas.DataFrame, optional
        A table from :func:`read_openi_reports` (columns ``report_id``, ``image_ids``, ``mesh_major``).
    cache_dir : path, optional
        Cache directory override.
    findings : sequence of str, optional
        Findings to label (default :data:`CHESTXRAY14`); each needs at least one rule.
    rules : sequence of MeshRule, optional
        Mapping rules; default :data:`MESH_RULES`.
    uncertain_qualifiers : sequence of str, default=('borderline',)
        Qualifiers that make a matching code uncertain rather than positive; ``()`` makes them positive.
    unit : {'report', 'image'}, default='report'
        ``'report'``: ``study_id`` is the report id (``CXR1``). ``'image'``: one row per image of the
        report, ``study_id`` the image id (``CXR1_1_IM-0001-3001``, as :func:`openi_images` links them);
        reports without images are dropped.
    source : str, default='openi_mesh'
        Source name of the labels.
    half : {'development', 'held-out', 'all'}, optional
        One half of :func:`cxreval.datasets.openi.openi_tuning_split` of the reports with images and usable codes
        (the packaged report-labeller rules were tuned on the development half; figures on the held-out half
        are out-of-sample), or ``'all'``: both halves. The other reports are listed in the read report's
        ``dropped`` with their reason. Default: every report with usable codes, with or without images.

    Returns
    -------
    res : ReadResult
        ``res.table``: ``study_id, patient_id, finding, source, state`` (``state`` Int8: 0/1/2), one row per
        kept study and finding, in report order. ``patient_id`` is the report id: OpenI has no patient
        identifiers that link reports, so each report counts as its own patient (a bootstrap resamples
        reports, and the images of a report together). ``res.report`` counts reports (``n_read``: reports
        in the table, ``n_kept``), lists dropped reports (``row``: position in the reports table,
        ``reason``, ``value``: report id) — no MeSH major code, only :data:`UNUSABLE_MESH` codes
        (``No Indexing``), or no image with ``unit='image'`` — and notes the rules applied, uncertain
        codes and the unmapped headings by number of codes.

    Raises
    ------
    InvalidParameterError
        Bad parameter, both ``path`` and ``reports``, or a finding no rule maps to.
    SchemaError
        ``reports`` lacks a required column, or the archive cannot be read.

    References
    ----------
    .. [1] Wang X, Peng Y, Lu L, et al. ChestX-ray8: Hospital-scale chest X-ray database and benchmarks
       on weakly-supervised classification and localization of common thorax diseases. CVPR 2017.
       doi:10.1109/CVPR.2017.369

    Examples
    --------
    >>> res = openi_mesh_labels()                                     # doctest: +SKIP
    >>> res.report.reasons()                                          # doctest: +SKIP
    {"only unusable MeSH major codes ['No Indexing']": 95}
    """
    func = "openi_mesh_labels"
    findings = CHESTXRAY14 if findings is None else findings
    fs, rules_t, unc = _validate_mesh_labels(findings, rules, uncertain_qualifiers, unit, source)
    if half is not None and half not in OPENI_HALVES:
        raise InvalidParameterError(
            f"The 'half' parameter of {func} must be one of {list(OPENI_HALVES)} or None. "
            f"Got {half!r} instead."
        )
    notes: list[str] = []
    if reports is not None:
        if path is not None:
            raise InvalidParameterError(f"{func} takes either 'path' or 'reports', not both.")
        _check_reports(reports, func)
        where = "OpenI reports table"
    else:
        read = read_openi_reports(path, cache_dir=cache_dir)
        reports, where = read.table, read.report.source
        if read.report.n_dropped:
            notes.append(
                f"read_openi_reports skipped {read.report.n_dropped} archive files: {read.report.reasons()}"
            )
    check_columns(reports, ("report_id", "image_ids", "mesh_major"), where="OpenI reports table")
    report_ids = reports["report_id"].astype("str").to_numpy()
    mesh = reports["mesh_major"].fillna("").astype("str").to_numpy()
    images = reports["image_ids"].fillna("").astype("str").to_numpy()
    unusable = {_norm(h) for h in UNUSABLE_MESH}
    f_index = {f: j for j, f in enumerate(fs)}
    rule_f = [(r, canonical_findings([r.finding])[0][0]) for r in rules_t]
    code_cache: dict[str, tuple[str, list[tuple[int, int]]]] = {}
    states = np.zeros((len(reports), len(fs)), dtype=np.int8)
    keep = np.zeros(len(reports), dtype=bool)
    dropped: list[dict[str, object]] = []
    unmapped: dict[str, int] = {}
    n_unc = 0
    for i, (rid, codes_s) in enumerate(zip(report_ids, mesh)):
        codes = [c for c in codes_s.split("|") if c.strip()]
        if not codes:
            dropped.append({"row": i, "reason": "no MeSH major code", "value": rid})
            continue
        usable = [c for c in codes if _norm(c.split("/", 1)[0]) not in unusable]
        if not usable:
            dropped.append(
                {"row": i, "reason": f"only unusable MeSH major codes {list(UNUSABLE_MESH)}", "value": rid}
            )
            continue
        keep[i] = True
        for c in usable:
            if c not in code_cache:
                parts = [x.strip() for x in c.split("/")]
                head, quals = _norm(parts[0]), [_norm(q) for q in parts[1:]]
                hits = {f_index[f] for r, f in rule_f if f in f_index and r.matches(head, quals)}
                matched = any(r.matches(head, quals) for r, _ in rule_f)
                st = 1 if unc.intersection(quals) else 2
                code_cache[c] = (parts[0] if not matched and head != _NORMAL else "", [(j, st) for j in hits])
            label, hits_c = code_cache[c]
            if label:
                unmapped[label] = unmapped.get(label, 0) + 1
            for j, st in hits_c:
                n_unc += st == 1
                states[i, j] = max(states[i, j], st)
    if half is not None:
        _keep_half(keep, report_ids, images, half, dropped)
    if unit == "image":
        for i in np.flatnonzero(keep & (images == "")).tolist():
            dropped.append({"row": i, "reason": "no image (unit='image')", "value": report_ids[i]})
            keep[i] = False
    kept = np.flatnonzero(keep)
    if unit == "image":
        img_lists = [images[i].split("|") for i in kept]
        rep = np.repeat(kept, [len(x) for x in img_lists])
        study = np.array([x for lst in img_lists for x in lst], dtype=object)
    else:
        rep, study = kept, report_ids[kept].astype(object)
    k = len(fs)
    table = pd.DataFrame(
        {
            "study_id": np.repeat(study, k),
            "patient_id": np.repeat(report_ids[rep].astype(object), k),
            "finding": np.tile(np.array(fs, dtype=object), len(rep)),
            "source": source,
            "state": pd.array(states[rep].ravel(), dtype="Int8"),
        }
    )
    for c in ("study_id", "patient_id", "finding", "source"):
        table[c] = table[c].astype("str")
    dropped_df = pd.DataFrame(dropped, columns=["row", "reason", "value"]).sort_values("row", kind="stable")
    notes.append(
        f"{len(rules_t)} MeSH rules -> {len(fs)} findings; state 2 (positive) when a rule matches, "
        f"1 (uncertain) when every matching code has a qualifier in {sorted(unc)}, 0 otherwise"
    )
    notes.append("patient_id = report id: OpenI has no patient identifiers linking reports")
    if half is not None:
        notes.append(
            f"half {half!r} of cxreval.datasets.openi.openi_tuning_split (seed {OPENI_TUNING_SEED}) of the "
            "reports with images and usable codes"
        )
    if n_unc:
        notes.append(f"{n_unc} matching codes carry an uncertain qualifier {sorted(unc)}")
    if unmapped:
        top = sorted(unmapped.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{h} {n}" for h, n in top[:15])
        notes.append(
            f"unmapped MeSH headings (codes in kept reports), {len(top)} headings: {shown}"
            + (", ..." if len(top) > 15 else "")
        )
    report = ReadReport(
        where, len(reports), int(keep.sum()), dropped=dropped_df.reset_index(drop=True), notes=tuple(notes)
    )
    return ReadResult(table, report)


OPENI_TUNING_SEED = 11
"""Seed of the OpenI split whose development half the packaged rules were tuned on (:func:`openi_tuning_split`)."""


class TuningSplit(NamedTuple):
    """What :func:`openi_tuning_split` returns: the development and held-out report ids, each sorted by number."""

    development: np.ndarray
    held_out: np.ndarray


def openi_tuning_split(study_ids: Sequence[str], *, rng: RNGLike = OPENI_TUNING_SEED) -> TuningSplit:
    """The development half (the packaged rules were tuned on it) and the held-out half of OpenI report ids.

    The ids (``CXR<n>``, those with images and usable MeSH codes) are sorted by number and permuted with
    ``numpy.random.default_rng(rng)`` (default :data:`OPENI_TUNING_SEED`, the split the rules were tuned on);
    the first ``n // 2`` are the development half. Figures on the
    held-out half are out-of-sample for the packaged rules; figures on all reports are partly in-sample.

    Returns
    -------
    development, held_out : ndarray of str, each sorted by number

    Examples
    --------
    >>> dev, held = openi_tuning_split(["CXR1", "CXR2", "CXR3", "CXR10"])
    >>> len(dev), len(held), sorted([*dev, *held], key=lambda s: int(s[3:]))
    (2, 2, ['CXR1', 'CXR2', 'CXR3', 'CXR10'])
    """
    ids = list(dict.fromkeys(str(s) for s in study_ids))
    bad = [s for s in ids if not (s.startswith("CXR") and s[3:].isdigit())]
    if bad:
        raise InvalidParameterError(
            f"The 'study_ids' parameter of openi_tuning_split must hold OpenI report ids "
            f"(CXR<number>). Got {bad[0]!r}."
        )
    arr = np.array(sorted(ids, key=lambda s: int(s[3:])), dtype=object)
    perm = np.random.default_rng(rng).permutation(len(arr))
    half = len(arr) // 2
    key = np.vectorize(lambda s: int(s[3:]), otypes=[np.int64])

    def ordered(a: np.ndarray) -> np.ndarray:
        return a[np.argsort(key(a), kind="stable")] if len(a) else a

    return TuningSplit(ordered(arr[perm[:half]]), ordered(arr[perm[half:]]))
