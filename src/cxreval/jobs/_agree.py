"""The job of ``cxreval agree``: label files in, :class:`~cxreval.agreement.SourceComparisonResult` out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .._typing import FindingsLike, PathLike, Studies
from ..agreement import SourceComparisonResult, compare_sources
from ..exceptions import InvalidParameterError
from ..labels._files import read_label_tables
from ._inputs import check_input_paths, split_names

__all__ = ["compare_sources_files"]

_FUNC = "compare_sources_files"


def _finding_sets(
    specs: Mapping[str, Sequence[str]] | Sequence[str] | None,
) -> Mapping[str, Sequence[str]] | None:
    """``['NAME=F1,F2', ...]`` as ``{'NAME': ['F1', 'F2']}`` (a mapping as given; None when empty)."""
    if not specs:
        return None
    if isinstance(specs, Mapping):
        return specs
    out: dict[str, list[str]] = {}
    for spec in [specs] if isinstance(specs, str) else specs:
        name, sep, rest = str(spec).partition("=")
        items = [x.strip() for x in rest.split(",") if x.strip()]
        if not sep or not name.strip() or not items:
            raise InvalidParameterError(
                f"The 'finding_sets' parameter of {_FUNC} must be NAME=F1,F2,... (or NAME=<vocabulary>). "
                f"Got {spec!r}."
            )
        out[name.strip()] = items
    return out


def compare_sources_files(
    labels: Sequence[PathLike],
    pairs: str,
    *,
    findings: FindingsLike = None,
    finding_sets: Mapping[str, Sequence[str]] | Sequence[str] | None = None,
    weights: str | None = "quadratic",
    not_mentioned: str = "negative",
    studies: Studies = "common",
    intersect: bool = False,
    both_uncertain: str = "agree",
    finding_map: str | PathLike | None = None,
    flow_pairs: str | None = None,
    state_encoding: str | None = None,
    blank_state: str | None = None,
    title: str = "Agreement between label sources",
) -> SourceComparisonResult:
    """Agreement, prevalence, flows and omissions of pairs of label sources, from label files: the job of
    ``cxreval agree`` (``res.save(folder)`` writes every file the command writes but ``run.json``).

    The files are checked to exist, read as one table (:func:`cxreval.labels.read_label_tables`) and compared
    with :func:`cxreval.agreement.compare_sources`.

    Parameters
    ----------
    labels : sequence of path
        Long label tables (CSV or Parquet: ``study_id, [patient_id,] finding, source, state``), read as one.
    pairs, flow_pairs, findings, not_mentioned, both_uncertain, finding_map, title
        As :func:`~cxreval.agreement.compare_sources`; ``findings`` may also be comma-separated text, or a
        list of it.
    finding_sets : mapping or sequence of str, optional
        The sets to macro/micro-average over: ``{name: findings}``, or ``'NAME=F1,F2,...'`` texts
        (``NAME=<vocabulary>`` allowed). Default one set ``'all'``.
    weights : {'quadratic', 'linear', 'none'} or None, default='quadratic'
        The weighting of kappa_w (``'none'`` and None: unweighted).
    studies : {'each', 'common'}, default='common'
        ``'each'``: a pair of sources compares their own labels, each pair on the same studies (with
        ``intersect``, on the studies both label); ``'common'``: per finding, only the studies every source of
        the pairs labelling it labels (:func:`~cxreval.agreement.compare_sources`' ``'same'``, ``'each'`` and
        ``'common'``).
    intersect : bool, default=False
        Each pair on the studies both sources label (``studies='each'`` of
        :func:`~cxreval.agreement.compare_sources`), whatever ``studies`` says.
    state_encoding, blank_state : str, optional
        How the files' states are read (:func:`cxreval.labels.read_label_tables`).

    Returns
    -------
    res : SourceComparisonResult

    Raises
    ------
    SchemaError
        A file does not exist or is not a valid label table (named).
    InvalidParameterError
        A bad ``studies``, ``weights`` or ``finding_sets``; as :func:`~cxreval.agreement.compare_sources`.
    """
    if studies not in ("each", "common"):
        raise InvalidParameterError(
            f"The 'studies' parameter of {_FUNC} must be each or common. Got {studies!r}."
        )
    if weights not in ("quadratic", "linear", "none", None):
        raise InvalidParameterError(
            f"The 'weights' parameter of {_FUNC} must be quadratic, linear or none. Got {weights!r}."
        )
    sets = _finding_sets(finding_sets)
    check_input_paths(*[("labels", p) for p in labels])
    design: Studies = "each" if intersect else "common" if studies == "common" else "same"
    table, _ = read_label_tables(
        [str(p) for p in labels], state_encoding=state_encoding, blank_state=blank_state
    )
    return compare_sources(
        table,
        pairs,
        findings=split_names(findings, name="findings"),
        finding_sets=sets,
        weights=None if weights == "none" else weights,
        not_mentioned=not_mentioned,
        studies=design,
        both_uncertain=both_uncertain,
        finding_map=finding_map,
        flow_pairs=flow_pairs,
        title=title,
    )
