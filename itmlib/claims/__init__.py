"""The ledger: the papers' claims as data (:mod:`.registry`, ``itmlib/paper_numbers/claims_*.yaml``) and the
one rule that judges them (:mod:`.verdicts`: the 95% interval of the paired seed differences, and the gate
that withholds a verdict from arms that did not train, :mod:`itmlib.training.convergence`)."""

from .registry import *  # noqa: F401,F403 - the claims' API: from itmlib.claims import claims_for, ...
from .registry import __all__ as _registry
from .paper_side import *  # noqa: F401,F403 - a claim's paper numbers, ratio, thresholds and margins
from .paper_side import __all__ as _paper_side

__all__ = [*_registry, *_paper_side]
