"""Tests of the dataset registry: list_datasets, load_dataset, DATA_LOADERS."""

from __future__ import annotations

import pandas as pd
import pytest

from cxreval.datasets import UnknownDatasetError, list_datasets, load_dataset
from cxreval.datasets._registry import DATA_LOADERS, get_spec
from cxreval.exceptions import CxrevalError, DataUnavailableError, InvalidParameterError
from cxreval.results import ReadResult


def test_list_and_filter():
    names = list_datasets()
    assert names == sorted(DATA_LOADERS) and {"chestxray14", "google2019", "openi", "vindr"} <= set(names)
    assert list_datasets("chest*", kind="metadata") == ["chestxray14_metadata"]
    assert set(list_datasets(kind="reports")) == {"openi", "mimic_cxr_reports"}
    with pytest.raises(
        InvalidParameterError,
        match=r"The 'kind' parameter of list_datasets must be one of "
        r"\['boxes', 'labels', 'metadata', 'predictions', 'reports'\] or None. "
        r"Got 'images' instead",
    ):
        list_datasets(kind="images")


def test_unknown_name_is_keyerror_with_hint():
    with pytest.raises(
        UnknownDatasetError,
        match=r"Unknown dataset 'goggle2019'; registered datasets are .*"
        r"Did you mean 'google2019'\?",
    ) as info:
        load_dataset("goggle2019")
    assert isinstance(info.value, KeyError) and isinstance(info.value, CxrevalError)


def test_specs_are_importable_or_reported():
    for name in list_datasets():
        spec = get_spec(name)
        d = spec.to_dict()
        assert d["name"] == name and d["loader"].startswith("cxreval.datasets.")
        if spec.available:
            assert callable(spec.loader())
        else:
            with pytest.raises(DataUnavailableError, match=rf"Dataset '{name}' needs cxreval.datasets"):
                spec.loader()


def test_user_copy_through_registry(tmp_path):
    p = tmp_path / "google.csv"
    p.write_text(
        "Image Index,Patient ID,Fracture,Pneumothorax,Airspace opacity,Nodule or mass,Set Id\n"
        "a.png,1,NO,YES,NO,NO,test\n"
    )
    res = load_dataset("google2019", p)
    assert isinstance(res, ReadResult) and len(res.table) == 4 and res.report.source == str(p)


def test_metadata_loader_is_wrapped(tmp_path):
    p = tmp_path / "de.csv"
    p.write_text(
        "Image Index,Finding Labels,Patient ID,View Position\na.png,Mass,1,PA\nb.png,No Finding,2,AP\n"
    )
    res = load_dataset("chestxray14_metadata", p)
    assert isinstance(res, ReadResult) and isinstance(res.table, pd.DataFrame)
    assert res.report.n_read == res.report.n_kept == 2


def test_folder_dataset_needs_path():
    with pytest.raises(
        DataUnavailableError,
        match=r"Dataset 'chexpert_test' is not part of the fetched metadata; "
        r"pass path= \(a folder\)",
    ):
        load_dataset("chexpert_test")


def test_not_fetched_cache(tmp_path):
    with pytest.raises(DataUnavailableError, match=r"NLMCXR_reports.tgz is not in the cache"):
        load_dataset("openi", cache_dir=tmp_path)


@pytest.mark.slow
def test_registry_matches_direct_loaders(metadata_dir):
    from cxreval.datasets import google, openi

    pd.testing.assert_frame_equal(load_dataset("google2019").table, google.load_labels().table)
    pd.testing.assert_frame_equal(
        load_dataset("openi", cache_dir=metadata_dir.parent).table, openi.read_openi_reports().table
    )


def test_chexpert_test_folder(shared_data):
    res = load_dataset("chexpert_test", shared_data / "chexpert_test")
    assert res.table["study_id"].nunique() == 500
