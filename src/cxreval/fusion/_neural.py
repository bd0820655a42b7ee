"""Neural label fusion (NN Fusion and NN Fusion PS): a small NumPy MLP from every reader's labels on
every finding to the adjudicated labels.

The XQA paper (seed 2, section 2.1.3) trains "a multilayer perceptron to predict conflict-resolved
image-derived labels from the one-hot encoded label pair of both annotators, concatenated across all K
pathologies ... with pathology-wise class-weighted cross-entropy, with model selection via 5-fold
cross-validation using macro-F1 on four key pathologies (Consolidation, Pleural effusion, Lung
opacity, Atelectasis) as the stopping criterion. A pathology-specific variant (NN Fusion PS) replaces
global predictions with dedicated specialist models for those four pathologies."

cxreval's implementation (no torch; full-batch Adam in NumPy):

- **Input** per study: for every finding ``f`` and reader ``r`` (both sorted), the one-hot state
  ``[NEG, UNC, POS]`` of ``r`` on ``f`` (all zeros when ``r`` did not label ``f``): ``F × R × 3`` features.
- **Network**: one ReLU hidden layer of ``hidden`` units (He initialisation from ``rng``); one softmax
  head of 3 states per finding.
- **Loss**: mean over labelled (study, finding) cells of the class-weighted cross-entropy, with weights
  ``n_f / (C_f n_{f,c})`` computed per finding on the training studies (``C_f`` = states present), plus
  ``weight_decay`` × the squared weights.
- **Selection**: the studies with a reference are split into ``n_folds`` folds (random, from ``rng``).
  For every fold a network is trained on the others, and every ``eval_every`` epochs the macro-F1 (over
  the states present) on the held-out fold is averaged over ``selection_findings``; the epoch with the
  best mean over folds is chosen, and the final network is retrained on all studies for that many epochs.
- **Out-of-fold predictions**: ``fit_predict`` returns, for each study with a reference, the prediction of
  the fold model that did not see it (at the chosen epoch), because a supervised model's in-sample
  agreement with its own training reference overstates it (``labels_from='out-of-fold'``, default). With
  ``labels_from='in-sample'`` it returns the final network's predictions (trained on every study with a
  reference, that study included), the in-sample figure a paper may report. ``predict`` uses the final network.
- **NN Fusion PS** (:class:`NeuralFusionPS`): the shared network plus one specialist per selection
  finding (same input, that finding's head only, selected on that finding's macro-F1); specialists
  replace the shared predictions for their findings.

Examples
--------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> truth = rng.integers(0, 3, 200)
>>> rows = [(f"s{i}", "Atelectasis", r, int(t if rng.random() < .8 else rng.integers(0, 3)))
...         for i, t in enumerate(truth) for r in ("A", "B")]
>>> data = pd.DataFrame(rows, columns=["study_id", "finding", "source", "state"])
>>> ref = pd.DataFrame({"study_id": [f"s{i}" for i in range(200)], "finding": "Atelectasis", "state": truth})
>>> nn = NeuralFusion(rng=0).fit(data, ref)
>>> fused = nn.fit_predict(data, ref)                 # out-of-fold, indexed (study_id, finding)
>>> y = ref.set_index(["study_id", "finding"])["state"].reindex(fused.index)
>>> float((fused == y).mean()) > 0.75
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from os import PathLike

import numpy as np
import pandas as pd

from .._typing import RNGLike
from .._validation import check_choice, check_positive_int, normalize_rng
from ..exceptions import InvalidParameterError, SchemaError
from ..findings import XQA_SELECTED
from ..schema import FINDING, STATE, STUDY_ID
from ..schema._columns import check_columns
from ._base import (
    N_STATES,
    STATES,
    Annotations,
    check_float,
    encode_annotations,
    label_series,
    parse_fused_states,
    proba_frame,
    register_fusion,
)

__all__ = ["NeuralFusion", "NeuralFusionPS", "macro_f1", "load_neural_fusion", "MODEL_FORMAT", "LABELS_FROM"]

MODEL_FORMAT = "cxreval-nn-fusion-1"
"""Format tag of a saved NN Fusion model (:meth:`NeuralFusion.save`)."""
_HYPER = ("hidden", "epochs", "eval_every", "learning_rate", "weight_decay", "n_folds")
_FILE_KEYS = {"epochs": "max_epochs"}
"""The key of a setting in a saved model's ``meta`` where it is not the parameter's name (the file format
:data:`MODEL_FORMAT` is unchanged, so every saved model loads)."""
LABELS_FROM: tuple[str, ...] = ("out-of-fold", "in-sample")
"""What :meth:`NeuralFusion.fit_predict` gives for a study with a reference: the prediction of the fold model that
did not see it, or the final network's (in-sample)."""


def macro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Macro-averaged F1 over the states present in ``y_true`` or ``y_pred`` (scikit-learn's
    ``f1_score(average='macro')``, ``zero_division=0``)."""
    labels = np.union1d(y_true, y_pred)
    if len(labels) == 0:
        return float("nan")
    f1 = []
    for c in labels:
        tp = np.sum((y_true == c) & (y_pred == c))
        fp = np.sum((y_true != c) & (y_pred == c))
        fn = np.sum((y_true == c) & (y_pred != c))
        f1.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f1))


class _MLP:
    """One-hidden-layer MLP with ``n_heads`` 3-way softmax heads, trained full batch with Adam."""

    def __init__(self, n_in: int, hidden: int, n_heads: int, rng: np.random.Generator) -> None:
        self.W1 = rng.normal(0.0, np.sqrt(2.0 / max(n_in, 1)), (n_in, hidden))
        self.b1 = np.zeros(hidden)
        self.W2 = rng.normal(0.0, np.sqrt(2.0 / hidden), (hidden, n_heads * N_STATES))
        self.b2 = np.zeros(n_heads * N_STATES)
        self.n_heads = n_heads
        self._m = [np.zeros_like(p) for p in self.params]
        self._v = [np.zeros_like(p) for p in self.params]
        self._t = 0

    @property
    def params(self) -> list[np.ndarray]:
        return [self.W1, self.b1, self.W2, self.b2]

    def _forward(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        h_pre = X @ self.W1 + self.b1
        h = np.maximum(h_pre, 0.0)
        z = (h @ self.W2 + self.b2).reshape(len(X), self.n_heads, N_STATES)
        # softmax over the last axis of size 3, written out (numpy reduces tiny axes slowly)
        m = np.maximum(np.maximum(z[..., 0], z[..., 1]), z[..., 2])
        e = np.exp(z - m[..., None])
        p = e / (e[..., 0] + e[..., 1] + e[..., 2])[..., None]
        return h_pre, h, p

    def proba(self, X: np.ndarray) -> np.ndarray:
        return self._forward(X)[2]

    def step(self, X: np.ndarray, target: np.ndarray, W: np.ndarray, lr: float, weight_decay: float) -> None:
        """One Adam step on the class-weighted cross-entropy.

        ``W``: (n, heads, 1) cell weights divided by their sum; ``target``: ``W`` × one-hot reference state.
        """
        h_pre, h, p = self._forward(X)
        g = (p * W - target).reshape(len(X), -1)
        gW2 = h.T @ g + weight_decay * self.W2
        gb2 = g.sum(axis=0)
        gh = (g @ self.W2.T) * (h_pre > 0)
        gW1 = X.T @ gh + weight_decay * self.W1
        gb1 = gh.sum(axis=0)
        self._t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        c1, c2 = 1 - b1**self._t, 1 - b2**self._t
        for i, (param, grad) in enumerate(zip(self.params, (gW1, gb1, gW2, gb2))):
            self._m[i] *= b1
            self._m[i] += (1 - b1) * grad
            self._v[i] *= b2
            self._v[i] += (1 - b2) * grad * grad
            param -= (lr / c1) * self._m[i] / (np.sqrt(self._v[i] / c2) + eps)


def _class_weights(Y: np.ndarray) -> np.ndarray:
    """Per-cell weights ``n_f / (C_f n_{f,c})`` (0 for unlabelled cells)."""
    W = np.zeros(Y.shape)
    for f in range(Y.shape[1]):
        y = Y[:, f]
        lab = y >= 0
        if not lab.any():
            continue
        counts = np.bincount(y[lab], minlength=N_STATES)
        present = counts > 0
        w = np.zeros(N_STATES)
        w[present] = lab.sum() / (present.sum() * counts[present])
        W[lab, f] = w[y[lab]]
    return W


@register_fusion("nn")
class NeuralFusion:
    """NN Fusion: an MLP from all readers' one-hot labels on all findings to the reference labels.

    Parameters
    ----------
    hidden : int, default=32
        Hidden units.
    epochs : int, default=300
        Largest number of full-batch epochs considered (the number used is chosen by cross-validation every
        ``eval_every`` epochs).
    eval_every : int, default=10
        Epoch spacing of the cross-validated checkpoints.
    learning_rate : float, default=0.01
        Adam step size.
    weight_decay : float, default=1e-4
        L2 penalty on the weights.
    n_folds : int, default=5
        Cross-validation folds for selecting the number of epochs.
    selection_findings : sequence of str, default=XQA_SELECTED
        Findings whose mean macro-F1 selects the epoch (Consolidation, Effusion, Lung Opacity,
        Atelectasis); those absent from the data are ignored, and all findings are used if none is present.
    labels_from : {'out-of-fold', 'in-sample'}, default='out-of-fold'
        ``labels_`` / ``fit_predict`` for the studies with a reference: the prediction of the fold model that
        did not see the study, or the final network's (trained on it too: in-sample, optimistic when scored
        against the reference it was trained on). Other studies always get the final network's.
    rng : None, int or numpy.random.Generator
        Initialisation and fold assignment.

    Attributes
    ----------
    findings_, readers_ : tuple of str
        Feature layout (sorted).
    n_epochs_ : int
        Selected number of epochs (per model in ``cv_scores_`` for the PS variant).
    cv_scores_ : pandas.DataFrame
        ``model, epoch, fold, macro_f1``: the held-out score of every fold at every checkpoint.
    oof_probas_ : pandas.DataFrame
        Out-of-fold state probabilities of the studies with a reference, (study, finding) × ``[0, 1, 2]``.
    labels_, probas_ : pandas.Series, pandas.DataFrame
        Out-of-fold predictions where available (``labels_from='out-of-fold'``), else the final model's, for
        every (study, finding) item of the fitted data.
    """

    supervised = True
    specialists = False

    def __init__(
        self,
        *,
        hidden: int = 32,
        epochs: int = 300,
        eval_every: int = 10,
        learning_rate: float = 0.01,
        weight_decay: float = 1e-4,
        n_folds: int = 5,
        selection_findings: Sequence[str] = XQA_SELECTED,
        labels_from: str = "out-of-fold",
        rng: RNGLike = None,
    ) -> None:
        self.hidden = hidden
        self.epochs = epochs
        self.eval_every = eval_every
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.n_folds = n_folds
        self.selection_findings = tuple(selection_findings)
        self.labels_from = labels_from
        self.rng = rng

    # -- inputs -----------------------------------------------------------------------------------
    def _check_params(self) -> np.random.Generator:
        func = type(self).__name__
        check_positive_int(self.hidden, name="hidden", func=func)
        check_positive_int(self.epochs, name="epochs", func=func)
        check_positive_int(self.eval_every, name="eval_every", func=func)
        check_positive_int(self.n_folds, name="n_folds", func=func, minimum=2)
        check_float(self.learning_rate, name="learning_rate", func=func, strict=True)
        check_float(self.weight_decay, name="weight_decay", func=func)
        check_choice(self.labels_from, LABELS_FROM, name="labels_from", func=func)
        return normalize_rng(self.rng)

    def _encode(self, data: pd.DataFrame, *, func: str) -> tuple[Annotations, pd.Index, np.ndarray]:
        if not isinstance(data, pd.DataFrame) or "finding" not in data.columns:
            raise SchemaError(
                f"The annotation table passed to {func} needs a 'finding' column: neural fusion "
                f"learns from every finding at once."
            )
        ann = encode_annotations(data, func=func)
        items = ann.items.remove_unused_levels()
        return ann, items.levels[0], np.asarray(items.codes[0])

    def _features(self, ann: Annotations, study_code: np.ndarray, n_studies: int) -> np.ndarray:
        r_map = np.array([self.readers_.index(r) if r in self.readers_ else -1 for r in ann.readers])
        f_map = np.array([self.findings_.index(f) if f in self.findings_ else -1 for f in ann.findings])
        R, F = len(self.readers_), len(self.findings_)
        X = np.zeros((n_studies, F * R * N_STATES))
        f = f_map[ann.finding[ann.item]]  # type: ignore[index]
        r = r_map[ann.reader]
        ok = (f >= 0) & (r >= 0)
        X[study_code[ann.item][ok], (f[ok] * R + r[ok]) * N_STATES + ann.label[ok]] = 1.0
        return X

    def _targets(self, y_true: pd.DataFrame, studies: pd.Index, *, func: str) -> np.ndarray:
        where = f"the reference table passed to {func}"
        cols = (STUDY_ID, FINDING, STATE)
        if not isinstance(y_true, pd.DataFrame):
            raise SchemaError(
                f"{where} must be a DataFrame with columns {list(cols)}. Got {type(y_true).__name__} instead."
            )
        check_columns(y_true, cols, where=where)
        lab = parse_fused_states(y_true[STATE], where=where)
        s = y_true[STUDY_ID].astype(str).to_numpy()
        f = y_true[FINDING].astype(str).to_numpy()
        key = pd.MultiIndex.from_arrays([s, f])
        if key.duplicated().any():
            i = int(np.flatnonzero(key.duplicated())[0])
            raise SchemaError(f"{where} repeats (study_id, finding) = ({s[i]!r}, {f[i]!r}) at row {i}.")
        si = studies.get_indexer(s)
        fi = np.array([self.findings_.index(x) if x in self.findings_ else -1 for x in f], dtype=np.int64)
        ok = (si >= 0) & (fi >= 0)
        if not ok.any():
            raise SchemaError(f"{where} shares no (study, finding) with the annotation table.")
        Y = np.full((len(studies), len(self.findings_)), -1, dtype=np.int64)
        Y[si[ok], fi[ok]] = lab[ok]
        self.n_reference_unused_ = int((~ok).sum())
        return Y

    # -- training ---------------------------------------------------------------------------------
    def _train(
        self,
        X: np.ndarray,
        Y: np.ndarray,
        heads: np.ndarray,
        epochs: int,
        rng: np.random.Generator,
        X_eval: np.ndarray | None = None,
    ) -> tuple[_MLP, list[np.ndarray]]:
        net = _MLP(X.shape[1], self.hidden, len(heads), rng)
        Yh = Y[:, heads]
        W = _class_weights(Yh)
        snaps = []
        if W.sum() == 0:  # no reference label for these heads in the training studies
            return net, ([net.proba(X_eval)] * (epochs // self.eval_every) if X_eval is not None else [])
        W = (W / W.sum())[:, :, None]
        target = np.zeros(Yh.shape + (N_STATES,))
        rows, heads_ = np.nonzero(Yh >= 0)
        target[rows, heads_, Yh[rows, heads_]] = W[rows, heads_, 0]
        for e in range(1, epochs + 1):
            net.step(X, target, W, float(self.learning_rate), float(self.weight_decay))
            if X_eval is not None and e % self.eval_every == 0:
                snaps.append(net.proba(X_eval))
        return net, snaps

    def _select(
        self,
        X: np.ndarray,
        Y: np.ndarray,
        heads: np.ndarray,
        sel: np.ndarray,
        folds: np.ndarray,
        rng: np.random.Generator,
        name: str,
    ) -> tuple[int, np.ndarray, list[tuple]]:
        """Cross-validate: chosen epochs, out-of-fold probabilities at that epoch, score rows."""
        n_ck = self.epochs // self.eval_every
        scores = np.full((self.n_folds, n_ck), np.nan)
        oof = np.zeros((len(X), n_ck, len(heads), N_STATES))
        for k in range(self.n_folds):
            tr, va = folds != k, folds == k
            if not va.any():
                continue
            _, snaps = self._train(X[tr], Y[tr], heads, n_ck * self.eval_every, rng, X_eval=X[va])
            for c, p in enumerate(snaps):
                oof[va, c] = p
                pred = p.argmax(axis=2)
                f1 = []
                for h in sel:
                    yt = Y[va][:, heads[h]]
                    lab = yt >= 0
                    if lab.any():
                        f1.append(macro_f1(yt[lab], pred[lab, h]))
                scores[k, c] = np.mean(f1) if f1 else np.nan
        mean = np.nanmean(np.where(np.isnan(scores).all(axis=0), 0.0, scores), axis=0)
        best = int(np.argmax(mean))
        rows = [
            (name, (c + 1) * self.eval_every, k, float(scores[k, c]))
            for k in range(self.n_folds)
            for c in range(n_ck)
        ]
        return (best + 1) * self.eval_every, oof[:, best], rows

    def fit(self, data: pd.DataFrame, y_true: pd.DataFrame) -> NeuralFusion:
        """Fit on an annotation table (with ``finding``) and the reference ``study_id, finding, state``."""
        func = f"{type(self).__name__}.fit"
        rng = self._check_params()
        ann, studies, study_code = self._encode(data, func=func)
        self.readers_, self.findings_ = ann.readers, ann.findings
        X = self._features(ann, study_code, len(studies))
        Y = self._targets(y_true, studies, func=func)
        has_ref = (Y >= 0).any(axis=1)
        n_ref = int(has_ref.sum())
        if n_ref < self.n_folds:
            raise SchemaError(
                f"{func}: {n_ref} studies have a reference label; {self.n_folds}-fold "
                f"cross-validation needs at least {self.n_folds}."
            )
        Xr, Yr = X[has_ref], Y[has_ref]
        folds = np.empty(n_ref, dtype=np.int64)
        folds[rng.permutation(n_ref)] = np.arange(n_ref) % self.n_folds
        F = len(self.findings_)
        sel_names = [f for f in self.selection_findings if f in self.findings_] or list(self.findings_)
        sel = np.array([self.findings_.index(f) for f in sel_names])
        all_heads = np.arange(F)
        models = [("shared", all_heads, sel)]
        if self.specialists:
            models += [(f, np.array([self.findings_.index(f)]), np.array([0])) for f in sel_names]
        oof = np.zeros((n_ref, F, N_STATES))
        final = np.zeros((len(studies), F, N_STATES))
        rows, self.n_epochs_, self.networks_ = [], {}, {}
        for name, heads, sel_idx in models:
            epochs, o, r = self._select(Xr, Yr, heads, sel_idx, folds, rng, name)
            net, _ = self._train(Xr, Yr, heads, epochs, rng)
            oof[:, heads] = o
            final[:, heads] = net.proba(X)
            rows += r
            self.n_epochs_[name] = epochs
            self.networks_[name] = (heads, net)
        self.cv_scores_ = pd.DataFrame(rows, columns=["model", "epoch", "fold", "macro_f1"])
        item_s, item_f = study_code, ann.finding  # per item of the data (findings_ == ann.findings here)
        proba = final[item_s, item_f].copy()
        ref_pos = np.full(len(studies), -1)
        ref_pos[np.flatnonzero(has_ref)] = np.arange(n_ref)
        in_ref = (ref_pos[item_s] >= 0) & (Y[item_s, item_f] >= 0)
        if self.labels_from == "out-of-fold":
            proba[in_ref] = oof[ref_pos[item_s[in_ref]], item_f[in_ref]]  # type: ignore[index]
        self.probas_ = proba_frame(ann.items, proba)
        self.labels_ = label_series(ann.items, proba.argmax(axis=1))
        ref_items = pd.MultiIndex.from_arrays(
            [np.repeat(studies[has_ref], F), np.tile(list(self.findings_), n_ref)],
            names=["study_id", "finding"],
        )
        self.oof_probas_ = pd.DataFrame(
            oof.reshape(-1, N_STATES), index=ref_items, columns=pd.Index(list(STATES), name=STATE)
        )
        return self

    def save(self, path: str | PathLike[str]) -> None:
        """Save the fitted network(s) to ``path`` (a NumPy ``.npz`` file, no pickle).

        The file holds the final networks' weights, the feature layout (``readers_``, ``findings_``), the
        selected epochs and the hyper-parameters; :func:`load_neural_fusion` restores an estimator whose
        :meth:`predict` / :meth:`predict_proba` give the same values on any data (e.g. a model trained on one
        dataset applied to another, as the XQA paper's Tables 14-15 apply the XQA-RR model to MIMIC).
        The cross-validation scores and out-of-fold predictions are not saved.
        """
        if not hasattr(self, "networks_"):
            raise InvalidParameterError(f"{type(self).__name__}.save: call fit first.")
        meta = {
            "format": MODEL_FORMAT,
            "method": "nn_ps" if self.specialists else "nn",
            "readers": list(self.readers_),
            "findings": list(self.findings_),
            "n_epochs": {k: int(v) for k, v in self.n_epochs_.items()},
            "selection_findings": list(self.selection_findings),
            "networks": list(self.networks_),
            **{_FILE_KEYS.get(k, k): getattr(self, k) for k in _HYPER},
        }
        arrays: dict[str, np.ndarray] = {"meta": np.array(json.dumps(meta))}
        for i, (heads, net) in enumerate(self.networks_.values()):
            arrays[f"net{i}_heads"] = np.asarray(heads, dtype=np.int64)
            for name, a in zip(("W1", "b1", "W2", "b2"), net.params):
                arrays[f"net{i}_{name}"] = a
        with open(path, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]

    def predict_proba(self, data: pd.DataFrame) -> pd.DataFrame:
        """State probabilities of every (study, finding) item of ``data`` from the final network(s).

        Readers of ``data`` the model was not fitted on are ignored; a model reader absent from ``data``
        contributes all-zero features (as an unlabelled finding does in training); a finding outside
        ``findings_`` raises :class:`~cxreval.exceptions.SchemaError`.
        """
        func = f"{type(self).__name__}.predict_proba"
        if not hasattr(self, "networks_"):
            raise InvalidParameterError(f"{func}: call fit first.")
        ann, studies, study_code = self._encode(data, func=func)
        if not set(ann.readers) & set(self.readers_):
            raise SchemaError(
                f"{func}: none of the readers {list(ann.readers)} of the data is a reader the model "
                f"was fitted on {list(self.readers_)}."
            )
        X = self._features(ann, study_code, len(studies))
        F = len(self.findings_)
        out = np.full((len(studies), F, N_STATES), np.nan)
        for heads, net in self.networks_.values():
            out[:, heads] = net.proba(X)
        f_idx = np.array([self.findings_.index(f) if f in self.findings_ else -1 for f in ann.findings])
        item_f = f_idx[ann.finding]
        if (item_f < 0).any():
            bad = ann.findings[int(ann.finding[np.flatnonzero(item_f < 0)[0]])]  # type: ignore[index]
            raise SchemaError(
                f"{func}: finding {bad!r} was not in the data the model was fitted on {list(self.findings_)}."
            )
        return proba_frame(ann.items, out[study_code, item_f])

    def predict(self, data: pd.DataFrame) -> pd.Series:
        """Most probable state of every (study, finding) item of ``data`` from the final network(s)."""
        p = self.predict_proba(data)
        return label_series(p.index, p.to_numpy().argmax(axis=1))

    def fit_predict(self, data: pd.DataFrame, y_true: pd.DataFrame) -> pd.Series:
        """Fit; return out-of-fold predictions for studies with a reference (the final model's with
        ``labels_from='in-sample'``), the final model's otherwise."""
        return self.fit(data, y_true).labels_

    def fit_predict_proba(self, data: pd.DataFrame, y_true: pd.DataFrame) -> pd.DataFrame:
        """Fit; return the probabilities matching :meth:`fit_predict`."""
        return self.fit(data, y_true).probas_


@register_fusion("nn_ps")
class NeuralFusionPS(NeuralFusion):
    """NN Fusion PS: :class:`NeuralFusion` plus a specialist network per selection finding, whose
    predictions replace the shared network's for that finding. Same parameters and attributes;
    ``n_epochs_`` and ``cv_scores_`` cover the shared model and each specialist."""

    specialists = True


def load_neural_fusion(path: str | PathLike[str]) -> NeuralFusion:
    """Load a model saved by :meth:`NeuralFusion.save` (a :class:`NeuralFusion` or :class:`NeuralFusionPS`).

    Raises
    ------
    SchemaError
        The file is not a saved NN Fusion model (wrong format tag, missing arrays, shapes that do not match
        the feature layout).
    """
    if not isinstance(path, (str, PathLike)):
        raise InvalidParameterError(f"load_neural_fusion: 'path' must be a file path. Got {path!r}.")
    where = f"NN Fusion model file {str(path)!r}"
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{where} cannot be read as a .npz file: {exc}") from exc
    try:
        meta = json.loads(str(arrays["meta"]))
    except (KeyError, ValueError) as exc:
        raise SchemaError(
            f"{where} has no readable 'meta' entry; expected a file written by NeuralFusion.save."
        ) from exc
    if meta.get("format") != MODEL_FORMAT:
        raise SchemaError(f"{where}: format {meta.get('format')!r}, expected {MODEL_FORMAT!r}.")
    cls = NeuralFusionPS if meta["method"] == "nn_ps" else NeuralFusion
    est = cls(
        selection_findings=meta["selection_findings"], **{k: meta[_FILE_KEYS.get(k, k)] for k in _HYPER}
    )
    est.readers_, est.findings_ = tuple(meta["readers"]), tuple(meta["findings"])
    est.n_epochs_ = dict(meta["n_epochs"])
    n_in = len(est.readers_) * len(est.findings_) * N_STATES
    est.networks_ = {}
    for i, name in enumerate(meta["networks"]):
        try:
            heads = arrays[f"net{i}_heads"]
            params = [arrays[f"net{i}_{k}"] for k in ("W1", "b1", "W2", "b2")]
        except KeyError as exc:
            raise SchemaError(f"{where} lacks the arrays of network {name!r} ({exc}).") from exc
        net = _MLP(n_in, int(meta["hidden"]), len(heads), np.random.default_rng(0))
        shapes = [p.shape for p in net.params]
        if [p.shape for p in params] != shapes:
            raise SchemaError(
                f"{where}: network {name!r} has shapes {[p.shape for p in params]}, expected {shapes} "
                f"for {len(est.readers_)} readers x {len(est.findings_)} findings."
            )
        net.W1, net.b1, net.W2, net.b2 = (np.asarray(p, dtype=float) for p in params)
        est.networks_[name] = (heads, net)
    return est
