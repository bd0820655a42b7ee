"""A reader study planned from a pilot: how many readers and cases a two-modality MRMC study needs for a target
power, which cases to read, and the study file of the reader app — :func:`plan_reader_study` →
:class:`ReaderStudyPlanResult`, what ``cxreval plan --pilot`` runs before ``cxreval reader init``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._typing import PathLike, RNGLike
from .._validation import check_choice, did_you_mean, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError
from ..io import markdown_table
from ..io._write import write_summary
from ..mrmc import mrmc_sample_size
from ..mrmc._ratings import validate_ratings
from ..mrmc._references import reference_truths
from ..planning._study import (
    IMAGE_COLUMNS,
    check_image_names,
    copy_images,
    find_image,
    find_images,
    image_table,
    study_yaml,
)
from ..results import TableResult
from ..schema import SOURCE
from ._mrmc import evaluate_reader_study

__all__ = ["CASE_GRID", "ReaderStudyPlanResult", "plan_reader_study"]

CASE_GRID: tuple[int, ...] = (50, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000)
"""The case counts of ``sample_size.csv`` (the fewest cases per reader count are searched exactly)."""
_FUNC = "plan_reader_study"
_SESSION_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,16}$")
_AIDED = ("unaided", "aided")
"""Modality names read as a reading order: the pilot's unaided readings first, its aided ones second."""
_LATENT = "latent"
_ASSUMPTIONS = (
    "Hillis, Obuchowski and Berbaum (2011): the pilot's OR variance components (jackknife) carried to "
    "the planned study — its error variance and covariances scaled by pilot cases / planned cases, its "
    "reader-by-modality variance kept — with the same case mix and prevalence, readers drawn from the "
    "same population, and the OR test (Hillis's ddf) at the stated alpha, two-sided."
)


@dataclass(frozen=True)
class ReaderStudyPlanResult(TableResult):
    """A planned two-modality reader study: the cases to read (``images.csv``), the power over readers x cases
    (``sample_size.csv``), the fewest cases per reader count (``minimum_cases.csv``) and the reader app's study
    (``study.yaml`` and, when the image folder was given, ``images/``).

    Attributes
    ----------
    table : DataFrame
        ``images.csv``: study_id, patient_id, priority (the reading order of the sample), image (its path in the
        study folder).
    sample_size, minimum_cases : DataFrame
        :attr:`cxreval.mrmc.MRMCSampleSizeResult.power` and ``minimum_cases`` (with ``total_readings``, readers x
        cases x modalities).
    n_readers, n_cases : int or None
        The chosen design: the reader count whose fewest cases reach the power with the fewest readings (ties: the
        fewer readers); None when no reader count of the grid reaches it.
    pilot : Mapping
        The pilot's OR components, observed effect, cases, positives, readers, modalities and prevalence.
    reference, finding, analysis : str
    effect, target_power, alpha : float
    study : str
        ``study.yaml`` (empty when no design reaches the power).
    notes : tuple of str
    """

    FILES: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"images": "images.csv", "sample_size": "sample_size.csv", "minimum_cases": "minimum_cases.csv"}
    )
    COLUMNS: ClassVar[tuple[str, ...]] = IMAGE_COLUMNS
    STUDY_FILE: ClassVar[str] = "study.yaml"

    table: pd.DataFrame
    sample_size: pd.DataFrame
    minimum_cases: pd.DataFrame
    n_readers: int | None
    n_cases: int | None
    pilot: Mapping[str, Any]
    reference: str
    finding: str
    analysis: str
    effect: float
    target_power: float
    alpha: float
    study: str
    notes: tuple[str, ...] = ()
    image_sources: tuple[str, ...] = field(default=(), repr=False)

    def tables(self) -> dict[str, pd.DataFrame]:
        return {"images": self.table, "sample_size": self.sample_size, "minimum_cases": self.minimum_cases}

    def save(self, folder: PathLike) -> dict[str, Path]:
        """Write the tables, ``study.yaml`` (when a design reaches the power), ``summary.md`` and (with an image
        folder) each selected case's image into ``images/``. Returns ``{name: path}`` of the tables and
        ``study.yaml``."""
        out = super().save(folder)
        if self.study:
            p = Path(folder) / self.STUDY_FILE
            p.write_text(self.study, encoding="utf-8")
            out["study"] = p
        if self.image_sources:
            copy_images(Path(folder), self.table, [Path(s) for s in self.image_sources])
        write_summary(Path(folder), self.summary())
        return out

    @classmethod
    def figure(cls, table: pd.DataFrame) -> Any:
        """Power curves (``sample_size.csv``): the power against the cases, one line per reader count."""
        from .._plots import lines

        return lines(
            table.assign(readers=table["n_readers"].map(lambda r: f"{r} readers")),
            x="n_cases",
            y="power",
            color="readers",
            title="Power of the planned reader study",
            y_title="power",
        )

    def _figure(self) -> Any:
        return self.figure(self.sample_size)

    def summary(self) -> str:
        p = self.pilot
        design = (
            f"**{self.n_readers} readers x {self.n_cases} cases** in each of the two modalities "
            f"({2 * self.n_readers * self.n_cases:,} readings)"
            if self.n_readers and self.n_cases
            else "**no reader count of the grid reaches the power**: more readers are needed (see power_limit, "
            "the power with unlimited cases)"
        )
        lines = [
            f"# Reader study plan: {self.finding} under {self.reference!r}",
            "",
            f"Pilot: {int(p['n_readers'])} readers, {int(p['n_cases'])} cases ({int(p['positives'])} "
            f"diseased), modalities {p['modalities']} (the sessions, in this order); observed difference "
            f"of the modalities' AUCs ({p['effect_direction']}) {p['observed_effect']:+.4f}. Planned for an "
            f"effect of {self.effect:.4f} at power "
            f"{self.target_power:.2f}, alpha {self.alpha} ({self.analysis}).",
            "",
            f"Design: {design}, the fewest readings among the reader counts below.",
            "",
            markdown_table(self.minimum_cases, decimals=4),
            "",
            "Pilot OR components: "
            + ", ".join(
                f"{k} {p[k]:.6g}" for k in ("var_modality_reader", "error_variance", "cov1", "cov2", "cov3")
            )
            + ".",
            "",
            f"Assumptions: {_ASSUMPTIONS}",
        ]
        if self.study:
            place = (
                ""
                if self.image_sources
                else "put each case's image where images.csv says (the image column, "
                "with its suffix: images/<study_id>.png) or plan again with --images DIR, then "
            )
            lines += [
                "",
                f"Next: {place}`cxreval reader init --study {self.STUDY_FILE}` in this folder (add readers "
                "with `cxreval reader add-reader`); `cxreval reader export` then writes ratings.csv for "
                "`cxreval mrmc --ratings`.",
            ]
        if self.notes:
            lines += ["", "## Notes", "", *(f"- {n}" for n in self.notes)]
        return "\n".join(lines) + "\n"


def _rating_scale(values: np.ndarray) -> tuple[str, list[str]]:
    """The reader app's scale for ratings like the pilot's: five_point for integers 1-5, else probability (0-100);
    a note when the pilot's ratings are on neither scale."""
    lo, hi = float(values.min()), float(values.max())
    if np.all(np.equal(np.mod(values, 1), 0)) and lo >= 1 and hi <= 5:
        return "five_point", []
    if lo >= 0 and hi <= 100:
        return "probability", []
    return "probability", [
        f"the pilot's ratings run from {lo:g} to {hi:g}, on neither the five-point scale (1-5) "
        "nor the probability scale (0-100): study.yaml asks for probabilities (0-100)"
    ]


def _modality_order(modalities: Sequence[str]) -> list[str]:
    """The pilot's modalities in reading order: unaided then aided for those names, else sorted."""
    return list(_AIDED) if set(modalities) == set(_AIDED) else sorted(modalities)


def _session_names(modalities: Sequence[str]) -> tuple[list[str], list[str]]:
    """One session per modality, named after it when the reader app accepts the name; else ``modality_<k>``, with
    a note saying which modality each session stands for."""
    ok = all(_SESSION_NAME.match(m) for m in modalities) and not {"image", "report", "iqa"} & set(modalities)
    if ok:
        return list(modalities), []
    names = [f"modality_{k + 1}" for k in range(len(modalities))]
    return names, [
        "the pilot's modality names cannot name the reader app's sessions (1-16 letters, digits, _ . or "
        "-; not image, report or iqa): the sessions are "
        + ", ".join(f"{n} ({m})" for n, m in zip(names, modalities))
    ]


def _choose(minimum: pd.DataFrame) -> tuple[int | None, int | None]:
    reach = minimum.dropna(subset=["n_cases"])
    if reach.empty:
        return None, None
    best = reach.sort_values(["total_readings", "n_readers"], kind="mergesort").iloc[0]
    return int(best["n_readers"]), int(best["n_cases"])


def _sample(
    pool: pd.DataFrame, n_cases: int, prevalence: float, gen: np.random.Generator, images: Path | None
) -> tuple[pd.DataFrame, list[str]]:
    """A random sample of ``n_cases`` of ``pool`` (study_id, patient_id, truth) with the pilot's prevalence: each
    class in a random order (``gen``), its first cases taken — with ``images``, its first cases with an image
    there. A class with fewer cases than its share gives them all, and a note says so."""
    n_pos = int(round(n_cases * prevalence))
    parts, notes = [], []
    for truth, want in ((1.0, n_pos), (0.0, n_cases - n_pos)):
        cls = pool[pool["truth"] == truth].sort_values("study_id", kind="mergesort")
        order = gen.permutation(len(cls))
        if images is None:
            take = order[:want]
        else:
            found: list[int] = []
            for i in order:
                if len(found) == want:
                    break
                if find_image(images, str(cls["study_id"].iloc[i])) is not None:
                    found.append(int(i))
            take = np.asarray(found, dtype=int)
        if len(take) < want:
            kind = "diseased" if truth else "non-diseased"
            where = f" with an image in {images}" if images is not None else ""
            notes.append(
                f"the reference gives {len(take)} {kind} cases{where}, fewer than the {want} the design "
                "needs: all are listed; find more cases of this class or expect less power"
            )
        parts.append(cls.iloc[np.sort(take)])
    chosen = pd.concat(parts)
    return chosen.iloc[gen.permutation(len(chosen))], notes


def _validate_plan_reader_study(
    pilot: pd.DataFrame,
    labels: pd.DataFrame,
    reference: str,
    finding: str | None,
    effect: float | None,
    analysis: str,
    washout_days: float,
    latent_sources: Sequence[str] | None,
) -> tuple[pd.DataFrame, list[str], str]:
    """The validated ratings, the pilot's two modalities in reading order and the finding to plan for."""
    check_choice(analysis, ("RRRC", "FRRC", "RRFC"), name="analysis", func=_FUNC)
    if isinstance(washout_days, bool) or not (
        isinstance(washout_days, (int, float)) and 0 <= washout_days < float("inf")
    ):
        raise InvalidParameterError(
            f"The 'washout_days' parameter of {_FUNC} must be a number of days >= 0. Got "
            f"{washout_days!r} instead."
        )
    if effect is not None and (
        isinstance(effect, bool)
        or not isinstance(effect, (int, float, np.floating))
        or not 0 < abs(float(effect)) < 1
    ):
        raise InvalidParameterError(
            f"The 'effect' parameter of {_FUNC} must be a difference of AUCs with 0 < "
            f"|effect| < 1 (e.g. 0.05). Got {effect!r} instead."
        )
    if SOURCE in labels.columns:
        known = {str(s) for s in labels[SOURCE].unique()}
        if reference != _LATENT and reference not in known:
            raise SchemaError(
                f"The 'reference' parameter of {_FUNC} must be a source of the labels or "
                f"'{_LATENT}'. Got {reference!r} instead.{did_you_mean(reference, known)} Sources "
                f"present: {sorted(known)}."
            )
    if latent_sources and reference != _LATENT:
        raise InvalidParameterError(
            f"The 'latent_sources' parameter of {_FUNC} fits the latent truth: it is used "
            f"only with reference='{_LATENT}'. Got reference={reference!r}."
        )
    ratings = validate_ratings(pilot)
    mods = [str(m) for m in ratings["modality"].unique()]
    if len(mods) != 2:
        raise InvalidParameterError(
            f"The 'pilot' parameter of {_FUNC} must rate two modalities (e.g. unaided and "
            f"aided) to size a comparison of two; it rates {len(mods)}: {sorted(mods)}."
        )
    rated = sorted(ratings["finding"].astype(str).unique())
    if finding is None and len(rated) > 1:
        raise InvalidParameterError(
            f"The pilot rates {len(rated)} findings ({', '.join(rated)}): name the one to "
            f"plan for with the 'finding' parameter of {_FUNC}."
        )
    return ratings, _modality_order(mods), rated[0] if finding is None else finding


def plan_reader_study(
    pilot: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    reference: str,
    finding: str | None = None,
    effect: float | None = None,
    target_power: float = 0.8,
    n_readers: Sequence[int] = (4, 6, 8, 10, 12),
    alpha: float = 0.05,
    analysis: str = "RRRC",
    washout_days: float = 28,
    images: PathLike | None = None,
    latent_sources: Sequence[str] | None = None,
    label_policy: str = "exclude",
    rng: RNGLike = None,
) -> ReaderStudyPlanResult:
    """Plan a two-modality reader study from a pilot: readers x cases for a target power, the cases, the study file.

    The pilot's ratings (two modalities, e.g. unaided and aided) are analysed under ``reference`` by
    :func:`cxreval.jobs.evaluate_reader_study` (OR, jackknife covariance); its variance components size the
    planned study by :func:`cxreval.mrmc.mrmc_sample_size` (Hillis, Obuchowski and Berbaum 2011) over
    ``n_readers`` x :data:`CASE_GRID`, with the fewest cases per reader count searched exactly. The design is the
    reader count reaching ``target_power`` with the fewest readings (readers x cases x 2; ties: fewer readers). Its
    cases are drawn at random (``rng``) from the studies ``reference`` labels for the finding (with ``images``, those
    with an image there), stratified to the pilot's prevalence; a class with fewer cases than the design needs
    gives them all, and the notes say so. ``study.yaml`` asks for the pilot's rating scale (``five_point`` for
    whole ratings 1-5, else ``probability``, 0-100), one session per pilot modality (``unaided`` then ``aided``
    when the pilot's modalities have those names, else the names sorted) and a washout of ``washout_days``
    between them.

    Parameters
    ----------
    pilot : DataFrame
        The pilot's ratings table (reader, modality, study_id, finding, rating), as ``cxreval reader export``
        writes ``ratings.csv``.
    labels : DataFrame
        A validated long label table holding ``reference`` (and the cases to draw from).
    reference : str
        The truth: a source of ``labels``, or ``'latent'`` (of ``latent_sources``).
    finding : str, optional
        The finding to plan for (required when the pilot rates several).
    effect : float, optional
        The AUC difference the study should detect, 0 < |effect| < 1 (default: the pilot's observed one).
    target_power, alpha : float, default=0.8, 0.05
    n_readers : sequence of int, default=(4, 6, 8, 10, 12)
    analysis : {'RRRC', 'FRRC', 'RRFC'}, default='RRRC'
    washout_days : float, default=28
        The minimum days between a reader's two readings of one case (the reader app enforces it).
    images : path-like, optional
        Folder of the images (``<study_id>.<suffix>`` or ``<study_id>/``): the cases are drawn from the studies with
        an image there, and theirs are copied into the plan's ``images/``.
    latent_sources, label_policy
        As :func:`cxreval.jobs.evaluate_reader_study`.
    rng : int or Generator, optional
        Seed of the case sample.

    Returns
    -------
    res : ReaderStudyPlanResult

    Raises
    ------
    InvalidParameterError
        A pilot without exactly two modalities, several findings and no ``finding``, bad numbers,
        ``latent_sources`` with a reference other than ``'latent'``.
    SchemaError
        A ``reference`` that is not a source of ``labels``; as :func:`cxreval.jobs.evaluate_reader_study` (a rating
        table without its columns).

    Notes
    -----
    The plan carries the pilot's OR variance components to the new study: its error variance and covariances
    scaled by pilot cases / planned cases, its reader-by-modality variance kept, with the same case mix and
    prevalence and readers from the same population [1]_. The pilot's cases may be drawn again; leave them out of
    ``labels`` to read new ones only.

    References
    ----------
    .. [1] Hillis SL, Obuchowski NA, Berbaum KS. Power estimation for multireader ROC methods: an updated and
           unified approach. Acad Radiol. 2011;18(2):129-142. doi:10.1016/j.acra.2010.09.007
    """
    ratings, mods, finding = _validate_plan_reader_study(
        pilot, labels, reference, finding, effect, analysis, washout_days, latent_sources
    )
    gen = normalize_rng(rng)
    res = evaluate_reader_study(
        ratings,
        labels,
        references=[reference],
        findings=[finding],
        studies="each",
        latent_sources=latent_sources,
        label_policy=label_policy,
        rng=0,
    )
    vc = res.variance_components
    vc = vc[vc["method"] == "OR"].set_index("name")["value"]
    diff = res.differences
    diff = diff[(diff["method"] == "OR") & (diff["analysis"] == "RRRC")].iloc[0]
    # the observed effect as the second modality's AUC minus the first's (aided - unaided)
    sign = 1.0 if (str(diff["modality_a"]), str(diff["modality_b"])) == (mods[1], mods[0]) else -1.0
    counts = res.counts.iloc[0]
    comps = {
        "var_modality_reader": float(vc["var_treatment_reader"]),
        "error_variance": float(vc["var_error"]),
        "cov1": float(vc["cov1"]),
        "cov2": float(vc["cov2"]),
        "cov3": float(vc["cov3"]),
        "n_cases": int(counts["cases"]),
        "effect": sign * float(diff["estimate"]),
    }
    ss = mrmc_sample_size(
        comps,
        effect=effect,
        n_readers=list(n_readers),
        n_cases=list(CASE_GRID),
        alpha=alpha,
        analysis=analysis,
        target_power=target_power,
    )
    minimum = ss.minimum_cases.assign(total_readings=lambda d: d["n_readers"] * d["n_cases"] * 2)
    r, n = _choose(minimum)
    notes = list(res.notes)
    pool = reference_truths(labels, [reference], policy=label_policy, latent_sources=latent_sources)
    pool = pool[pool["finding"] == finding]
    prevalence = float(counts["positives"]) / float(counts["cases"])
    cases = pool.iloc[:0]
    if n is not None:
        cases, short = _sample(pool, n, prevalence, gen, None if images is None else Path(images))
        notes += short
    ids = [str(s) for s in cases["study_id"]]
    check_image_names(ids)
    sources = find_images(Path(images), ids, func=_FUNC) if images is not None and ids else None
    table = image_table(ids, [str(p) for p in cases["patient_id"]], sources)
    scale, scale_notes = _rating_scale(ratings["rating"].to_numpy(dtype=float))
    sessions, session_notes = _session_names(mods)
    notes += scale_notes + session_notes
    washout: int | float = int(washout_days) if float(washout_days).is_integer() else float(washout_days)
    extra = {
        "rating": {"scale": scale, "with_label": False},
        "sessions": [{"name": s} for s in sessions],
        "washout_days": washout,
    }
    study = (
        study_yaml(
            name=f"reader-study-{finding}"[:64],
            findings=[finding],
            order_seed=int(gen.integers(2**31)),
            extra=extra,
        )
        if n is not None
        else ""
    )
    pilot_info = {
        **{k: v for k, v in comps.items() if k != "effect"},
        "observed_effect": comps["effect"],
        "effect_direction": f"{mods[1]} - {mods[0]}",
        "positives": int(counts["positives"]),
        "n_readers": int(counts["readers"]),
        "modalities": ", ".join(mods),
        "prevalence": prevalence,
    }
    if n is None:
        notes.append("no reader count of n_readers reaches the target power with up to 100,000 cases")
    return ReaderStudyPlanResult(
        table,
        ss.power,
        minimum,
        n_readers=r,
        n_cases=n,
        pilot=MappingProxyType(pilot_info),
        reference=reference,
        finding=finding,
        analysis=analysis,
        effect=ss.effect,
        target_power=float(target_power),
        alpha=float(alpha),
        study=study,
        notes=tuple(notes),
        image_sources=tuple(str(s) for s in sources or ()),
    )
