"""Hand-written sentences with their expected state: negation scope, uncertainty, chronic/positive and normal
phrasing, de-identification tokens, section headers, aggregation."""

from __future__ import annotations

import pandas as pd
import pytest

from cxreval.labeller import label_reports

P, U, N, M = "positive", "uncertain", "negative", "not_mentioned"

# (report text, finding, expected report-level state) -- ChestX-ray14 vocabulary, source 'report'
CASES: list[tuple[str, str, str]] = [
    # --- negation and its scope -------------------------------------------------------------------
    ("No pleural effusion.", "Effusion", N),
    ("No pneumothorax, effusion or consolidation.", "Pneumothorax", N),
    ("No pneumothorax, effusion or consolidation.", "Effusion", N),
    ("No pneumothorax, effusion or consolidation.", "Consolidation", N),
    ("No focal airspace consolidation, pleural effusion, or pneumothorax.", "Pneumothorax", N),
    ("There is no evidence of pneumothorax.", "Pneumothorax", N),
    ("Lungs are clear without effusion.", "Effusion", N),
    ("The lungs are free of focal infiltrate.", "Infiltration", N),
    ("Negative for pneumothorax.", "Pneumothorax", N),
    ("Previously seen left effusion has resolved.", "Effusion", N),
    ("Interval resolution of right lower lobe pneumonia.", "Pneumonia", N),
    ("The pneumothorax has resolved.", "Pneumothorax", N),
    ("Pneumothorax is no longer seen.", "Pneumothorax", N),
    ("No new infiltrate.", "Infiltration", N),
    ("No new focal consolidation.", "Consolidation", N),
    ("Pneumothorax is not seen.", "Pneumothorax", N),
    ("Pleural effusion is not identified.", "Effusion", N),
    ("Neither effusion nor pneumothorax.", "Pneumothorax", N),
    ("No pneumothorax. Small left pleural effusion.", "Effusion", P),
    ("No pneumothorax; small left pleural effusion.", "Effusion", P),
    ("No pneumothorax, but there is a small left effusion.", "Effusion", P),
    ("No effusion however there is left basilar atelectasis.", "Atelectasis", P),
    ("There is no pneumothorax. There is a small effusion.", "Effusion", P),
    ("No acute disease; stable cardiomegaly.", "Cardiomegaly", P),
    ("No change in the right lower lobe atelectasis.", "Atelectasis", P),
    ("No significant change in the left pleural effusion.", "Effusion", P),
    ("No interval change in mild cardiomegaly.", "Cardiomegaly", P),
    ("Nodules are not definitely seen on this study.", "Nodule", N),
    ("No XXXX of a pleural effusion.", "Effusion", N),
    ("There are no XXXX of a pleural effusion.", "Effusion", N),
    ("No subcutaneous emphysema.", "Emphysema", M),
    ("Subcutaneous emphysema in the right chest wall.", "Emphysema", M),
    ("Small pericardial effusion.", "Effusion", M),
    # --- uncertainty ---------------------------------------------------------------------------------
    ("Pneumonia cannot be excluded.", "Pneumonia", U),
    ("Cannot exclude a small left effusion.", "Effusion", U),
    ("A small pneumothorax is not excluded.", "Pneumothorax", U),
    ("Infection cannot be ruled out; atelectasis not ruled out.", "Atelectasis", U),
    ("Opacity may represent atelectasis.", "Atelectasis", U),
    ("Findings likely represent pneumonia.", "Pneumonia", U),
    ("Likely small bilateral effusions.", "Effusion", U),
    ("Possible right lower lobe pneumonia.", "Pneumonia", U),
    ("Questionable small right pneumothorax.", "Pneumothorax", U),
    ("Left basilar opacity, atelectasis versus pneumonia.", "Atelectasis", U),
    ("Left basilar opacity, atelectasis versus pneumonia.", "Pneumonia", U),
    ("Left basilar opacity, atelectasis vs. pneumonia.", "Pneumonia", U),
    ("Findings suspicious for pneumonia.", "Pneumonia", U),
    ("Concerning for early pneumonia.", "Pneumonia", U),
    ("Opacity suggestive of infiltrate.", "Infiltration", U),
    ("Evaluate for pneumonia.", "Pneumonia", U),
    ("? pneumonia", "Pneumonia", U),
    ("Rule out pneumothorax.", "Pneumothorax", U),
    ("No definite pleural effusion.", "Effusion", U),
    ("Pneumonia is a consideration.", "Pneumonia", U),
    ("Pneumothorax is suspected.", "Pneumothorax", U),
    ("Borderline cardiomegaly.", "Cardiomegaly", U),
    ("The heart is borderline enlarged.", "Cardiomegaly", U),
    ("Heart size is borderline.", "Cardiomegaly", U),
    ("Opacity which may be due to atelectasis.", "Atelectasis", U),
    # --- chronic / positive phrasing ----------------------------------------------------------------
    ("Unchanged cardiomegaly.", "Cardiomegaly", P),
    ("Stable small left pleural effusion.", "Effusion", P),
    ("Mild cardiomegaly.", "Cardiomegaly", P),
    ("The heart is mildly enlarged.", "Cardiomegaly", P),
    ("The cardiac silhouette is enlarged.", "Cardiomegaly", P),
    ("Heart size remains slightly large.", "Cardiomegaly", P),
    ("Marked interval increase in heart size.", "Cardiomegaly", P),
    ("Enlarged cardiac silhouette.", "Cardiomegaly", P),
    ("Persistent right upper lobe consolidation.", "Consolidation", P),
    ("Chronic interstitial pulmonary fibrosis.", "Fibrosis", P),
    ("Biapical pleural thickening.", "Pleural Thickening", P),
    ("Large hiatal hernia.", "Hernia", P),
    ("Hyperinflation consistent with emphysema.", "Emphysema", P),
    ("Right upper lobe mass.", "Mass", P),
    ("A 1 cm nodule in the left lower lobe.", "Nodule", P),
    ("Small right apical pneumothorax.", "Pneumothorax", P),
    ("Bibasilar subsegmental atelectasis.", "Atelectasis", P),
    ("Plate-like atelectasis at the left base.", "Atelectasis", P),
    ("Platelike atelectasis at the left base.", "Atelectasis", P),
    ("Mild pulmonary edema.", "Edema", P),
    ("Right lower lobe infiltrate.", "Infiltration", P),
    ("Findings consistent with pneumonia.", "Pneumonia", P),
    ("Large right hydropneumothorax.", "Pneumothorax", P),
    # --- normal phrasing ------------------------------------------------------------------------------
    ("Heart size is normal.", "Cardiomegaly", N),
    ("Normal heart size.", "Cardiomegaly", N),
    ("The heart is normal in size.", "Cardiomegaly", N),
    ("Heart size within normal limits.", "Cardiomegaly", N),
    ("The cardiac silhouette and mediastinum size are within normal limits.", "Cardiomegaly", N),
    ("The heart is not enlarged.", "Cardiomegaly", N),
    ("Heart and lungs are normal.", "Cardiomegaly", N),
    ("Lungs are clear.", "Effusion", M),
    ("Normal chest x-XXXX.", "Pneumonia", M),
    # --- de-identification tokens ---------------------------------------------------------------------
    ("XXXX XXXX pneumothorax.", "Pneumothorax", P),
    ("Stable XXXX left pleural effusion XXXX.", "Effusion", P),
    ("XXXX opacity, XXXX atelectasis versus scarring.", "Atelectasis", U),
    ("Heart size XXXX mildly enlarged.", "Cardiomegaly", P),
    # --- case and spacing -----------------------------------------------------------------------------
    ("NO   PLEURAL    EFFUSION.", "Effusion", N),
    ("Small Left PLEURAL effusion.", "Effusion", P),
    ("no\npneumothorax", "Pneumothorax", N),
]


def _label(text: str, sections: str = "whole") -> pd.DataFrame:
    t = pd.DataFrame({"study_id": ["s"], "text": [text]})
    return label_reports(t, sections=sections).labels


@pytest.mark.parametrize(("text", "finding", "expected"), CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_sentence_state(text, finding, expected):
    lab = _label(text)
    st = lab.loc[lab["finding"] == finding, "state"].iloc[0]
    assert {-1: M, 0: N, 1: U, 2: P}[int(st)] == expected, text


def test_at_least_80_sentences():
    assert len(CASES) >= 80 and len({c[0] for c in CASES}) >= 80


# --- aggregation ---------------------------------------------------------------------------------------
AGG = [
    ("No effusion. Small right effusion.", P),  # positive > negative
    ("Possible effusion. No effusion on the left.", U),  # uncertain > negative
    ("Possible effusion. Large left effusion.", P),  # positive > uncertain
    ("No effusion. No effusion.", N),
    ("The lungs are clear.", M),  # never mentioned
]


@pytest.mark.parametrize(("text", "expected"), AGG)
def test_aggregation_positive_over_uncertain_over_negative(text, expected):
    lab = _label(text)
    assert {-1: M, 0: N, 1: U, 2: P}[int(lab.loc[lab.finding == "Effusion", "state"].iloc[0])] == expected


# --- section headers in odd case and spacing -------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "FINDINGS: Small left effusion.\nIMPRESSION: No pneumothorax.",
        "findings : Small left effusion.\n  impression:No pneumothorax.",
        "Findings - Small left effusion.\nImpression -- No pneumothorax.",
        "F I N D I N G S: Small left effusion.\nI M P R E S S I O N: No pneumothorax.",
        "FINDINGS\nSmall left effusion.\n\nIMPRESSION\nNo pneumothorax.",
        "INDICATION: cough\nFINDINGS:   Small left effusion.\nCONCLUSION: No pneumothorax.",
    ],
)
def test_section_headers(text):
    lab = _label(text, sections="findings,impression,whole").set_index(["source", "finding"])["state"]
    assert lab["report_findings", "Effusion"] == 2 and lab["report_findings", "Pneumothorax"] == -1
    assert lab["report_impression", "Pneumothorax"] == 0 and lab["report_impression", "Effusion"] == -1
    assert lab["report", "Effusion"] == 2 and lab["report", "Pneumothorax"] == 0


def test_chexpert_no_finding_rule():
    t = pd.DataFrame(
        {
            "study_id": ["a", "b", "c", "d"],
            "text": [
                "Lungs are clear. Left PICC line in place.",
                "Possible pneumonia.",
                "No effusion or pneumothorax.",
                "Mild cardiomegaly.",
            ],
        }
    )
    lab = label_reports(t, sections="whole", vocabulary="chexpert").labels
    nf = lab[lab.finding == "No Finding"].set_index("study_id")["state"].astype(int).to_dict()
    assert nf == {"a": 2, "b": 0, "c": 2, "d": 0}
    sd = lab[(lab.finding == "Support Devices") & (lab.study_id == "a")]["state"].iloc[0]
    assert sd == 2


# --- inline headers in any case, list-style negation ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "findings: no effusion. impression: small pneumothorax.",
            [("findings", "no effusion."), ("impression", "small pneumothorax.")],
        ),
        (
            "Findings:Heart normal.Impression:Cardiomegaly.",
            [("findings", "Heart normal."), ("impression", "Cardiomegaly.")],
        ),
        (
            "Heart size is normal. Impression: no acute process",
            [("preamble", "Heart size is normal."), ("impression", "no acute process")],
        ),
        (
            "FINDINGS: Clear.\nIMPRESSION: Summary of findings: no effusion.",
            [("findings", "Clear."), ("impression", "Summary of findings: no effusion.")],
        ),
    ],
)
def test_inline_headers_in_any_case(text, expected):
    from cxreval.labeller._sections import split_sections

    assert [(s.name, text[s.start : s.end].strip()) for s in split_sections(text)] == expected


@pytest.mark.parametrize(
    "sentence, finding, state",
    [
        ("Pneumothorax: none.", "Pneumothorax", 0),
        ("PLEURAL EFFUSION: NEGATIVE", "Effusion", 0),
        ("Nodule: not seen.", "Nodule", 0),
        ("Effusion: small left.", "Effusion", 2),
        ("Effusion: no change.", "Effusion", 2),
    ],
)
def test_list_style_findings_with_colon(sentence, finding, state):
    from cxreval.labeller import load_rules
    from cxreval.labeller._engine import Engine

    eng = Engine(load_rules())
    m = eng.run([sentence])
    got = {eng.findings[f]: int(s) for f, s in zip(m.finding, m.state)}
    assert got[finding] == state


@pytest.mark.parametrize(
    "text",
    [
        "FINDINGS\r\nSmall effusion.\r\n\r\nIMPRESSION\r\nNo pneumothorax.\r\n",
        "FINDINGS\rSmall effusion.\rIMPRESSION\rNo pneumothorax.",
        "FINDINGS:\r\nSmall effusion.\r\nIMPRESSION:\r\nNo pneumothorax.",
    ],
)
def test_windows_and_mac_line_ends(text):
    lab = label_reports(pd.DataFrame({"study_id": ["a"], "text": [text]})).labels
    lab = lab.set_index(["source", "finding"])["state"]
    assert lab["report_findings", "Effusion"] == 2 and lab["report_impression", "Pneumothorax"] == 0
    assert lab["report", "Effusion"] == 2


def test_blank_line_with_lone_cr_ends_the_negation_scope():
    lab = label_reports(
        pd.DataFrame({"study_id": ["a"], "text": ["No effusion\r\rPneumothorax"]}), sections="whole"
    ).labels
    assert lab.set_index("finding")["state"][["Effusion", "Pneumothorax"]].tolist() == [0, 2]


def test_spans_stay_exact_after_characters_whose_lower_case_is_longer():
    text = "Dr \u0130\u0130\u0130 notes: small effusion. No pneumothorax."
    m = label_reports(pd.DataFrame({"study_id": ["a"], "text": [text]}), sections="whole").mentions
    assert [text[a:b] for a, b in zip(m.start, m.end)] == m.phrase.tolist() == ["effusion", "pneumothorax"]
    assert m.state.tolist() == ["positive", "negative"]
