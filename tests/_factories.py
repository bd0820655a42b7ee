"""Small long-format label and prediction tables that many test modules need, built one way.

Every table is seeded (``seed``/``rng``) and laid out as cxreval reads it: labels ``study_id, [patient_id,]
finding, source, state`` with state names, predictions ``study_id, model, finding, score``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def label_table(studies: int | Mapping[str, int] = 30, findings: Sequence[str] = ("Edema", "Effusion"), *,
                sources: Sequence[str] = ("CR", "Rep1", "Rep2"), states: Sequence[str] = STATES[:3],
                reference_states: Sequence[str] | None = None, studies_per_patient: int | None = 2,
                seed: int = 0) -> pd.DataFrame:
    """Each source's state of each finding on studies ``s0, s1, ...``, drawn uniformly from ``states``.

    ``studies`` is one count for every source or a count per source; the first source (the reference) draws
    from ``reference_states`` when given. Study ``s{i}`` belongs to patient ``p{i // studies_per_patient}``;
    ``studies_per_patient=None`` leaves out the ``patient_id`` column. Rows run source by source, study by
    study, finding by finding, one draw each.
    """
    rng = np.random.default_rng(seed)
    counts = studies if isinstance(studies, Mapping) else dict.fromkeys(sources, studies)
    choices = {src: np.array(reference_states if (reference_states is not None and k == 0) else states,
                             dtype=object) for k, src in enumerate(sources)}
    rows = []
    for src in sources:
        for i in range(counts[src]):
            for f in findings:
                row = {"study_id": f"s{i}", "finding": f, "source": src,
                       "state": choices[src][rng.integers(0, len(choices[src]))]}
                if studies_per_patient is not None:
                    row = {"study_id": row["study_id"], "patient_id": f"p{i // studies_per_patient}", **row}
                rows.append(row)
    return pd.DataFrame(rows)


def prediction_table(studies: int = 24, models: Sequence[str] = ("m1", "m2", "m3"),
                     findings: Sequence[str] = ("Edema", "Effusion"), *, seed: int = 1) -> pd.DataFrame:
    """Uniform [0, 1) scores of each model for each finding on studies ``s0, s1, ...`` (study by study, model
    by model, finding by finding)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"study_id": f"s{i}", "model": m, "finding": f, "score": float(rng.random())}
                         for i in range(studies) for m in models for f in findings])


def auc_inputs(n_models: int = 4, n_studies: int = 120, n_refs: int = 2, rng: int = 0,
               ties: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
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
            lab.append(pd.DataFrame({"study_id": studies, "patient_id": [f"p{p}" for p in pat], "finding": f,
                                     "source": f"R{r}", "state": st_}))
    pr = []
    for m in range(n_models):
        for j, f in enumerate(AUC_FINDINGS):
            sc = truth[j] * g.random() + g.normal(size=n_studies)
            pr.append(pd.DataFrame({"study_id": studies, "model": f"M{m}", "finding": f,
                                    "score": np.round(sc, 1) if ties else sc}))
    return pd.concat(pr, ignore_index=True), pd.concat(lab, ignore_index=True)
