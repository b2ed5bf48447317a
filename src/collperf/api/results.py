"""What the model and schedule functions of the API return: typed results, each owning its JSON document
(`to_json()`, what `--json` prints). Lists of results stay lists (indexing and iteration work as before);
a pair that callers unpack (`found, ranges = api.crossover(...)`) still unpacks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the results' parts, named for the checker: importing the API stays light
    from collperf.expect.resolve import Assumed
    from collperf.model.nccl.expected import NcclPrediction
    from collperf.model.nccl.switches import SwitchPoints
    from collperf.model.network import Network
    from collperf.schedule.ir import Schedule


def one_or_many(docs: list):
    """One document for one result, a list for several: what every command's --json prints."""
    return docs[0] if len(docs) == 1 else docs


class Predictions(list):
    """`predict`: one model.predict.Prediction per size; with the spec's `expected`, the catalogue system
    assumed (`assumed`) and NCCL's expected band per size (`bands`, diagnose.expectation.ExpectedBand);
    `sharp`: that system's switches reduce (SHARP), so its bound may sit below our schedules' own."""

    def __init__(self, items=(), assumed=None, bands=(), sharp: bool = False):
        super().__init__(items)
        self.assumed = assumed
        self.bands = list(bands)
        self.sharp = sharp

    def lower_bound_s(self, i: int) -> float:
        """The lower bound printed under size i's table. On a catalogue system (with `bands`): the system's bound,
        the number NCCL's table and `diagnose` show for that system and size (model.bounds two-level bound:
        bandwidth alone, with in-switch or in-network reduction where the system has it). Otherwise our
        schedules' own (Prediction.lower_bound_s, what `x bound` divides by)."""
        theirs = self.bands[i].bound_s if i < len(self.bands) else None
        return theirs if theirs is not None else self[i].lower_bound_s

    def bound_difference(self, i: int) -> str:
        """Why size i's system bound (lower_bound_s) and our schedules' own differ, so both can be said:
        "" (no system, or the same number); "latency" (the same bandwidth term, ours adds the links' latency);
        "in-network" (SHARP: the switches reduce, which no schedule of ours does); "in-switch" (NVLS: likewise
        inside the node); "intra-node" or "host bridge" (that resource binds the system; our bound on a cluster
        counts the NICs alone); "links" (the system's catalogue links differ from the network priced)."""
        theirs, ours = self.lower_bound_s(i), self[i].lower_bound_s
        if theirs == ours or i >= len(self.bands):
            return ""
        bandwidth = ours - self[i].lower_bound_latency_s
        if abs(theirs - bandwidth) <= 1e-6 * max(theirs, bandwidth):
            return "latency"
        binding, system = self.bands[i].binding, self.assumed.system
        if theirs < bandwidth:
            if binding == "network" and system.collnet:
                return "in-network"
            return "in-switch" if binding == "intra-node" and system.nvls else "links"
        return binding if binding in ("intra-node", "host bridge") else "links"

    def below_system_bound(self, i: int) -> bool:
        """Whether the best of size i's algorithms is priced below the system's bound: the links priced above leave
        out what binds the system (a host bridge through which PCIe GPUs without P2P exchange data), so that time
        is not reachable on it."""
        if i >= len(self.bands) or self.bands[i].bound_s is None or not self[i].algorithms:
            return False
        best = next((a for a in self[i].algorithms if a.name == self[i].best), None)
        return best is not None and best.time_s < self.lower_bound_s(i) * (1 - 1e-9)

    def to_json(self):
        docs = [r.to_json() for r in self]
        for doc, band in zip(docs, self.bands):
            doc["nccl_expected"] = band.to_json()
        if self.sharp:  # only where SHARP is what makes the system's bound the lower one
            for i, doc in enumerate(docs):
                if self.bound_difference(i) == "in-network":
                    doc["sharp_lower_bound_s"] = self.lower_bound_s(i)
        return one_or_many(docs)


@dataclass
class NcclChoice:
    """`predict --nccl`: the system assumed (diagnose.hardware.Assumed) and NCCL's choice per size
    (model.nccl.NcclPrediction). Unpacks as (assumed, prediction)."""

    assumed: Assumed
    prediction: NcclPrediction
    model_note: str = ""  # what the time is where NCCL's tuning model does not price it (alltoall, send/recv)

    def __iter__(self):
        return iter((self.assumed, self.prediction))

    def to_json(self) -> dict:
        pred = self.prediction
        return {
            "collective": pred.collective,
            "ranks": pred.ranks,
            "nodes": pred.nodes,
            "model_note": self.model_note,
            "system": self.assumed.to_json(),
            "sizes": [_nccl_size(pred, i, n) for i, n in enumerate(pred.size_bytes)],
        }


def _nccl_size(pred, i: int, n) -> dict:
    return {
        "size_bytes": int(n),
        "algorithm": pred.algorithm[i],
        "protocol": pred.protocol[i],
        "time_s": float(pred.time_s[i]),
        "busbw_GBps": float(pred.busbw_Bps[i]) / 1e9,
        "regime": str(pred.regime[i]),
        "runner_up": f"{pred.runner_up_algorithm[i]}/{pred.runner_up_protocol[i]}",
        "runner_up_time_s": float(pred.runner_up_time_s[i]) if pred.runner_up_time_s[i] < float("inf") else None,
        "bound_s": float(pred.bound_s[i]) if pred.bound_s is not None else None,
    }


@dataclass
class Crossover:
    """`crossover`: where the best algorithm changes (model.select.Crossover list) and the size ranges each
    with its best algorithm, on `network` (a model.network.Network). Unpacks as (crossovers, ranges)."""

    collective: str  # as the user gave it
    network: Network
    crossovers: list = field(default_factory=list)
    ranges: list = field(default_factory=list)

    def __iter__(self):
        return iter((self.crossovers, self.ranges))

    def to_json(self) -> dict:
        return {
            "collective": self.collective,
            "ranks": self.network.ranks,
            "network": self.network.describe(),
            "crossovers": [vars(c) for c in self.crossovers],
            "regimes": [vars(r) for r in self.ranges],
        }


@dataclass
class NcclCrossover:
    """`crossover --nccl`: the system assumed (diagnose.hardware.Assumed) and the sizes where NCCL's (algorithm,
    protocol) changes on it (model.nccl.switches.SwitchPoints). Unpacks as (assumed, switch points)."""

    assumed: Assumed
    points: SwitchPoints

    def __iter__(self):
        return iter((self.assumed, self.points))

    def to_json(self) -> dict:
        p = self.points
        return {
            "collective": p.collective,
            "ranks": p.ranks,
            "nodes": p.nodes,
            "system": self.assumed.to_json(),
            "min_size_bytes": p.min_bytes,
            "max_size_bytes": p.max_bytes,
            "point_to_point": p.p2p,
            "switches": [vars(s) for s in p.switches],
            "ranges": [
                {"algorithm": r.algorithm, "protocol": r.protocol, "from_bytes": r.from_bytes, "to_bytes": r.to_bytes}
                for r in p.ranges
            ],
        }


class Algorithms(list):
    """`algorithms`: the registry's algorithms (model.algorithms), optionally of one collective."""

    def to_json(self) -> list:
        return [
            {
                "collective": a.collective,
                "algorithm": a.name,
                "formula": a.formula,
                "source": a.source,
                "pipelined": a.pipeline is not None,
                "multiport": a.multiport,
            }
            for a in self
        ]


@dataclass
class VerifiedSchedule:
    """`schedule`: a schedule (schedule.ir.Schedule) that verified, and its cost coefficients (alpha, n beta,
    n gamma) counted from its steps. Unpacks as (schedule, coefficients)."""

    schedule: Schedule
    coefficients: tuple[float, float, float]

    def __iter__(self):
        return iter((self.schedule, self.coefficients))

    def to_json(self) -> dict:
        s, (a, b, c) = self.schedule, self.coefficients
        return {
            "collective": s.collective,
            "algorithm": s.algorithm,
            "ranks": s.ranks,
            "chunks": s.chunks,
            "buffer_chunks": s.chunks_per_buffer,
            "root": s.root,
            "cost": {"alpha": a, "n_beta": b, "n_gamma": c},
            "steps": [
                [{"src": t.src, "dst": t.dst, "chunks": list(t.chunks), "op": t.op} for t in st.transfers]
                for st in s.steps
            ],
        }


@dataclass
class VerifyRow:
    collective: str
    algorithm: str
    ranks_checked: int
    failures: list[str]


class Verification(list):
    """`verify`: a VerifyRow per algorithm (and per collective's two-level schedule), over min..max ranks."""

    def __init__(self, items=(), min_ranks: int = 1, max_ranks: int = 64):
        super().__init__(items)
        self.min_ranks, self.max_ranks = min_ranks, max_ranks

    @property
    def failed(self) -> bool:
        return any(r.failures for r in self)

    def to_json(self) -> list:
        return [vars(r) for r in self]


@dataclass
class Calibration:
    """`calibrate`: the profile document (model/profile.py: what --profile reads) and where it was written."""

    profile: dict
    output: str | None = None

    def to_json(self) -> dict:
        return self.profile


@dataclass
class MeasuredBound:
    """`bound`: the measured allreduce lower bound (lab.validate.bound's document: size_bytes, ranks,
    measured_bound, algorithms, model_bound_s)."""

    doc: dict

    def __getitem__(self, key):
        return self.doc[key]

    def get(self, key, default=None):
        return self.doc.get(key, default)

    def to_json(self) -> dict:
        return self.doc
