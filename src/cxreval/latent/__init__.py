"""The AUC of a model against the latent truth that several noisy readers approximate.

Every reference of a chest X-ray finding is noisy. Given three or more readers (radiologists, report labellers,
text-mined labels: any source of binary labels), :func:`fit_latent_class` fits a latent-class model of the
readers *and one model's score* (:mod:`cxreval.latent._model`: truth ``T ~ Bernoulli(π)``; readers
conditionally independent given ``T`` with a sensitivity and specificity each; the score's distribution given
``T`` nonparametric, by quantile bins), and :func:`latent_auc_score` weights every pair of studies by the
fitted *score-aware* posteriors (:mod:`cxreval.latent._auc`).

Why the score must be in the model: posteriors from the readers alone ignore what the score says about the
truth, and the pair-weighted AUC computed with them is diluted toward 0.5 (on the CheXpert test set such a
"soft" AUC is further from the radiologists' consensus than hard Dawid–Skene labels). The model is fitted per
model and finding.

Assumption: the readers' errors are independent of each other and of the score, given the truth. Limits: with
fewer than three readers of a finding and neither known reader accuracies nor an anchor subset (studies whose
truth is known exactly), the model is not identified and :class:`NotIdentifiedError` is raised with the
sentence :data:`NOT_IDENTIFIED`.
"""

from ._auc import latent_auc_score
from ._evaluate import evaluate_latent_auc
from ._fitting import select_score_model
from ._model import NOT_IDENTIFIED, LatentClassFit, NotIdentifiedError, fit_latent_class
from ._resampling import LatentClassBootstrap, bootstrap_latent_class
from ._result import LatentAUCResult

__all__ = [
    "select_score_model",
    "NOT_IDENTIFIED",
    "NotIdentifiedError",
    "LatentClassFit",
    "fit_latent_class",
    "latent_auc_score",
    "LatentClassBootstrap",
    "bootstrap_latent_class",
    "evaluate_latent_auc",
    "LatentAUCResult",
]
