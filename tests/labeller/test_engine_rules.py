"""Tokens, sections, sentences, the rule files and their override, and invariances of the labeller."""

from __future__ import annotations

import pandas as pd
import pytest

from _factories import RecordedProgress
from cxreval.executor._local import ProcessExecutor
from cxreval.labeller import label_reports, load_rules
from cxreval.labeller._engine import Engine, tokenize
from cxreval.labeller._rules import CATEGORIES, packaged_rules_text
from cxreval.labeller._sections import split_sections
from cxreval.labels import validate_label_table

TEXTS = [
    "FINDINGS: No pleural effusion or pneumothorax. Mild cardiomegaly.\nIMPRESSION: Possible left lower lobe "
    "pneumonia. Atelectasis cannot be excluded.",
    "Heart size is normal. Lungs are clear. XXXX XXXX.",
    "INDICATION: ? pneumonia\nFINDINGS: Small right effusion; no pneumothorax.\n\nIMPRESSION: Right effusion.",
    "",
    "Impression: stable cardiomegaly, no edema, no focal consolidation. Subcutaneous emphysema.",
]


def _table():
    return pd.DataFrame({"study_id": [f"s{i}" for i in range(len(TEXTS))], "text": TEXTS})


def test_tokenize_words_punctuation_hyphen():
    toks, start, end, is_word = tokenize("No plate-like opacity; x-XXXX.")
    assert toks == ["No", "plate", "like", "opacity", ";", "x", "XXXX", "."]
    assert [bool(x) for x in is_word] == [True, True, True, True, False, True, True, False]
    assert all("No plate-like opacity; x-XXXX."[a:b] == t for t, a, b in zip(toks, start, end))


def test_split_sections_spans_and_names():
    t = "History: cough\n  FINDINGS :  No effusion.\nImpressions-- Normal.\nRecommendation: none"
    secs = split_sections(t)
    assert [s.name for s in secs] == ["history", "findings", "impression", "recommendation"]
    assert t[secs[1].start : secs[1].end].strip() == "No effusion."
    assert split_sections("") == [] and [s.name for s in split_sections("No effusion.")] == ["preamble"]
    # a word that merely starts a line is not a header
    assert [s.name for s in split_sections("Report of a small effusion.")] == ["preamble"]


def test_sentences_and_spans_are_traceable():
    res = label_reports(_table())
    m = res.mentions
    text = dict(zip(_table().study_id, TEXTS))
    for r in m.itertuples():
        assert text[r.study_id][r.start : r.end] == r.phrase
        assert r.phrase in r.sentence_text
    pneu = m[(m.study_id == "s0") & (m.finding == "Pneumonia")].iloc[0]
    assert (pneu.section, pneu.sentence, pneu.state, pneu.state_rule) == (
        "impression",
        0,
        "uncertain",
        "uncertain:before:possible",
    )
    atel = m[(m.study_id == "s0") & (m.finding == "Atelectasis")].iloc[0]
    assert (atel.sentence, atel.state_rule) == (1, "uncertain_pre_negation:after:cannot be excluded")
    # "vs." and decimals do not end a sentence
    m2 = label_reports(
        pd.DataFrame({"study_id": ["a"], "text": ["A 2.5 cm nodule vs. mass. No effusion."]})
    ).mentions
    assert m2.sentence.tolist() == [0, 0, 1]


def test_longest_trigger_wins_and_pseudo_triggers():
    eng = Engine(load_rules())
    f = {x: i for i, x in enumerate(eng.findings)}
    m = eng.run(["Effusion is not excluded.", "No change in the effusion.", "Not only effusion but edema."])
    got = {(int(s), eng.findings[k]): int(st) for s, k, st in zip(m.segment, m.finding, m.state)}
    assert got[(0, "Effusion")] == 1 and got[(1, "Effusion")] == 2 and got[(2, "Effusion")] == 2
    assert got[(2, "Edema")] == 2 and f["Effusion"] == 2


def test_labels_are_a_valid_label_table_in_input_order():
    res = label_reports(_table())
    lab = validate_label_table(res.labels)
    assert lab.study_id.unique().tolist() == [f"s{i}" for i in range(5)]
    assert set(lab.source) == {"report_findings", "report_impression", "report"}
    assert len(lab) == 5 * 3 * 14
    assert set(lab.state.dropna().astype(int)) <= {-1, 0, 1, 2}
    s = res.counts()
    assert s["n_reports"] == 5 and s["states"]["missing"] == int(lab.state.isna().sum())


def test_chunking_and_processes_do_not_change_results():
    t = pd.concat([_table()] * 7, ignore_index=True)
    t["study_id"] = [f"s{i}" for i in range(len(t))]
    a = label_reports(t)
    b = label_reports(t, chunk_size=3)
    c = label_reports(t, chunk_size=4, executor=ProcessExecutor(max_workers=2))
    for r in (b, c):
        pd.testing.assert_frame_equal(a.labels, r.labels)
        pd.testing.assert_frame_equal(a.mentions, r.mentions)
        pd.testing.assert_frame_equal(a.notes, r.notes)
    for ex in (None, ProcessExecutor(max_workers=2)):
        seen = RecordedProgress()
        label_reports(t, chunk_size=10, progress=seen, executor=ex)
        assert seen.tasks == [("labelling reports", 35)]
        assert sorted(n for _, n in seen.events) == [5, 10, 10, 10]  # reports per chunk


def test_rules_override_file(tmp_path):
    base = load_rules()
    assert base.before_words == 12 and {t.category for t in base.triggers} == {
        *CATEGORIES,
        "pseudo",
        "termination",
    }
    p = tmp_path / "r.yaml"
    p.write_text(
        "scope:\n  before_words: 2\n"
        "triggers:\n  negation:\n    before: [without]\n"
        "findings:\n  Nodule:\n    phrases: [nodule, nodules, spot]\n"
    )
    rs = load_rules(p)
    assert rs.before_words == 2 and rs.after_words == base.after_words and rs.sources[-1] == str(p)
    neg_before = [t.text for t in rs.triggers if t.category == "negation" and t.side == "before"]
    assert neg_before == ["without"]
    # negation.after and the other findings keep the packaged values
    assert [t for t in rs.triggers if t.category == "negation" and t.side == "after"] == [
        t for t in base.triggers if t.category == "negation" and t.side == "after"
    ]
    t = pd.DataFrame(
        {
            "study_id": ["a", "b", "c"],
            "text": ["No effusion.", "Lungs without a clear large right effusion.", "A spot in the lung."],
        }
    )
    lab = label_reports(t, sections="whole", rules=p).labels.set_index(["study_id", "finding"])["state"]
    assert lab["a", "Effusion"] == 2  # 'no' is no longer a negation trigger
    assert lab["b", "Effusion"] == 2  # 'without' is 5 words away, beyond before_words=2
    assert lab["c", "Nodule"] == 2  # a user phrase
    assert "Effusion" in load_rules(p).findings


def test_packaged_rules_text_round_trips(tmp_path):
    p = tmp_path / "all.yaml"
    p.write_text(packaged_rules_text("chestxray14"))
    assert load_rules(p).mentions == load_rules().mentions
    with pytest.raises(Exception, match="vocabulary"):
        packaged_rules_text("mimic")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No effusion. Mild cardiomegaly.", ["No effusion.", "Mild cardiomegaly."]),
        ("Heart size 2.5 cm. Dr. XXXX was notified.", ["Heart size 2.5 cm.", "Dr. XXXX was notified."]),
        (
            "? pneumonia. Atelectasis vs. scarring!  Next",
            ["? pneumonia.", "Atelectasis vs. scarring!", "Next"],
        ),
        (
            "Line one\n\n  Line two is a hard-wrapped line of the report\nstill two",
            ["Line one", "Line two is a hard-wrapped line of the report\nstill two"],
        ),
        ("No pneumothorax\nSmall left pneumothorax", ["No pneumothorax", "Small left pneumothorax"]),
        ("no ptx\nsmall effusion", ["no ptx", "small effusion"]),
        ("Small effusion and\nno pneumothorax", ["Small effusion and\nno pneumothorax"]),
        (
            "Heart size normal.No pneumothorax.Small effusion.",
            ["Heart size normal.", "No pneumothorax.", "Small effusion."],
        ),
        (
            "A 2.5 cm nodule, e.g. a granuloma. Dr.Smith called.",
            ["A 2.5 cm nodule, e.g. a granuloma.", "Dr.Smith called."],
        ),
        (
            "There is a small left pleural effusion and a moderate\nright effusion. 1. No PTX\n2. Mild edema",
            [
                "There is a small left pleural effusion and a moderate\nright effusion.",
                "1. No PTX",
                "2. Mild edema",
            ],
        ),
        ("- no pneumothorax\n- small right effusion", ["- no pneumothorax", "- small right effusion"]),
        ("x-XXXX. i.e. none", ["x-XXXX.", "i.e. none"]),
        ("   ", []),
    ],
)
def test_split_sentences(text, expected):
    from cxreval.labeller._engine import split_sentences

    assert [text[a:b] for a, b in split_sentences(text)] == expected


@pytest.mark.parametrize(
    ("text", "finding", "state"),
    [
        # a sentence conditioned on the clinical picture hedges its finding across its copula
        (
            "Right lower lobe infiltrate. In the appropriate clinical setting this appearance is compatible with "
            "pneumonia.",
            "Pneumonia",
            1,
        ),
        (
            "Airspace disease. In the correct clinical setting, this is consistent with pneumonia.",
            "Pneumonia",
            1,
        ),
        (
            "Right lower lobe infiltrate. In the appropriate clinical setting this appearance is compatible with "
            "pneumonia.",
            "Infiltration",
            2,
        ),
        ("Findings are compatible with pneumonia.", "Pneumonia", 2),
        ("In the appropriate clinical setting, no pneumonia.", "Pneumonia", 0),
        # "fibronodular" names nodules
        ("Bilateral upper lobe fibronodular infiltrates.", "Nodule", 2),
        ("No fibronodular change.", "Nodule", 0),
    ],
)
def test_clinical_setting_hedge_and_fibronodular(text, finding, state):
    lab = label_reports(pd.DataFrame({"study_id": ["s0"], "text": [text]}), sections="whole").labels
    got = lab.loc[lab["finding"] == finding, "state"]
    assert got.tolist() == [state], (text, finding, got.tolist())
