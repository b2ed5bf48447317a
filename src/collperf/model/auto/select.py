"""The best algorithm per size, and the sizes where the best one changes.

One visible rule: the best algorithm is the one with the least predicted time (ties go to the one
listed first in the registry); `algorithm=` anywhere overrides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Protocol

import numpy as np
import numpy.typing as npt

from collperf.errors import UsageError
from collperf.model.algorithms import algorithms_for
from collperf.model.two_level.build import default_phase, roots_at_zero
from collperf.model.algorithms.modes import is_runtime_only, is_two_level
from collperf.model.auto.builtin_cost import BUILTIN, BuiltinFit
from collperf.model.costs import Cost, lowest
from collperf.model.two_level.hierarchy import PLANS
from collperf.model.network import Network
from collperf.model.predict import HIERARCHICAL, AlgorithmCost, best, candidates
from collperf.model.profile import cluster_from, profile_from
from collperf.model.shared_links import HostLinks, host_priced


def best_algorithm(collective: str, sizes: npt.ArrayLike, network: Network, **options: Any) -> np.ndarray:
    """Name of the fastest algorithm for each size."""
    return best(collective, network, sizes, **options)[1]


@dataclass(frozen=True)
class BestRange:
    algorithm: str
    from_bytes: float  # inclusive
    to_bytes: float  # exclusive; inf for the last


@dataclass(frozen=True)
class Crossover:
    size_bytes: float  # the smallest size at which `to` is best
    from_algorithm: str
    to_algorithm: str


def crossovers(
    collective: str,
    network: Network,
    min_bytes: float = 1,
    max_bytes: float = 1 << 34,
    points_per_octave: int = 16,
    **options: Any,
) -> tuple[list[Crossover], list[BestRange]]:
    """Where the best algorithm changes between min_bytes and max_bytes.

    A geometric grid finds the changes; each is then bisected on the size (to 1 byte) between
    the two grid points, so the reported size is exact to the byte for the model.
    """
    if not (0 < min_bytes < max_bytes):
        raise UsageError(f"size range {min_bytes}..{max_bytes}: expected 0 < min < max, e.g. --min 1 --max 16G")
    octaves = np.log2(max_bytes / min_bytes)
    grid = np.unique(np.round(np.geomspace(min_bytes, max_bytes, int(octaves * points_per_octave) + 2)))
    best = best_algorithm(collective, grid, network, **options)
    found = []
    for i in np.nonzero(best[1:] != best[:-1])[0]:
        lo, hi = float(grid[i]), float(grid[i + 1])
        while hi - lo > 1:
            mid = np.floor((lo + hi) / 2)
            if best_algorithm(collective, [mid], network, **options)[0] == best[i]:
                lo = mid
            else:
                hi = mid
        found.append(Crossover(hi, str(best[i]), str(best_algorithm(collective, [hi], network, **options)[0])))
    edges = [float(grid[0])] + [c.size_bytes for c in found] + [float("inf")]
    names = [str(best[0])] + [c.to_algorithm for c in found]
    regimes = [BestRange(a, edges[j], edges[j + 1]) for j, a in enumerate(names)]
    return found, regimes


@dataclass(frozen=True)
class AutoChoice:
    """What `-A auto` runs at one size: the algorithm the model predicts fastest among those the executor
    can run (flat schedules), its predicted time, and its pipeline segments (None: not pipelined).
    builtin_s: the built-in's time by its fit (None: not a candidate); decided_by: "model", or "measured"
    when a confirmation timed ours against the built-in (model/auto/confirm.py), `measured` holding
    {size, algorithm, ours_us, builtin_us, paired_ratio, ratio_low, ratio_high, rounds} of that timing
    (auto_confirm.summary: paired_ratio is ours / built-in per round, < 1 ours faster) and, where two of
    ours were timed, runner_up {algorithm, paired_ratio} of the other. runner_up: (algorithm, segments, predicted_s) of
    ours predicted within TIE_MARGIN of the pick: the model cannot tell the two apart, a confirmation times
    both."""

    size_bytes: int
    algorithm: str
    predicted_s: float
    segments: int | None = None
    builtin_s: float | None = None
    decided_by: str = "model"
    measured: dict[str, Any] | None = None
    runner_up: tuple[str, int | None, float] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "size": self.size_bytes,
            "algorithm": self.algorithm,
            "predicted_us": self.predicted_s * 1e6,
            "segments": self.segments,
            "decided_by": self.decided_by,
        }
        if self.builtin_s is not None:
            out["builtin_predicted_us"] = self.builtin_s * 1e6
        if self.measured is not None:
            out["measured"] = dict(self.measured)
        if self.runner_up is not None:
            out["runner_up"] = {
                "algorithm": self.runner_up[0],
                "segments": self.runner_up[1],
                "predicted_us": self.runner_up[2] * 1e6,
            }
        return out


def runnable_algorithms(collective: str, ranks: int) -> list[str]:
    """The registered flat algorithms that can run `collective` on `ranks` ranks, in registry order."""
    return [a.name for a in algorithms_for(collective) if not a.unavailable(ranks)]


def auto_algorithms(collective: str, network: Network, root: int = 0) -> list[str]:
    """What auto chooses among: the runnable flat algorithms, then `hierarchical` on a network of several
    nodes of several ranks (the executor runs model/two_level/build.py build_two_level, its default phase
    algorithms, and auto prices exactly those; a rooted one only from rank 0, its root)."""
    names = runnable_algorithms(collective, network.ranks)
    c = network.cluster
    if (
        c is not None
        and c.nodes > 1
        and c.ranks_per_node > 1
        and collective in PLANS
        and roots_at_zero(collective, root)
    ):
        names.append(HIERARCHICAL)
    return names


BUILTIN_MARGIN = 1.25  # ours predicted >= 1.25x faster than the built-in's fit, else the built-in runs
TIE_MARGIN = 1.10  # ours within 10 % of the pick: a tie the model cannot break (on 4 testbed hosts it
# priced alltoall's mesh and pairwise alike; pairwise measured 2-7 % faster)


def auto_choices(
    collective: str,
    network: Network,
    sizes: Iterable[int],
    segments: int | None = None,
    root: int = 0,
    builtin: BuiltinFit | None = None,
    hosts: HostLinks | None = None,
) -> list[AutoChoice]:
    """Per size, the model's best runnable algorithm on `network` (the rule of `best`: least predicted
    time, ties to the first registered). Pipelined algorithms get the model's best segment count unless
    `segments` fixes it. `hosts`: the flat schedules priced on shared host links (model/shared_links.py);
    `builtin`: the backend's own collective as one more candidate, priced by its fit (model/auto/builtin_cost.py) and
    chosen unless one of ours is predicted BUILTIN_MARGIN times faster. Where the pick is ours, the next best
    of ours within TIE_MARGIN is its runner_up."""
    sizes = [int(s) for s in sizes]
    names = auto_algorithms(collective, network, root)
    if not names and builtin is None:
        raise UsageError(f"no algorithm of ours can run {collective} on {network.ranks} ranks: use builtin")
    phase = default_phase(collective)
    costs, _ = (
        candidates(
            collective, network, sizes, algorithm=names, segments=segments, intra_algorithm=phase, inter_algorithm=phase
        )
        if names
        else ([], {})
    )
    pairs = [(c.name, _on_hosts(collective, c, sizes, network, hosts, root)) for c in costs]
    if builtin is not None:
        # the built-in's time is measured, ours predicted: ours must be predicted BUILTIN_MARGIN times faster
        # to be run instead, so that a calibration's noise cannot make auto slower than doing nothing
        pairs.append(
            (BUILTIN, Cost(np.zeros(len(sizes)), builtin.time_s(sizes) / BUILTIN_MARGIN, np.zeros(len(sizes))))
        )
    by_name = dict(pairs)
    cost, picked = lowest([c for _, c in pairs], [name for name, _ in pairs])
    if builtin is not None:
        cost = Cost(
            np.where([is_runtime_only(name) for name in picked], builtin.time_s(sizes), cost.total_s),
            np.zeros(len(sizes)),
            np.zeros(len(sizes)),
        )
    theirs = builtin.time_s(sizes) if builtin is not None else None
    out = []
    for i, size in enumerate(sizes):
        name = str(picked[i])
        out.append(
            AutoChoice(
                size,
                name,
                float(cost.total_s[i]),
                _segments(by_name[name], i),
                float(theirs[i]) if theirs is not None else None,
                runner_up=_runner_up(pairs, name, i),
            )
        )
    return out


def _segments(cost: Cost, i: int) -> int | None:
    return int(cost.segments[i]) if cost.segments is not None else None


def _runner_up(pairs: list[tuple[str, Cost]], picked: str, i: int) -> tuple[str, int | None, float] | None:
    """(name, segments, predicted_s) of the next best of ours at size index i, where it is within TIE_MARGIN
    of the pick and the pick is ours; ties to the first listed, as the pick's."""
    ours = [(name, c) for name, c in pairs if not is_runtime_only(name)]
    if is_runtime_only(picked) or len(ours) < 2:
        return None
    best_s = dict(ours)[picked].total_s[i]
    rest = [(float(c.total_s[i]), j, name, c) for j, (name, c) in enumerate(ours) if name != picked]
    time_s, _, name, c = min(rest)
    return (name, _segments(c, i), time_s) if time_s <= TIE_MARGIN * best_s else None


def _on_hosts(
    collective: str, candidate: AlgorithmCost, sizes: list[int], network: Network, hosts: HostLinks | None, root: int
) -> Cost:
    """A candidate's cost, repriced on shared host links where they are given (flat unpipelined schedules: the
    hierarchical composition prices each phase on its own link)."""
    if hosts is None or is_two_level(candidate.name) or candidate.cost.segments is not None:
        return candidate.cost  # pipelined: thousands of steps at their best segment count; closed form kept
    c = network.cluster
    intra = c.intra if c is not None else network.flat_link
    return host_priced(collective, candidate.name, sizes, candidate.cost.segments, intra, hosts, root)


# --- what -A auto runs: the choices per size of a sweep, on a given network or a quick calibration's ---

AUTO_CALIBRATION_BYTES = 4 << 20  # the quick calibration's ping-pong size: seconds on a 200 Mbit/s link


class Sweep(Protocol):
    """What auto reads of a bench job (runtime/job.py BenchJob, a layer above: named here by its shape)."""

    @property
    def collective(self) -> str: ...
    @property
    def sizes(self) -> tuple[int, ...]: ...
    @property
    def root(self) -> int: ...
    @property
    def segments(self) -> int: ...
    @property
    def segments_given(self) -> bool: ...


def choices_for(
    job: Sweep, network: Network, builtin: BuiltinFit | None = None, hosts: HostLinks | None = None
) -> list[dict[str, Any]]:
    """auto's choice per size of the sweep on `network` (auto_choices), as JSON."""
    return [c.to_json() for c in choose_for(job, network, builtin, hosts)]


def choose_for(
    job: Sweep, network: Network, builtin: BuiltinFit | None = None, hosts: HostLinks | None = None
) -> list[AutoChoice]:
    """auto's choice per size of a bench job's sweep on `network` (auto_choices). `job`: runtime/job.py's
    BenchJob (its collective, sizes, root, segments and segments_given)."""
    fixed = job.segments if job.segments_given else None  # --segments N fixes them
    return auto_choices(job.collective, network, list(job.sizes), fixed, job.root, builtin, hosts)


def auto_network(raw: dict[str, Any], world: int, ranks_per_host: int) -> Network:
    """The network a quick calibration (runtime/measure.py calibrate) measured: one host's link between
    its ranks, or hosts x ranks_per_host with the inter-host link, the reduction rate as gamma."""
    nodes = max(1, world // ranks_per_host)
    doc = profile_from(raw, nodes, ranks_per_host)
    cluster = cluster_from(doc, "quick calibration")
    if nodes == 1:
        return Network.of(cluster.intra, world)
    return Network.of(cluster, world)
