"""The reader study of a plan (a relabelling plan, or a reader study planned from a pilot,
:func:`cxreval.jobs.plan_reader_study`): each selected study's image found in the user's folder, ``study.yaml`` for
``cxreval reader init`` and the image list (``images.csv``)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..exceptions import SchemaError
from ..io.images import DISPLAY_SUFFIXES
from ..outputs._folder import path_inside

__all__ = [
    "IMAGE_COLUMNS",
    "IMAGE_FOLDER",
    "check_image_names",
    "find_image",
    "find_images",
    "image_table",
    "study_yaml",
    "copy_images",
]

IMAGE_COLUMNS: tuple[str, ...] = ("study_id", "patient_id", "priority", "image")
IMAGE_FOLDER = "images"


def check_image_names(study_ids: Sequence[str]) -> None:
    """Refuse a study id that cannot name its image inside the study's ``images/`` (``../x``, ``/x``: the image
    would be read from, and copied to, a place outside the folders given), before any work.

    Raises
    ------
    SchemaError
        Naming the study id (:func:`cxreval.outputs.path_inside`).
    """
    for sid in study_ids:
        path_inside(IMAGE_FOLDER, str(sid), what="study_id")


def find_image(folder: Path, study_id: str) -> Path | None:
    """The image of one study in ``folder`` (as :func:`find_images`), or None when it has none."""
    for suffix in DISPLAY_SUFFIXES:
        for s in (suffix, suffix.upper()):
            p = path_inside(folder, f"{study_id}{s}", what="study_id")
            if p.is_file():
                return p
    d = path_inside(folder, study_id, what="study_id")
    if d.is_dir():
        files = sorted(f for f in d.rglob("*") if f.is_file() and f.suffix.lower() in DISPLAY_SUFFIXES)
        if files:
            return files[0]
    return None


def find_images(folder: Path, study_ids: Sequence[str], *, func: str) -> list[Path]:
    """The image of each study: ``FOLDER/<study_id>.<suffix>``, else the first image (sorted) below
    ``FOLDER/<study_id>/`` (a study folder of several views, as CheXpert's ``view1_frontal.jpg``)."""
    out, missing = [], []
    for sid in study_ids:
        p = find_image(folder, str(sid))
        if p is None:
            missing.append(str(sid))
        else:
            out.append(p)
    if missing:
        raise SchemaError(
            f"The 'images' parameter of {func} holds no image of {len(missing)} selected "
            f"stud{'y' if len(missing) == 1 else 'ies'} in {folder}, e.g. {missing[0]!r}: expected "
            f"{missing[0]}.png (or {', '.join(DISPLAY_SUFFIXES[1:])}) or a folder {missing[0]}/ holding "
            "one."
        )
    return out


def image_table(
    study_ids: Sequence[str], patient_ids: Sequence[str], sources: Sequence[Path] | None
) -> pd.DataFrame:
    """``images.csv``: where each study's image lies in the study folder (``images/<study_id><suffix>``; without
    an image folder, ``images/<study_id>`` without its suffix: place the file there)."""
    paths = [
        path_inside(
            IMAGE_FOLDER, f"{sid}{sources[i].suffix.lower() if sources else ''}", what="study_id"
        ).as_posix()
        for i, sid in enumerate(study_ids)
    ]
    return pd.DataFrame(
        {
            "study_id": list(study_ids),
            "patient_id": list(patient_ids),
            "priority": range(1, len(study_ids) + 1),
            "image": paths,
        },
        columns=list(IMAGE_COLUMNS),
    )


def study_yaml(
    *, name: str, findings: Sequence[str], order_seed: int, extra: Mapping[str, object] | None = None
) -> str:
    """The study file: the image task on ``images/``, patients from ``images.csv``; readers are added with
    ``cxreval reader add-reader``. ``order_seed`` is its ``seed``, from which the reader app draws each reader's
    item order."""
    import yaml

    spec = {
        "name": name,
        "seed": int(order_seed),
        "findings": list(findings),
        "images": IMAGE_FOLDER,
        "patients": "images.csv",
        "tasks": ["image"],
        **(extra or {}),
    }
    return str(yaml.safe_dump(spec, sort_keys=False))


def copy_images(folder: Path, table: pd.DataFrame, sources: Sequence[Path]) -> None:
    for rel, src in zip(table["image"], sources):
        dst = path_inside(folder, rel, what="image path")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
