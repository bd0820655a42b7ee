"""Dataset loaders (one module per source), the public-metadata fetcher, splits and audits.

Every loader is registered by name in :data:`DATA_LOADERS` (``datasets/_registry.py``, as crowd-kit's
``DATA_LOADERS``):
:func:`list_datasets` lists the names and :func:`load_dataset` calls a loader with a uniform signature
``load_dataset(name, path=None, *, cache_dir=None, **kwargs)`` and always returns a
:class:`~cxreval.results.ReadResult`. Loader modules are imported only when used.

Examples
--------
>>> "chestxray14" in list_datasets()
True
>>> list_datasets("vindr*")
['vindr', 'vindr_boxes']
>>> res = load_dataset("chestxray14")          # doctest: +SKIP
>>> res.table.columns.tolist()                  # doctest: +SKIP
['study_id', 'patient_id', 'finding', 'source', 'state']
"""

from ._dataset_split import DatasetSplit, split_dataset
from ._export import DatasetExport, export_dataset
from ._fetch import FetchResult, fetch_metadata, metadata_path
from ._registry import DatasetSpec, UnknownDatasetError, list_datasets, load_dataset
from ._splits import LeakageAudit, SplitResult, audit_split, image_split, patient_split, read_split_lists

__all__ = [
    "FetchResult",
    "fetch_metadata",
    "metadata_path",
    "DatasetSpec",
    "UnknownDatasetError",
    "list_datasets",
    "load_dataset",
    "DatasetExport",
    "export_dataset",
    "DatasetSplit",
    "split_dataset",
    "SplitResult",
    "LeakageAudit",
    "patient_split",
    "image_split",
    "read_split_lists",
    "audit_split",
]
