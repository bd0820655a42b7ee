"""The linear probe of ``cxreval finetune --mode linear-probe``: a convex fit on features computed once.

:func:`fit_linear_probe` fits one linear classifier per finding on fixed features ``X`` (``(n, d)``) and
targets ``Y`` (``(n, k)``: 1 positive, 0 negative, NaN excluded) by minimising the training loss of
:mod:`.losses` on the full set plus ``weight_decay / 2 * ||W||^2`` (the bias is not penalised). Both losses are
weighted logistic losses of each entry, with weights fixed by the labels:

* ``bce``: ``1 / N`` for each of the ``N`` labelled entries;
* ``wcel``: ``(|P| + |N|) / (|P| n)`` for a positive and ``(|P| + |N|) / (|N| n)`` for a negative entry
  (``|P|``, ``|N|``: positive and negative labels over all findings, ``n`` images);
* ``xrv``: ``w_t / N_t`` for each of the ``N_t`` labelled entries of finding ``t`` (``w_t``: torchxrayvision's
  task weight of the targets, :func:`~.losses.xrv_task_weights`).

So the objective is a sum of one strictly convex problem per finding (L2-penalised weighted logistic
regression), each solved by Newton's method (in the ``n``-dimensional row space of ``X`` when ``d > n``, where
the optimum lies, so the cost is that of an ``n x n`` problem) with a backtracking line search in float64 until the Newton
decrement is below ``tol``; for ``bce`` the solution is scikit-learn's ``LogisticRegression(C=1 / (N *
weight_decay))`` on that finding. A finding whose training labels are all of one class has no finite
optimum (its bias goes to infinity): it stops after ``max_iter`` steps and :class:`LinearProbe` says so.

The features are those entering the model's classifier, computed once per image in batches and cached in the
run folder (``features.npz``: :func:`save_features`, :func:`load_features`); ``finetune(features=...)``
reuses a cache whose model, preprocessing and image files are those of the run.

Examples
--------
>>> import numpy as np
>>> g = np.random.default_rng(0)
>>> x = g.normal(size=(40, 3))
>>> y = (x[:, :1] + 0.5 * g.normal(size=(40, 1)) > 0).astype(float)
>>> fit = fit_linear_probe(x, y, weight_decay=0.01)
>>> fit.weight.shape, fit.converged
((1, 3), (True,))
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._typing import PathLike
from .._validation import check_choice
from ..exceptions import InvalidParameterError, SchemaError
from .losses import LOSSES

__all__ = [
    "LinearProbe",
    "fit_linear_probe",
    "entry_weights",
    "save_features",
    "load_features",
    "FEATURES_FILE",
]

FEATURES_FILE = "features.npz"


@dataclass(frozen=True)
class LinearProbe:
    """The fitted classifier: ``weight`` ``(k, d)``, ``bias`` ``(k,)``, the training ``loss`` (without the penalty),
    Newton ``iterations`` and whether each finding ``converged``."""

    weight: np.ndarray
    bias: np.ndarray
    loss: float
    iterations: tuple[int, ...]
    converged: tuple[bool, ...]


def entry_weights(y: np.ndarray, loss: str) -> np.ndarray:
    """The weight of each entry's logistic loss under ``loss`` (module docstring); 0 for an excluded entry."""
    check_choice(loss, LOSSES, name="loss", func="fit_linear_probe")
    known = ~np.isnan(y)
    w = np.zeros(y.shape, dtype=np.float64)
    if loss == "bce":
        if known.any():
            w[known] = 1.0 / known.sum()
        return w
    if loss == "xrv":
        from .losses import xrv_task_weights

        tw = xrv_task_weights(y)
        for t in range(y.shape[1]):
            if known[:, t].any():
                w[known[:, t], t] = tw[t] / known[:, t].sum()
        return w
    pos, neg = y == 1, y == 0
    n_p, n_n = int(pos.sum()), int(neg.sum())
    total = n_p + n_n
    if n_p:
        w[pos] = total / (n_p * y.shape[0])
    if n_n:
        w[neg] = total / (n_n * y.shape[0])
    return w


def _objective(xt: np.ndarray, y: np.ndarray, w: np.ndarray, theta: np.ndarray, lam: np.ndarray) -> float:
    z = xt @ theta
    # logistic loss of z against y in {0, 1}: softplus(z) - y z, computed stably
    return float(w @ (np.logaddexp(0.0, z) - y * z) + 0.5 * theta @ (lam * theta))


def _newton(
    xt: np.ndarray, y: np.ndarray, w: np.ndarray, lam: np.ndarray, *, tol: float, max_iter: int
) -> tuple[np.ndarray, int, bool]:
    from scipy.special import expit

    theta = np.zeros(xt.shape[1])
    f = _objective(xt, y, w, theta, lam)
    for it in range(1, max_iter + 1):
        p = expit(xt @ theta)
        g = xt.T @ (w * (p - y)) + lam * theta
        h = (xt * (w * p * (1 - p))[:, None]).T @ xt
        h[np.diag_indices_from(h)] += lam
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(h, g, rcond=None)[0]
        dec = float(g @ step)  # the Newton decrement squared
        if dec / 2 <= tol:
            return theta, it - 1, True
        t = 1.0
        while True:  # backtracking (Armijo) line search
            new = theta - t * step
            fn = _objective(xt, y, w, new, lam)
            if fn <= f - 0.25 * t * dec or t < 1e-10:
                break
            t *= 0.5
        theta, f = new, fn
    return theta, max_iter, False


def fit_linear_probe(
    features: np.ndarray,
    targets: np.ndarray,
    *,
    loss: str = "bce",
    weight_decay: float = 1e-4,
    tol: float = 1e-14,
    max_iter: int = 100,
) -> LinearProbe:
    """Fit the linear probe on fixed ``features`` (``(n, d)``) and ``targets`` (``(n, k)``, NaN excluded).

    See the module docstring. ``weight_decay`` must be > 0 (the problem has no finite optimum without it once
    the features separate the classes, as they do when ``d >= n``).
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or x.shape[0] != y.shape[0]:
        raise InvalidParameterError(
            f"features {x.shape} and targets {y.shape}: expected (n, d) and (n, k) arrays with the same n."
        )
    if not np.isfinite(x).all():
        raise SchemaError("features: non-finite values (the model's classifier input); nothing to fit.")
    bad = ~np.isnan(y) & (y != 0) & (y != 1)
    if bad.any():
        raise InvalidParameterError(
            f"targets: values other than 0, 1 and NaN ({np.unique(y[bad])[:5].tolist()})."
        )
    if isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float)) or not weight_decay > 0:
        raise InvalidParameterError(f"weight_decay={weight_decay!r}: the linear probe needs a penalty > 0.")
    w_all = entry_weights(y, loss)
    basis = None
    if x.shape[1] > x.shape[0]:
        # the optimal weights lie in the row space of x (the loss sees x w, the penalty is ||w||^2): with
        # x = U S V^T, w = V b gives x w = (U S) b and ||w|| = ||b||, the same problem in n dimensions
        u, sv, basis = np.linalg.svd(x, full_matrices=False)
        x = u * sv
    xt = np.hstack([x, np.ones((x.shape[0], 1))])
    lam = np.full(xt.shape[1], float(weight_decay))
    lam[-1] = 0.0  # the bias is not penalised
    k, d = y.shape[1], x.shape[1]
    weight, bias = np.zeros((k, d)), np.zeros(k)  # in the reduced basis when basis is not None
    iters, conv = [], []
    data_loss = 0.0
    for j in range(k):
        keep = w_all[:, j] > 0
        yj = np.nan_to_num(y[keep, j])
        if not keep.any():  # nothing labelled: the zero classifier
            iters.append(0)
            conv.append(True)
            continue
        theta, it, ok = _newton(xt[keep], yj, w_all[keep, j], lam, tol=tol, max_iter=max_iter)
        weight[j], bias[j] = theta[:-1], theta[-1]
        z = xt[keep] @ theta
        data_loss += float(w_all[keep, j] @ (np.logaddexp(0.0, z) - yj * z))
        iters.append(it)
        conv.append(ok)
    if basis is not None:
        weight = weight @ basis
    return LinearProbe(weight, bias, data_loss, tuple(iters), tuple(conv))


def _file_ids(paths: Sequence[str]) -> list[str]:
    out = []
    for p in paths:
        st = Path(p).stat()
        out.append(f"{p}|{st.st_size}|{st.st_mtime_ns}")
    return out


def save_features(
    path: PathLike,
    features: np.ndarray,
    study_ids: Sequence[str],
    paths: Sequence[str],
    key: Mapping[str, Any],
) -> None:
    """Write the features cache: ``features`` (float32, as the classifier reads them), ``study_id``, each image's
    file identity (path, size, modification time) and ``key`` (what makes them: model, weights, preprocessing)."""
    np.savez(
        Path(path),
        features=np.asarray(features, dtype=np.float32),
        study_id=np.asarray(list(study_ids), dtype=str),
        image_file=np.asarray(_file_ids(paths), dtype=str),
        key=np.asarray(json.dumps(dict(key), sort_keys=True, default=str)),
    )


def load_features(
    path: PathLike, study_ids: Sequence[str], paths: Sequence[str], key: Mapping[str, Any]
) -> np.ndarray:
    """The cached features of ``study_ids`` (in that order) from :func:`save_features`'s file ``path``.

    Raises
    ------
    SchemaError
        Not a features file, made by another model / preprocessing (``key``), lacking a study, or an image file
        that changed since (size or modification time).
    """
    p = Path(path).expanduser()
    where = f"features={str(path)!r}"
    try:
        with np.load(p, allow_pickle=False) as z:
            feats, ids, files, k = (
                z["features"],
                z["study_id"].tolist(),
                z["image_file"].tolist(),
                str(z["key"]),
            )
    except (OSError, ValueError, KeyError) as exc:
        raise SchemaError(
            f"{where}: not the features.npz of a linear probe (finetune with mode='linear-probe') "
            f"({type(exc).__name__}: {exc})."
        ) from exc
    want = json.dumps(dict(key), sort_keys=True, default=str)
    if k != want:
        got, exp = json.loads(k), json.loads(want)
        diff = sorted(n for n in set(got) | set(exp) if got.get(n) != exp.get(n))
        raise SchemaError(
            f"{where}: made with other settings ({diff}: {[got.get(n) for n in diff]}, this run "
            f"{[exp.get(n) for n in diff]}); compute them again without features=."
        )
    pos = {s: i for i, s in enumerate(ids)}
    missing = [s for s in study_ids if s not in pos]
    if missing:
        raise SchemaError(f"{where}: no features for {len(missing)} image(s) of this run ({missing[:3]}).")
    now = dict(zip(study_ids, _file_ids(paths)))
    changed = [s for s in study_ids if files[pos[s]] != now[s]]
    if changed:
        raise SchemaError(
            f"{where}: {len(changed)} image file(s) changed since the features were computed "
            f"({changed[:3]}); compute them again without features=."
        )
    return np.asarray(feats[[pos[s] for s in study_ids]])
