"""Model predictions on NIH ChestX-ray14 images, one wide CSV per model.

Each file has an ``Image Index`` column (``00000010_000.png``) and one score column per finding,
``prob_<finding>`` (ChestX-ray14 spellings such as ``prob_Pleural_Thickening``), in any column order;
the model name is the file name without ``.csv``. A file whose name contains ``logits`` (or whose
scores leave [0, 1]) holds logits: they are kept as given by default (AUC is invariant to the
monotone sigmoid) or mapped through the sigmoid with ``logits='sigmoid'``; either way the report says so.

The folder ``../shared/data/nih_fold_predictions`` used in cxreval's tests holds 10 real models'
predictions on 22,433 images of 6,187 patients (sources: jrzech/reproduce-chexnet,
derrick-daniel/Major-Project-CXR, haooyuee/reproduce-chexnet-nih-chexphoto; see its README).
Patient ids come from the label table (:func:`cxreval.datasets.nih.load_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._typing import PathLike
from .._validation import check_choice, did_you_mean
from ..exceptions import DataUnavailableError, InvalidParameterError, SchemaError, UnknownNameError
from ..findings import canonical_finding
from ..io._read import read_csv_file
from ..labels import validate_predictions
from ..labels._wide import read_wide_predictions
from ..results import ReadReport, ReadResult

__all__ = [
    "list_models",
    "load_predictions",
]

PREFIX = "prob_"
PUBLISHED_AUC_FILES: dict[str, str] = {
    "jrzech_densenet121": "jrzech_reproduce-chexnet_pretrained_aucs.csv",
    "dd_densenet121_v2_logits": "derrick-daniel_Major-Project-CXR_DenseNet121-v2_aucs.csv",
    "dd_densenet201": "derrick-daniel_Major-Project-CXR_DenseNet201_aucs.csv",
    "dd_mobilenet_v2": "derrick-daniel_Major-Project-CXR_MobileNet_V2_aucs.csv",
    "dd_resnet152": "derrick-daniel_Major-Project-CXR_ResNet152_aucs.csv",
    "dd_resnet50": "derrick-daniel_Major-Project-CXR_ResNet50_aucs.csv",
    "hy_densenet121_nih25": "haooyuee_reproduce-chexnet-nih-chexphoto_nih_25_aucs.csv",
    "hy_densenet121_nih25_lrdecay033": "haooyuee_reproduce-chexnet-nih-chexphoto_nih_25_lr_decay033_aucs.csv",
    "hy_densenet121_test1": "haooyuee_reproduce-chexnet-nih-chexphoto_test1_aucs.csv",
}
"""Model (file stem) → the per-finding AUCs its repository published (``published_aucs/``)."""


def _dir(directory: PathLike) -> Path:
    d = Path(directory)
    if not d.is_dir():
        raise DataUnavailableError(f"Prediction folder {str(d)!r} does not exist.")
    return d


def list_models(directory: PathLike) -> list[str]:
    """Model names (file stems) of the ``*.csv`` files directly in ``directory``."""
    return sorted(p.stem for p in _dir(directory).glob("*.csv"))


def load_predictions(
    directory: PathLike, *, models: Sequence[str] | None = None, logits: str = "keep"
) -> ReadResult:
    """Read every model's wide CSV into one long prediction table ``study_id, model, finding, score``.

    Parameters
    ----------
    directory : path
        Folder of ``<model>.csv`` files.
    models : sequence of str, optional
        Subset of :func:`list_models` (default all).
    logits : {'keep', 'sigmoid'}, default='keep'
        What to do with logit files (name contains ``logits`` or scores outside [0, 1]).

    Returns
    -------
    res : ReadResult
        Notes record each file's column order when it differs from the first file's, the logit files and
        any column that is not a finding (reported, not read).

    Raises
    ------
    DataUnavailableError
        Missing folder or no CSV file.
    InvalidParameterError
        Unknown model.
    SchemaError
        A file breaks the schema (non-finite score, duplicate image), naming file, row and value.
    """
    from scipy import special

    check_choice(logits, ("keep", "sigmoid"), name="logits", func="load_predictions")
    d = _dir(directory)
    avail = list_models(d)
    if not avail:
        raise DataUnavailableError(f"No '*.csv' prediction file in {str(d)!r}.")
    want = list(models) if models is not None else avail
    for m in want:
        if m not in avail:
            raise UnknownNameError(
                f"Unknown model {m!r}: no {m}.csv in {str(d)!r}; available: {avail}."
                f"{did_you_mean(str(m), avail)}"
            )
    tables, notes, n_read = [], [], 0
    first_order: list[str] | None = None
    for m in want:
        p = d / f"{m}.csv"
        res = read_wide_predictions(p, model=m, id_column="Image Index", prefix=PREFIX)
        t = res.table
        n_read += res.report.n_read
        notes += [f"{m}: {n}" for n in res.report.notes]
        order = list(pd.unique(t["finding"]))
        if first_order is None:
            first_order = order
        elif order != first_order:
            notes.append(f"{m}: column order differs from {want[0]}; columns matched by name")
        dup = t.duplicated(["study_id", "finding"])
        if dup.any():
            raise SchemaError(f"Duplicate image {t.loc[dup, 'study_id'].iloc[0]!r} in file {str(p)!r}.")
        is_logit = "logit" in m.lower() or bool(((t["score"] < 0) | (t["score"] > 1)).any())
        if is_logit:
            if logits == "sigmoid":
                t = t.assign(score=special.expit(t["score"].to_numpy()))
                notes.append(
                    f"{m}: logits mapped through the sigmoid 1/(1 + exp(-x)) into [0, 1] (its ranks, AUCs and ROC "
                    "operating points are unchanged; decision curves and calibration read the mapped scores as "
                    "probabilities, which assumes the model was trained with a sigmoid output)"
                )
            else:
                notes.append(f"{m}: scores are logits, kept as given (AUC is invariant to the sigmoid)")
        tables.append(t)
    table = pd.concat(tables, ignore_index=True)
    return ReadResult(table, ReadReport(str(d), n_read, n_read, notes=tuple(notes)))


def load_published_aucs(directory: PathLike, model: str) -> pd.Series:
    """The per-finding AUCs the model's repository published (index: canonical finding)."""
    d = _dir(directory)
    if model not in PUBLISHED_AUC_FILES:
        raise InvalidParameterError(
            f"No published AUCs are known for model {model!r}; known: {sorted(PUBLISHED_AUC_FILES)}."
        )
    p = d / "published_aucs" / PUBLISHED_AUC_FILES[model]
    if not p.is_file():
        raise DataUnavailableError(f"Published AUC file {str(p)!r} not found.")
    df = read_csv_file(p)
    if not {"label", "auc"} <= set(df.columns):
        raise SchemaError(f"File {str(p)!r} must have columns 'label' and 'auc'; it has {list(df.columns)}.")
    return pd.Series(
        df["auc"].to_numpy(dtype=float),
        index=[canonical_finding(x, where=f"file {str(p)!r}") for x in df["label"]],
        name=model,
    )


def combine_findings(
    predictions: pd.DataFrame, targets: Mapping[str, Sequence[str]], *, how: str = "max"
) -> pd.DataFrame:
    """Scores for findings defined from several predicted findings (e.g. ``Nodule or Mass``).

    ``targets`` maps a new finding to the predicted findings it combines; the new score is their
    ``max`` (the model's strongest evidence for any of them) or ``mean``. Only the target findings are
    returned. A study that lacks any source score is an error.
    """
    check_choice(how, ("max", "mean"), name="how", func="combine_findings")
    preds = validate_predictions(predictions)
    parts = []
    for target, sources in targets.items():
        src = [canonical_finding(s) for s in sources]
        sub = preds[preds["finding"].isin(src)]
        wide = sub.pivot_table(
            index=["study_id", "model"], columns="finding", values="score", aggfunc="first"
        )
        missing = [s for s in src if s not in wide.columns]
        if missing:
            raise SchemaError(f"combine_findings: no predictions for {missing} (needed for {target!r}).")
        vals = wide[src].to_numpy(dtype=float)
        if np.isnan(vals).any():
            sid, mod = wide.index[np.isnan(vals).any(axis=1)][0]
            raise SchemaError(f"combine_findings: model {mod!r} lacks a score of {src} for study {sid!r}.")
        score = vals.max(axis=1) if how == "max" else vals.mean(axis=1)
        parts.append(
            pd.DataFrame(
                {
                    "study_id": wide.index.get_level_values(0),
                    "model": wide.index.get_level_values(1),
                    "finding": canonical_finding(target),
                    "score": score,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)
