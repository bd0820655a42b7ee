"""The job of ``cxreval localize``: heatmap files and a box file in, :class:`~cxreval.localization.LocalizationResult`
out."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from .._typing import PathLike
from ..exceptions import InvalidParameterError
from ..localization._protocol import DEFAULT_T, RULES
from ._inputs import check_input_paths

if TYPE_CHECKING:
    from ..executor import ExecutorLike
    from ..localization import LocalizationResult
    from ..progress import Progress

__all__ = ["evaluate_localization_files"]


def evaluate_localization_files(
    heatmaps: Sequence[PathLike] | PathLike,
    boxes: PathLike,
    *,
    upsampling: str = "bilinear",
    thresholds: Sequence[float] = (60.0, 180.0),
    strict_threshold: bool = True,
    connectivity: int = 8,
    rules: Sequence[str] = RULES,
    T_values: Sequence[str | float | Fraction] = DEFAULT_T,
    strict_T: bool = True,
    T_iou: Sequence[str | float | Fraction] | None = None,
    afp_denominator: str = "pairs",
    image_size: int = 1024,
    missing_maps: str = "error",
    studies_from_maps: bool = False,
    executor: ExecutorLike = None,
    progress: Progress | None = None,
) -> LocalizationResult:
    """Score the heatmaps of ``.npz`` files and folders of ``.npy`` against the boxes of a box file under the
    ChestX-ray8 protocol: the job of ``cxreval localize`` (``res.save(folder)`` writes every file the command
    writes but ``run.json``).

    The files are checked to exist before any work, the boxes read (:func:`cxreval.datasets.boxes.read_box_file`)
    and the maps scored by :func:`cxreval.localization.evaluate_heatmap_files`.

    Parameters
    ----------
    heatmaps : path or sequence of path
        ``.npz`` files (keys ``study_id/finding``) or folders of ``.npy`` maps.
    boxes : path
        ``BBox_List_2017.csv[.gz]``, VinDr-CXR's ``vinbigdata-train.csv[.gz]`` or a box table (``.csv`` or
        ``.parquet``).
    upsampling, thresholds, strict_threshold, connectivity, rules, T_values, strict_T, T_iou, afp_denominator
        The fields of the :class:`~cxreval.localization.LocalizationProtocol`.
    image_size : int, default=1024
        Height and width in pixels of the images the boxes are drawn on.
    missing_maps, studies_from_maps, executor, progress
        As :func:`~cxreval.localization.evaluate_heatmap_files`.

    Returns
    -------
    res : LocalizationResult

    Raises
    ------
    InvalidParameterError
        ``image_size`` not positive; a protocol field out of its range.
    SchemaError
        A file does not exist, ``boxes`` is a folder, or a file is not what it should be (named).
    """
    if isinstance(image_size, bool) or not isinstance(image_size, int) or image_size < 1:
        raise InvalidParameterError(
            "The 'image_size' parameter of evaluate_localization_files must be a positive number of pixels. "
            f"Got {image_size}."
        )
    maps = (
        [heatmaps] if isinstance(heatmaps, (str, bytes)) or not isinstance(heatmaps, Sequence) else heatmaps
    )
    check_input_paths(*(("heatmaps", h) for h in maps))
    check_input_paths(("boxes", boxes), kind="file")
    from ..datasets.boxes import read_box_file
    from ..localization import LocalizationProtocol, evaluate_heatmap_files

    shape = (image_size, image_size)
    protocol = LocalizationProtocol(
        upsampling=upsampling,
        thresholds=tuple(thresholds),
        strict_threshold=strict_threshold,
        connectivity=connectivity,
        rules=tuple(rules),
        T_values=tuple(T_values),  # type: ignore[arg-type]
        strict_T=strict_T,
        image_shape=shape,
        T_iou=None if T_iou is None else tuple(T_iou),  # type: ignore[arg-type]
        afp_denominator=afp_denominator,
    )
    return evaluate_heatmap_files(
        list(maps),
        read_box_file(boxes, image_shape=shape),
        protocol=protocol,
        missing_maps=missing_maps,
        studies_from_maps=studies_from_maps,
        executor=executor,
        progress=progress,
    )
