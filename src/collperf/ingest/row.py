"""One row of a bench sweep: one (algorithm, size), nccl-tests' columns and each placement's timing.

Built by the ranks (runtime/measure.py), sent to the launcher pickled, written by the text, JSON and CSV
writers (lab/results.py), read back from collperf's own JSON by ingest/others.py and read by validation
(lab/validate.py). Kept free of torch, and here below the runtime so that the readers need no executor.
Rows are frozen; a prediction makes a new row (`with_prediction`).

Existing callers read rows as mappings (`r["size"]`, `r["out_of_place"]["busbw"]`): `__getitem__` and `get`
keep that read-only view, under the key names the rows had as dicts.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

PLACEMENTS = ("out_of_place", "in_place")


def _reported(value):
    """A bandwidth as written: "N/A" (nccl-tests, when it is not defined) reads as None."""
    return None if value == "N/A" else value


class _ReadAsMapping:
    """r[key] and r.get(key, default), by the names in _KEYS (the dict rows' keys) or the field names."""

    _KEYS: dict[str, str] = {}

    def __getitem__(self, key: str):
        name = self._KEYS.get(key, key)
        if name not in {f.name for f in fields(self)}:
            raise KeyError(key)
        return getattr(self, name)

    def get(self, key: str, default=None):
        try:
            value = self[key]
        except KeyError:
            return default
        return default if value is None else value


@dataclass(frozen=True, kw_only=True)
class Timing(_ReadAsMapping):
    """One placement of a row: the time nccl-tests reports (mean over iterations, combined over ranks by -a),
    the fastest and median iteration, the bandwidths at that time and #wrong (None: not checked)."""

    time_us: float
    min_us: float | None = None  # None: the file did not say (nccl-tests -J writes only the mean)
    p50_us: float | None = None
    algbw_GBps: float | None = None  # None: not reported (nccl-tests writes "N/A" or null)
    busbw_GBps: float | None = None
    wrong: int | None = None

    _KEYS = {"algbw": "algbw_GBps", "busbw": "busbw_GBps"}

    @classmethod
    def of(cls, value: Timing | dict | None) -> Timing | None:
        """A Timing from a Timing, None, or a dict with the keys the rows had (time_us, algbw, busbw, ...)."""
        if value is None or isinstance(value, Timing):
            return value
        return cls(
            time_us=value["time_us"],
            min_us=value["min_us"],
            p50_us=value["p50_us"],
            algbw_GBps=value["algbw"],
            busbw_GBps=value["busbw"],
            wrong=value.get("wrong"),
        )

    def to_json(self) -> dict:
        """nccl-tests -J's placement object (time in us, bandwidths in GB/s), with our min and p50."""
        return {
            "time": self.time_us,
            "alg_bw": self.algbw_GBps,
            "bus_bw": self.busbw_GBps,
            "nwrong": self.wrong,
            "min_us": self.min_us,
            "p50_us": self.p50_us,
        }

    @classmethod
    def from_json(cls, entry: dict) -> Timing:
        """The inverse of to_json, as tolerant as nccl-tests' own writer needs (NCCL tests 2.17 src/util.cu
        writeBenchmarkLineBody): the time may be only "cpu_time", a bandwidth "N/A" or null, #wrong a
        double (with -c) or null. Values are taken as they are: range checks belong to the reader."""
        time = entry["time"] if "time" in entry else entry.get("cpu_time")
        if time is None:
            raise ValueError("no 'time' (us)")
        wrong = entry.get("nwrong")
        return cls(
            time_us=time,
            min_us=entry.get("min_us"),
            p50_us=entry.get("p50_us"),
            algbw_GBps=_reported(entry.get("alg_bw")),
            busbw_GBps=_reported(entry.get("bus_bw")),
            wrong=None if wrong is None else int(wrong),
        )


@dataclass(frozen=True, kw_only=True)
class Row(_ReadAsMapping):
    """nccl-tests' columns (size in bytes, count in elements, type, redop, root: -1 when unrooted), the
    algorithm, each placement's Timing (None: not run), what auto chose here (its choice's JSON) and the
    model's time (None: no prediction)."""

    algorithm: str
    size: int
    count: int | None = 0  # None: the file did not say
    type: str = "float"
    redop: str = "none"
    root: int | None = -1  # None: the file did not say
    out_of_place: Timing | None = None
    in_place: Timing | None = None
    auto: dict | None = None
    predicted_us: float | None = None

    def __post_init__(self):
        # rows written as dicts (the API's older callers, hand-made test rows) carry dict placements
        for name in PLACEMENTS:
            object.__setattr__(self, name, Timing.of(getattr(self, name)))

    @classmethod
    def of(cls, value: Row | dict) -> Row:
        """A Row from a Row or a dict with the rows' keys (missing placements: not run)."""
        if isinstance(value, Row):
            return value
        known = {f.name for f in fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"bench row: unknown keys {sorted(unknown)}; expected some of {sorted(known)}")
        return cls(**value)

    def timings(self) -> list[tuple[str, Timing]]:
        """(placement, Timing) of the placements that ran, out-of-place first."""
        return [(name, t) for name in PLACEMENTS if (t := getattr(self, name)) is not None]

    def ran_as(self) -> tuple[str, int | None]:
        """(the algorithm that ran, its segments; None: the sweep's): auto's choice at this size, else the row's."""
        if self.auto is not None:
            return self.auto["algorithm"], self.auto.get("segments")
        return self.algorithm, None

    def correct(self) -> bool:
        """Out-of-place ran and no element was wrong (or it was not checked)."""
        return self.out_of_place is not None and not self.out_of_place.wrong

    def with_prediction(self, predicted_us: float | None) -> Row:
        return replace(self, predicted_us=predicted_us)

    def to_json(self) -> dict:
        """One entry of nccl-tests -J's results, with our fields (algorithm, predicted_us, auto)."""
        return {
            "size": self.size,
            "count": self.count,
            "type": self.type,
            "redop": self.redop,
            "root": self.root,
            "algorithm": self.algorithm,
            "predicted_us": self.predicted_us,
            **({"auto": self.auto} if self.auto is not None else {}),
            **{name: None if (t := getattr(self, name)) is None else t.to_json() for name in PLACEMENTS},
        }

    @classmethod
    def from_json(cls, entry: dict) -> Row:
        """The inverse of to_json; it also reads nccl-tests -J result entries (no algorithm: "", the root as
        the text column's `%6i` string "    -1", missing columns as None or ""). Keys it does not know
        (nccl-tests -I's per-iteration blocks, actual_iterations) are left to the reader."""
        root = entry.get("root")
        return cls(
            algorithm=entry.get("algorithm") or "",
            size=entry["size"],
            count=entry.get("count"),
            type=entry.get("type") or "",
            redop=entry.get("redop") or "",
            root=int(root.strip()) if isinstance(root, str) else root,
            auto=entry.get("auto"),
            predicted_us=entry.get("predicted_us"),
            **{name: None if not entry.get(name) else Timing.from_json(entry[name]) for name in PLACEMENTS},
        )

    def placements(self, line: int = 0) -> list[dict]:
        """One record per placement that ran, out-of-place first, under the ingest table's row fields
        (size, time_s, algbw_GBps, ..., placement "out-of-place"/"in-place"); `line`: where the row was read."""
        return [
            {
                "size": self.size,
                "time_s": t.time_us * 1e-6,
                "algbw_GBps": t.algbw_GBps,
                "busbw_GBps": t.busbw_GBps,
                "wrong": t.wrong,
                "placement": name.replace("_", "-"),
                "count": self.count,
                "dtype": self.type,
                "op": self.redop,
                "root": self.root,
                "line": line,
            }
            for name, t in self.timings()
        ]
