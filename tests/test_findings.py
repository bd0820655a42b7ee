import pytest

from cxreval.exceptions import SchemaError
from cxreval.findings import (
    ALIASES,
    ALL_FINDINGS,
    CHESTXRAY8,
    CHESTXRAY14,
    CHEXPERT,
    GOOGLE_NIH,
    VINDR,
    canonical_finding,
    canonical_findings,
)


def test_vocabulary_sizes():
    assert len(CHESTXRAY14) == 14 and len(CHESTXRAY8) == 8 and len(CHEXPERT) == 14
    assert len(VINDR) == 15 and len(GOOGLE_NIH) == 4
    assert "No Finding" in CHEXPERT and "Support Devices" in CHEXPERT


@pytest.mark.parametrize("name,expected", [
    ("Infiltrate", "Infiltration"), ("Pleural_Thickening", "Pleural Thickening"),
    ("Pleural Effusion", "Effusion"), ("pleural  effusion", "Effusion"), ("Nodule or mass", "Nodule or Mass"),
    ("Nodule/Mass", "Nodule or Mass"), ("No finding", "No Finding"), ("ATELECTASIS", "Atelectasis"),
])
def test_aliases(name, expected):
    assert canonical_finding(name) == expected


def test_every_alias_targets_a_canonical_name():
    assert set(ALIASES.values()) <= set(ALL_FINDINGS)
    for f in ALL_FINDINGS:
        assert canonical_finding(f) == f


def test_unknown_finding_message_suggests():
    with pytest.raises(SchemaError, match=r"Unknown finding name 'Atelectasys' in file 'x.csv'.*Did you mean 'Atelectasis'"):
        canonical_finding("Atelectasys", where="file 'x.csv'")


def test_renames_are_returned():
    names, renamed = canonical_findings(["Effusion", "Pleural_Thickening"])
    assert names == ("Effusion", "Pleural Thickening")
    assert renamed == {"Pleural_Thickening": "Pleural Thickening"}
