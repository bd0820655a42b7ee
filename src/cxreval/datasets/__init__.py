"""Dataset loaders (one module per source), the public-metadata fetcher, splits and audits."""

from .fetch import METADATA_FILES, FetchResult, cache_dir, fetch_metadata, metadata_path

__all__ = ["METADATA_FILES", "FetchResult", "cache_dir", "fetch_metadata", "metadata_path"]
