"""The AUC of a model against the latent truth that several noisy readers approximate.

Every reference of a chest X-ray finding is noisy. Given three or more readers (radiologists, report labellers,
text-mined labels: any source of binary labels), :func:`evaluate_latent_auc` fits, per finding, one latent-class
model of the readers *and every model's score* (:mod:`cxreval.latent._joint`: truth ``T ~ Bernoulli(π)``; readers
conditionally independent given ``T`` with a sensitivity and specificity each, a declared group of dependent
readers one reader with a free joint label pattern; the scores' joint distribution given ``T`` free apart from a
smooth log density ratio), and every model's AUC is :func:`latent_auc_score` with the same score-aware posteriors
(:mod:`cxreval.latent._auc`): one truth per finding, against which the models are ranked. :func:`fit_latent_class`
is the same model with one score (or none: Dawid–Skene).

Why the scores must be in the model: posteriors from the readers alone ignore what the scores say about the
truth, and the pair-weighted AUC computed with them is diluted toward 0.5 (on the CheXpert test set such a
"soft" AUC is further from the radiologists' consensus than hard Dawid–Skene labels).

Assumption: the readers' errors are independent of each other given the truth (except declared groups) and, under
``score_model='spline'``, of the scores; ``'dependent'`` lets each reader's accuracy follow the models' mean
score, and ``'auto'`` averages the two by BIC weights. Limits: with fewer than three conditionally independent
readers of a finding and neither known reader accuracies nor an anchor subset (studies whose truth is known
exactly), the model is not identified and :class:`NotIdentifiedError` is raised with the sentence
:data:`NOT_IDENTIFIED`.
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
