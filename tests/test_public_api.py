"""Every public parameter rejects a value of the wrong type with a CxrevalError naming it.

As scikit-learn's ``test_public_functions.py``: for each function below and each listed parameter, the
parameter is replaced by ``BadType()`` (other arguments valid) and the call must raise a
:class:`~cxreval.exceptions.CxrevalError` (never a bare ``TypeError``/``AttributeError`` from deep
inside) whose message names the parameter (or, for a table, what was expected). Add a row to ``CASES``
when a public function lands.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pandas as pd
import pytest

import cxreval
from cxreval.exceptions import CxrevalError


class BadType:
    """A value no public parameter accepts."""

    def __repr__(self) -> str:
        return "BadType()"


def _labels() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "study_id": ["a", "b"],
            "patient_id": ["1", "2"],
            "finding": ["Edema"] * 2,
            "source": ["s"] * 2,
            "state": ["positive", "negative"],
        }
    )


def _preds() -> pd.DataFrame:
    return pd.DataFrame({"study_id": ["a"], "model": ["m"], "finding": ["Edema"], "score": [0.5]})


def _meta() -> pd.DataFrame:
    return pd.DataFrame({"study_id": ["a", "b", "c", "d"], "patient_id": ["1", "2", "3", "4"]})


def _wide(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("Study,Edema\nx/patient1/s1,1.0\n")
    return p


def _long(tmp_path):
    p = tmp_path / "l.csv"
    _labels().to_csv(p, index=False)
    return p


def _pred_file(tmp_path):
    p = tmp_path / "preds.csv"
    _preds().to_csv(p, index=False)
    return p


def _mrmc_ratings():
    """2 modalities x 2 readers x 4 cases (2 non-diseased, then 2 diseased)."""
    import numpy as np

    return np.array(
        [[[0.1, 0.3, 0.2, 0.9], [0.2, 0.1, 0.5, 0.4]], [[0.3, 0.1, 0.6, 0.2], [0.1, 0.4, 0.3, 0.8]]]
    )


def _split_dir(tmp_path):
    (tmp_path / "a_list.txt").write_text("a\n")
    return tmp_path


# (module:function, positional-argument factories, keyword-argument factories, parameters to feed BadType()).
# Factories take tmp_path. A parameter is positional when it is a key of the args dict (in order).
CASES = [
    ("cxreval.findings:canonical_finding", {"name": lambda t: "Edema"}, {}, ["name"]),
    (
        "cxreval.labels:validate_label_table",
        {"df": lambda t: _labels()},
        {"require_patient": lambda t: True},
        ["df"],
    ),
    ("cxreval.labels:validate_predictions", {"df": lambda t: _preds()}, {}, ["df"]),
    (
        "cxreval.schema:binarize",
        {"states": lambda t: ["positive"]},
        {"policy": lambda t: "exclude", "not_mentioned": lambda t: "negative"},
        ["states", "policy", "not_mentioned"],
    ),
    ("cxreval.schema._states:parse_states", {"values": lambda t: ["positive"]}, {}, ["values"]),
    ("cxreval.labels:read_labels", {"path": _long}, {}, ["path"]),
    ("cxreval.labels:read_predictions", {"path": lambda t: t / "p.csv"}, {}, ["path"]),
    (
        "cxreval.finding_maps:resolve_finding_map",
        {"finding_map": lambda t: "nih_to_google"},
        {"map_score": lambda t: "max"},
        ["finding_map", "map_score"],
    ),
    ("cxreval.ranking._published:auc_table_file", {"spec": lambda t: "xqa"}, {}, ["spec"]),
    (
        "cxreval.reader:export_study",
        {"db": lambda t: f"sqlite:///{t / 'absent.db'}"},
        {"out": lambda t: t / "out"},
        ["out"],
    ),
    (
        "cxreval.stats:prepare_from_files",
        {"predictions": _pred_file, "labels": _long},
        {},
        ["predictions", "labels", "state_encoding", "references", "policy"],
    ),
    ("cxreval.labels:read_wide_labels", {"path": _wide}, {"source": lambda t: "x"}, ["path", "source"]),
    (
        "cxreval.datasets:patient_split",
        {"table": lambda t: _meta()},
        {
            "fractions": lambda t: (0.5, 0.5),
            "names": lambda t: ("a", "b"),
            "rng": lambda t: 0,
            "stratify": lambda t: None,
        },
        ["table", "fractions", "names", "rng", "stratify"],
    ),
    (
        "cxreval.datasets:image_split",
        {"table": lambda t: _meta()},
        {"fractions": lambda t: (0.5, 0.5), "rng": lambda t: 0},
        ["table", "fractions", "rng"],
    ),
    (
        "cxreval.datasets:audit_split",
        {"splits": lambda t: {"x": ["a"]}, "metadata": lambda t: _meta()},
        {},
        ["splits", "metadata"],
    ),
    ("cxreval.datasets:read_split_lists", {"directory": _split_dir}, {}, ["directory"]),
    (
        "cxreval.datasets:list_datasets",
        {},
        {"pattern": lambda t: "*", "kind": lambda t: None},
        ["pattern", "kind"],
    ),
    (
        "cxreval.datasets:load_dataset",
        {"name": lambda t: "openi"},
        {"path": lambda t: t / "missing.tgz"},
        ["name", "path"],
    ),
    (
        "cxreval.datasets:metadata_path",
        {"name": lambda t: "BBox_List_2017.csv.gz"},
        {"path": lambda t: t / "x.csv"},
        ["name", "path"],
    ),
    (
        "cxreval.datasets:fetch_metadata",
        {},
        {"cache_dir": lambda t: t, "from_wheel": lambda t: t / "w.whl"},
        ["cache_dir", "from_wheel"],
    ),
    (
        "cxreval.datasets.openi:read_openi_reports",
        {"path": lambda t: t / "x.tgz"},
        {"require_images": lambda t: False},
        ["path", "require_images"],
    ),
    (
        "cxreval.datasets.openi:openi_mesh",
        {"reports": lambda t: pd.DataFrame({"report_id": [], "mesh_major": []})},
        {"kind": lambda t: "major"},
        ["reports", "kind"],
    ),
    ("cxreval.datasets.nih:load_labels", {"path": lambda t: t / "x.csv"}, {}, ["path"]),
    ("cxreval.datasets.google:load_labels", {"path": lambda t: t / "x.csv"}, {}, ["path"]),
    (
        "cxreval.datasets.audit:audit_chestxray14",
        {},
        {"path": lambda t: t / "x.csv", "split_dir": lambda t: None},
        ["path", "split_dir"],
    ),
    (
        "cxreval.localization._heatmap_files:scan_heatmaps",
        {"paths": lambda t: [t / "maps.npz"]},
        {},
        ["paths"],
    ),
    ("cxreval.localization._heatmap_files:read_maps", {"index": lambda t: None}, {}, ["index"]),
    (
        "cxreval.localization:evaluate_heatmaps",
        {"heatmaps": lambda t: {}, "boxes": lambda t: pd.DataFrame()},
        {},
        ["heatmaps"],
    ),
    (
        "cxreval.mrmc:or_analysis",
        {"ratings": lambda t: _mrmc_ratings(), "truth": lambda t: [0, 0, 1, 1]},
        {
            "covariance": lambda t: "jackknife",
            "clusters": lambda t: None,
            "confidence_level": lambda t: 0.95,
            "reader_names": lambda t: None,
            "fixed_readers_clamp": lambda t: True,
        },
        [
            "ratings",
            "truth",
            "covariance",
            "clusters",
            "confidence_level",
            "reader_names",
            "fixed_readers_clamp",
        ],
    ),
    (
        "cxreval.mrmc:dbm_analysis",
        {"ratings": lambda t: _mrmc_ratings(), "truth": lambda t: [0, 0, 1, 1]},
        {"modality_names": lambda t: None},
        ["ratings", "truth", "modality_names"],
    ),
    (
        "cxreval.mrmc:model_vs_readers",
        {
            "reader_ratings": lambda t: _mrmc_ratings()[0],
            "model_score": lambda t: [0.1, 0.2, 0.3, 0.4],
            "truth": lambda t: [0, 0, 1, 1],
        },
        {"model_name": lambda t: "model"},
        ["reader_ratings", "model_score", "truth", "model_name"],
    ),
    (
        "cxreval.mrmc:auc_covariance",
        {"ratings": lambda t: _mrmc_ratings(), "truth": lambda t: [0, 0, 1, 1]},
        {"method": lambda t: "delong"},
        ["ratings", "truth"],
    ),
    (
        "cxreval.mrmc:simulate_roe_metz",
        {},
        {
            "n_readers": lambda t: 2,
            "n_cases_negative": lambda t: 2,
            "n_cases_positive": lambda t: 2,
            "n_modalities": lambda t: 2,
            "delta": lambda t: 0.0,
            "parameters": lambda t: "HL-1.5",
            "mu": lambda t: None,
            "rng": lambda t: 0,
        },
        [
            "n_readers",
            "n_cases_negative",
            "n_cases_positive",
            "n_modalities",
            "delta",
            "parameters",
            "mu",
            "rng",
        ],
    ),
    (
        "cxreval.mrmc:mrmc_sample_size",
        {
            "pilot": lambda t: {
                "var_modality_reader": 0.0002,
                "error_variance": 0.0008,
                "cov1": 0.0003,
                "cov2": 0.0003,
                "cov3": 0.0002,
                "n_cases": 100,
            }
        },
        {
            "effect": lambda t: 0.05,
            "n_readers": lambda t: 5,
            "n_cases": lambda t: 100,
            "alpha": lambda t: 0.05,
            "analysis": lambda t: "RRRC",
            "target_power": lambda t: 0.8,
            "max_cases": lambda t: 1000,
        },
        ["pilot", "effect", "n_readers", "n_cases", "alpha", "analysis", "target_power", "max_cases"],
    ),
    (
        "cxreval.jobs:degrade_image_folder",
        {"images": lambda t: t, "plan": lambda t: "demo", "out": lambda t: t / "o"},
        {},
        ["images", "out"],
    ),
    (
        "cxreval.jobs:score_pairs_file",
        {"pairs": lambda t: t / "pairs.csv"},
        {},
        ["pairs", "niqe_model", "out"],
    ),
    ("cxreval.jobs:compare_metrics_file", {"scores": lambda t: t / "scores.csv"}, {}, ["scores", "out"]),
    (
        "cxreval.jobs:compare_with_experts_files",
        {"scores": lambda t: t / "scores.csv", "ratings": lambda t: t / "ratings.csv"},
        {},
        ["scores", "ratings", "out"],
    ),
    ("cxreval.jobs:fetch_dataset_metadata", {}, {}, ["cache_dir", "from_wheel"]),
    (
        "cxreval.jobs:audit_dataset_files",
        {"dataset": lambda t: "chestxray14"},
        {},
        ["data_entry", "bbox_list", "split_dir", "cache_dir", "out"],
    ),
    (
        "cxreval.jobs:split_dataset_files",
        {"dataset": lambda t: "chestxray14"},
        {},
        ["path", "cache_dir", "out"],
    ),
    (
        "cxreval.jobs:export_dataset_files",
        {"dataset": lambda t: "chestxray14"},
        {},
        ["path", "cache_dir", "out"],
    ),
    ("cxreval.jobs:write_report_page", {"result_dirs": lambda t: [t]}, {}, ["out", "thresholds"]),
]


def _params():
    for target, args, kwargs, params in CASES:
        for p in params:
            yield pytest.param(target, args, kwargs, p, id=f"{target.split(':')[1]}-{p}")


@pytest.mark.parametrize("target, args, kwargs, param", list(_params()))
def test_bad_type_is_rejected_with_a_clear_error(target, args, kwargs, param, tmp_path):
    mod, name = target.split(":")
    func = getattr(importlib.import_module(mod), name)
    a = {k: f(tmp_path) for k, f in args.items()}
    kw = {k: f(tmp_path) for k, f in kwargs.items()}
    if param in a:
        a[param] = BadType()
    else:
        kw[param] = BadType()
    with pytest.raises(CxrevalError) as info:
        func(*a.values(), **kw)
    msg = str(info.value)
    assert re.search(rf"'{param}'|BadType|DataFrame|{param}", msg), msg


def _public_modules() -> list[str]:
    """Every module of cxreval whose dotted name has no private part (``_x``), found by walking the package."""
    return sorted(
        m.name
        for m in pkgutil.walk_packages(cxreval.__path__, "cxreval.")
        if not any(part.startswith("_") for part in m.name.split(".")[1:])
    )


def test_every_public_module_declares_all():
    modules = _public_modules()
    assert {"cxreval.labels", "cxreval.datasets.nih", "cxreval.cli.data", "cxreval.iqa"} <= set(modules)
    problems = []
    for mod in modules:
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # an optional dependency (torch, fastapi) is not installed
            if (exc.name or "").startswith("cxreval"):
                raise
            continue
        if not hasattr(m, "__all__"):
            problems.append(f"{mod} has no __all__")
            continue
        problems += [
            f"{mod}.__all__ names {name!r}, which it lacks" for name in m.__all__ if not hasattr(m, name)
        ]
    assert not problems, "\n".join(problems)


def test_top_level_exports_exist():
    for name in cxreval.__all__:
        assert hasattr(cxreval, name), name
