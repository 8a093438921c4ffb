"""Bug injection: labelled mutants of correct Warp programs (docs/mutation.md).

:mod:`.operators` holds the operator registry, :mod:`.sources` the parents
(correct corpus variants and adapters of Warp's own tests), :mod:`.admit`
the admission of mutants against the independent oracle and the manifest,
:mod:`.tier` the deterministic materialisation of the generated tier.
"""

from .operators import OPERATORS, Mutation, Mutations, Operator, get_operator

__all__ = ["OPERATORS", "Mutation", "Mutations", "Operator", "get_operator"]
