"""Every algorithm as one registered object: closed-form cost + schedule builders (the tuple form, and
beside it the array form for the regular ones) + requirements + source, defined together in one module
per family (ring, trees, recursive, mesh, bruck).

    from collperf.model.algorithms import get_algorithm, algorithms_for, ALGORITHMS
    alg = get_algorithm("allreduce", "ring")
    alg.coefficients(8), alg.builder(8, 1)

model/costs.py evaluates the closed forms over sizes and networks; model/two_level/build.py validates
arguments and calls the builders, and composes the two-level schedules (model/two_level/), which need this
registry and so live outside it. Every module of this folder is imported here.
"""

from collperf.model.algorithms import bruck, mesh, modes, recursive, ring, trees  # noqa: F401  (they register)
from collperf.model.algorithms.base import (
    ALGORITHMS,
    ORDER,
    REGISTRY,
    Algorithm,
    Coefficients,
    RegistrationError,
    algorithm,
    algorithms_for,
    check_complete,
    get_algorithm,
    register,
)

check_complete()

__all__ = [
    "ALGORITHMS",
    "ORDER",
    "REGISTRY",
    "Algorithm",
    "Coefficients",
    "RegistrationError",
    "algorithm",
    "algorithms_for",
    "check_complete",
    "get_algorithm",
    "register",
]
