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


@pytest.mark.parametrize(
    "name,expected",
    [
        ("Infiltrate", "Infiltration"),
        ("Pleural_Thickening", "Pleural Thickening"),
        ("Pleural Effusion", "Effusion"),
        ("pleural  effusion", "Effusion"),
        ("Nodule or mass", "Nodule or Mass"),
        ("Nodule/Mass", "Nodule or Mass"),
        ("No finding", "No Finding"),
        ("ATELECTASIS", "Atelectasis"),
    ],
)
def test_aliases(name, expected):
    assert canonical_finding(name) == expected


def test_every_alias_targets_a_canonical_name():
    assert set(ALIASES.values()) <= set(ALL_FINDINGS)
    for f in ALL_FINDINGS:
        assert canonical_finding(f) == f


def test_unknown_finding_message_suggests():
    with pytest.raises(
        SchemaError, match=r"Unknown finding name 'Atelectasys' in file 'x.csv'.*Did you mean 'Atelectasis'"
    ):
        canonical_finding("Atelectasys", where="file 'x.csv'")


def test_renames_are_returned():
    names, renamed = canonical_findings(["Effusion", "Pleural_Thickening"])
    assert names == ("Effusion", "Pleural Thickening")
    assert renamed == {"Pleural_Thickening": "Pleural Thickening"}


# the XQA-Chest paper's sentence naming the schema and the two exclusions (its section 2)
_XQA_SCHEMA = (
    "Atelectasis, Cardiomegaly, Edema, Enlarged cardiomediastinum, Consolidation, Fracture, Lung lesion, "
    "Lung opacity, Pleural effusion, Pleural other, Pneumonia, Pneumothorax, Support devices, and No finding"
)


def test_xqa_is_the_papers_12_pathologies():
    from cxreval.findings import VOCABULARIES, XQA, XQA_SELECTED

    names = [n.strip().removeprefix("and ") for n in _XQA_SCHEMA.split(",")]
    schema, _ = canonical_findings(names)
    expected = tuple(f for f in schema if f not in ("No Finding", "Support Devices"))
    assert len(schema) == 14 and len(expected) == 12
    assert XQA == expected  # same names, same (the paper's) order
    assert "Pleural Other" in XQA and "Support Devices" not in XQA and "No Finding" not in XQA
    assert set(XQA) == set(CHEXPERT) - {"No Finding", "Support Devices"}
    assert set(XQA_SELECTED) <= set(XQA) and VOCABULARIES["xqa"] is XQA


def test_xqa_against_the_seed_text(shared_data):
    from cxreval.findings import XQA

    seed = next((shared_data.parent / "seeds").glob("002_*.txt")).read_text(encoding="utf-8")
    assert _XQA_SCHEMA in seed
    assert "we exclude No finding and Support devices from our analysis, yielding 12 pathologies" in seed
    assert len(XQA) == 12
