"""ChestX-ray14 (NIH Clinical Center) text-mined labels and image metadata.

Citation: Wang X, Peng Y, Lu L, Lu Z, Bagheri M, Summers RM. ChestX-ray8: Hospital-scale chest X-ray
database and benchmarks on weakly-supervised classification and localization of common thorax diseases.
CVPR 2017, 3462-3471. doi:10.1109/CVPR.2017.369. Data: https://nihcc.app.box.com/v/ChestXray-NIHCC
(use unrestricted with attribution; acknowledge the NIH Clinical Center).

File: ``Data_Entry_2017_v2020.csv[.gz]`` (112,120 images of 30,805 patients), one row per image with
``Image Index``, ``Finding Labels`` (``|``-separated, or ``No Finding``), ``Patient ID``, ``View Position``.

Label encoding: the labels were mined from report text (source ``nih_textmined``). A finding listed for an
image is ``positive``; every other of the 14 findings is ``negative``. The NIH labeller removed negated and
uncertain mentions, so there is no ``uncertain`` state and no ``not_mentioned`` state (absence means
negative by construction). ``No Finding`` is not a label of its own: it is the all-negative row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import SchemaError
from ..findings import CHESTXRAY14, canonical_finding
from ..io._read import read_csv_file
from ..results import ReadReport, ReadResult
from ..schema._columns import check_columns
from ._age_bands import age_band
from ._fetch import metadata_path

__all__ = ["load_metadata", "load_labels"]

SOURCE = "nih_textmined"
DATA_ENTRY = "Data_Entry_2017_v2020.csv.gz"
_COLUMNS = ("Image Index", "Finding Labels", "Patient ID", "View Position")


def _read(path: PathLike | None, cache_dir: PathLike | None) -> tuple[pd.DataFrame, Path]:
    p = metadata_path(DATA_ENTRY, cache_dir=cache_dir, path=path)
    df = read_csv_file(
        p,
        error=lambda f, exc: f"Could not read {str(f)!r} as a ChestX-ray14 Data_Entry CSV: {exc}",
        dtype={"Image Index": str, "Finding Labels": str, "Patient ID": str, "View Position": str},
        keep_default_na=False,
        na_values=[""],
    )
    check_columns(df, _COLUMNS, where=f"file {str(p)!r}")
    if df.empty:
        raise SchemaError(f"{p} has no rows (a ChestX-ray14 Data_Entry CSV has one row per image).")
    for col in ("Image Index", "Patient ID", "Finding Labels"):
        if df[col].isna().any():
            i = int(np.flatnonzero(df[col].isna().to_numpy())[0])
            raise SchemaError(f"Missing value in file {str(p)!r}, row {i}, column {col!r}.")
    if df["Image Index"].duplicated().any():
        raise SchemaError(
            f"Duplicate image {df.loc[df['Image Index'].duplicated(), 'Image Index'].iloc[0]!r} "
            f"in file {str(p)!r}, column 'Image Index'."
        )
    return df, p


def load_metadata(path: PathLike | None = None, *, cache_dir: PathLike | None = None) -> pd.DataFrame:
    """Per-image metadata: ``study_id, patient_id, view, finding_labels, follow_up, age, age_band, sex``.

    ``study_id`` is the image file name (``00000001_000.png``); ``patient_id`` is the ``Patient ID`` as text;
    ``age_band`` the 20-year band of ``age`` (``0-19``, ``20-39``, ``40-59``, ``60-79``, ``80+``), the subgroup
    attribute of ``cxreval subgroups --by age_band``.
    """
    df, _ = _read(path, cache_dir)
    out = pd.DataFrame(
        {
            "study_id": df["Image Index"].to_numpy(),
            "patient_id": df["Patient ID"].str.lstrip("0").replace("", "0").to_numpy(),
            "view": df["View Position"].to_numpy(),
            "finding_labels": df["Finding Labels"].to_numpy(),
        }
    )
    if "Follow-up #" in df.columns:
        out["follow_up"] = pd.to_numeric(df["Follow-up #"], errors="coerce").astype("Int64").to_numpy()
    if "Patient Age" in df.columns:
        out["age"] = pd.to_numeric(df["Patient Age"], errors="coerce").astype("Int64").to_numpy()
        out["age_band"] = age_band(out["age"])
    if "Patient Gender" in df.columns:
        out["sex"] = df["Patient Gender"].to_numpy()
    return out


def finding_matrix(finding_labels: pd.Series, *, where: str = "Finding Labels") -> pd.DataFrame:
    """``|``-separated NIH label strings → boolean image × finding frame over the 14 findings.

    Raises
    ------
    SchemaError
        For a label that is not a ChestX-ray14 finding (nor ``No Finding``), naming row and value.
    """
    index = {f: j for j, f in enumerate(CHESTXRAY14)}
    mat = np.zeros((len(finding_labels), len(CHESTXRAY14)), dtype=bool)
    cache: dict[str, int | None] = {}
    for i, s in enumerate(finding_labels.to_numpy()):
        for name in str(s).split("|"):
            j = cache.get(name, -1)
            if j == -1:
                canon = canonical_finding(name, where=f"{where}, row {i}")
                if canon != "No Finding" and canon not in index:
                    raise SchemaError(f"Label {name!r} in {where}, row {i} is not a ChestX-ray14 finding.")
                j = cache[name] = index.get(canon)
            if j is not None:
                mat[i, j] = True
    return pd.DataFrame(mat, index=finding_labels.index, columns=list(CHESTXRAY14))


def load_labels(path: PathLike | None = None, *, cache_dir: PathLike | None = None) -> ReadResult:
    """ChestX-ray14 text-mined labels as a long label table (source ``nih_textmined``).

    Parameters
    ----------
    path : path, optional
        A user's own ``Data_Entry_2017*.csv[.gz]``; default the fetched copy (``cxreval data fetch``).
    cache_dir : path, optional
        Cache directory override.

    Returns
    -------
    res : ReadResult
        ``res.table``: 14 rows per image (``positive`` / ``negative``); every input row is kept.
    """
    df, p = _read(path, cache_dir)
    meta = load_metadata(p)
    mat = finding_matrix(df["Finding Labels"], where=f"file {str(p)!r}, column 'Finding Labels'")
    n, k = mat.shape
    table = pd.DataFrame(
        {
            "study_id": np.repeat(meta["study_id"].to_numpy(), k),
            "patient_id": np.repeat(meta["patient_id"].to_numpy(), k),
            "finding": np.tile(np.asarray(CHESTXRAY14, dtype=object), n),
            "source": SOURCE,
            "state": pd.array(np.where(mat.to_numpy().ravel(), 2, 0).astype(np.int8), dtype="Int8"),
        }
    )
    return ReadResult(table, ReadReport(str(p), n, n, notes=("No Finding rows are all-negative rows",)))
