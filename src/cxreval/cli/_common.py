"""Helpers shared by the command modules: output folders, tidy tables, summary.md, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import typer

__all__ = ["prepare_out", "write_table", "write_summary", "echo_json"]


def prepare_out(out: Path) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_table(df: pd.DataFrame, out: Path, name: str, *, parquet: bool = True) -> Path:
    """Write ``df`` as ``out/name.csv`` and ``out/name.parquet``; return the CSV path."""
    csv = Path(out) / f"{name}.csv"
    df.to_csv(csv, index=False)
    if parquet:
        df.to_parquet(Path(out) / f"{name}.parquet", index=False)
    return csv


def write_summary(out: Path, text: str) -> Path:
    p = Path(out) / "summary.md"
    p.write_text(text if text.endswith("\n") else text + "\n")
    return p


def echo_json(obj: object) -> None:
    typer.echo(json.dumps(obj, indent=2, sort_keys=True, default=str))
