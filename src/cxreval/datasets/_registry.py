"""The dataset registry: every loader registered by name in :data:`DATA_LOADERS` (as crowd-kit's
``DATA_LOADERS``); :func:`list_datasets` lists the names and :func:`load_dataset` calls a loader with a uniform
signature ``load_dataset(name, path=None, *, cache_dir=None, **kwargs)`` and always returns a
:class:`~cxreval.results.ReadResult`. Loader modules are imported only when used.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pandas as pd

from .._typing import PathLike
from .._validation import did_you_mean
from ..exceptions import DataUnavailableError, InvalidParameterError, UnknownNameError
from ..results import ReadReport, ReadResult
from ._fetch import metadata_path

__all__ = [
    "DatasetSpec",
    "DATA_LOADERS",
    "UnknownDatasetError",
    "list_datasets",
    "load_dataset",
    "get_spec",
]


class UnknownDatasetError(UnknownNameError):
    """An unknown dataset name: an :class:`~cxreval.exceptions.UnknownNameError` (so also a ``KeyError`` and
    a :class:`~cxreval.exceptions.CxrevalError`) whose message suggests close names."""


@dataclass(frozen=True)
class DatasetSpec:
    """A registered loader.

    Attributes
    ----------
    name : str
        Registry name.
    module : str
        Module (relative to :mod:`cxreval.datasets`) holding the loader.
    function : str
        Loader function name in that module.
    kind : {'labels', 'metadata', 'boxes', 'reports', 'predictions'}
        What the returned table holds.
    description : str
        One line for ``cxreval data list``.
    path : {'file', 'folder'}
        What ``path`` points to.
    default : str or None
        The fetched metadata file used when ``path`` is None (None: ``path`` is required).
    pinned : str or None
        A folder of pinned files (:data:`cxreval.datasets.mirror.PINNED`, e.g. ``'nih_fold_predictions/'``) used
        when ``path`` is None: taken from the data mirror or the cache, else downloaded from their pinned commits
        and checked against their SHA-256 (:func:`cxreval.datasets.mirror.fetch_folder`).
    """

    name: str
    module: str
    function: str
    kind: str
    description: str
    path: str = "file"
    default: str | None = None
    pinned: str | None = None

    def loader(self) -> Callable[..., object]:
        try:
            mod = importlib.import_module(f"{__package__}.{self.module}" if self.module else __name__)
        except ImportError as exc:
            raise DataUnavailableError(
                f"Dataset {self.name!r} needs cxreval.datasets.{self.module}, which is not "
                f"available in this installation: {exc}"
            ) from exc
        fn = getattr(mod, self.function, None)
        if fn is None:
            raise DataUnavailableError(
                f"Dataset {self.name!r}: cxreval.datasets.{self.module} has no {self.function}()."
            )
        return fn

    @property
    def available(self) -> bool:
        """Whether the loader can be imported."""
        try:
            self.loader()
        except DataUnavailableError:
            return False
        return True

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "loader": ".".join(x for x in ("cxreval.datasets", self.module, self.function) if x),
            "path": self.path,
            "default_file": self.default,
        }


_SPECS = (
    DatasetSpec(
        "chestxray14",
        "nih",
        "load_labels",
        "labels",
        "ChestX-ray14 text-mined labels (source nih_textmined), 112,120 images",
        default="Data_Entry_2017_v2020.csv.gz",
    ),
    DatasetSpec(
        "chestxray14_metadata",
        "nih",
        "load_metadata",
        "metadata",
        "ChestX-ray14 per-image metadata: patient, view, age, sex",
        default="Data_Entry_2017_v2020.csv.gz",
    ),
    DatasetSpec(
        "chestxray14_boxes",
        "nih_boxes",
        "read_nih_boxes",
        "boxes",
        "ChestX-ray14 radiologist boxes (BBox_List_2017), half-open",
        default="BBox_List_2017.csv.gz",
    ),
    DatasetSpec(
        "google2019",
        "google",
        "load_labels",
        "labels",
        "Google 2019 adjudicated expert labels for 4,376 NIH images (source google_expert)",
        default="google2019_nih-chest-xray-labels.csv.gz",
    ),
    DatasetSpec(
        "vindr",
        "vindr",
        "read_vindr",
        "labels",
        "VinDr-CXR labels, one source per reader (R1..R17)",
        default="vinbigdata-train.csv.gz",
    ),
    DatasetSpec(
        "vindr_boxes",
        "vindr",
        "read_vindr_boxes",
        "boxes",
        "VinDr-CXR reader boxes, half-open",
        default="vinbigdata-train.csv.gz",
    ),
    DatasetSpec(
        "openi",
        "openi",
        "read_openi_reports",
        "reports",
        "OpenI reports: FINDINGS / IMPRESSION / INDICATION / COMPARISON and MeSH codes",
        default="NLMCXR_reports.tgz",
    ),
    DatasetSpec(
        "openi_mesh",
        "openi",
        "openi_mesh_labels",
        "labels",
        "OpenI human MeSH major codes as ChestX-ray14 labels (source openi_mesh), one row per report",
        default="NLMCXR_reports.tgz",
    ),
    DatasetSpec(
        "chexpert_train",
        "chexpert",
        "load_fetched_train",
        "labels",
        "CheXpert train labels from the CheXpert labeler (1/0/-1/blank), per study (patientN/studyN)",
        default="chexpert_train.csv.gz",
    ),
    DatasetSpec(
        "chexpert",
        "chexpert",
        "load_release",
        "labels",
        "CheXpert-v1.0[-small] train.csv (source chexpert_labeler) and valid.csv (radiologists' consensus, "
        "chexpert_radiologists), per study (folder)",
        path="folder",
    ),
    DatasetSpec(
        "chexpert_test",
        "chexpert",
        "load_labels",
        "labels",
        "CheXpert test set: consensus, 8 radiologists, 2 report labelers (folder)",
        path="folder",
    ),
    DatasetSpec(
        "chexpert_test_predictions",
        "chexpert",
        "load_predictions",
        "predictions",
        "CheXpert test set: the 10 leaderboard models' scores, model <name> from <name>_predictions.csv "
        "(folder)",
        path="folder",
    ),
    DatasetSpec(
        "mimic_cxr",
        "mimic",
        "load_labels",
        "labels",
        "MIMIC-CXR-JPG labels: CheXpert labeler and NegBio (sources mimic_chexpert, mimic_negbio), the "
        "test set's radiologists (mimic_radiologist) when present (folder)",
        path="folder",
    ),
    DatasetSpec(
        "mimic_cxr_reports",
        "mimic_reports",
        "read_mimic_reports",
        "reports",
        "MIMIC-CXR reports: mimic-cxr-reports.zip or its files/p1x/pNNNNNNNN/sNNNNNNNN.txt tree (file or "
        "folder)",
        path="folder",
    ),
    DatasetSpec(
        "rsna_pneumonia",
        "rsna",
        "load_labels",
        "labels",
        "RSNA Pneumonia stage 2 train: Lung Opacity, Pneumonia, No Finding (source rsna_radiologists) "
        "from stage_2_train_labels.csv + stage_2_detailed_class_info.csv (folder)",
        path="folder",
    ),
    DatasetSpec(
        "rsna_pneumonia_boxes",
        "rsna",
        "load_boxes",
        "boxes",
        "RSNA Pneumonia radiologists' Lung Opacity boxes, half-open, 1024 x 1024 (folder)",
        path="folder",
    ),
    DatasetSpec(
        "siim_acr_pneumothorax",
        "siim",
        "load_labels",
        "labels",
        "SIIM-ACR Pneumothorax train-rle.csv: Pneumothorax per image (source siim_radiologists)",
    ),
    DatasetSpec(
        "siim_acr_pneumothorax_boxes",
        "siim",
        "load_boxes",
        "boxes",
        "SIIM-ACR Pneumothorax masks (train-rle.csv) -> one box per connected component, half-open",
    ),
    DatasetSpec(
        "nih_predictions",
        "nih_predictions",
        "load_predictions",
        "predictions",
        "10 models' scores on 22,433 ChestX-ray14 images (model <file stem>; one holds logits: --logits sigmoid maps it into probabilities), downloaded "
        "from their pinned GitHub commits, SHA-256 checked (or --path FOLDER of <model>.csv)",
        path="folder",
        pinned="nih_fold_predictions/",
    ),
    DatasetSpec(
        "padchest",
        "padchest",
        "load_labels",
        "labels",
        "PadChest labels: physician- and RNN-labelled reports (sources padchest_physician, padchest_rnn)",
        default="PADCHEST_chest_x_ray_images_labels_160K_01.02.19.csv.gz",
    ),
)

DATA_LOADERS: Mapping[str, DatasetSpec] = MappingProxyType({s.name: s for s in _SPECS})
"""Registered datasets by name."""


def list_datasets(pattern: str = "*", *, kind: str | None = None) -> list[str]:
    """Names of the registered datasets matching a glob ``pattern`` (and ``kind``), sorted."""
    if not isinstance(pattern, str):
        raise InvalidParameterError(
            f"The 'pattern' parameter of list_datasets must be a str. Got {pattern!r} instead."
        )
    kinds = sorted({s.kind for s in _SPECS})
    if kind is not None and kind not in kinds:
        raise InvalidParameterError(
            f"The 'kind' parameter of list_datasets must be one of {kinds} or None. Got {kind!r} instead."
        )
    return sorted(
        n
        for n, s in DATA_LOADERS.items()
        if fnmatch.fnmatchcase(n, pattern) and (kind is None or s.kind == kind)
    )


def get_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of ``name``; an unknown name raises with a did-you-mean hint."""
    if not isinstance(name, str) or name not in DATA_LOADERS:
        hint = did_you_mean(str(name), DATA_LOADERS)
        raise UnknownDatasetError(
            f"Unknown dataset {name!r}; registered datasets are {sorted(DATA_LOADERS)}.{hint}"
        )
    return DATA_LOADERS[name]


def load_dataset(
    name: str, path: PathLike | None = None, *, cache_dir: PathLike | None = None, **kwargs: Any
) -> ReadResult:
    """Load a registered dataset.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets`.
    path : path, optional
        The user's own copy of the file (or folder, for folder datasets); default the fetched copy.
    cache_dir : path, optional
        Cache directory override (see :func:`cxreval.datasets.resolve_cache_dir`).
    **kwargs
        Passed to the loader.

    Returns
    -------
    res : ReadResult
        The loader's table and read report (metadata loaders returning a bare table are wrapped).

    Raises
    ------
    UnknownDatasetError
        Unknown name (a ``KeyError`` with a did-you-mean hint).
    DataUnavailableError
        Not fetched, or a folder dataset called without ``path``; for a dataset of pinned files, offline with
        neither a mirror nor a cached copy, or a copy whose SHA-256 differs from the pin.
    """
    spec = get_spec(name)
    fn = spec.loader()
    if spec.default is None and spec.pinned is None and path is None:
        raise DataUnavailableError(
            f"Dataset {name!r} is not part of the fetched metadata; pass path= (a {spec.path})."
        )
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InvalidParameterError(
            f"The 'path' parameter of load_dataset must be a path or None. Got {type(path).__name__} instead."
        )
    pinned = path is None and spec.pinned is not None
    if pinned:
        from .mirror import fetch_folder

        try:
            path = fetch_folder(spec.pinned, cache_dir=cache_dir)  # type: ignore[arg-type]
        except DataUnavailableError as exc:  # one line, the caller's own way in named: path=
            raise DataUnavailableError(
                f"{exc} Or pass path= (a folder holding the files of {spec.pinned})."
            ) from None
    elif path is None:
        path = metadata_path(spec.default, cache_dir=cache_dir)  # type: ignore[arg-type]
    res = fn(path, **kwargs)
    if isinstance(res, ReadResult) and pinned:
        from dataclasses import replace

        note = (
            f"files of {spec.pinned} from the data mirror, the cache or their pinned GitHub commits, each "
            f"checked against its SHA-256 (cxreval.datasets.mirror.PINNED)"
        )
        return ReadResult(res.table, replace(res.report, notes=(note, *res.report.notes)))
    if isinstance(res, ReadResult):
        return res
    if isinstance(res, pd.DataFrame):
        return ReadResult(res, ReadReport(str(path), len(res), len(res)))
    raise TypeError(f"Loader of {name!r} returned {type(res).__name__}, expected a ReadResult or DataFrame.")
