"""Small long-format label and prediction tables that many test modules need, built one way.

Every table is seeded (``seed``/``rng``) and laid out as cxreval reads it: labels ``study_id, [patient_id,]
finding, source, state`` with state names, predictions ``study_id, model, finding, score``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd


class RecordedProgress:
    """A :class:`cxreval.progress.Progress` that records what it is told: ``tasks`` as ``(description, total)``,
    ``events`` as ``(task, n)`` or ``(task, "done")``."""

    def __init__(self):
        self.tasks, self.events = [], []

    def add(self, description, total=None):
        self.tasks.append((description, total))
        return len(self.tasks) - 1

    def advance(self, task, n=1):
        self.events.append((task, n))

    def done(self, task):
        self.events.append((task, "done"))


STATES = ("negative", "uncertain", "positive", "not_mentioned")
"""The four label-state names, in the order the factories draw them from."""

AUC_FINDINGS = ("Atelectasis", "Consolidation", "Effusion")
"""The findings of :func:`auc_inputs`."""


def label_table(
    studies: int | Mapping[str, int] = 30,
    findings: Sequence[str] = ("Edema", "Effusion"),
    *,
    sources: Sequence[str] = ("CR", "Rep1", "Rep2"),
    states: Sequence[str] = STATES[:3],
    reference_states: Sequence[str] | None = None,
    studies_per_patient: int | None = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """Each source's state of each finding on studies ``s0, s1, ...``, drawn uniformly from ``states``.

    ``studies`` is one count for every source or a count per source; the first source (the reference) draws
    from ``reference_states`` when given. Study ``s{i}`` belongs to patient ``p{i // studies_per_patient}``;
    ``studies_per_patient=None`` leaves out the ``patient_id`` column. Rows run source by source, study by
    study, finding by finding, one draw each.
    """
    rng = np.random.default_rng(seed)
    counts = studies if isinstance(studies, Mapping) else dict.fromkeys(sources, studies)
    choices = {
        src: np.array(reference_states if (reference_states is not None and k == 0) else states, dtype=object)
        for k, src in enumerate(sources)
    }
    rows = []
    for src in sources:
        for i in range(counts[src]):
            for f in findings:
                row = {
                    "study_id": f"s{i}",
                    "finding": f,
                    "source": src,
                    "state": choices[src][rng.integers(0, len(choices[src]))],
                }
                if studies_per_patient is not None:
                    row = {"study_id": row["study_id"], "patient_id": f"p{i // studies_per_patient}", **row}
                rows.append(row)
    return pd.DataFrame(rows)


def prediction_table(
    studies: int = 24,
    models: Sequence[str] = ("m1", "m2", "m3"),
    findings: Sequence[str] = ("Edema", "Effusion"),
    *,
    seed: int = 1,
) -> pd.DataFrame:
    """Uniform [0, 1) scores of each model for each finding on studies ``s0, s1, ...`` (study by study, model
    by model, finding by finding)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        [
            {"study_id": f"s{i}", "model": m, "finding": f, "score": float(rng.random())}
            for i in range(studies)
            for m in models
            for f in findings
        ]
    )


def auc_inputs(
    n_models: int = 4, n_studies: int = 120, n_refs: int = 2, rng: int = 0, ties: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(predictions, labels) of models ``M0...`` against references ``R0...`` on :data:`AUC_FINDINGS`: several
    studies per patient, labels that flip 15 % of a hidden truth and 8 % uncertain, scores that separate the
    truth by a model-specific margin (rounded to 0.1 when ``ties``)."""
    g = np.random.default_rng(rng)
    pat = g.integers(0, n_studies // 3, n_studies)
    studies = [f"s{i:04d}" for i in range(n_studies)]
    truth = g.random((len(AUC_FINDINGS), n_studies)) < 0.35
    lab = []
    for r in range(n_refs):
        for j, f in enumerate(AUC_FINDINGS):
            st_ = np.where(truth[j] ^ (g.random(n_studies) < 0.15), "positive", "negative").astype(object)
            st_[g.random(n_studies) < 0.08] = "uncertain"
            lab.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "patient_id": [f"p{p}" for p in pat],
                        "finding": f,
                        "source": f"R{r}",
                        "state": st_,
                    }
                )
            )
    pr = []
    for m in range(n_models):
        for j, f in enumerate(AUC_FINDINGS):
            sc = truth[j] * g.random() + g.normal(size=n_studies)
            pr.append(
                pd.DataFrame(
                    {
                        "study_id": studies,
                        "model": f"M{m}",
                        "finding": f,
                        "score": np.round(sc, 1) if ties else sc,
                    }
                )
            )
    return pd.concat(pr, ignore_index=True), pd.concat(lab, ignore_index=True)


def classify_and_rank_folders(
    root: Path, *, n_models: int, n_refs: int, n_resamples: int, n_studies: int = 120
) -> Path:
    """``root/auc`` and ``root/rank``: what `cxreval classify` and `cxreval rank` write for :func:`auc_inputs` (seed
    0), the result folders a report is built from; returns ``root``."""
    from cxreval.cli.main import main

    preds, labels = auc_inputs(n_models=n_models, n_studies=n_studies, n_refs=n_refs, rng=0)
    preds.to_csv(root / "preds.csv", index=False)
    labels.to_csv(root / "labels.csv", index=False)
    args = ["-p", str(root / "preds.csv"), "-l", str(root / "labels.csv"), "--n-resamples", str(n_resamples)]
    assert main(["classify", *args, "--seed", "0", "-o", str(root / "auc")]) == 0
    assert main(["rank", *args, "--seed", "0", "--min-models", "2", "-o", str(root / "rank")]) == 0
    return root


MIMIC_OBSERVATIONS: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Enlarged Cardiomediastinum",
    "Fracture",
    "Lung Lesion",
    "Lung Opacity",
    "No Finding",
    "Pleural Effusion",
    "Pleural Other",
    "Pneumonia",
    "Pneumothorax",
    "Support Devices",
)
"""The 14 observation columns of ``mimic-cxr-2.0.0-chexpert.csv.gz`` / ``-negbio``, in the published order."""

MIMIC_IMAGES: tuple[tuple[str, str, str, str, str], ...] = (
    # dicom_id, study_id, subject_id, split, ViewPosition
    ("02aa804e-bde0afdd-112c0b34-7bc16630-4e384014", "50414267", "10000032", "train", "PA"),
    ("174413ec-4ec4c1f7-34ea26b7-c5f994f8-79ef1962", "50414267", "10000032", "train", "LATERAL"),
    ("2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab", "53189527", "10000032", "train", "AP"),
    ("68b5c4b1-227d0485-9cc38c3f-7b84ab51-4b472714", "57375967", "10000764", "validate", "PA"),
    ("ea030e7a-2e3b1346-bc518786-7a8fd698-f673b44c", "57375967", "10000764", "validate", "LATERAL"),
    ("096052b7-d256dc40-453a102b-fa7d01c6-1b22c6b4", "55555555", "11000011", "test", "LL"),
    ("8959e402-2175d68d-edba5a6c-baab51c3-9359f700", "56666666", "11000011", "test", "AP"),
)
"""The images of the small MIMIC-CXR folder of :func:`write_mimic_folder`: 3 patients, 5 studies."""

MIMIC_REPORT = """                                 FINAL REPORT
 EXAMINATION:  CHEST (PA AND LAT)

 INDICATION:  ___M with cough, evaluate for pneumonia

 TECHNIQUE:  Chest PA and lateral

 COMPARISON:  None.

 FINDINGS:

 There is a small left pleural effusion.  No pneumothorax is seen.  The heart
 size is normal.

 IMPRESSION:

 Small left pleural effusion.  No pneumonia.
"""
"""A report in MIMIC-CXR's layout (headers with colons; INDICATION mentions pneumonia, which is not labelled)."""


def write_mimic_folder(folder: Path, *, test_set: bool = True, reports: bool = True) -> Path:
    """Write a small MIMIC-CXR-JPG folder in the published formats (gzipped CSVs, the radiologist test set, the
    reports zip) into ``folder``; return it.

    Labels (CheXpert labeler, NegBio) of study ``50414267``: Pleural Effusion 1.0 / 1.0, Pneumonia -1.0 / 0.0,
    Cardiomegaly 0.0 / blank, Pneumothorax 0.0 / 0.0; the other studies have No Finding 1.0 in both, except
    ``57375967`` (Edema 1.0 / -1.0) and ``56666666`` (Atelectasis -1.0 / 1.0). The test set labels
    ``55555555`` and ``56666666`` (Airspace Opacity 1.0 on ``56666666``)."""
    folder.mkdir(parents=True, exist_ok=True)
    studies = list(dict.fromkeys((s, p) for _, s, p, _, _ in MIMIC_IMAGES))
    cells = {
        "mimic_chexpert": {
            "50414267": {
                "Pleural Effusion": "1.0",
                "Pneumonia": "-1.0",
                "Cardiomegaly": "0.0",
                "Pneumothorax": "0.0",
            },
            "57375967": {"Edema": "1.0"},
            "56666666": {"Atelectasis": "-1.0"},
        },
        "mimic_negbio": {
            "50414267": {"Pleural Effusion": "1.0", "Pneumonia": "0.0", "Pneumothorax": "0.0"},
            "57375967": {"Edema": "-1.0"},
            "56666666": {"Atelectasis": "1.0"},
        },
    }
    for source, name in (
        ("mimic_chexpert", "mimic-cxr-2.0.0-chexpert.csv.gz"),
        ("mimic_negbio", "mimic-cxr-2.0.0-negbio.csv.gz"),
    ):
        rows = []
        for s, p in studies:
            given = cells[source].get(s, {"No Finding": "1.0"})
            rows.append({"subject_id": p, "study_id": s, **{o: given.get(o, "") for o in MIMIC_OBSERVATIONS}})
        pd.DataFrame(rows, columns=["subject_id", "study_id", *MIMIC_OBSERVATIONS]).to_csv(
            folder / name, index=False
        )
    img = pd.DataFrame(MIMIC_IMAGES, columns=["dicom_id", "study_id", "subject_id", "split", "ViewPosition"])
    img[["dicom_id", "study_id", "subject_id", "split"]].to_csv(
        folder / "mimic-cxr-2.0.0-split.csv.gz", index=False
    )
    meta = pd.DataFrame(
        {
            "dicom_id": img["dicom_id"],
            "subject_id": img["subject_id"],
            "study_id": img["study_id"],
            "PerformedProcedureStepDescription": "CHEST (PA AND LAT)",
            "ViewPosition": img["ViewPosition"],
            "Rows": 3056,
            "Columns": 2544,
            "StudyDate": 21800506,
            "StudyTime": 213014.531,
            "ProcedureCodeSequence_CodeMeaning": "CHEST (PA AND LAT)",
            "ViewCodeSequence_CodeMeaning": "postero-anterior",
            "PatientOrientationCodeSequence_CodeMeaning": "Erect",
        }
    )
    meta.to_csv(folder / "mimic-cxr-2.0.0-metadata.csv.gz", index=False)
    if test_set:
        cols = ["study_id", *("Airspace Opacity" if o == "Lung Opacity" else o for o in MIMIC_OBSERVATIONS)]
        rows = [
            {"study_id": "55555555", "No Finding": "1.0"},
            {
                "study_id": "56666666",
                "Airspace Opacity": "1.0",
                "Atelectasis": "0.0",
                "Support Devices": "1.0",
            },
        ]
        pd.DataFrame(rows, columns=cols).to_csv(folder / "mimic-cxr-2.1.0-test-set-labeled.csv", index=False)
    if reports:
        import zipfile

        with zipfile.ZipFile(folder / "mimic-cxr-reports.zip", "w") as zf:
            for s, p in studies:
                text = (
                    MIMIC_REPORT
                    if s == "50414267"
                    else " FINAL REPORT\n FINDINGS:  Normal chest.\n IMPRESSION:  No acute process.\n"
                )
                zf.writestr(f"files/p{p[:2]}/p{p}/s{s}.txt", text)
    return folder


def vandyke_pilot(
    path: Path, *, modalities: tuple[str, str] = ("T1", "T2"), extra_cases: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Van Dyke's ratings (``../shared/data/mrmc/vandyke.csv``) as a reader-study pilot, and its truth as labels of
    source ``truth``, plus ``extra_cases`` unread labelled studies (``n0000``...; every third one positive).

    The ratings table is ``reader, modality, study_id, finding, rating`` (``cxreval reader export``'s), the study
    ids ``c0001``..., treatments 1 and 2 named ``modalities``; the labels are validated."""
    from cxreval.labels import validate_label_table

    d = pd.read_csv(path)
    ratings = pd.DataFrame(
        {
            "reader": "R" + d["reader"].astype(str),
            "modality": d["treatment"].map({1: modalities[0], 2: modalities[1]}),
            "study_id": "c" + d["case"].astype(str).str.zfill(4),
            "finding": "Effusion",
            "rating": d["rating"].astype(float),
        }
    )
    cases = d.drop_duplicates("case")
    ids = list("c" + cases["case"].astype(str).str.zfill(4)) + [f"n{k:04d}" for k in range(extra_cases)]
    truth = list(cases["truth"] == 1) + [k % 3 == 0 for k in range(extra_cases)]
    labels = pd.DataFrame(
        {
            "study_id": ids,
            "patient_id": ["p" + i for i in ids],
            "finding": "Effusion",
            "source": "truth",
            "state": np.where(truth, "positive", "negative"),
        }
    )
    return ratings, validate_label_table(labels)


def subgroup_folder(folder: Path, *, n_models: int = 3, n_studies: int = 1000, n_resamples: int = 40) -> Path:
    """What ``cxreval subgroups`` writes for ``n_models`` models of one simulated set (a model without a gap; a
    labeller that misses more findings in group B) under ``truth`` and ``labeller``, by ``group`` and a second
    attribute ``site``, with calibration: two references, so the verdicts compare them."""
    from cxreval.options import Resampling
    from cxreval.subgroups import evaluate_subgroups, simulate_subgroup_set

    sim = simulate_subgroup_set(n_studies, sensitivity=(0.95, 0.5), prevalence=0.4, rng=0)
    rng = np.random.default_rng(1)
    preds = pd.concat(
        [
            sim.predictions.assign(
                model=f"model_{k}",
                score=np.clip(sim.predictions["score"] + rng.normal(0, 0.05 * k, n_studies), 0, 1),
            )
            for k in range(n_models)
        ],
        ignore_index=True,
    )
    meta = sim.metadata.assign(site=np.where(np.arange(n_studies) % 3 == 0, "X", "Y"))
    folder.mkdir(parents=True, exist_ok=True)
    evaluate_subgroups(
        preds, sim.labels, meta, by=["group", "site"], resampling=Resampling(n_resamples=n_resamples, rng=0)
    ).save(folder)
    return folder
