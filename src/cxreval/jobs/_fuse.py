"""The job of ``cxreval fuse``: several readers' labels fused by several methods, each method scored against an
adjudicated source and against the others, and the readers' accuracy (:func:`fuse_and_compare`, the demo's fusion
section; from label files, :func:`fuse_and_compare_files`). Both return a :class:`~cxreval.fusion.FusionResult`,
which owns the files written; the fusion itself is :func:`cxreval.fusion.fuse_labels`.

Examples
--------
>>> import pandas as pd
>>> t = pd.DataFrame({"study_id": ["s1", "s2", "s3"] * 3, "patient_id": ["p1", "p2", "p3"] * 3, "finding": "Edema",
...                   "source": ["A"] * 3 + ["B"] * 3 + ["CR"] * 3,
...                   "state": ["positive", "negative", "uncertain", "positive", "negative", "negative",
...                             "positive", "negative", "negative"]})
>>> from cxreval.labels import validate_label_table
>>> res = fuse_and_compare(validate_label_table(t), ["A", "B"], ["mv", "and"], adjudicated="CR")
>>> res.labels.query("source == 'fused_and'")["state"].tolist()
[2, 0, 0]
>>> res.agreement.query("finding == 'Edema'")[["method", "kappa_w", "n"]]
  method  kappa_w  n
0     mv      0.8  3
3    and      1.0  3
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._typing import FindingsLike, PathLike, RNGLike, Studies
from .._validation import check_choice, normalize_rng
from ..agreement import compute_agreement
from ..agreement._compare import common_study_labels
from ..exceptions import InvalidParameterError
from ..findings import XQA_SELECTED
from ..fusion import FusionResult, fuse_labels
from ..fusion._mace import MACE_METHODS
from ..fusion._neural import LABELS_FROM, load_neural_fusion
from ..fusion._result import FUSION_AGREEMENT_COLUMNS, LABELS_FORMATS, METHOD
from ..labels import validate_label_table
from ..labels._files import read_label_tables
from ..latent._evaluate import reader_accuracy_table
from ..options import Compute
from ..progress import as_progress
from ..results import as_table
from ..schema import FINDING, SOURCE, STATE, STUDY_ID
from ..schema._states import LabelPolicy
from ._inputs import check_input_paths, split_names

if TYPE_CHECKING:
    from ..fusion._neural import NeuralFusion

__all__ = ["DEFAULT_FUSION_METHODS", "fuse_and_compare", "fuse_and_compare_files"]

_FUNC = "fuse_and_compare"

DEFAULT_FUSION_METHODS: tuple[str, ...] = ("mv", "or", "and", "ds", "mace")
"""The methods ``cxreval fuse`` runs by default: majority vote, FUSE_OR, FUSE_AND, Dawid-Skene and MACE."""
#: Patient-bootstrap replicates of the readers' sensitivities and specificities (``reader_accuracy.csv``).
READER_ACCURACY_RESAMPLES = 200


def _finding_sets(findings: list[str]) -> dict[str, list[str]]:
    selected = [f for f in XQA_SELECTED if f in findings]
    return {"selected": selected, "all": findings} if selected else {"all": findings}


def _fusion_agreement(
    labels: pd.DataFrame, fused: pd.DataFrame, adjudicated: str, methods: Sequence[str]
) -> pd.DataFrame:
    """Agreement of each ``fused_<method>`` source with ``adjudicated`` (the reference = F1 ``y_true``) on the
    studies both label, per finding plus macro/micro over the XQA selected findings present and over all;
    columns :data:`~cxreval.fusion.FUSION_AGREEMENT_COLUMNS`."""
    ref = labels[labels[SOURCE] == adjudicated]
    cols = [STUDY_ID, FINDING, SOURCE, STATE]
    table = pd.concat([ref[cols], fused[cols]], ignore_index=True)
    findings = sorted(set(fused[FINDING]) & set(ref[FINDING]))
    if not findings:
        raise InvalidParameterError(
            f"The adjudicated source {adjudicated!r} labels none of the fused findings."
        )
    agr = compute_agreement(
        table,
        [(adjudicated, f"fused_{m}") for m in methods],
        findings=findings,
        finding_sets=_finding_sets(findings),
        studies="each",
    ).table
    agr.insert(0, METHOD, agr.pop("pair").str.split(":").str[1].str.removeprefix("fused_"))
    agr["finding_set"] = agr["finding_set"].fillna("")
    return agr[list(FUSION_AGREEMENT_COLUMNS)]


def _apply_model(
    labels: pd.DataFrame, readers: list[str], methods: list[str], model: NeuralFusion | str | os.PathLike[str]
) -> tuple[pd.DataFrame, list[str], list[str], dict[str, object], str]:
    """Map ``readers`` onto a fitted neural model's readers: ``(labels, readers, methods, fitted, note)``."""
    where, origin = "the fitted model", "given fitted"
    if isinstance(model, (str, os.PathLike)):
        where, origin = f"the model {model}", f"loaded from {model}"
        model = load_neural_fusion(model)
    model_readers = list(getattr(model, "readers_", ()))
    name = "nn_ps" if getattr(model, "specialists", False) else "nn"
    if len(readers) != len(model_readers):
        raise InvalidParameterError(
            f"{where}: it was fitted on {len(model_readers)} readers {model_readers}; "
            f"the readers fused are {len(readers)}."
        )
    mapping = ""
    if set(readers) != set(model_readers):
        rename = dict(zip(readers, model_readers))
        clash = sorted(set(model_readers) & (set(labels[SOURCE].astype(str)) - set(readers)))
        if clash:
            raise InvalidParameterError(
                f"{where}: the label table already has source(s) {clash} named like the "
                f"model's readers; fuse them as readers."
            )
        labels = labels.assign(**{SOURCE: labels[SOURCE].astype(str).replace(rename)})
        mapping = "; sources mapped onto the model's readers: " + ", ".join(
            f"{a} -> {b}" for a, b in rename.items()
        )
    note = (
        f"- {name}: {origin} (readers {model_readers}, findings {list(getattr(model, 'findings_', ()))}), "
        f"applied without refitting{mapping}"
    )
    return labels, model_readers, [m for m in methods if m != name], {name: model}, note


def fuse_and_compare(
    labels: object,
    readers: Sequence[str],
    methods: Sequence[str],
    *,
    adjudicated: str | None = None,
    findings: FindingsLike = None,
    not_mentioned: str | LabelPolicy = "negative",
    rng: RNGLike = None,
    params: dict[str, dict[str, object]] | None = None,
    model: NeuralFusion | str | os.PathLike[str] | None = None,
    include_inputs: bool = False,
    compute: Compute = Compute(),
    studies: Studies = "common",
    nn_hidden: int | None = None,
    nn_epochs: int | None = None,
    nn_folds: int | None = None,
    nn_scoring: str | None = None,
    mace_method: str | None = "vb",
    labels_format: str = "both",
    save_model: bool = False,
    title: str = "Label fusion",
) -> FusionResult:
    """Fuse ``readers`` with each of ``methods`` (:func:`fuse_labels`) and score the fused sources: each
    against ``adjudicated`` (``fusion_agreement``) and against each other (``method_agreement``).

    This is the job of ``cxreval fuse`` (and the demo's fusion section): ``res.save(folder)`` writes every file
    the command writes but ``run.json``.

    Parameters
    ----------
    labels : DataFrame, ReadResult or list of them
        Long label table(s) (several are concatenated: :func:`cxreval.results.as_table`).
    readers, methods, adjudicated, findings, not_mentioned, rng, params
        As :func:`fuse_labels`; ``adjudicated`` (a reference source) is also the source every method is
        scored against.
    compute : Compute, default=Compute()
        The executor (as :func:`fuse_labels`'s), a task for the fusion (``progress``: the CLI's progress bars),
        and ``spill_dir``: a folder in which the executor's workers read their arrays, in a subfolder removed at
        the end (default: a temporary folder); on a multi-machine cluster it must be on storage every worker
        sees (:class:`cxreval.options.Compute`).
    model : NeuralFusion, path or None
        A fitted ``nn`` / ``nn_ps`` model, or the ``.npz`` file of one (:meth:`NeuralFusion.save`), applied
        instead of trained (its method is dropped from ``methods``). ``readers`` are mapped onto the model's
        readers by name, else in the model's (sorted) reader order (the sources of ``labels`` are renamed).
    include_inputs : bool, default=False
        Keep the input label table on the result, written before the fused sources into ``fused_labels``.
    studies : {'each', 'common'}, default='common'
        ``'each'``: every study any reader labels; ``'common'`` (the comparison design of ``cxreval
        classify``/``rank``/``agree``): per finding, only the studies every reader and the adjudicated
        reference, if any, label (:func:`cxreval.agreement.common_study_labels`).
    nn_hidden, nn_epochs, nn_folds, nn_scoring : optional
        The settings of the trained ``nn`` / ``nn_ps`` methods: :class:`NeuralFusion`'s ``hidden``, ``epochs``,
        ``n_folds`` and ``labels_from`` (default: the estimator's, 32, 300, 5 and ``'out-of-fold'``); refused
        with ``model`` (a model is applied as it was trained).
    mace_method : {'vb', 'em'} or None, default='vb'
        MACE's ``method`` (None: the estimator's default, ``'vb'``).
    labels_format : {'csv', 'parquet', 'both'}, default='both'
        How :meth:`FusionResult.save` writes ``fused_labels``.
    save_model : bool, default=False
        :meth:`FusionResult.save` also writes each trained ``nn`` / ``nn_ps`` model as ``<method>_model.npz``.
    title : str, default='Label fusion'
        The heading of ``summary.md``.

    Returns
    -------
    res : FusionResult
        With ``agreement`` when ``adjudicated`` is given and ``method_agreement`` with two or more methods.
    """
    progress = as_progress(compute.progress, func=_FUNC)
    spill_dir = compute.spill_dir
    labels = validate_label_table(as_table(labels, name="labels", func=_FUNC), require_patient=False)
    readers, methods = [str(r) for r in readers], list(methods)
    check_choice(studies, ("each", "common"), name="studies", func=_FUNC)
    check_choice(labels_format, LABELS_FORMATS, name="labels_format", func=_FUNC)
    if studies == "common":
        labels = common_study_labels(labels, [*readers, *([adjudicated] if adjudicated is not None else [])])
    params = _with_settings(
        params,
        methods,
        model,
        nn_hidden=nn_hidden,
        nn_epochs=nn_epochs,
        nn_folds=nn_folds,
        nn_scoring=nn_scoring,
        mace_method=mace_method,
    )
    task = progress.add(
        f"fusing {len(readers)} readers with {', '.join(methods)}"
        + (f" and the model {model}" if isinstance(model, (str, os.PathLike)) else "")
    )
    fuse_table: pd.DataFrame = labels
    fitted = None
    notes: tuple[str, ...] = ()
    if model is not None:
        fuse_table, readers, methods, fitted, note = _apply_model(labels, readers, methods, model)
        notes = (note,)
    gen = normalize_rng(rng)  # one stream: the methods in order, then the readers' accuracy
    with contextlib.ExitStack() as stack:
        if spill_dir is not None:
            spill_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix=".fuse-spill-", dir=spill_dir))
        res = fuse_labels(
            fuse_table,
            readers,
            methods,
            adjudicated=adjudicated,
            findings=findings,
            not_mentioned=not_mentioned,
            rng=gen,
            params=params,
            fitted=fitted,
            executor=compute.executor,
            spill_dir=spill_dir,
        )
    accuracy = None
    if "ds" in res.estimators:  # drawn after every method, so that their random streams are those without it
        accuracy = reader_accuracy_table(
            fuse_table[fuse_table[FINDING].isin(set(res.labels[FINDING]))],
            list(res.readers),
            not_mentioned=res.not_mentioned,
            n_resamples=READER_ACCURACY_RESAMPLES,
            rng=gen,
        )
    fused, done = res.labels, res.methods
    between = None
    if len(done) > 1:
        pairs = [(f"fused_{a}", f"fused_{b}") for i, a in enumerate(done) for b in done[i + 1 :]]
        fs = sorted(set(fused[FINDING]))
        between = compute_agreement(fused, pairs, findings=fs, finding_sets={"all": fs}, studies="same").table
    agr = None if adjudicated is None else _fusion_agreement(labels, fused, adjudicated, done)
    progress.done(task)
    return replace(
        res,
        agreement=agr,
        method_agreement=between,
        notes=notes,
        inputs=labels if include_inputs else None,
        params=params,
        labels_format=labels_format,
        save_model=save_model,
        title=title,
        seed=rng if isinstance(rng, int) else None,
        reader_accuracy=accuracy,
    )


def _with_settings(
    params: dict[str, dict[str, object]] | None,
    methods: Sequence[str],
    model: object,
    *,
    nn_hidden: int | None,
    nn_epochs: int | None,
    nn_folds: int | None,
    nn_scoring: str | None,
    mace_method: str | None,
) -> dict[str, dict[str, object]]:
    """``params`` with the ``nn_*`` settings for each trained ``nn`` / ``nn_ps`` and ``mace_method`` for MACE."""
    func = _FUNC
    if nn_scoring is not None:
        check_choice(nn_scoring, LABELS_FROM, name="nn_scoring", func=func)
    if mace_method is not None:
        check_choice(mace_method, MACE_METHODS, name="mace_method", func=func)
    nn = {
        k: v
        for k, v in (
            ("hidden", nn_hidden),
            ("epochs", nn_epochs),
            ("n_folds", nn_folds),
            ("labels_from", nn_scoring),
        )
        if v is not None
    }
    if nn and model is not None:
        where = f"model={str(model)!r}" if isinstance(model, (str, os.PathLike)) else "model="
        raise InvalidParameterError(
            f"nn_hidden=, nn_epochs=, nn_folds= and nn_scoring= train a model; {where} "
            "applies one as it was trained. Leave them out."
        )
    out = {m: dict(kw) for m, kw in (params or {}).items()}
    for m in methods:
        if m in ("nn", "nn_ps") and (nn or m in out):
            out[m] = {**nn, **out.get(m, {})}
    if mace_method is not None and "mace" in methods:
        out["mace"] = {"method": mace_method, **out.get("mace", {})}
    return out


def fuse_and_compare_files(
    labels: Sequence[PathLike],
    readers: str | Sequence[str],
    methods: str | Sequence[str] = DEFAULT_FUSION_METHODS,
    *,
    adjudicated: str | None = None,
    findings: FindingsLike = None,
    not_mentioned: str = "negative",
    rng: RNGLike = None,
    model: PathLike | None = None,
    include_inputs: bool = False,
    compute: Compute = Compute(),
    studies: Studies = "common",
    nn_hidden: int | None = None,
    nn_epochs: int | None = None,
    nn_folds: int | None = None,
    nn_scoring: str | None = None,
    mace_method: str | None = "vb",
    labels_format: str = "both",
    save_model: bool = False,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    title: str = "Label fusion",
) -> FusionResult:
    """:func:`fuse_and_compare` of label files: the job of ``cxreval fuse`` (``res.save(folder)`` writes every file
    the command writes but ``run.json``).

    The files (and ``model``) are checked to exist before any is read, then read as one table
    (:func:`cxreval.labels.read_label_tables`, with ``state_encoding`` and ``blank_state``).

    Parameters
    ----------
    labels : sequence of path
        Long label tables (CSV or Parquet: ``study_id, [patient_id,] finding, source, state``), read as one.
    readers, methods : str or sequence of str
        The sources to fuse and the methods, as lists or comma-separated text (``'Rep1,Rep2'``); ``methods``
        defaults to :data:`DEFAULT_FUSION_METHODS`.
    model : path, optional
        The ``.npz`` file of a fitted ``nn`` / ``nn_ps`` model, applied instead of trained.
    findings : str or sequence of str, optional
        As :func:`fuse_and_compare`; comma-separated text, or a list of it, accepted.
    adjudicated, not_mentioned, rng, include_inputs, compute, studies
        As :func:`fuse_and_compare`.
    nn_hidden, nn_epochs, nn_folds, nn_scoring, mace_method, labels_format, save_model, title
        As :func:`fuse_and_compare`.

    Returns
    -------
    res : FusionResult
    """
    return _fuse_files(**locals())


def _fuse_files(
    labels: Sequence[PathLike],
    readers: str | Sequence[str],
    methods: str | Sequence[str],
    *,
    findings: FindingsLike,
    model: PathLike | None,
    state_encoding: str | None,
    blank_state: str | None,
    **options: Any,
) -> FusionResult:
    """:func:`fuse_and_compare_files`, its keywords as given: the names split, the files checked and read as one
    table, then :func:`fuse_and_compare` of it (``options``: its keywords passed on as they are)."""
    reader_list = split_names(readers, name="readers", unique=False)
    method_list = split_names(methods, name="methods", unique=False)
    check_input_paths(*[("labels", p) for p in labels], ("model", model))
    table, _ = read_label_tables(
        [str(p) for p in labels], state_encoding=state_encoding, blank_state=blank_state
    )
    return fuse_and_compare(
        table,
        reader_list or [],
        method_list or [],
        findings=split_names(findings, name="findings"),
        model=model,
        **options,
    )
