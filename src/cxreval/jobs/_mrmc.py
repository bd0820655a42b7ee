"""The job of ``cxreval mrmc``: a reader study analysed per finding under every named reference, with the analyses
of :mod:`cxreval.mrmc`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .._typing import RNGLike, Studies
from .._validation import check_choice, check_confidence_level, check_positive_int, normalize_rng
from ..exceptions import CxrevalError, InvalidParameterError, SchemaError
from ..mrmc import dbm_analysis, labels_to_ratings, model_vs_readers, or_analysis
from ..mrmc._fom import COVARIANCE_METHODS, CovarianceMethod
from ..mrmc._operating_points import reader_operating_points
from ..mrmc._ratings import MODALITY, READER, ReaderArrays, read_ratings, reader_arrays, validate_ratings
from ..mrmc._reader_weights import READER_WEIGHTS
from ..mrmc._references import reference_truths
from ..mrmc._result import ReaderStudyResult
from ..schema import FINDING, MODEL, PATIENT_ID, SCORE, SOURCE, STUDY_ID

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["evaluate_reader_study", "evaluate_reader_study_files"]

_STUDY_DESIGNS: tuple[str, ...] = ("common", "each")
"""``common``: every reference on the studies all of them label (a change of verdict is the reference's, not the
cases'); ``each``: every reference on its own studies."""

_FUNC = "evaluate_reader_study"


def _is_binary(values: np.ndarray) -> bool:
    v = values[~np.isnan(values)]
    return bool(v.size) and bool(np.isin(v, (0.0, 1.0)).all())


def _prefix(frame: pd.DataFrame, **cols: object) -> pd.DataFrame:
    """``frame`` with constant columns ``cols`` in front."""
    out = frame.copy()
    for i, (k, v) in enumerate(cols.items()):
        out.insert(i, k, v)
    return out


@dataclass(frozen=True)
class _Panel:
    """The readings of one finding under one reference, the analyses' options, and where their rows go."""

    arr: ReaderArrays
    ref: str
    finding: str
    sink: Callable[..., None]
    covariance: CovarianceMethod
    level: float

    def add(self, name: str, frame: pd.DataFrame, **cols: object) -> None:
        """Rows of table ``name``, keyed by the reference, the finding and ``cols``."""
        self.sink(name, frame, reference=self.ref, finding=self.finding, **cols)


def _cases(
    truths: pd.DataFrame,
    ratings: pd.DataFrame,
    finding: str,
    references: Sequence[str],
    studies: str,
    scored: set[str] | None,
) -> dict[str, list[str]]:
    """The studies each reference is analysed on for one finding."""
    read = set(ratings.loc[ratings[FINDING] == finding, STUDY_ID])
    if scored is not None:
        read &= scored
    t = truths[truths[FINDING] == finding]
    own = {r: read & set(t.loc[t[SOURCE] == r, STUDY_ID]) for r in references}
    if studies == "common":
        common = set.intersection(*own.values()) if own else set()
        return {r: sorted(common) for r in references}
    return {r: sorted(s) for r, s in own.items()}


def evaluate_reader_study(
    ratings: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    references: Sequence[str],
    predictions: pd.DataFrame | None = None,
    findings: Sequence[str] | None = None,
    studies: Studies = "common",
    covariance: CovarianceMethod = "jackknife",
    margin: float = 0.05,
    latent_sources: Sequence[str] | None = None,
    label_policy: str = "exclude",
    scale: tuple[float, float] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    reader_weights: str = "equal",
    rng: RNGLike = None,
) -> ReaderStudyResult:
    """Analyse a multi-reader multi-case study per finding, under every reference, with a model beside the readers.

    For each finding and each reference (a label source, or ``'latent'``), the cases are the studies read whose
    truth the reference gives (``studies='common'``: those every reference gives, so that a verdict that changes
    with the reference is the reference's doing, not the cases'). Then:

    - every reader's empirical AUC per modality;
    - with two or more modalities, the Obuchowski–Rockette analysis (random readers and cases with Hillis's
      denominator degrees of freedom; fixed readers; fixed cases) with the ``covariance`` estimator, and the
      Dorfman–Berbaum–Metz pseudovalue analysis;
    - with ``predictions``, each model against the panel of readers of each modality (the model fixed, the
      readers random: the model's AUC minus the readers' mean AUC, with its CI), and, where the readers give
      binary calls, their operating points on the model's ROC curve: each reader's sensitivity and
      specificity, how many readers lie below the curve, the model's sensitivity at each reader's
      specificity (paired patient bootstrap) and a non-inferiority test at ``margin``.

    A reader is never judged against itself: a reference that is also a reader of the study leaves that reader
    out of the analyses under it.

    Parameters
    ----------
    ratings : DataFrame
        The ratings table (``reader, modality, study_id, finding, rating``; :func:`~cxreval.mrmc.validate_ratings`). Readers
        who gave labels rather than ratings enter through :func:`~cxreval.mrmc.labels_to_ratings`.
    labels : DataFrame
        A validated long label table holding the references.
    references : sequence of str
        The references, each a source of ``labels`` or ``'latent'``.
    predictions : DataFrame, optional
        A long prediction table (``study_id, model, finding, score``): the models compared with the readers.
    findings : sequence of str, optional
        Default: every finding of ``ratings``.
    studies : {'common', 'each'}, default='common'
    covariance : {'jackknife', 'delong', 'unbiased'}, default='jackknife'
        The OR covariance estimator (jackknife makes OR-RRRC equal to DBM-RRRC).
    reader_weights : {'equal', 'case_pairs'}, default='equal'
        How the OR analysis averages readers who read different numbers of cases (:func:`~cxreval.mrmc.or_analysis`); the DBM
        rows always weight readers equally.
    margin : float, default=0.05
        The non-inferiority margin on the AUC and on sensitivity at matched specificity.
    latent_sources : sequence of str, optional
        The label sources the ``'latent'`` reference is fitted on (three or more, none of them a reader of the
        study).
    label_policy : {'exclude', 'zeros', 'ones'}, default='exclude'
        What an uncertain reference label becomes.
    scale : (float, float), optional
        The rating scale's lowest and highest value; a rating outside it is refused.
    n_resamples : int, default=1000
        Patient-bootstrap replicates of the operating-point intervals.
    confidence_level : float, default=0.95
    rng : None, int or numpy.random.Generator, default=None

    Returns
    -------
    res : ReaderStudyResult
    """
    import pandas as pd

    check_choice(studies, _STUDY_DESIGNS, name="studies", func=_FUNC)
    check_choice(covariance, COVARIANCE_METHODS, name="covariance", func=_FUNC)
    check_choice(reader_weights, READER_WEIGHTS, name="reader_weights", func=_FUNC)
    level = check_confidence_level(confidence_level, func=_FUNC)
    n_res = check_positive_int(n_resamples, name="n_resamples", func=_FUNC, minimum=10)
    if not (isinstance(margin, (int, float)) and 0.0 <= float(margin) < 1.0):
        raise InvalidParameterError(
            f"The 'margin' parameter of {_FUNC} must be a float in [0, 1). Got {margin!r}."
        )
    gen = normalize_rng(rng)
    table = validate_ratings(ratings, scale=scale)
    refs = list(dict.fromkeys(references))
    readers_all = list(dict.fromkeys(table[READER]))
    if latent_sources is not None:
        clash = [s for s in latent_sources if s in readers_all]
        if clash:
            raise InvalidParameterError(
                f"latent source {clash[0]!r} is a reader of the study: the latent truth "
                "must come from sources that are not in the comparison."
            )
    from ..labels import validate_label_table

    labels = validate_label_table(labels)
    truths = reference_truths(labels, refs, policy=label_policy, latent_sources=latent_sources)
    fnds = list(dict.fromkeys(table[FINDING])) if findings is None else list(dict.fromkeys(findings))
    missing = [f for f in fnds if f not in set(table[FINDING])]
    if missing:
        raise SchemaError(
            f"no ratings for finding {missing[0]!r}; the ratings hold {sorted(set(table[FINDING]))}."
        )
    preds = None
    if predictions is not None:
        preds = predictions.loc[predictions[FINDING].isin(fnds), [STUDY_ID, MODEL, FINDING, SCORE]].copy()
        preds[STUDY_ID] = preds[STUDY_ID].astype(str)
    patients = truths.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID]
    if PATIENT_ID in table.columns:
        patients = table.drop_duplicates(STUDY_ID).set_index(STUDY_ID)[PATIENT_ID].combine_first(patients)

    parts: dict[str, list[pd.DataFrame]] = {}
    notes: list[str] = []
    if reader_weights != "equal":
        notes.append(
            "The OR rows weight each reader by the diseased x non-diseased case pairs it read (iMRMC's "
            "reader average); the DBM rows weight the readers equally."
        )

    def add(name: str, frame: pd.DataFrame, **cols: object) -> None:
        parts.setdefault(name, []).append(_prefix(frame, **cols))

    for finding in fnds:
        rf = table[table[FINDING] == finding]
        models: list[str] = []
        scored: set[str] | None = None
        if preds is not None:
            pf = preds[preds[FINDING] == finding]
            models = list(dict.fromkeys(pf[MODEL]))
            for m in models:
                s = set(pf.loc[pf[MODEL] == m, STUDY_ID])
                scored = s if scored is None else scored & s
        cases = _cases(truths, rf, finding, refs, studies, scored)
        for ref in refs:
            ids = cases[ref]
            readers = [r for r in readers_all if r != ref]
            if len(readers) < len(readers_all):
                notes.append(
                    f"{finding} under {ref}: reader {ref} left out (a reader is never judged against itself)."
                )
            t = truths[(truths[SOURCE] == ref) & (truths[FINDING] == finding)].set_index(STUDY_ID)["truth"]
            arr = reader_arrays(rf, t.loc[ids], patients, readers=readers)
            _check_panel(arr, finding=finding, ref=ref)
            if _clusters(arr) is not None:
                notes.append(
                    f"{finding} under {ref}: {len(arr.study_ids)} cases of {len(set(arr.patient_ids))} "
                    "patients, clustered by patient_id (the jackknife leaves out a patient, DeLong sums the "
                    "structural components per patient, Obuchowski 1997); the published MRMC anchors "
                    "assume independent cases."
                )
            n_pos = int(arr.truth.sum())
            panel = _Panel(arr, ref, finding, add, covariance, level)
            panel.add(
                "counts",
                pd.DataFrame(
                    {
                        "cases": [len(ids)],
                        "positives": [n_pos],
                        "negatives": [len(ids) - n_pos],
                        "readers": [len(arr.readers)],
                        "modalities": [len(arr.modalities)],
                    }
                ),
            )
            try:
                if not _reader_analyses(panel, reader_weights=reader_weights):
                    notes.append(
                        f"{finding} under {ref}: not every case was read by every reader in every modality "
                        "(a split-plot design or missing readings): the OR analysis takes them, the DBM "
                        "analysis needs a full design and is left out."
                    )
                for m in models:
                    assert preds is not None  # models come from the predictions
                    pm = preds.loc[(preds[FINDING] == finding) & (preds[MODEL] == m)].set_index(STUDY_ID)[
                        SCORE
                    ]
                    score = pm.loc[list(arr.study_ids)].to_numpy(dtype=float)
                    _model_analyses(panel, score, m, margin=float(margin), n_resamples=n_res, rng=gen)
            except CxrevalError as exc:
                raise type(exc)(f"{finding} under reference {ref!r}: {exc}") from exc
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    return ReaderStudyResult.from_tables(
        tables,
        references=tuple(refs),
        findings=tuple(fnds),
        modalities=tuple(dict.fromkeys(table[MODALITY])),
        readers=tuple(readers_all),
        studies=studies,
        covariance=covariance,
        margin=float(margin),
        confidence_level=level,
        notes=tuple(notes),
    )


def evaluate_reader_study_files(
    labels: Sequence[str | Path],
    *,
    references: Sequence[str],
    ratings: str | Path | None = None,
    readers: Sequence[str] | None = None,
    predictions: Sequence[str | Path] | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    **options: object,
) -> ReaderStudyResult:
    """:func:`evaluate_reader_study` on files: the job of ``cxreval mrmc``.

    The readings come from a ratings table (``ratings``), or from label sources read as binary readers
    (``readers``, :func:`~cxreval.mrmc.labels_to_ratings`), not both. ``options`` are those of :func:`evaluate_reader_study`;
    ``scale`` may also be the text ``'MIN:MAX'``.
    """
    from ..labels._files import read_label_tables, read_prediction_tables

    if (ratings is None) == (not readers):
        raise InvalidParameterError(
            "Give the readings as a ratings table (ratings=) or as label sources read as "
            "binary readers (readers=), one of the two."
        )
    table, _ = read_label_tables(list(labels), state_encoding=state_encoding, blank_state=blank_state)
    scale = options["scale"] = _parse_scale(options.get("scale"))
    rated = (
        read_ratings(ratings, scale=scale)
        if ratings is not None
        else labels_to_ratings(table, sources=list(readers or ()))
    )
    preds = read_prediction_tables(list(predictions))[0] if predictions else None
    return evaluate_reader_study(rated, table, references=references, predictions=preds, **options)  # type: ignore[arg-type]


def _parse_scale(value: object) -> tuple[float, float] | None:
    """A rating scale given as ``'MIN:MAX'`` (the command's spelling) or as a pair of numbers."""
    if value is None or not isinstance(value, str):
        return value  # type: ignore[return-value]
    lo, _, hi = value.partition(":")
    try:
        return float(lo), float(hi)
    except ValueError:
        raise InvalidParameterError(
            f"The 'scale' parameter of evaluate_reader_study_files expects MIN:MAX, e.g. 1:5. Got {value!r}."
        ) from None


def _check_panel(arr: ReaderArrays, *, finding: str, ref: str) -> None:
    """Every modality read by two readers or more (readers are a random sample: their variance needs two)."""
    read = ~np.isnan(arr.ratings).all(axis=2)  # (modality, reader): read at least one case
    for t, modality in enumerate(arr.modalities):
        who = [r for r, ok in zip(arr.readers, read[t]) if ok]
        if len(who) < 2:
            raise SchemaError(
                f"{finding} under reference {ref!r}: modality {modality!r} was read by "
                f"{len(who)} reader(s) ({', '.join(who) or 'none'}) on the cases with a truth; an MRMC "
                "analysis needs two readers or more in every modality."
            )


_CI = {"low": "ci_low", "high": "ci_high", "p_value": "pvalue"}


def _clusters(arr: ReaderArrays) -> np.ndarray | None:
    """The patients as clusters when some patient has more than one case, else None (independent cases)."""
    return arr.patient_ids if len(set(arr.patient_ids)) < len(arr.patient_ids) else None


def _reader_analyses(panel: _Panel, *, reader_weights: str = "equal") -> bool:
    """Per-reader AUCs, and the OR and DBM analyses when two or more modalities were read; False where DBM was
    left out (not every case read by every reader in every modality)."""
    arr = panel.arr
    clusters = _clusters(arr)
    res = or_analysis(
        arr.ratings,
        arr.truth,
        covariance=panel.covariance,
        clusters=clusters,
        confidence_level=panel.level,
        modality_names=arr.modalities,
        reader_names=arr.readers,
        reader_weights=reader_weights,
    )
    tabs = {k: v.rename(columns=_CI) for k, v in res.tables().items()}
    panel.add("reader_auc", tabs["readers"])
    if len(arr.modalities) < 2:
        return True
    for name in ("tests", "differences", "modalities", "variance_components"):
        panel.add(name, tabs[name], method="OR")
    if np.isnan(
        arr.ratings
    ).any():  # split-plot or missing readings: DBM's pseudovalue ANOVA needs a full design
        return False
    dbm = dbm_analysis(
        arr.ratings,
        arr.truth,
        clusters=clusters,
        confidence_level=panel.level,
        modality_names=arr.modalities,
        reader_names=arr.readers,
    )
    tabs = {k: v.rename(columns=_CI) for k, v in dbm.tables().items()}
    for name in ("tests", "differences", "modalities", "variance_components"):
        panel.add(name, tabs[name], method="DBM")
    return True


def _model_analyses(
    panel: _Panel, score: np.ndarray, model: str, *, margin: float, n_resamples: int, rng: np.random.Generator
) -> None:
    """One model against the panel of readers of each modality: the AUC difference with the readers random
    (RRRC), and the operating points of binary readers."""
    import pandas as pd

    arr, level = panel.arr, panel.level
    clusters = _clusters(arr)
    for t, modality in enumerate(arr.modalities):
        ratings = arr.ratings[t]
        res = model_vs_readers(
            ratings,
            score,
            arr.truth,
            covariance=panel.covariance,
            clusters=clusters,
            confidence_level=level,
            reader_names=arr.readers,
            model_name=model,
        ).tables()
        d = res["differences"].set_index("analysis").loc["RRRC"]
        m = res["modalities"].set_index("analysis").loc["RRRC"]
        model_auc = float(res["readers"].loc[res["readers"]["reader"] == model, "auc"].iloc[0])
        sign = 1.0 if d["modality_a"] == model else -1.0  # the model minus the readers
        lo, hi = sorted((sign * float(d["low"]), sign * float(d["high"])))
        panel.add(
            "model_vs_readers",
            pd.DataFrame(
                {
                    "model_auc": [model_auc],
                    "readers_auc": [float(m["auc"])],
                    "difference": [sign * float(d["estimate"])],
                    "standard_error": [float(d["standard_error"])],
                    "df": [float(d["df"])],
                    "ci_low": [lo],
                    "ci_high": [hi],
                    "pvalue": [float(d["p_value"])],
                    "margin": [margin],
                    "non_inferior": [lo > -margin],
                }
            ),
            model=model,
            modality=modality,
        )
        if _is_binary(ratings):
            op = reader_operating_points(
                ratings,
                score,
                arr.truth,
                patients=arr.patient_ids,
                reader_names=arr.readers,
                margin=margin,
                n_resamples=n_resamples,
                confidence_level=level,
                rng=rng,
            )
            tabs = op.tables()
            for name, frame in tabs.items():
                panel.add(name, frame, model=model, modality=modality)
            c = tabs["comparisons"]
            p = c[(c["kind"] == "panel") & (c["metric"] == "sensitivity_at_reader_specificity")].iloc[0]
            verdict = (
                "sensitivity_at_panel_specificity",
                float(p["difference"]),
                float(p["ci_low"]),
                float(p["ci_high"]),
                bool(p["non_inferior"]),
            )
        else:
            verdict = ("auc", sign * float(d["estimate"]), lo, hi, lo > -margin)
        panel.add(
            "verdicts",
            pd.DataFrame(
                {
                    "measure": [verdict[0]],
                    "difference": [verdict[1]],
                    "ci_low": [verdict[2]],
                    "ci_high": [verdict[3]],
                    "margin": [margin],
                    "non_inferior": [verdict[4]],
                }
            ),
            model=model,
            modality=modality,
        )
