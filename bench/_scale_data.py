"""Synthetic MIMIC-CXR-like inputs of ``cxreval classify`` / ``rank`` at any size.

Studies are clustered in patients as in MIMIC-CXR (227,835 studies of 65,379 patients: about 3.5 studies per
patient, a geometric-like count); ``n_models`` models score every study for the 14 CheXpert findings (spelt as
in MIMIC-CXR's ``mimic-cxr-2.0.0-chexpert.csv``, so ``Pleural Effusion`` is canonicalised to ``Effusion``),
and two report labelers (``chexpert``, ``negbio``) label every (study, finding) with a state name
(``positive``, ``negative``, ``uncertain``, ``not_mentioned``; about 1 % blank = missing).

Files are written model by model (CSV with :mod:`pyarrow.csv`, Parquet with one row group per model), so
writing 228k studies × 20 models × 14 findings (63.8 M prediction rows, ~2.9 GB of CSV) needs ~0.5 GB.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     inp = write_scale_inputs(d, 100, n_models=2, n_findings=3, seed=0)
...     (inp.n_prediction_rows, inp.n_label_rows)
(600, 600)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

__all__ = ["ScaleInputs", "MIMIC_FINDINGS", "SOURCES", "patient_sizes", "write_scale_inputs"]

MIMIC_FINDINGS: tuple[str, ...] = (
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
"""The 14 CheXpert findings as MIMIC-CXR's label file spells them."""

SOURCES: tuple[str, ...] = ("chexpert", "negbio")
STUDIES_PER_PATIENT = 3.5
_CSV_OPTIONS = pacsv.WriteOptions(quoting_style="none")
_STATE = np.array(["negative", "uncertain", "positive", "not_mentioned", ""], dtype=object)


@dataclass(frozen=True)
class ScaleInputs:
    """Paths and sizes of the written inputs."""

    predictions: Path
    labels: Path
    n_studies: int
    n_patients: int
    n_models: int
    n_findings: int
    n_prediction_rows: int
    n_label_rows: int


def patient_sizes(n_studies: int, *, rng: object = None) -> np.ndarray:
    """Studies per patient: geometric counts (mean :data:`STUDIES_PER_PATIENT`) summing to ``n_studies``."""
    gen = np.random.default_rng(rng)  # type: ignore[arg-type]
    sizes = gen.geometric(1.0 / STUDIES_PER_PATIENT, size=int(n_studies / STUDIES_PER_PATIENT * 1.2) + 16)
    while sizes.sum() < n_studies:
        sizes = np.concatenate([sizes, gen.geometric(1.0 / STUDIES_PER_PATIENT, size=len(sizes))])
    cut = int(np.searchsorted(np.cumsum(sizes), n_studies))
    sizes = sizes[: cut + 1].copy()
    sizes[-1] -= int(sizes.sum()) - n_studies
    return sizes[sizes > 0]


def write_scale_inputs(
    folder: str | Path,
    n_studies: int,
    *,
    n_models: int = 20,
    n_findings: int = 14,
    seed: int = 0,
    fmt: str = "csv",
) -> ScaleInputs:
    """Write ``predictions.<fmt>`` (long: study_id, model, finding, score) and ``labels.<fmt>`` (long: study_id,
    patient_id, source, finding, state; two sources) into ``folder``.

    Parameters
    ----------
    folder : path
        Created if absent.
    n_studies : int
    n_models, n_findings : int, default 20, 14
        ``n_findings <= 14`` (the first of :data:`MIMIC_FINDINGS`).
    seed : int
        Seeds every random choice (the same arguments give the same files).
    fmt : {'csv', 'parquet'}

    Returns
    -------
    ScaleInputs
    """
    if fmt not in ("csv", "parquet"):
        raise ValueError(f"fmt must be 'csv' or 'parquet'; got {fmt!r}.")
    if not 1 <= n_findings <= len(MIMIC_FINDINGS):
        raise ValueError(f"n_findings must be in 1..{len(MIMIC_FINDINGS)}; got {n_findings}.")
    rng = np.random.default_rng(seed)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    sizes = patient_sizes(n_studies, rng=rng)
    n_pat = len(sizes)
    patient_of = np.repeat(np.arange(n_pat), sizes)  # study i (in id order) -> patient
    # file order: studies shuffled (ids are not sorted in the files), findings consecutive per study
    order = rng.permutation(n_studies)
    study_ids = pa.array(np.char.add("s", (50_000_000 + order).astype(str)).astype(object), pa.string())
    patient_ids = pa.array(
        np.char.add("p", (10_000_000 + patient_of[order]).astype(str)).astype(object), pa.string()
    )
    findings = MIMIC_FINDINGS[:n_findings]
    prevalence = np.linspace(0.03, 0.35, n_findings)[rng.permutation(n_findings)]
    truth = rng.random((n_studies, n_findings)) < prevalence  # in file order
    study_col = pa.array(np.repeat(np.arange(n_studies), n_findings))
    finding_col = pa.array(np.tile(np.arange(n_findings), n_studies))
    f_dict = pa.DictionaryArray.from_arrays(finding_col, pa.array(list(findings)))

    def take(arr: pa.Array) -> pa.Array:
        return arr.take(study_col)

    # labels: two noisy report labelers over the same truth
    lab_tables = []
    for k, src in enumerate(SOURCES):
        u = rng.random((n_studies, n_findings))
        state = np.where(
            truth,
            np.select([u < 0.78 - 0.05 * k, u < 0.90], [2, 1], 3),
            np.select([u < 0.30 + 0.05 * k, u < 0.33 + 0.05 * k, u < 0.35 + 0.05 * k], [0, 1, 2], 3),
        )
        state[rng.random(state.shape) < 0.01] = 4  # blank = missing label
        lab_tables.append(
            pa.table(
                {
                    "study_id": take(study_ids),
                    "patient_id": take(patient_ids),
                    "source": pa.DictionaryArray.from_arrays(
                        pa.array(np.zeros(n_studies * n_findings, dtype=np.int32)), pa.array([src])
                    ),
                    "finding": f_dict,
                    "state": pa.array(_STATE[state.ravel()], pa.string()),
                }
            )
        )
    labels = pa.concat_tables(lab_tables)
    lab_path = out / f"labels.{fmt}"
    pred_path = out / f"predictions.{fmt}"
    if fmt == "csv":
        pacsv.write_csv(_plain(labels), lab_path, _CSV_OPTIONS)
    else:
        pq.write_table(labels, lab_path)
    del labels, lab_tables
    # predictions: one block per model (a row group in Parquet)
    writer = None
    sid = take(study_ids)
    try:
        for m in range(n_models):
            skill = 0.6 + 1.6 * rng.random()
            z = skill * truth + rng.standard_normal(truth.shape)
            score = np.round(1.0 / (1.0 + np.exp(-(z - 1.0))), 5).ravel()
            block = pa.table(
                {
                    "study_id": sid,
                    "model": pa.DictionaryArray.from_arrays(
                        pa.array(np.zeros(len(score), dtype=np.int32)), pa.array([f"model_{m:02d}"])
                    ),
                    "finding": f_dict,
                    "score": pa.array(score),
                }
            )
            if writer is None:
                writer = (
                    pacsv.CSVWriter(pred_path, _plain(block).schema, write_options=_CSV_OPTIONS)
                    if fmt == "csv"
                    else pq.ParquetWriter(pred_path, block.schema)
                )
            writer.write_table(_plain(block) if fmt == "csv" else block)
    finally:
        if writer is not None:
            writer.close()
    return ScaleInputs(
        pred_path,
        lab_path,
        n_studies,
        n_pat,
        n_models,
        n_findings,
        n_studies * n_models * n_findings,
        n_studies * n_findings * len(SOURCES),
    )


def _plain(t: pa.Table) -> pa.Table:
    """Dictionary columns as plain strings (the CSV writer's input)."""
    cols = [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in t.columns]
    return pa.table(cols, names=t.column_names)


if __name__ == "__main__":  # python bench/_scale_data.py FOLDER N_STUDIES [csv|parquet]
    import sys

    res = write_scale_inputs(sys.argv[1], int(sys.argv[2]), fmt=sys.argv[3] if len(sys.argv) > 3 else "csv")
    print(res)
