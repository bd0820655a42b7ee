"""``cxreval fuse``: fuse several readers' labels into consensus sources, and score them against an
adjudicated source (the XQA-Chest paper's Table 30 / Figure 6: fused labels against the consensus). Parses the options, calls
:func:`cxreval.jobs.fuse_and_compare_files`, saves its :class:`~cxreval.fusion.FusionResult` and echoes."""

from __future__ import annotations

import warnings
from pathlib import Path

import typer

from ..exceptions import CxrevalWarning
from ..fusion import list_fusion
from ..fusion._mace import MACE_METHODS
from ..jobs import DEFAULT_FUSION_METHODS, fuse_and_compare_files
from ..options import Compute
from ._common import (
    blank_state_option,
    echo_json,
    executor_option,
    executor_output,
    findings_option,
    json_option,
    labels_option,
    not_mentioned_option,
    out_option,
    out_paths,
    overwrite_option,
    seed_option,
    state_encoding_option,
    studies_option,
    studies_value,
    wrote,
)

__all__: list[str] = []


def fuse(
    labels: list[Path] = labels_option(),
    readers: str = typer.Option(..., "--readers", help="Comma-separated sources to fuse (at least two)."),
    out: Path = out_option(),
    methods: str = typer.Option(
        ",".join(DEFAULT_FUSION_METHODS),
        "--methods",
        help="Comma-separated methods: mv, or, and, ds, mace, nn, nn_ps (nn* need --adjudicated).",
    ),
    adjudicated: str = typer.Option(
        None,
        "--adjudicated",
        help="Reference source: score every method against it "
        "(fusion_agreement.csv); the nn methods are trained on it.",
    ),
    findings: list[str] = findings_option(
        "Findings to fuse, comma-separated or repeated; aliases and vocabulary names (xqa, "
        "xqa_selected, ...) accepted (default all)."
    ),
    not_mentioned: str = not_mentioned_option("A reader's not_mentioned label: 'negative' or 'exclude'."),
    seed: int = seed_option("Seed of the randomised methods (MACE restarts, nn)."),
    state_encoding: str = state_encoding_option(),
    blank_state: str = blank_state_option(),
    overwrite: bool = overwrite_option(),
    studies: str = studies_option(
        "common (default, as classify and rank: per finding, only the studies every reader and the "
        "adjudicated reference, if any, label) or each (every study any reader labels)."
    ),
    json_out: bool = json_option("Print the run summary (and agreement) as JSON."),
    save_model: bool = typer.Option(
        False,
        "--save-model",
        help="Save each fitted nn/nn_ps model as "
        "<method>_model.npz in the output folder (apply it with --load-model).",
    ),
    load_model: Path = typer.Option(
        None,
        "--load-model",
        help="Apply a saved nn/nn_ps model (from --save-model) "
        "instead of training it; --readers are mapped onto the model's readers by name, "
        "else in the model's (sorted) reader order.",
    ),
    write_inputs: bool = typer.Option(
        False,
        "--write-inputs",
        help="Also write the input labels (every source of "
        "--labels) into fused_labels, before the fused sources (default: the fused "
        "sources only).",
    ),
    labels_format: str = typer.Option(
        "csv", "--labels-format", help="Format of fused_labels: csv, parquet or both."
    ),
    executor: str = executor_option(),
    nn_hidden: int = typer.Option(
        None, "--nn-hidden", min=1, help="nn/nn_ps: hidden units of the MLP (default 32)."
    ),
    nn_epochs: int = typer.Option(
        None,
        "--nn-epochs",
        min=1,
        help="nn/nn_ps: the most full-batch epochs considered "
        "(default 300); the number used is chosen by k-fold cross-validation every 10 "
        "epochs, then the final network is trained on every study for that many.",
    ),
    nn_folds: int = typer.Option(
        None,
        "--nn-folds",
        min=2,
        help="nn/nn_ps: k, the cross-validation folds (default 5), drawn with --seed.",
    ),
    nn_scoring: str = typer.Option(
        None,
        "--nn-scoring",
        help="nn/nn_ps: which labels a study with an "
        "adjudicated label gets, and so is scored on: out-of-fold (default; the fold "
        "model that did not see it) or in-sample (the final network, trained on it too: "
        "optimistic against the reference it learnt).",
    ),
    mace_method: str = typer.Option(
        MACE_METHODS[0],
        "--mace-method",
        help="mace: vb (default; variational Bayes "
        "with Beta(0.5, 0.5) / Dirichlet priors, as the reference implementation) or em "
        "(plain EM with additive smoothing).",
    ),
) -> None:
    """Fuse readers' labels with MV, FUSE_OR, FUSE_AND, Dawid-Skene, MACE, NN Fusion (PS) into new sources.

    Writes fused_labels (the fused sources; --write-inputs adds the input labels; --labels-format csv, parquet
    or both), per-method diagnostics (ds_confusion, mace_competence, fusion_convergence: each Dawid-Skene /
    MACE fit's iterations and whether it converged, fusion_warnings), agreement tables (fusion_agreement with
    --adjudicated, method_agreement), summary.md and run.json: the files of cxreval.fusion.FusionResult, the same
    the demo's fusion section writes. With --executor, Dawid-Skene and MACE are fitted one
    finding per task; each task reads its finding's arrays from a spill folder inside the output folder
    (removed at the end; on a multi-machine cluster the output folder must be on shared storage). The
    output is identical to the serial run's, byte for byte.

    Example:

    \b
        cxreval fuse -l labels.csv --readers Rep1,Rep2,Rep3 --adjudicated CR --seed 0 -o fuse-out

    At scale: Parquet output, two worker processes:

    \b
        cxreval fuse -l big.parquet --readers R1,R2,R3,R4,R5 --labels-format parquet --executor process:2 -o big

    NN Fusion with its hyper-parameters, scored in-sample instead of out-of-fold, and MACE fitted by EM:

    \b
        cxreval fuse -l labels.csv --readers Rep1,Rep2 --methods nn,mace --adjudicated CR --nn-hidden 64 --nn-epochs 200 --nn-folds 10 --nn-scoring in-sample --mace-method em --seed 0 -o fuse-nn

    Train NN Fusion on one dataset and apply it to another (the XQA paper's Tables 14-15):

    \b
        cxreval fuse -l xqa.csv --readers Rep1,Rep2 --methods nn --adjudicated CR --save-model -o fit
        cxreval fuse -l mimic.csv --readers chexpert,chexbert --methods mv --load-model fit/nn_model.npz -o mimic
    """
    inputs = [*labels, *([load_model] if load_model else [])]
    meta: dict[str, object] = {"seed": seed, "design": {"studies": studies}}
    with executor_output(executor, out, overwrite=overwrite, inputs=inputs, meta=meta) as (ex, d, prog):
        res = fuse_and_compare_files(
            labels,
            readers,
            methods,
            adjudicated=adjudicated,
            findings=findings,
            not_mentioned=not_mentioned,
            rng=seed,
            model=load_model,
            include_inputs=write_inputs,
            compute=Compute(executor=ex, progress=prog, spill_dir=d),
            studies=studies_value(studies),
            nn_hidden=nn_hidden,
            nn_epochs=nn_epochs,
            nn_folds=nn_folds,
            nn_scoring=nn_scoring,
            mace_method=mace_method,
            labels_format=labels_format,
            save_model=save_model,
            state_encoding=state_encoding,
            blank_state=blank_state,
            title=f"cxreval fuse: {', '.join(str(p) for p in labels)}",
        )
        meta["method_params"] = res.params
        task = prog.add("writing")
        written = {k: p for k, p in res.save(d).items() if k != "summary"}
        prog.done(task)
    for w in res.warnings:  # summarised once per run with the other warnings (cli.main)
        warnings.warn(w, CxrevalWarning, stacklevel=1)
    if json_out:
        payload: dict[str, object] = {
            "files": out_paths(written, out),
            **res.to_dict(),
        }
        if res.agreement is not None:
            payload["agreement"] = res.agreement.to_dict(orient="records")
        echo_json(payload)
    else:
        typer.echo(f"{wrote(written.values(), out)} (methods available: {', '.join(list_fusion())})")


def register(app: typer.Typer) -> None:
    app.command("fuse")(fuse)
