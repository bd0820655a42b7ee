r"""Agreement between two label sources: weighted Cohen's kappa, Low-/High-kappa and weighted F1.

Everything here follows the XQA-Chest paper (sections 2.1.2 and 3.1.1, Tables 9-15):

- **kappa_w** -- Cohen's kappa [1]_ on the ordinal states ``NEG=0 < UNC=1 < POS=2``, quadratically
  weighted by default [2]_ (``weights=None | 'linear' | 'quadratic'``). It equals scikit-learn's
  ``cohen_kappa_score``: :math:`\kappa = 1 - \sum_{ij} w_{ij} O_{ij} / \sum_{ij} w_{ij} E_{ij}` with
  :math:`O` the observed confusion matrix, :math:`E` the outer product of its marginals divided by
  :math:`n`, and :math:`w_{ij}` equal to ``i != j``, ``|i - j|`` or ``(i - j)**2``.
- **kappa_low / kappa_high** -- unweighted binary kappa under the *pessimistic* and *optimistic*
  uncertainty mappings. The XQA-Chest paper, "following Jain et al. [27]" (VisualCheXbert [3]_), writes: "In the
  optimistic mapping (High-kappa), uncertain labels are treated as agreement with the corresponding
  definitive label, whereas in the pessimistic mapping (Low-kappa), uncertain labels are treated as
  disagreement." Jain et al. obtain their high and low scores by mapping an uncertain label to the
  other reader's label, respectively to the opposite of it. Pair by pair (``a`` from source A, ``b``
  from source B):

  ==================  ======================  ======================
  pair (a, b)         optimistic (High)       pessimistic (Low)
  ==================  ======================  ======================
  definitive, e.g.    unchanged               unchanged
  (POS, NEG)          (1, 0)                  (1, 0)
  (UNC, POS)          (1, 1)  agree           (0, 1)  disagree
  (UNC, NEG)          (0, 0)  agree           (1, 0)  disagree
  (POS, UNC)          (1, 1)                  (1, 0)
  (NEG, UNC)          (0, 0)                  (0, 1)
  (UNC, UNC)          1/2 (1, 1) + 1/2 (0, 0)  1/2 (1, 1) + 1/2 (0, 0)
  ==================  ======================  ======================

  A pair where *both* labels are uncertain has no definitive label to agree or disagree with; the
  paper's text and Jain et al. (whose image labels were never uncertain) leave it open, but the paper's
  numbers settle it: its Table 30 (agreement with the consensus labels) prints NN Fusion (PS) on
  Atelectasis with ``kappa_w = kappa_low = kappa_high = F1_low = 1.00`` against CR labels that hold 37 uncertain Atelectasis labels (448 NEG, 37
  UNC, 165 POS, the appendix label-distribution table behind Table 5). Identical label sets must
  therefore agree under *both* mappings, so by default (``both_uncertain='agree'``) a (UNC, UNC) pair
  counts half in each of the two agreeing cells under both mappings. ``both_uncertain='disagree'``
  (CLI ``--both-uncertain disagree``) reads such a pair as a disagreement: half in each of the
  two *disagreeing* cells under the pessimistic mapping, so two identical label sets with uncertain
  labels get ``kappa_low < 1`` (0.860 and ``F1_low`` 0.943 on the Table 30 case). Both rules keep both
  kappas symmetric in the two sources and unchanged when POS and NEG are swapped; they are
  deterministic (no random tie-break) and turn into fractional counts.
- **f1_w, f1_low, f1_high** -- support-weighted F1 (scikit-learn's ``f1_score(average='weighted')``,
  ``zero_division=0``) on the three states, and on the two binary mappings above. Source A is the
  reference (``y_true``) and source B the prediction (``y_pred``): weighted F1 is *not* symmetric.

``NOT_MENTIONED`` (report sources) enters as a stated choice, ``not_mentioned='negative'`` (CheXpert
practice: a finding the report does not mention is negative) or ``'exclude'`` (the pair is dropped).
Missing labels (``<NA>``) always drop the pair; every drop is counted on the result.

Aggregation (:func:`compute_agreement`, an :class:`AgreementTableResult`): one row per finding; ``macro`` is the unweighted mean of the
per-finding values over a finding set (the XQA-Chest paper's "four selected" and "all 12"), ``micro`` pools every
(study, finding) pair of the set into one confusion matrix.

Private modules, their main functions and results re-exported here: ``_scores`` (array level), ``_pairs`` (label tables,
``agreement.csv``), ``_prevalence`` (Tables 5-8, ``prevalence.csv``), ``_omissions`` (3x3 flows and omission
rates, ``flows.csv`` / ``omissions.csv``) and ``_compare`` (:func:`compare_sources`, what ``cxreval
agree`` runs: all four, as the command writes them). Each table-level function
returns a frozen result that owns its file (``FILES``, ``COLUMNS``, ``save(folder)``, ``summary()``,
``plot()``); its ``table`` is the tidy DataFrame.

Hand-worked example (also a test)
---------------------------------
Ten studies, A = ``[POS, POS, POS, NEG, NEG, NEG, NEG, UNC, UNC, UNC]``,
B = ``[POS, POS, UNC, NEG, NEG, NEG, POS, NEG, POS, UNC]``.

*Optimistic*: (POS, UNC) -> (1, 1); (UNC, NEG) -> (0, 0); (UNC, POS) -> (1, 1); (UNC, UNC) -> half
(1, 1), half (0, 0). The 2x2 table (rows A, columns B, order 1, 0) is ``[[4.5, 0], [1, 4.5]]``:
:math:`p_o = 9/10`, A has 4.5 positives, B 5.5, so :math:`p_e = (4.5 \cdot 5.5 + 5.5 \cdot 4.5)/100
= 0.495` and :math:`\kappa_{high} = (0.9 - 0.495)/(1 - 0.495) = 0.405/0.505 = 0.80198`.

*Pessimistic*: (POS, UNC) -> (1, 0); (UNC, NEG) -> (1, 0); (UNC, POS) -> (0, 1); (UNC, UNC) -> half
(1, 1), half (0, 0). The table is ``[[2.5, 2], [2, 3.5]]``: :math:`p_o = 6/10`, A has 4.5 positives
and B 4.5, :math:`p_e = (4.5^2 + 5.5^2)/100 = 0.505` and
:math:`\kappa_{low} = (0.6 - 0.505)/(1 - 0.505) = 0.19192`. With ``both_uncertain='disagree'`` the
(UNC, UNC) pair goes half to (1, 0), half to (0, 1): ``[[2, 2.5], [2.5, 3]]``, :math:`p_o = 5/10` and
:math:`\kappa_{low} = (0.5 - 0.505)/0.495 = -0.01010`.

>>> a = ["positive"] * 3 + ["negative"] * 4 + ["uncertain"] * 3
>>> b = ["positive", "positive", "uncertain", "negative", "negative", "negative", "positive",
...      "negative", "positive", "uncertain"]
>>> res = agreement_scores(a, b)
>>> round(res.kappa_high, 5), round(res.kappa_low, 5)
(0.80198, 0.19192)
>>> round(agreement_scores(a, b, both_uncertain="disagree").kappa_low, 5)
-0.0101
>>> res.n
10

References
----------
.. [1] J. Cohen, "A coefficient of agreement for nominal scales", Educational and Psychological
   Measurement 20(1), 37-46 (1960). https://doi.org/10.1177/001316446002000104
.. [2] J. Cohen, "Weighted kappa: nominal scale agreement with provision for scaled disagreement or
   partial credit", Psychological Bulletin 70(4), 213-220 (1968). https://doi.org/10.1037/h0026256
.. [3] S. Jain et al., "VisualCheXbert: addressing the discrepancy between radiology report labels and
   image labels", ACM CHIL 2021, 105-115. https://doi.org/10.1145/3450439.3451862
"""

from __future__ import annotations

from ._compare import SourceComparisonResult, compare_sources
from ._omissions import FlowsResult, OmissionsResult, compute_flows, compute_omissions
from ._pairs import AgreementTableResult, compute_agreement
from ._prevalence import PrevalenceResult, compute_prevalence, positive_prevalence
from ._scores import AgreementResult, agreement_scores, cohen_kappa, uncertainty_mapping

__all__ = [
    "uncertainty_mapping",
    "positive_prevalence",
    "AgreementResult",
    "agreement_scores",
    "cohen_kappa",
    "AgreementTableResult",
    "compute_agreement",
    "PrevalenceResult",
    "compute_prevalence",
    "FlowsResult",
    "OmissionsResult",
    "compute_flows",
    "compute_omissions",
    "SourceComparisonResult",
    "compare_sources",
]
