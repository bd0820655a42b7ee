"""Helpers shared by the command modules: the common options, atomic output folders, progress bars, JSON.

No check and no file reading happens here: the input checks these helpers name (:func:`split_list`,
:func:`check_inputs`, :func:`resolve_finding_map`, ...) are the library's (:mod:`cxreval._validation`,
:mod:`cxreval.finding_maps`, :mod:`cxreval.ranking`, :mod:`cxreval.executor`), called as they are; an option's
domain default is read from the library function that takes it."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .._typing import Studies
from ..options import Compute, Design, Resampling
from ..progress import Progress
from ._progress import progress

if TYPE_CHECKING:
    from ..executor import Executor

__all__ = [
    "out_option",
    "overwrite_option",
    "seed_option",
    "findings_option",
    "state_encoding_option",
    "blank_state_option",
    "split_list",
    "check_inputs",
    "check_folder_option",
    "open_output",
    "save_output",
    "progress",
    "echo_json",
    "executor_option",
    "cli_executor",
    "studies_option",
    "finding_map_option",
    "missing_scores_option",
    "map_score_option",
    "resolve_finding_map",
]


def out_option(
    help: str = "Output folder (written atomically; must not exist unless --overwrite).", default: Any = ...
) -> Any:
    """The ``-o/--out`` option every command that writes a folder takes."""
    return typer.Option(default, "--out", "-o", help=help)


def overwrite_option(help: str = "Replace an existing --out folder whole (never mixing runs).") -> Any:
    """The ``--overwrite`` flag of every command that writes ``--out``."""
    return typer.Option(False, "--overwrite", help=help)


def seed_option(help: str = "Random seed.") -> Any:
    return typer.Option(0, "--seed", min=0, metavar="<int>", help=help)


def findings_option(help: str = "Findings, comma-separated (A,B) or repeated (default: all).") -> Any:
    return typer.Option(None, "--findings", "-f", help=help)


def state_encoding_option() -> Any:
    return typer.Option(
        None,
        "--state-encoding",
        help="How numeric label states are read: cxreval (-1 not mentioned, 0 negative, "
        "1 uncertain, 2 positive), chexpert (1 positive, 0 negative, -1 uncertain, blank "
        "not mentioned) or binary (1 positive, 0 negative). Default: state names only; "
        "ambiguous numeric states are refused.",
    )


def blank_state_option() -> Any:
    """The ``--blank-state`` option of every command that reads label tables."""
    return typer.Option(
        None,
        "--blank-state",
        metavar="missing",
        help="A blank state cell is refused, naming its file, row and column (or read as a numeric "
        "--state-encoding says); 'missing' reads it as a missing label, which the analysis "
        "then leaves out.",
    )


def executor_option() -> Any:
    """The ``--executor SPEC`` option of every heavy command (see :mod:`cxreval.executor`)."""
    return typer.Option(
        "serial",
        "--executor",
        metavar="SPEC",
        help="Where the work runs: serial (this process), process:N (N worker processes), "
        "dask:local:N (a Dask LocalCluster of N workers, closed at the end) or "
        "dask://HOST:PORT (a running Dask scheduler; its workers must see the input "
        "and output paths: shared storage). Results are identical on every executor.",
    )


@contextlib.contextmanager
def cli_executor(spec: str | None) -> Iterator[Executor]:
    """The executor of ``--executor SPEC``: a bad spec is refused (exit 2) before any work; whatever it started
    (a LocalCluster and its worker processes) is closed when the command ends, Ctrl-C included."""
    from ..executor import open_executor

    with open_executor(spec or "serial") as ex:
        yield ex


def split_list(values: str | Sequence[str] | None, *, option: str) -> list[str] | None:
    """``--findings A,B --findings C`` -> ``['A', 'B', 'C']`` (None when not given):
    :func:`cxreval._validation.split_list`."""
    from .._validation import split_list as split

    return split(values, option=option)


def check_inputs(*named: tuple[str, Path | None], kind: str = "any") -> None:
    """Every given input path exists, before any computation (``("--labels", path), ...``):
    :func:`cxreval._validation.check_inputs`."""
    from .._validation import check_inputs as check

    check(*named, kind=kind)


def check_folder_option(option: str, path: Path | None, *, write: bool = False) -> None:
    """A folder option (``--cache-dir``, ``--data-mirror``): :func:`cxreval._validation.check_folder`."""
    from .._validation import check_folder

    check_folder(option, path, write=write)


def command_line() -> list[str]:
    """The command line as typed (``['cxreval', 'rank', ...]``), which ``run.json`` records."""
    from .main import current_args

    args = current_args()
    return ["cxreval", *(sys.argv[1:] if args is None else args)]


@contextlib.contextmanager
def open_output(
    out: Path,
    *,
    overwrite: bool,
    inputs: Iterable[Path | None] = (),
    meta: dict[str, object] | None = None,
    protect: Iterable[Path | None] = (),
) -> Iterator[Path]:
    """:func:`cxreval.outputs.output_folder` with the command line as typed recorded in ``run.json``: ``--out``
    is refused (before the body runs) when it is, holds or would replace something inside an input or a
    ``protect`` path."""
    from ..outputs import output_folder

    argv = command_line()
    files = [Path(p).expanduser().absolute() for p in inputs if p is not None]
    guard = [Path(p).expanduser().absolute() for p in protect if p is not None]
    with output_folder(out, overwrite=overwrite, inputs=files, argv=argv, meta=meta, protect=guard) as d:
        yield d


def save_output(
    result: Any,
    out: Path,
    *,
    overwrite: bool,
    inputs: Iterable[Path | None] = (),
    meta: dict[str, object] | None = None,
    protect: Iterable[Path | None] = (),
) -> Any:
    """``result.save`` into the output folder of :func:`open_output` (a job that ran before the folder opens);
    what ``save`` returns (each file written, by its key)."""
    with open_output(out, overwrite=overwrite, inputs=inputs, meta=meta, protect=protect) as d:
        return result.save(d)


def echo_json(obj: object) -> None:
    typer.echo(json.dumps(obj, indent=2, sort_keys=True, default=str))


def studies_option(
    help: str = "Study design with several references: common (default: per "
    "finding, only the studies every reference labelling it labels, so each finding's AUCs are "
    "computed on the same studies, and macro/micro averages over the findings every reference "
    "labels) or each (every reference on the studies and findings it labels). Stated in "
    "summary.md and run.json; the counts per reference and finding are in counts.csv.",
) -> Any:
    """``--studies common|each``: the study design when several references (sources, readers) are compared."""
    return typer.Option(Design().studies, "--studies", help=help)


def finding_map_option(
    help: str = "Finding map applied to labels and scores before scoring: a "
    "built-in map (nih_to_google, nih_to_chexpert, nih_to_vindr, nih_to_padchest) or a YAML "
    "file ('findings: {Nodule or Mass: any(Nodule, Mass)}', optional 'score: max|mean'). "
    "Written to finding_map.csv and run.json.",
) -> Any:
    """``--finding-map NAME|FILE.yaml``: re-express labels and scores in another vocabulary."""
    return typer.Option(None, "--finding-map", help=help)


def map_score_option() -> Any:
    return typer.Option(
        None,
        "--map-score",
        help="Score of a merged finding from its sources' scores: max or mean "
        "(default: the map's, max for the built-in maps).",
    )


def missing_scores_option() -> Any:
    """``--missing-scores refuse|chance``."""
    return typer.Option(
        Design().missing_scores,
        "--missing-scores",
        help="A model with no score at all for a finding: refuse "
        "(default) or chance (AUC 0.5, the XQA paper's convention: kept in rankings and macro/micro "
        "averages, marked in column 'chance' of auc.csv).",
    )


def resolve_finding_map(spec: str | None, score: str | None) -> Any:
    """``--finding-map`` (and ``--map-score``), read and checked before any file is read
    (:func:`cxreval.finding_maps.resolve_finding_map`); None without a map."""
    from ..finding_maps import resolve_finding_map as resolve

    return resolve(spec, score)


def refuse_options(given: bool, message: str) -> None:
    """A combination of options that does not apply, refused before any work:
    :func:`cxreval._validation.refuse_options`."""
    from .._validation import refuse_options as refuse

    refuse(given, message)


def json_option(help: str = "Print the result as JSON.") -> Any:
    """``--json``: print the command's result as JSON instead of text (off by default)."""
    return typer.Option(False, "--json", help=help)


def cache_dir_option(help: str = "Cache directory of `cxreval data fetch`.") -> Any:
    """``--cache-dir``: where ``cxreval data fetch`` keeps the public metadata (default ``$CXREVAL_CACHE``)."""
    return typer.Option(None, "--cache-dir", help=help)


def wrote(files: Iterable[str | Path], out: Path) -> str:
    """``wrote a.csv, b.csv and summary.md to OUT``: what a command prints once its folder is saved (each file
    by its name, then the summary)."""
    from ..io._write import SUMMARY_FILE

    return f"wrote {', '.join(Path(p).name for p in files)} and {SUMMARY_FILE} to {out}"


def out_paths(written: Mapping[str, str | Path], out: Path) -> dict[str, str]:
    """Each file a result saved, by its key, as a path in ``--out`` as typed (``{'auc': 'auc-out/auc.csv'}``):
    the files ``--json`` prints."""
    return {k: str(Path(out) / Path(p).name) for k, p in written.items()}


def echo_result(result: Any, *, json_out: bool, text: str | None = None, nl: bool = False) -> None:
    """Print a job's result: ``result.to_dict()`` as JSON with ``--json``, else ``text`` (one line) or, without it,
    its ``summary()`` Markdown (``nl``: add a newline after it)."""
    if json_out:
        echo_json(result.to_dict())
    elif text is not None:
        typer.echo(text)
    else:
        typer.echo(result.summary(), nl=nl)


def repeated(option: str, paths: Sequence[Path] | None) -> list[tuple[str, Path]]:
    """``(option, path)`` for each path of a repeatable option (``--labels a --labels b``), for
    :func:`named_inputs`."""
    return [(option, p) for p in paths or ()]


def named_inputs(*named: tuple[str, Path | None]) -> list[Path | None]:
    """Check that every named input exists (before any work: :func:`check_inputs`); the inputs run.json records,
    in the same order."""
    check_inputs(*named)
    return [p for _, p in named]


def model_inputs(
    predictions: Sequence[Path] | None, labels: Sequence[Path] | None, *others: tuple[str, Path | None]
) -> list[Path | None]:
    """``classify``, ``rank -p``, ``subgroups`` and ``plan``: check that ``--predictions``, ``--labels`` and the
    other named inputs exist (before any work); the inputs run.json records."""
    return named_inputs(*repeated("--predictions", predictions), *repeated("--labels", labels), *others)


def operating_point_inputs(values: Sequence[str] | None) -> list[tuple[str, Path | None]]:
    """``classify --operating-point from=FILE``: ``("--operating-point", FILE)`` for each such file, the inputs
    run.json records (:func:`cxreval.classification._operating_points.operating_point_files`)."""
    from ..classification._operating_points import operating_point_files

    return [("--operating-point", p) for p in operating_point_files(values)]


__all__ += ["operating_point_inputs"]


def auc_table_input(spec: str | None) -> Path | None:
    """``rank --auc-table FILE|xqa``: the file, checked to exist before any work (None for the packaged tables
    or without the option): :func:`cxreval.ranking.auc_table_file`."""
    from ..ranking._published import auc_table_file

    return auc_table_file(spec, option="--auc-table")


def references_option(
    help: str = "Label sources to evaluate against, comma-separated or repeated (default all).",
) -> Any:
    """``-r/--references`` of ``classify`` and ``rank``."""
    return typer.Option(None, "--references", "-r", help=help)


def model_groups_option() -> Any:
    return typer.Option(None, "--model-groups", help="CSV with columns model, group.")


def policy_option() -> Any:
    return typer.Option(Design().policy, "--policy", help="Uncertain labels: exclude, zeros or ones.")


def not_mentioned_option(help: str = "not_mentioned labels: negative or exclude.") -> Any:
    return typer.Option(Design().not_mentioned, "--not-mentioned", help=help)


def unlabeled_option() -> Any:
    return typer.Option(
        Design().unlabeled, "--unlabeled", help="Prediction studies absent from the labels: error or drop."
    )


def n_resamples_option(
    help: str = "Bootstrap replicates (0: point estimates only).", min: int | None = None
) -> Any:
    return typer.Option(Resampling().n_resamples, "--n-resamples", min=min, help=help)


def confidence_level_option(help: str = "Confidence level of the percentile CIs.") -> Any:
    return typer.Option(Resampling().confidence_level, "--confidence-level", help=help)


def kendall_option() -> Any:
    """``rank --kendall tau-a|tau-b`` (default: the rank job's)."""
    from ..jobs import compare_references_files

    return typer.Option(
        library_default(compare_references_files, "kendall"),
        "--kendall",
        help="KRCC variant: tau-a (default, the XQA paper's "
        "(C - D) / (n(n-1)/2)) or tau-b (tie-corrected, scipy.stats.kendalltau).",
    )


def spearman_option() -> Any:
    """``rank --spearman formula|pearson`` (default: the rank job's)."""
    from ..jobs import compare_references_files

    return typer.Option(
        library_default(compare_references_files, "spearman"),
        "--spearman",
        help="SRCC variant: formula (default, the XQA paper's "
        "1 - 6 sum d^2 / (n(n^2-1)) on average ranks) or pearson (Pearson correlation of average "
        "ranks, scipy.stats.spearmanr). Equal without ties.",
    )


def library_default(func: Any, parameter: str) -> Any:
    """The default of ``func``'s keyword ``parameter``: an option's default read from the job that takes it, so
    that the command line holds no domain default of its own."""
    import inspect

    return inspect.signature(func).parameters[parameter].default


def studies_value(value: str) -> Studies:
    """``--studies`` as the library's :data:`cxreval.Studies` (the library checks which values it takes)."""
    from typing import cast

    return cast(Studies, value)


__all__ += [
    "refuse_options",
    "repeated",
    "named_inputs",
    "model_inputs",
    "auc_table_input",
    "references_option",
    "model_groups_option",
    "policy_option",
    "not_mentioned_option",
    "unlabeled_option",
    "n_resamples_option",
    "confidence_level_option",
    "kendall_option",
    "spearman_option",
    "studies_value",
    "library_default",
    "command_line",
    "labels_option",
    "predictions_option",
    "wrote",
    "out_paths",
]


def labels_option(
    help: str = "Long label table (CSV or Parquet): study_id, [patient_id,] finding, source, state (repeatable).",
    default: Any = ...,
) -> Any:
    """``--labels/-l``: the long label tables (repeatable, read as one table; required unless ``default``)."""
    return typer.Option(default, "--labels", "-l", help=help)


def predictions_option(help: str, default: Any = ...) -> Any:
    """``--predictions/-p``: the long prediction tables (repeatable; required unless ``default``)."""
    return typer.Option(default, "--predictions", "-p", help=help)


@contextlib.contextmanager
def executor_output(
    executor: str | None,
    out: Path,
    *,
    overwrite: bool,
    inputs: Iterable[Path | None] = (),
    meta: dict[str, object] | None = None,
) -> Iterator[tuple[Executor, Path, Progress]]:
    """The executor of ``--executor`` (a bad spec refused first, closed at the end), the output folder
    (:func:`open_output`) and the progress bars of a command that runs one job on an executor:
    ``with executor_output(executor, out, overwrite=..., inputs=[...]) as (ex, d, prog)``."""
    with (
        cli_executor(executor) as ex,
        open_output(out, overwrite=overwrite, inputs=inputs, meta=meta) as d,
        progress() as prog,
    ):
        yield ex, d, prog


def device_option() -> Any:
    """``--device`` of the model commands (``predict``, ``finetune``)."""
    return typer.Option("cpu", "--device", help="cpu, cuda or cuda:N.")


def weights_dir_option() -> Any:
    """``--weights-dir`` of the model commands: where TorchXRayVision weight files are."""
    return typer.Option(
        None,
        "--weights-dir",
        help="Folder holding TorchXRayVision weight files (default ~/.torchxrayvision/models_data).",
    )


def no_download_option() -> Any:
    """``--no-download`` of the model commands."""
    return typer.Option(
        False, "--no-download", help="Never download weights; fail naming where the file must be put."
    )


def show_progress_option() -> Any:
    """``--progress/--no-progress`` of the model commands."""
    return typer.Option(
        None, "--progress/--no-progress", help="Progress bar on stderr (default: when stderr is a terminal)."
    )


def design_arguments(params: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords ``classify``, ``rank -p ... -l ...`` and ``subgroups`` give their job, from the command's parsed
    options (``ctx.params``): the lists of names split, the label reading options, and the
    :class:`~cxreval.options.Design` and :class:`~cxreval.options.Resampling` built once."""
    return {
        "references": split_list(params["references"], option="--references"),
        "findings": split_list(params["findings"], option="--findings"),
        "state_encoding": params["state_encoding"],
        "blank_state": params["blank_state"],
        "design": Design(
            studies=studies_value(params["studies"]),
            policy=params["policy"],
            not_mentioned=params["not_mentioned"],
            unlabeled=params["unlabeled"],
            finding_map=params["finding_map"],
            map_score=params["map_score"],
            missing_scores=params["missing_scores"],
        ),
        "resampling": Resampling(
            n_resamples=params["n_resamples"], confidence_level=params["confidence_level"], rng=params["seed"]
        ),
    }


def evaluation_arguments(params: Mapping[str, Any], *, progress: Progress, spill_dir: Path) -> dict[str, Any]:
    """The keywords ``classify`` and ``rank -p ... -l ...`` give their job: :func:`design_arguments`, the model
    groups and the :class:`~cxreval.options.Compute` of the command's executor."""
    return {
        **design_arguments(params),
        "model_groups": params["model_groups"],
        "compute": Compute(executor=params["executor"], progress=progress, spill_dir=spill_dir),
    }


__all__ += ["design_arguments", "evaluation_arguments"]
