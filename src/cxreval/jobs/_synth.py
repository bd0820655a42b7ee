"""The job of ``cxreval synth``: the synthetic localization study, and the error model on a box file (with box
overlays on a folder of radiographs); :class:`~cxreval.localization.LocalizationStudy` out.

Nothing here imports pandas: printing the synthetic study loads no table module
(``tests/localization/test_synthetic.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._typing import PathLike, RNGLike
from ..exceptions import InvalidParameterError, SchemaError
from ._inputs import check_input_paths, check_out

if TYPE_CHECKING:
    from ..localization import LocalizationStudy
    from ..progress import Progress

__all__ = ["REAL_BOXES_FETCHED", "real_boxes_file", "simulate_localization_study_files"]

REAL_BOXES_FETCHED = "auto"
"""``real_boxes=`` naming the fetched copy of ChestX-ray8's ``BBox_List_2017.csv.gz`` (``cxreval data fetch``)."""


def real_boxes_file(real_boxes: str | PathLike | None) -> Path | None:
    """The box file ``real_boxes`` names: :data:`REAL_BOXES_FETCHED` is the fetched metadata copy of
    ``BBox_List_2017.csv.gz`` (:func:`cxreval.datasets.metadata_path`), any other value a path; None stays None."""
    if real_boxes is None:
        return None
    if str(real_boxes) == REAL_BOXES_FETCHED:
        from ..datasets import metadata_path

        return metadata_path("BBox_List_2017.csv.gz")
    return Path(real_boxes)


def simulate_localization_study_files(
    real_boxes: str | PathLike | None = None,
    *,
    rng: RNGLike = None,
    per_size: int = 60,
    synthetic: bool = True,
    images: PathLike | None = None,
    out: PathLike | None = None,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> LocalizationStudy:
    """:func:`cxreval.localization.simulate_localization_study` on a box file: the job of ``cxreval synth``
    (``res.save(folder)`` writes every file the command writes but ``run.json``).

    Parameters
    ----------
    real_boxes : path or 'auto', optional
        A box file (``BBox_List_2017.csv[.gz]`` or any box file :func:`cxreval.datasets.boxes.read_box_file`
        reads), or ``'auto'`` for the fetched metadata copy (:func:`real_boxes_file`): the error model runs on
        its boxes. None: the synthetic study only.
    rng, per_size, synthetic
        As :func:`~cxreval.localization.simulate_localization_study`; ``synthetic=False`` needs ``real_boxes``
        and ``out``.
    images : path, optional
        With ``real_boxes``: a folder of radiographs named by their ``study_id``; the boxed ones get box
        overlays, drawn only when the study is to be saved (``out``).
    out : path, optional
        The folder the caller saves the study in (not written here): checked before any work
        (:func:`cxreval.outputs.check_output_path`, with ``overwrite``). None: the study is only printed, so
        no overlay is drawn.
    overwrite : bool, default=False
        ``out`` may be replaced whole.
    progress : Progress, optional
        One task per part.

    Returns
    -------
    res : LocalizationStudy

    Raises
    ------
    InvalidParameterError
        ``images`` without ``real_boxes``; ``synthetic=False`` without ``real_boxes`` or ``out``.
    SchemaError
        ``images`` is not a folder; the box file does not exist or is not a box table (named).
    """
    if images is not None and real_boxes is None:
        raise InvalidParameterError("images= needs real_boxes= (the boxes drawn over the radiographs).")
    if not synthetic and (real_boxes is None or out is None):
        raise InvalidParameterError(
            "synthetic=False needs real_boxes= and out= (it writes only the real-box tables)."
        )
    if images is not None and not Path(images).is_dir():
        raise SchemaError(f"images= {str(images)!r} is not a folder of radiographs.")
    path = real_boxes_file(real_boxes)
    check_input_paths(("real_boxes", path), kind="file")
    check_out(out, overwrite=overwrite, inputs=(path, images))
    boxes = None
    if path is not None:  # the box readers are imported only when boxes are read
        from ..datasets.boxes import read_box_file

        boxes = read_box_file(path)
    from ..localization import simulate_localization_study

    return simulate_localization_study(
        boxes,
        rng=rng,
        per_size=per_size,
        synthetic=synthetic,
        images=None if out is None else images,
        progress=progress,
    )
