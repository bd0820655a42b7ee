"""``cxreval reader``: run a reader study (image labels, report-section labels, IQA ratings, adjudication)
in the browser and export it into cxreval's tables. Needs the optional ``reader`` extra."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..reader._jobs import READER_DB_ENV
from ..reader.db import DEFAULT_URL
from ._common import executor_option, json_option, out_option, overwrite_option
from .main import command_group, command_help

__all__: list[str] = []

reader_app = command_group(command_help("reader"))

_DB_HELP = (
    f"SQLAlchemy URL of the study database, e.g. sqlite:///study.db or postgresql://user@host/db "
    f"(default ${READER_DB_ENV}, else {DEFAULT_URL})."
)


def _db_option() -> Any:
    """``--db URL`` of every reader sub-command."""
    return typer.Option(None, "--db", help=_DB_HELP)


def _url_option(help: str) -> Any:
    """``--url`` of the reader sub-commands that print links: the server's base URL."""
    return typer.Option("http://127.0.0.1:8000", "--url", help=help)


def _link(base: str, token: str) -> str:
    return f"{base.rstrip('/')}/#token={token}"


@reader_app.command("init")
def init_cmd(
    study: Path = typer.Option(
        ..., "--study", help="Study YAML file (images, reports, IQA pairs, findings, tasks, readers)."
    ),
    db: str = _db_option(),
    url: str = _url_option("Base URL printed in the readers' links."),
    images: Path = typer.Option(
        None,
        "--images",
        help="Folder to copy the images from first (<study_id>.png/.jpg/.dcm... or <study_id>/<image>): each "
        "study of the study file's patients file without an image in its images folder, e.g. a `cxreval plan` "
        "made without --images.",
    ),
    executor: str = executor_option(),
) -> None:
    """Create a study database, write every image's display rendition into the study folder (the server then
    reads them instead of decoding each image on its first display) and print the private link of every
    reader in the study file.

    Example: cxreval reader init --study study.yaml --db sqlite:///study.db
    """
    from ..reader import create_study
    from ..reader._jobs import study_url
    from ._common import check_folder_option, cli_executor, progress

    check_folder_option("--images", images)
    url_db = study_url(db)
    with cli_executor(executor) as ex, progress() as p:
        made = create_study(study, url_db, images=images, executor=ex, progress=p)
    spec, tokens = made.spec, made.tokens
    typer.echo(
        f"study {spec.name!r}: tasks {', '.join(spec.tasks)}; items {dict(made.n_items)}; findings "
        f"{len(spec.findings)}"
    )
    for name, token in tokens.items():
        typer.echo(f"{name}: {_link(url, token)}")
    if made.organiser_token is not None:  # the organiser's page: progress, open conflicts, export download
        typer.echo(f"organiser (progress and export): {_link(url, made.organiser_token)}")
    if not tokens:
        typer.echo(
            f"the study file names no readers yet: add readers with `cxreval reader add-reader NAME --db "
            f"{url_db}` (and resolvers with `--role resolver`)."
        )


@reader_app.command("add-reader")
def add_reader_cmd(
    name: str = typer.Argument(..., help="Reader name (letters, digits, _ . -)."),
    db: str = _db_option(),
    role: str = typer.Option(
        "reader",
        "--role",
        help="'reader' (label, rate), 'resolver' (adjudicate) or 'organiser' (progress, export download).",
    ),
    new_token: bool = typer.Option(False, "--new-token", help="Replace an existing reader's link."),
    url: str = _url_option("Base URL printed in the link."),
) -> None:
    """Add a reader and print their private link (the token is stored hashed and shown only now).

    Example: cxreval reader add-reader carol --role resolver --db sqlite:///study.db
    """
    from ..reader._jobs import add_study_reader, study_url

    typer.echo(_link(url, add_study_reader(name, study_url(db), role=role, new_token=new_token)))


@reader_app.command("serve")
def serve_cmd(
    db: str = _db_option(),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="Interface to bind (0.0.0.0 exposes the study to the network)."
    ),
    port: int = typer.Option(8000, "--port", help="TCP port."),
) -> None:
    """Serve the study to its readers until Ctrl-C.

    Example: cxreval reader serve --db sqlite:///study.db --port 8000
    """
    from ..reader._jobs import open_study_server, study_url

    server = open_study_server(study_url(db), host=host, port=port)
    typer.echo(f"serving study {server.store.spec.name!r} on {server.url} (Ctrl-C stops)")
    server.serve()


@reader_app.command("status")
def status_cmd(
    db: str = _db_option(),
    json_out: bool = json_option("Print as JSON."),
) -> None:
    """Progress per reader and task, and the database's integrity check.

    Example: cxreval reader status --db sqlite:///study.db
    """
    from ..reader import check_study
    from ..reader._jobs import study_url
    from ._common import echo_json

    st = check_study(study_url(db))
    integrity = st.integrity
    if json_out:
        echo_json(
            {
                "study": st.name,
                "progress": st.progress.to_dict(orient="records"),
                "integrity": integrity.to_dict(),
            }
        )
        return
    typer.echo(f"study {st.name!r}; integrity: {'ok' if integrity.ok else '; '.join(integrity.problems)}")
    for r in st.progress.itertuples():
        typer.echo(
            f"{r.reader:<16} {r.task:<13} {r.n_done:>5}/{r.n_items:<5} ({r.n_submissions} submissions"
            f"{', last ' + r.last if r.last else ''})"
        )


@reader_app.command("export")
def export_cmd(
    out: Path = out_option("Output folder (written atomically)."),
    db: str = _db_option(),
    overwrite: bool = overwrite_option("Replace an existing output folder."),
) -> None:
    """Export labels (long table), boxes (localize format), IQA ratings (iqa agree format), notes and the audit
    log; a study with a confidence rating also ratings.csv (reader, modality, study_id, patient_id, finding,
    rating: the table of an MRMC ROC analysis). Text cells that a spreadsheet would run as a formula (starting = + - @, tab or CR) get a leading '.

    Example: cxreval reader export --db sqlite:///study.db --out study-export
    """
    from ..reader import export_study
    from ..reader._jobs import database_files, study_url
    from ._common import save_output

    url_db = study_url(db)
    res = export_study(url_db, out=out, overwrite=overwrite)
    meta = {"study": res.study, **res.to_dict()}
    save_output(res, out, overwrite=overwrite, meta=meta, protect=database_files(url_db))
    rated = (
        "" if res.n_finding_ratings is None else f"{res.n_finding_ratings} finding ratings (ratings.csv), "
    )
    typer.echo(
        f"wrote {res.n_labels} labels ({', '.join(res.sources) or 'no source'}), {res.n_boxes} boxes, "
        f"{rated}{res.n_ratings} ratings, {res.n_submissions} audited submissions to {out}"
        + (f"; {res.n_unresolved} conflict(s) not yet resolved" if res.n_unresolved else "")
    )


def register(app: typer.Typer) -> None:
    app.add_typer(reader_app, name="reader")
