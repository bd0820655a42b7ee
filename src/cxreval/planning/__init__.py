"""Planning an expert's relabelling: a sample of studies drawn with known probabilities that favour those which settle
which model is best (:func:`plan_relabelling`), the design-based estimate once the expert's labels are back
(:func:`evaluate_design_auc`) and the latent model's two-phase estimate beside it (:func:`evaluate_two_phase_auc`);
planning a reader study from a pilot (:func:`plan_reader_study`).

The latent model behind both (references conditionally independent given the truth, each model's score binormal on
the normal scale of its ranks, relabelled studies exact) is documented in :func:`evaluate_two_phase_auc`; the
priority and the power in :func:`plan_relabelling`; simulated study sets with a known truth, for checking both,
in :func:`simulate_study_set`.
"""

from ._design_estimate import evaluate_design_auc
from ._estimate import TwoPhaseAUCResult, evaluate_two_phase_auc
from ._plan import plan_relabelling
from ._plan_result import RelabelPlanResult
from ._simulation import simulate_study_set

__all__ = [
    "plan_relabelling",
    "RelabelPlanResult",
    "evaluate_two_phase_auc",
    "TwoPhaseAUCResult",
    "evaluate_design_auc",
    "simulate_study_set",
]
