"""An algorithm is one registered object: its closed-form cost and its schedule builder together.

Closed form: T(p, n) = a*alpha + b*n*beta + c*n*gamma (Thakur, Rabenseifner, Gropp, IJHPCA 2005), with n the
formula bytes of collectives.formula_bytes, beta = 1/bandwidth, gamma = 1/reduce bandwidth. A
plain algorithm gives (a, b, c) as a function of p; a pipelined one gives them as a function of p
and the segment count k (arrays). The evaluation over sizes and networks is model/costs.py.

Model of a step (the same one the schedules are costed with, model/schedule_cost.py): all transfers of
a step run at once; a step costs one alpha, plus the busiest rank's max(bytes sent, bytes
received) times beta (one full-duplex port shared by that rank's messages), plus the most bytes
any rank reduces times gamma. Under this model the single-port algorithms reproduce the
MPICH/Chan formulas exactly, and mesh / one-shot algorithms (several peers in one step) cost what
Neuron and ASTRA-sim's "direct" describe. Non-power-of-two p uses MPICH's fold-in; where our
schedule moves a different amount than MPICH's header comment says, the coefficient follows the
schedule and says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypeVar

import numpy as np

from collperf.collectives import COLLECTIVES, get_collective
from collperf.errors import UsageError, did_you_mean
from collperf.model import trees as T

if TYPE_CHECKING:  # the builders' results, named for the checker only
    from collperf.schedule.arrays import ArraySchedule
    from collperf.schedule.ir import Schedule

Coefficients = tuple[float, float, float]
# a pipelined closed form: (p, segment counts) -> (a, b, c), arrays shaped as the counts
Pipeline = Callable[[int, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]
_Builder = TypeVar("_Builder", bound=Callable[..., "Schedule"])

MPICH = "Thakur, Rabenseifner & Gropp 2005 / MPICH src/mpi/coll/"
CHAN = "Chan, Heimlich, Purkayastha & van de Geijn 2007"


class RegistrationError(ValueError):
    """A programming error in an algorithm's definition, raised when its module is imported."""


def _no_requirement(p: int) -> str | None:
    return None


@dataclass(frozen=True)
class Algorithm:
    collective: str
    name: str
    formula: str  # the cost in words, for `collperf algorithms`
    source: str  # paper / MPICH file / NCCL file the formula and schedule follow
    coefficients: Callable[[int], Coefficients] | None = None
    # pipelined algorithms: (p, k array) -> (a, b, c) arrays for k segments per tree/chain
    pipeline: Pipeline | None = None
    requires: Callable[[int], str | None] = _no_requirement
    multiport: bool = False  # talks to several peers in one step (mesh, one-shot)
    # (p, segments) -> schedule.ir.Schedule on ranks 0..p-1, rooted at rank 0 where rooted
    builder: Callable[[int, int], Schedule] | None = None
    # optional: (p, segments) -> the same schedule built straight into the array form (schedule/arrays.py) by
    # numpy, for the simulator at scale; defined beside the tuple builder in the family's module. Without one
    # the tuple schedule is packed into arrays (model/two_level/build.py build_array)
    array_builder: Callable[[int, int], ArraySchedule] | None = None

    def __post_init__(self) -> None:
        what = f"algorithm {self.collective} {self.name}"
        if self.collective not in COLLECTIVES:
            raise RegistrationError(f"{what}: unknown collective (expected one of {', '.join(COLLECTIVES)})")
        if not self.name or self.name != self.name.strip().lower():
            raise RegistrationError(f"{what}: names are lower-case kebab-case")
        if (self.coefficients is None) == (self.pipeline is None):
            raise RegistrationError(f"{what}: give exactly one closed-form cost, coefficients= or pipeline=")
        if not callable(self.builder):
            raise RegistrationError(f"{what}: no schedule builder (builder=(p, segments) -> Schedule)")
        if self.array_builder is not None and not callable(self.array_builder):
            raise RegistrationError(f"{what}: array_builder is not a function (p, segments) -> ArraySchedule")
        if not self.formula or not self.source:
            raise RegistrationError(f"{what}: give the formula text and its source")

    @property
    def builds_arrays(self) -> bool:
        """Whether the array form is built directly (array_builder) rather than packed from the tuples."""
        return self.array_builder is not None

    def unavailable(self, ranks: int) -> str | None:
        """Why this algorithm cannot run on `ranks` ranks, or None."""
        return self.requires(ranks) if ranks > 1 else None


# ---------------------------------------------------------------------------------------------
# The registry. ORDER is the order in which algorithms are listed (CLI, predict tables) and the
# tie-break of costs.lowest (ties go to the earlier one), so it is stated once, by hand.

ORDER: dict[str, tuple[str, ...]] = {
    "broadcast": ("binomial", "scatter-allgather", "chain", "double-binary-tree"),
    "reduce": ("binomial", "rhd", "double-binary-tree"),
    "scatter": ("binomial", "linear"),
    "gather": ("binomial", "linear"),
    "allgather": ("ring", "recursive-doubling", "bruck", "mesh"),
    "reducescatter": ("ring", "recursive-halving", "pairwise", "mesh"),
    "allreduce": ("ring", "recursive-doubling", "rhd", "reduce-broadcast", "double-binary-tree", "mesh", "one-shot"),
    "alltoall": ("pairwise", "bruck", "mesh"),
    "sendrecv": ("ring",),
}
_RANK = {(c, name): i for i, (c, name) in enumerate((c, n) for c, names in ORDER.items() for n in names)}

REGISTRY: dict[tuple[str, str], Algorithm] = {}
MODE_NAMES: set[str] = set()  # the -A names that are modes (modes.py adds each): offered by a did-you-mean
ALGORITHMS: list[Algorithm] = []  # every registered algorithm, in ORDER


def register(alg: Algorithm) -> Algorithm:
    """Add one algorithm; a duplicate or an algorithm missing from ORDER raises RegistrationError."""
    key = (alg.collective, alg.name)
    if key in REGISTRY:
        raise RegistrationError(f"algorithm {alg.collective} {alg.name} is registered twice")
    if key not in _RANK:
        raise RegistrationError(
            f"algorithm {alg.collective} {alg.name} is not listed in "
            "model/algorithms/base.py ORDER: add it where it should be listed"
        )
    REGISTRY[key] = alg
    ALGORITHMS.append(alg)
    ALGORITHMS.sort(key=lambda a: _RANK[(a.collective, a.name)])
    return alg


def algorithm(
    collective: str, name: str, formula: str, source: str, **closed_form: Any
) -> Callable[[_Builder], _Builder]:
    """Decorator: register the decorated builder (p, segments=1) -> Schedule with its closed form."""

    def wrap(builder: _Builder) -> _Builder:
        register(Algorithm(collective, name, formula, source, builder=builder, **closed_form))
        return builder

    return wrap


def check_complete() -> None:
    """Every algorithm listed in ORDER is registered (called once all families are imported)."""
    missing = [f"{c} {n}" for c, n in _RANK if (c, n) not in REGISTRY]
    if missing:
        raise RegistrationError(f"listed in ORDER but never registered: {', '.join(missing)}")


def algorithms_for(collective: str) -> list[Algorithm]:
    name = get_collective(collective).name
    return [a for a in ALGORITHMS if a.collective == name]


def get_algorithm(collective: str, algorithm: str) -> Algorithm:
    name = get_collective(collective).name
    key = (name, str(algorithm).strip().lower())
    if key not in REGISTRY:
        known = ", ".join(a.name for a in algorithms_for(name))
        hint = did_you_mean(algorithm, [a.name for a in algorithms_for(name)] + sorted(MODE_NAMES))
        raise UsageError(f"unknown algorithm {algorithm!r} for {name}: {hint}expected one of {known}")
    return REGISTRY[key]


# ---------------------------------------------------------------------------------------------
# Coefficient helpers shared by the families. lg = ceil(log2 p) for trees; q = (p-1)/p.


def lg(p: int) -> int:
    return T.ceil_log2(p)


def q(p: int) -> float:
    return (p - 1) / p


def needs_pow2(p: int) -> str | None:
    if T.is_pow2(p):
        return None
    return f"needs a power-of-two rank count (got {p}; nearest {T.floor_pow2(p)} or {2 * T.floor_pow2(p)})"


def fold(p: int) -> int:
    """1 if MPICH's fold-in to p' = 2^floor(lg p) ranks is needed, else 0."""
    return 1 if not T.is_pow2(p) else 0


def const(
    a: float | Callable[[int], float], b: float | Callable[[int], float], c: float | Callable[[int], float]
) -> Callable[[int], Coefficients]:
    """Coefficients given as functions of p, or numbers."""

    def coefficients(p: int) -> Coefficients:
        fa, fb, fc = (float(x(p)) if callable(x) else float(x) for x in (a, b, c))
        return fa, fb, fc

    return coefficients
