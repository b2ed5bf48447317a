"""The -A names that are not one flat schedule, registered as objects with capabilities.

Besides the flat algorithms of the registry (base.py), -A accepts names that say *how* to run rather
than *which* schedule: a two-level composition of flat phases, a chooser over the registry, the
backend's own collective, and Blink's packed trees (registered by the blink package, which depends
one way on this module). Callers ask a capability (`is_two_level(name)`, `is_chooser(name)`), never
compare a name, so a new mode is one registration here or in its package.
"""

from __future__ import annotations

from dataclasses import dataclass

from collperf.model.algorithms.base import MODE_NAMES, RegistrationError


@dataclass(frozen=True)
class Mode:
    name: str
    summary: str  # one line for help texts
    collectives: tuple[str, ...] | None = None  # None: every collective (further limits are the caller's)
    two_level: bool = False  # flat phases composed on nodes x ranks per node
    chooser: bool = False  # stands for the registry's fastest algorithm per size
    runtime_only: bool = False  # the backend's own collective: no schedule, no closed form
    needs_topology: bool = False  # a schedule placed on a topology before the ranks start
    hybrid: bool = False  # splits the data between two link kinds (Blink equation 8)

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower():
            raise RegistrationError(f"mode {self.name!r}: names are lower-case kebab-case")

    def serves(self, collective: str) -> bool:
        return self.collectives is None or collective in self.collectives


MODES: dict[str, Mode] = {}


def register_mode(mode: Mode) -> Mode:
    """Add one mode; registering a name twice raises RegistrationError."""
    if mode.name in MODES:
        raise RegistrationError(f"mode {mode.name} is registered twice")
    MODES[mode.name] = mode
    MODE_NAMES.add(mode.name)
    return mode


def mode_of(name: object) -> Mode | None:
    """The registered mode called `name` (as the user typed it), or None for a flat algorithm's name."""
    return MODES.get(name.strip().lower()) if isinstance(name, str) else None


def _has(name: object, capability: str) -> bool:
    mode = mode_of(name)
    return bool(mode is not None and getattr(mode, capability))


def is_two_level(name: object) -> bool:
    return _has(name, "two_level")


def is_chooser(name: object) -> bool:
    return _has(name, "chooser")


def is_runtime_only(name: object) -> bool:
    return _has(name, "runtime_only")


def needs_topology(name: object) -> bool:
    return _has(name, "needs_topology")


def is_hybrid(name: object) -> bool:
    return _has(name, "hybrid")


def is_flat(name: object) -> bool:
    """A name that is not a registered mode: a flat algorithm of the registry (or unknown)."""
    return mode_of(name) is None


def mode_names(capability: str) -> list[str]:
    """The registered names that have `capability`, in registration order."""
    return [m.name for m in MODES.values() if getattr(m, capability)]


def topology_collectives() -> dict[str, tuple[str, ...]]:
    """Each topology-placed mode and the collectives it serves."""
    return {m.name: m.collectives or () for m in MODES.values() if m.needs_topology}


HIERARCHICAL = register_mode(
    Mode(
        "hierarchical",
        "two levels: an intra-node and an inter-node phase per step of model/hierarchy.PLANS",
        two_level=True,
    )
)
AUTO = register_mode(Mode("auto", "per size the model's fastest algorithm for the network", chooser=True))
BUILTIN = register_mode(Mode("builtin", "the backend's own collective (torch.distributed)", runtime_only=True))
