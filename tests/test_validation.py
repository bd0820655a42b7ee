"""The shared boundary checks of :mod:`cxreval._validation` that the command line's options go through."""

from __future__ import annotations

import os

import pytest

from cxreval._validation import check_folder, check_inputs, refuse_options, split_list
from cxreval.exceptions import InvalidParameterError, SchemaError


def test_split_list_joins_commas_and_repeats_keeping_the_first_of_each():
    assert split_list(None, option="--findings") is None
    assert split_list([], option="--findings") is None
    assert split_list(["A, B", "C,A"], option="--findings") == ["A", "B", "C"]
    assert split_list("A", option="--findings") == ["A"]
    with pytest.raises(
        InvalidParameterError, match=r"^--findings needs a comma-separated list\. Got ',,,'\.$"
    ):
        split_list([",", ","], option="--findings")


def test_check_inputs_names_the_option_and_the_path(tmp_path):
    (tmp_path / "f.csv").write_text("x\n")
    check_inputs(("--labels", tmp_path / "f.csv"), ("--other", None))
    check_inputs(("--images", tmp_path))
    with pytest.raises(SchemaError, match=r"^--labels .*missing\.csv does not exist\.$"):
        check_inputs(("--labels", tmp_path / "missing.csv"))
    with pytest.raises(SchemaError, match=r"is a folder; a file is expected\.$"):
        check_inputs(("--labels", tmp_path), kind="file")


def test_check_folder_refuses_a_file_and_a_folder_under_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    check_folder("--cache-dir", None)
    check_folder("--cache-dir", tmp_path / "new" / "deeper", write=True)
    with pytest.raises(SchemaError, match=r"^--cache-dir .*f is a file; a folder is expected\.$"):
        check_folder("--cache-dir", tmp_path / "f")
    with pytest.raises(SchemaError, match=r"is a file, so .* cannot be a folder\.$"):
        check_folder("--cache-dir", tmp_path / "f" / "sub")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_check_folder_refuses_a_read_only_parent_when_writing(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        check_folder("--cache-dir", ro / "x")
        with pytest.raises(SchemaError, match=r"is not writable\.$"):
            check_folder("--cache-dir", ro / "x", write=True)
    finally:
        ro.chmod(0o700)


def test_refuse_options_raises_the_message_only_when_given():
    refuse_options(False, "--a needs --b.")
    with pytest.raises(SchemaError, match=r"^--a needs --b\.$"):
        refuse_options(True, "--a needs --b.")
