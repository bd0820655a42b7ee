"""What ``cxreval synth`` runs and writes: the synthetic study, the error model on real boxes and box overlays.

:func:`simulate_localization_study` is what the command runs (its job, with the box file read, is
:func:`cxreval.jobs.simulate_localization_study_files`): the ChestX-ray14 article's synthetic study
(:func:`~cxreval.localization.simulate_localization`), and, given a box table, the same error model on those
real boxes (:func:`~cxreval.localization.simulate_localization_on_boxes`) and, given a folder of radiographs,
the box overlays on the boxed ones (:func:`~cxreval.localization.overlay_boxes`). Its
:class:`LocalizationStudy` holds the three results and :meth:`~LocalizationStudy.save` writes every file of the
command but ``run.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .._typing import RNGLike
from ..exceptions import InvalidParameterError, SchemaError
from ..progress import Progress, as_progress
from ..results import ReadResult, TableResult, as_table
from ..schema._boxes import LOCALIZATION_COLUMNS
from ._overlays import OverlayResult
from ._real_boxes import RealBoxesResult
from ._synth_result import SynthResult

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pandas as pd

__all__ = ["LocalizationStudy", "simulate_localization_study"]


@dataclass(frozen=True)
class LocalizationStudy(TableResult):
    """The synthetic localization study and the error model on real boxes (``cxreval synth``).

    :meth:`save` writes the synthetic study's files (:class:`SynthResult`: ``localization.csv``, ``boxes.csv``,
    ``afp_denominators.csv``, ``synth_output.txt``) at the top of the folder and the real-box tables
    (:class:`RealBoxesResult`) with their overlays (:class:`OverlayResult`) into ``real_boxes/``; without the
    synthetic study the real-box tables and overlays are at the top. ``summary.md`` joins the parts' summaries.

    Attributes
    ----------
    synthetic : SynthResult or None
        The synthetic study (None when it was not run).
    real_boxes : RealBoxesResult or None
        The error model on the real boxes (None without boxes).
    overlays : OverlayResult or None
        Box overlays on the boxed radiographs (None without images).
    """

    FILES: ClassVar[Mapping[str, str]] = SynthResult.FILES
    """The files at the top of the folder when the synthetic study ran (the other parts' files are their own)."""
    PARTS: ClassVar[tuple[type[TableResult], ...]] = (SynthResult, RealBoxesResult, OverlayResult)
    COLUMNS: ClassVar[tuple[str, ...]] = LOCALIZATION_COLUMNS

    synthetic: SynthResult | None
    real_boxes: RealBoxesResult | None = None
    overlays: OverlayResult | None = None

    @property
    def table(self) -> pd.DataFrame:
        """The localization table of the synthetic study, or of the real boxes without it."""
        part = self.synthetic if self.synthetic is not None else self.real_boxes
        assert part is not None  # simulate_localization_study runs at least one
        return part.table

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables of the first part (the synthetic study, or the real boxes without it)."""
        part = self.synthetic if self.synthetic is not None else self.real_boxes
        assert part is not None
        return part.tables()

    def save(self, folder: str | PathLike[str]) -> dict[str, Path]:
        """Write every part's files and ``summary.md`` (``folder`` is made if missing); return ``{name: path}``
        (the real-box parts' names prefixed ``real_boxes.`` / ``overlays.``)."""
        from ..io._write import write_summary

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        if self.synthetic is not None:
            paths.update(self.synthetic.save(out))
        if self.real_boxes is not None:
            where = out if self.synthetic is None else out / self.real_boxes.FOLDER
            where.mkdir(exist_ok=True)
            paths.update({f"real_boxes.{k}": v for k, v in self.real_boxes.save(where).items()})
            if self.overlays is not None:
                paths.update({f"overlays.{k}": v for k, v in self.overlays.save(where).items()})
        paths["summary"] = write_summary(out, self.summary())
        return paths

    def summary(self) -> str:
        """The parts' summaries, as Markdown (``summary.md`` of ``cxreval synth``)."""
        parts = []
        if self.synthetic is not None:
            parts.append(self.synthetic.summary())
        if self.real_boxes is not None:
            parts.append(
                self.real_boxes.summary()
                + ("" if self.synthetic is None else f"\n\nTables: {self.real_boxes.FOLDER}/.")
            )
            if self.overlays is not None:
                parts.append(self.overlays.summary())
        return "\n\n".join(parts)

    def to_dict(self) -> dict[str, object]:
        """The synthetic study's checks (:meth:`SynthResult.to_dict`), or ``{"real_boxes": summary}`` without it."""
        if self.synthetic is not None:
            return self.synthetic.to_dict()
        assert self.real_boxes is not None
        return {"real_boxes": self.real_boxes.summary()}

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Acc. (left) and AFP (right) against T (:meth:`SynthResult.figure`)."""
        return SynthResult.figure(table)


def simulate_localization_study(
    boxes: pd.DataFrame | ReadResult | Sequence[pd.DataFrame | ReadResult] | None = None,
    *,
    rng: RNGLike = None,
    per_size: int = 60,
    synthetic: bool = True,
    images: str | PathLike[str] | None = None,
    origin: str | None = None,
    progress: Progress | None = None,
) -> LocalizationStudy:
    """Run ``cxreval synth``: the synthetic study, the error model on real boxes, box overlays on radiographs.

    Parameters
    ----------
    boxes : pandas.DataFrame, ReadResult, list of them, or None
        Real reference boxes (the box schema, e.g. :func:`cxreval.datasets.boxes.read_box_file` of
        ``BBox_List_2017.csv.gz``): the error model runs on them
        (:func:`~cxreval.localization.simulate_localization_on_boxes`). None: the synthetic study only.
    rng : int, Generator or None, default=None
        The generator seed, given to each part in turn (an int seeds each part alike, as the command's
        ``--seed``; a Generator is drawn from by the parts in order: synthetic study, real boxes, overlays).
    per_size : int, default=60
        Synthetic images per size class.
    synthetic : bool, default=True
        Run the synthetic study; False needs ``boxes``.
    images : path-like, optional
        With ``boxes``: a folder of radiographs named by their ``study_id`` (``00004296_000.png``); the boxed
        ones get box overlays (:func:`~cxreval.localization.overlay_boxes`). A folder without any is an error.
    origin : str, optional
        Where the radiographs come from, for the overlays' summary; default ``"from <images>"``.
    progress : Progress, optional
        One task per part.

    Returns
    -------
    res : LocalizationStudy

    Raises
    ------
    InvalidParameterError
        ``synthetic=False`` without ``boxes``; ``images`` without ``boxes``.
    SchemaError
        ``images`` is not a folder or holds no radiograph named by a ``study_id`` of the boxes.
    """
    func = "simulate_localization_study"
    if images is not None and boxes is None:
        raise InvalidParameterError(f"{func}: images= needs boxes= (the boxes drawn over the radiographs).")
    if not synthetic and boxes is None:
        raise InvalidParameterError(
            f"{func}: synthetic=False needs boxes= (then only the real boxes are studied)."
        )
    if images is not None and not Path(images).is_dir():
        raise SchemaError(f"images {str(images)!r} is not a folder of radiographs.")
    prog = as_progress(progress, func=func)
    table = None if boxes is None else as_table(boxes, name="boxes", func=func)
    where = boxes.report.source if isinstance(boxes, ReadResult) else "the boxes table"
    syn = real = overlays = None
    if synthetic:
        from ._synthetic import simulate_localization

        task = prog.add(f"synthetic study ({3 * per_size} images)")
        syn = simulate_localization(rng, per_size=per_size)
        prog.done(task)
    if table is not None:
        from ._real_boxes import simulate_localization_on_boxes

        task = prog.add("error model on the real boxes")
        real = simulate_localization_on_boxes(table, rng=rng)
        prog.done(task)
        if images is not None:
            from ._overlays import boxed_images, overlay_boxes

            files = boxed_images(images, table)
            if not files:
                raise SchemaError(
                    f"images {str(images)!r} holds no radiograph named by a study_id of the boxes of "
                    f"{str(where)!r} (<study_id>.png)."
                )
            task = prog.add(f"box overlays on {len(files)} radiographs")
            overlays = overlay_boxes(
                files, table, rng=rng, origin=f"from {images}" if origin is None else origin
            )
            prog.done(task)
    return LocalizationStudy(syn, real, overlays)
