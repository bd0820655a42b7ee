"""The data of ``cxreval finetune``: one target row per labelled study under a label policy, the studies that
have an image, and their preprocessed images (held in memory when they fit in 2 GiB)."""

from __future__ import annotations

import warnings
from collections.abc import Collection, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .._typing import PathLike
from ..exceptions import CxrevalWarning, InvalidParameterError, SchemaError
from ..io.images import read_image
from ._images import ImageItem, exc_text

__all__ = ["TrainingTargets", "training_targets"]

_CACHE_BYTES = 2 << 30


def _with_images(
    targets: pd.DataFrame, image_ids: Collection[str], *, labels: PathLike, images: PathLike
) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``targets`` (one per labelled study) whose study has an image, and the ids of those that have
    none; a :class:`~cxreval.exceptions.CxrevalWarning` names how many were left out and one of them (a study
    labelled but not imaged is left out of training and validation, never silently)."""
    has_image = targets["study_id"].isin(image_ids).to_numpy()
    missing = targets["study_id"][~has_image].astype(str).tolist()
    if missing and has_image.sum() >= 2:  # (fewer than 2 left: refused by the caller)
        warnings.warn(
            f"{len(missing)} of the {len(targets)} labelled studies (labels={str(labels)!r}) have no image "
            f"in images={str(images)!r}, e.g. {missing[0]!r}; they are left out of training and validation "
            "(finetune.json: n_labelled_without_image, labelled_without_image).",
            CxrevalWarning,
            stacklevel=3,
        )
    return targets[has_image].reset_index(drop=True), missing


class TrainingTargets(NamedTuple):
    """What :func:`training_targets` returns: one row per study with a 0/1/NaN column per finding, the findings
    and the label source."""

    targets: pd.DataFrame
    findings: list[str]
    source: str


def training_targets(
    labels: pd.DataFrame, *, findings: Sequence[str] | None, source: str | None, policy: Any
) -> TrainingTargets:
    """``(targets, findings, source)``: one row per study (``study_id``, ``patient_id``, one 0/1/NaN column per
    finding) from a validated long label table, under the :class:`~cxreval.schema.LabelPolicy` ``policy``."""
    from ..findings import canonical_finding

    sources = sorted(labels["source"].unique())
    if source is None:
        if len(sources) != 1:
            raise InvalidParameterError(
                f"The labels hold the sources {sources}; choose the one to train on with source=."
            )
        source = sources[0]
    elif source not in sources:
        raise InvalidParameterError(
            f"source={source!r} is not in the labels (labels=); its sources are {sources}."
        )
    lab = labels[labels["source"] == source]
    have = list(dict.fromkeys(lab["finding"]))
    if findings:
        want = [canonical_finding(f, where="findings=") for f in findings]
        missing = [f for f in want if f not in have]
        if missing:
            raise InvalidParameterError(
                f"findings={missing}: not labelled by source {source!r} (it labels {have})."
            )
    else:
        want = have
    lab = lab[lab["finding"].isin(want)]
    dup = lab.duplicated(["study_id", "finding"])
    if dup.any():
        r = lab[dup].iloc[0]
        raise SchemaError(
            f"The labels (labels=): study {r.study_id!r} has two labels for {r.finding!r} from source {source!r}."
        )
    y = lab.assign(y=policy.binarize(lab["state"])).pivot(index="study_id", columns="finding", values="y")
    pid = lab.drop_duplicates("study_id").set_index("study_id")["patient_id"]
    out = pd.DataFrame(
        {"study_id": y.index.astype(str), "patient_id": pid.reindex(y.index).astype(str).to_numpy()}
    )
    for f in want:
        out[f] = y[f].to_numpy(dtype=float) if f in y.columns else np.nan
    return TrainingTargets(out.reset_index(drop=True), want, source)


class _Images:
    """The preprocessed images of the chosen studies, held in memory when they fit in 2 GiB."""

    def __init__(self, items: Sequence[ImageItem], prep: Any, *, dicom_window: str) -> None:
        self.items, self.prep, self.dicom_window = list(items), prep, dicom_window
        first = self._read(0)
        self.cache: np.ndarray | None = None
        if first.nbytes * len(self.items) <= _CACHE_BYTES:
            self.cache = np.empty((len(self.items), *first.shape), dtype=np.float32)
            self.cache[0] = first
            for i in range(1, len(self.items)):
                self.cache[i] = self._read(i)
        else:  # check every image once before training
            for i in range(1, len(self.items)):
                self._read(i)

    def _read(self, i: int) -> np.ndarray:
        it = self.items[i]
        try:
            return self.prep.apply(read_image(it.path, dicom_window=self.dicom_window))
        except SchemaError as exc:
            raise SchemaError(f"Image {it.path} (images=) cannot be used for training ({exc}).") from exc
        except (OSError, ValueError) as exc:
            raise SchemaError(
                f"Image {it.path} (images=) cannot be used for training ({exc_text(exc)})."
            ) from exc

    def batch(self, idx: np.ndarray) -> np.ndarray:
        if self.cache is not None:
            return self.cache[idx]
        return np.stack([self._read(int(i)) for i in idx])
