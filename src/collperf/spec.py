"""Validated requests: what a user asks for, built from CLI options or from Python.

Each spec checks itself once, in `__post_init__`, and raises a UsageError that names the value,
what was expected and how to fix it. The API takes specs; the CLI only builds them. A `NetworkSpec`
is the one way to get a `Network` (`NetworkSpec.resolve()`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace

from collperf import units
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.network import Cluster, Link, Network


def _whole(name: str, value, low: int = 1, flag: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise UsageError(f"{name} {value!r}: expected a whole number >= {low}" + (f" ({flag})" if flag else ""))


# --- networks ---------------------------------------------------------------------------------------

_LEVELS = ("intra_latency", "intra_bandwidth", "inter_latency", "inter_bandwidth", "nics_per_node")


@dataclass(frozen=True)
class NetworkSpec:
    """Where a collective runs: a uniform link (ranks, latency, bandwidth), a preset cluster (cluster,
    nodes), a two-level cluster given level by level, or a calibrated profile. Values are strings as
    the CLI takes them ('5us', '50GB/s') or numbers in seconds and bytes/s. Unset intra/inter values
    fall back to the preset's, then to latency/bandwidth when no preset is given."""

    ranks: int | None = None
    latency: str | float | None = None
    bandwidth: str | float | None = None
    reduce_bandwidth: str | float = "inf"
    cluster: str | None = None
    nodes: int | None = None
    ranks_per_node: int | None = None
    intra_latency: str | float | None = None
    intra_bandwidth: str | float | None = None
    inter_latency: str | float | None = None
    inter_bandwidth: str | float | None = None
    nics_per_node: int | None = None
    profile: str | None = None

    def __post_init__(self):
        for name in ("ranks", "nodes", "ranks_per_node", "nics_per_node"):
            if getattr(self, name) is not None:
                _whole(name.replace("_", "-"), getattr(self, name), flag=f"--{name.replace('_', '-')}")
        uniform = [f"--{n}" for n in ("latency", "bandwidth") if getattr(self, n) is not None]
        if uniform and (self.cluster is not None or self.profile is not None):
            base = f"--cluster {self.cluster}" if self.cluster is not None else f"--profile {self.profile}"
            raise UsageError(f"{' and '.join(uniform)} describe a uniform link and would be ignored with {base}: "
                             "drop them, or override one level with --intra-latency/--intra-bandwidth/"
                             "--inter-latency/--inter-bandwidth")
        if self.cluster is not None and self.profile is not None:
            raise UsageError(f"--cluster {self.cluster} and --profile {self.profile} both describe the network: "
                             "give one")

    @property
    def given(self) -> bool:
        """Whether any network option was set (a bench without one fits its own link)."""
        return any(getattr(self, f.name) != f.default for f in fields(self) if f.name != "ranks")

    @property
    def two_level(self) -> bool:
        return (self.cluster is not None or self.nodes is not None or self.ranks_per_node is not None
                or any(getattr(self, n) is not None for n in _LEVELS))

    def with_ranks(self, ranks: int | None, nodes: int | None = None) -> "NetworkSpec":
        """The same network for another rank count (and node count, where given)."""
        return replace(self, ranks=ranks, nodes=nodes if nodes is not None else self.nodes)

    def resolve(self) -> Network:
        if self.profile is not None:
            from collperf.calibrate import load_cluster
            c = load_cluster(self.profile, self.nodes, self.ranks_per_node)
            if self.ranks is not None and self.ranks != c.ranks and self.nodes is None \
                    and self.ranks % c.ranks_per_node == 0:
                c = replace(c, nodes=self.ranks // c.ranks_per_node)
            return Network.of(c, self.ranks)
        if not self.two_level:
            if self.latency is None or self.bandwidth is None:
                raise UsageError("no network given: pass --latency and --bandwidth (with --ranks), "
                                 "or --cluster PRESET, or --nodes/--ranks-per-node with intra/inter links")
            if self.ranks is None:
                raise UsageError("a uniform link needs a rank count: pass --ranks, e.g. --ranks 16")
            return Network.of(Link.parse(self.latency, self.bandwidth, self.reduce_bandwidth), self.ranks)
        return Network.of(self.resolve_cluster(), self.ranks)

    def resolve_cluster(self) -> Cluster:
        from collperf.model.presets import get_preset
        base = get_preset(self.cluster) if self.cluster is not None else None
        ranks, nodes, per_node = self.ranks, self.nodes, self.ranks_per_node
        if per_node is None:
            if base is not None:
                per_node = base.ranks_per_node
            elif nodes and ranks:
                if ranks % nodes:
                    raise UsageError(f"ranks({ranks}) is not a multiple of nodes({nodes}): give --ranks-per-node")
                per_node = ranks // nodes
            else:
                raise UsageError("a two-level cluster needs --ranks-per-node (or --ranks with --nodes, or --cluster)")
        if nodes is None:
            if ranks is not None and ranks % per_node:
                raise UsageError(f"ranks({ranks}) is not a multiple of ranks_per_node({per_node}): give --nodes")
            nodes = 1 if ranks is None else ranks // per_node
        intra = self._level("intra", base.intra if base else None)
        inter = self._level("inter", base.inter if base else None)
        nics = self.nics_per_node if self.nics_per_node is not None else (base.nics_per_node if base else per_node)
        return Cluster(nodes, per_node, intra, inter, nics, name=self.cluster or "custom",
                       source=base.source if base else "")

    def _level(self, name: str, preset: Link | None) -> Link:
        lat, bw = getattr(self, f"{name}_latency"), getattr(self, f"{name}_bandwidth")
        overridden = lat is not None or bw is not None
        lat = lat if lat is not None else (preset.latency_s if preset else self.latency)
        bw = bw if bw is not None else (preset.bandwidth_Bps if preset else self.bandwidth)
        if lat is None or bw is None:
            raise UsageError(f"the {name}-node link is not given: pass --{name}-latency and --{name}-bandwidth "
                             "(or --latency/--bandwidth for both levels, or --cluster PRESET)")
        return Link.parse(lat, bw, self.reduce_bandwidth, preset.name if preset and not overridden else name)


def network(**options) -> Network:
    """A Network from CLI-style keyword options (see NetworkSpec)."""
    return NetworkSpec(**options).resolve()


def output_path(path, flag: str):
    """Check a file the command will write, before any work: its folder exists and is writable, and
    the path is not a folder. Returns the path (None stays None)."""
    import os
    from pathlib import Path
    if path is None:
        return None
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not str(path) or str(path).endswith(os.sep):
        raise UsageError(f"{flag} {path!r}: not a file name; give one, e.g. {flag} results.json")
    if p.is_dir():
        raise UsageError(f"{flag} {path}: is a folder; give a file name, e.g. {flag} {p / 'out'}")
    if not folder.is_dir():
        raise UsageError(f"{flag} {path}: the folder {folder} does not exist; create it or write elsewhere")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UsageError(f"{flag} {path}: not writable; choose another place")
    return path


# --- sizes --------------------------------------------------------------------------------------------

def sizes(value) -> list[int]:
    """'1M,64M', one size, or a list of sizes -> bytes."""
    if isinstance(value, str):
        return units.parse_sizes(value)
    if isinstance(value, (int, float)):
        return [units.parse_size(int(value))]
    return [units.parse_size(s) for s in value]


# --- bench --------------------------------------------------------------------------------------------

DTYPE_BYTES = {"float32": 4, "float": 4, "float64": 8, "double": 8, "float16": 2, "half": 2, "bfloat16": 2,
               "int32": 4, "int64": 8}
OPS = ("sum", "prod", "min", "max", "avg")


# Algorithms built on a topology rather than on p alone (Blink's packed trees, packed_runs.py): the bench
# places its local ranks on the topology's GPUs (BenchSpec.topology, .gpus) to build them
TOPOLOGY_ALGORITHMS = {"blink": ("broadcast", "reduce", "allreduce", "allgather", "reducescatter"),
                       "blink-hybrid": ("broadcast",)}


@dataclass
class SweepSpec:
    """An nccl-tests-style sweep: which collective and algorithms, which sizes, how measured and checked."""

    collective: str = "allreduce"
    algorithms: list = field(default_factory=lambda: ["builtin"])
    min_bytes: int = 1024
    max_bytes: int = 1 << 20
    factor: int = 2            # multiplicative step (-f); 0 or 1 to use step_bytes (-i)
    step_bytes: int = 1 << 20
    iters: int = 20
    warmup: int = 5
    dtype: str = "float32"
    op: str = "sum"
    root: int = 0
    check: int = 1
    average: int = 1
    segments: int | None = None      # None: 1, or per size where bench chooses (-A auto, blink, patterns)
    slice_bytes: int = 1 << 20
    in_place: bool = True
    progress: bool = True

    def __post_init__(self):
        from collperf.model.algorithms import algorithms_for
        self.collective = get_collective(self.collective).name
        if isinstance(self.algorithms, str):
            self.algorithms = [a.strip() for a in self.algorithms.split(",") if a.strip()]
        # auto: per size, the algorithm the model predicts fastest for the run's network (bench.py)
        known = [a.name for a in algorithms_for(self.collective)] + ["builtin", "auto"] + \
            [a for a, colls in TOPOLOGY_ALGORITHMS.items() if self.collective in colls]
        for a in self.algorithms:
            if a not in known:
                raise UsageError(f"unknown algorithm {a!r} for {self.collective}: expected one of {', '.join(known)}")
        if not self.algorithms:
            raise UsageError("no algorithm given: pass e.g. --algorithm ring,builtin")
        self.min_bytes, self.max_bytes = units.parse_size(self.min_bytes), units.parse_size(self.max_bytes)
        self.step_bytes, self.slice_bytes = units.parse_size(self.step_bytes), units.parse_size(self.slice_bytes)
        if self.min_bytes > self.max_bytes:
            raise UsageError(f"minBytes {self.min_bytes} > maxBytes {self.max_bytes}: -b must not exceed -e")
        for name, value, low in (("iters", self.iters, 1), ("warmup", self.warmup, 0), ("check", self.check, 0),
                                 ("segments", 1 if self.segments is None else self.segments, 1),
                                 ("slice bytes", self.slice_bytes, 0),
                                 ("root", self.root, 0)):
            _whole(name, value, low)
        if (self.factor > 1 or self.step_bytes <= 0) and self.factor < 2:
            raise UsageError(f"step factor {self.factor} with step bytes {self.step_bytes}: give -f 2 or -i 1M")
        if self.average not in (0, 1, 2, 3):
            raise UsageError(f"average (-a) {self.average}: expected 0 (rank 0), 1 (mean), 2 (min) or 3 (max)")
        if self.dtype not in DTYPE_BYTES:
            raise UsageError(f"unknown dtype {self.dtype!r}: expected one of {', '.join(DTYPE_BYTES)}")
        if self.op not in OPS:
            raise UsageError(f"unknown op {self.op!r}: expected one of {', '.join(OPS)}")
        if self.op == "avg" and self.dtype in ("int32", "int64"):
            raise UsageError(f"op avg needs a floating-point dtype (got {self.dtype}): use --dtype float32")

    def sizes(self) -> list[int]:
        out, size = [], self.min_bytes
        while size <= self.max_bytes:
            out.append(size)
            size = (size * self.factor if size else 1) if self.factor > 1 else size + self.step_bytes
        return out

    def to_job(self) -> dict:
        doc = asdict(self)
        doc["segments_given"], doc["segments"] = self.segments is not None, self.segments or 1
        doc["sizes"] = self.sizes()
        doc["step"] = f"{self.factor}(factor)" if self.factor > 1 else f"{self.step_bytes}(bytes)"
        return doc


def testbed(text):
    """A testbed description ('hosts=4,rate=200mbit[,ranks-per-host=2]') or None."""
    if text is None or not isinstance(text, str):
        return text
    from collperf.testbed import parse_spec
    return parse_spec(text)


@dataclass
class BenchSpec:
    """A sweep on `ranks` local processes, under torchrun, or on a testbed; predictions from `network`
    (when given) or from a link fitted to the run's own rows."""

    sweep: SweepSpec = field(default_factory=SweepSpec)
    ranks: int | None = None
    timeout_s: float = 300.0
    network: NetworkSpec = field(default_factory=NetworkSpec)
    testbed: object = None       # a testbed.Testbed, or its spec string
    json_file: str | None = None   # nccl-tests -J JSON (plus our fields), rewritten after every row
    csv_file: str | None = None    # flat CSV, rewritten after every row
    force: bool = False            # run even where the rank count or the memory estimate says it cannot fit
    # -A blink / blink-hybrid and --pattern: local rank i stands for GPU gpus[i] of `topology` (default
    # dgx1v, and its first GPUs; a pattern's default GPUs are the appendix's), whose packing or pattern
    # gives the schedule the ranks run (packed_runs.bench_schedules)
    topology: str | None = None
    gpus: object = None
    t_dpa: str | float = 0.0         # blink-hybrid: the PCIe path's switching time in equation 8
    pattern: str | None = None       # one of PATTERNS: sets the collective and the algorithm
    center: int | None = None
    successor: int | None = None
    source: int | None = None

    def __post_init__(self):
        output_path(self.json_file, "--json-file")   # before any work: results are never lost to a typo
        output_path(self.csv_file, "--csv-file")
        self.testbed = testbed(self.testbed)
        self._placement()
        if self.testbed is not None:
            if self.ranks is not None and self.ranks != self.testbed.ranks:
                raise UsageError(f"--ranks {self.ranks} but the testbed has {self.testbed.ranks} ranks: drop --ranks")
            self.ranks = self.testbed.ranks
            # before the testbed comes up (a topology testbed builds -A blink from the root then)
            if get_collective(self.sweep.collective).rooted and not 0 <= self.sweep.root < self.ranks:
                raise UsageError(f"--root {self.sweep.root}: the testbed has {self.ranks} ranks: give --root "
                                 f"between 0 and {self.ranks - 1}")
        if self.ranks is not None:
            _whole("ranks", self.ranks, flag="--ranks")
        if not (isinstance(self.timeout_s, (int, float)) and self.timeout_s > 0):
            raise UsageError(f"timeout {self.timeout_s!r} s is not positive: give e.g. --timeout 300")

    @property
    def placed(self) -> bool:
        """The ranks run schedules built on a topology (-A blink, blink-hybrid, --pattern) here, before any rank
        starts; not on a topology testbed, whose own hosts and routes place -A blink (hetero_runs.schedules)."""
        if getattr(self.testbed, "plan", None) is not None and self.pattern is None:
            return False
        return self.pattern is not None or any(a in TOPOLOGY_ALGORITHMS for a in self.sweep.algorithms)

    def _placement(self) -> None:
        self.gpus = rank_list(self.gpus, "--gpus")
        for name in ("center", "successor", "source"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), 0, f"--{name}")
        self.t_dpa_s = units.parse_time(self.t_dpa)
        if self.pattern is not None:
            if self.pattern not in PATTERNS:
                raise UsageError(f"--pattern {self.pattern!r}: expected one of {', '.join(PATTERNS)}")
            if self.sweep.algorithms not in (["builtin"], [self.pattern]):
                raise UsageError(f"--pattern {self.pattern} runs the pattern's own schedule: drop -A "
                                 f"{','.join(self.sweep.algorithms)}")
            if self.sweep.root != 0:
                raise UsageError(f"--root {self.sweep.root}: a pattern's root is its own (the chain's end, the "
                                 "fan's source or successor); drop --root")
            # the sweep's collective defaults to allreduce: any other given one contradicts the pattern
            if self.sweep.collective not in ("allreduce", PATTERN_COLLECTIVES[self.pattern]):
                raise UsageError(f"--pattern {self.pattern} is checked as a {PATTERN_COLLECTIVES[self.pattern]} "
                                 f"(what its destinations must hold): drop --collective {self.sweep.collective}")
            self.sweep.collective = PATTERN_COLLECTIVES[self.pattern]
            self.sweep.algorithms = [self.pattern]
            _refuse_unused_pattern_options(self)
        elif any(getattr(self, n) is not None for n in ("center", "successor", "source")):
            raise UsageError("--center, --successor and --source place a --pattern's GPUs: add --pattern or drop them")
        if not self.placed and (self.topology is not None or self.gpus is not None):
            raise UsageError("--topology and --gpus place the ranks of -A blink, blink-hybrid or --pattern on a "
                             "machine's GPUs: add one of those or drop them")
        if self.t_dpa_s and "blink-hybrid" not in self.sweep.algorithms:
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: use it with -A blink-hybrid")
        if self.placed:
            self.topology = self.topology or "dgx1v"
            if self.testbed is not None:
                raise UsageError("-A blink runs on local ranks, torchrun or a topology testbed (--testbed "
                                 "topology=dgx1v-like,group=0+1+4); --pattern on local ranks or torchrun: drop --testbed")
        if self.gpus is not None and self.pattern is None:
            if self.ranks is None:
                self.ranks = len(self.gpus)
            elif self.ranks != len(self.gpus):
                raise UsageError(f"--ranks {self.ranks} but --gpus {','.join(map(str, self.gpus))} names "
                                 f"{len(self.gpus)} GPUs: give one GPU per rank")


# --- simulation ---------------------------------------------------------------------------------------

@dataclass
class SimulateSpec:
    """An algorithm's schedule on a topology (dgx1v, dgx2, mesh:P, switch:P, ring:P, cluster:NxG or a file).
    Algorithm blink: Blink's packed trees on the group `ranks` of the topology (default: all its ranks),
    from `root` (a topology rank; default the group's first); `hybrid`: a broadcast split over NVLink
    and PCIe trees with the switching overhead `t_dpa` (Blink appendix A.2, equation 8)."""

    collective: str
    algorithm: str
    topology: str
    size: object = "1G"
    mode: str = "rounds"
    segments: int | None = None      # None: 1, or 16 for blink
    root: int | None = None          # None: rank 0, or the group's first rank for blink
    intra_algorithm: str | None = None
    inter_algorithm: str | None = None
    network: NetworkSpec = field(default_factory=NetworkSpec)
    ranks: object = None             # blink: the group, '0,1,4' or a list
    hybrid: bool = False
    t_dpa: str | float = 0.0
    transit: str = "devices"         # blink: devices (the group's GPUs, switches, CPUs) or any (idle GPUs too)

    def __post_init__(self):
        self.collective = get_collective(self.collective).name
        self.sizes_bytes = sizes(self.size)   # one size or a list ('1M,64M'): the schedule is built once
        check_mode(self.mode)
        if self.segments is not None:
            _whole("segments", self.segments, flag="--segments")
        if self.root is not None:
            _whole("root", self.root, 0, "--root")
        self.ranks = rank_list(self.ranks)
        self.t_dpa_s = units.parse_time(self.t_dpa)
        blink = self.algorithm == "blink"
        if self.ranks is not None and not blink:
            raise UsageError(f"--ranks {','.join(map(str, self.ranks))} picks a group for -A blink; the other "
                             "algorithms run on every rank of the topology")
        if self.hybrid and not (blink and self.collective == "broadcast"):
            raise UsageError("--hybrid is the NVLink + PCIe broadcast of Blink: use it with broadcast -A blink")
        if self.t_dpa_s and not self.hybrid:
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: add --hybrid")
        check_transit(self.transit)
        if blink and self.root is not None and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: "
                             "give a rank of the group")


def check_mode(mode: str) -> None:
    """The simulator's modes (simulate/): rounds, or events (congestion-aware)."""
    if mode not in ("rounds", "events"):
        raise UsageError(f"mode {mode!r}: expected rounds or events")


def rank_list(value, flag: str = "--ranks") -> list[int] | None:
    """'0,1,4' (or a list of ints) -> distinct ranks; None stays None."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    try:
        ranks = [int(str(r).strip()) for r in items]
    except ValueError:
        raise UsageError(f"{flag} {value!r}: expected rank numbers such as 0,1,4") from None
    if not ranks or any(r < 0 for r in ranks):
        raise UsageError(f"{flag} {value!r}: expected rank numbers >= 0 such as 0,1,4")
    twice = sorted({r for r in ranks if ranks.count(r) > 1})
    if twice:
        raise UsageError(f"{flag} {','.join(map(str, ranks))}: rank(s) {', '.join(map(str, twice))} given twice; "
                         "list each rank once")
    return ranks


TREE_COLLECTIVES = ("broadcast", "allreduce", "allgather", "reducescatter")


def check_transit(transit: str) -> None:
    from collperf.model.packing import TRANSIT
    if transit not in TRANSIT:
        raise UsageError(f"--transit {transit!r}: expected devices (the group's GPUs, PCIe switches and CPUs) or "
                         "any (idle GPUs forward too)")


@dataclass
class TreesSpec:
    """Blink's packed spanning trees on a group of a topology's ranks (`collperf trees`)."""

    topology: str = "dgx1v"
    ranks: object = None             # '0,1,4' or a list; None: every rank of the topology
    collective: str = "broadcast"
    root: object = None              # a topology rank, 'best', or None (the group's first rank)
    links: str = "all"               # all | nvlink | pcie
    # devices: trees on the group's GPUs, crossing PCIe switches and CPUs (Blink packs on its own
    # allocation, as NCCL's rings do); any: idle GPUs of the machine forward too
    transit: str = "devices"
    size: object = "1G"

    def __post_init__(self):
        from collperf.model.packing import LINK_KINDS
        self.collective = get_collective(self.collective).name
        if self.collective not in TREE_COLLECTIVES:
            raise UsageError(f"--collective {self.collective}: packed trees are built for "
                             f"{', '.join(TREE_COLLECTIVES)}")
        self.ranks = rank_list(self.ranks)
        if isinstance(self.root, str) and self.root != "best":
            try:
                self.root = int(self.root)
            except ValueError:
                raise UsageError(f"--root {self.root!r}: expected a rank of the group or best") from None
        if self.root is not None and self.collective in ("allgather", "reducescatter"):
            raise UsageError(f"--root: every rank is a root of {self.collective}; drop --root")
        if isinstance(self.root, int) and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: "
                             "give a rank of the group, or best")
        if self.links not in LINK_KINDS:
            raise UsageError(f"--links {self.links!r}: expected one of {', '.join(LINK_KINDS)}")
        check_transit(self.transit)
        self.size_bytes = units.parse_size(self.size)


@dataclass
class TopologyPredictSpec:
    """`collperf predict --topology`: the model on a machine's topology. -A blink: Blink's packed trees on
    the group `ranks` (bandwidth terms: size over the packing's rate; allreduce reduces up and broadcasts
    down the same trees), with `hybrid` the NVLink + PCIe broadcast split by the appendix's equation 8
    (switching time `t_dpa`). Other algorithms (single-hop, ring, ...): the closed forms on the link
    every pair of the group sees through a switch (dgx2, switch:P)."""

    collective: str
    topology: str
    algorithm: str = "blink"
    size: object = "1M,64M,1G"
    ranks: object = None             # the group, '0,1,2' or a list; None: every rank of the topology
    root: int | None = None          # blink: a topology rank of the group (default its first)
    hybrid: bool = False
    t_dpa: str | float = 0.0
    transit: str = "devices"
    network: NetworkSpec = field(default_factory=NetworkSpec)   # latency/bandwidth: the link of switch:P, ...

    def __post_init__(self):
        self.collective = get_collective(self.collective).name
        if self.hybrid and self.algorithm == "all":
            self.algorithm = "blink"     # the hybrid split is Blink's: --hybrid alone means -A blink
        self.sizes_bytes = sizes(self.size)
        self.ranks = rank_list(self.ranks)
        self.t_dpa_s = units.parse_time(self.t_dpa)
        self.link = topology_link(self.network, self.topology)
        if self.root is not None:
            _whole("root", self.root, 0, "--root")
        blink = self.algorithm == "blink"
        if blink and self.collective not in TOPOLOGY_ALGORITHMS["blink"]:
            raise UsageError(f"-A blink with --topology prices {', '.join(TOPOLOGY_ALGORITHMS['blink'])}; "
                             f"not {self.collective}")
        if self.hybrid and not (blink and self.collective == "broadcast"):
            raise UsageError("--hybrid is the NVLink + PCIe broadcast of Blink: use it with broadcast -A blink")
        if self.t_dpa_s and not self.hybrid:
            raise UsageError(f"--t-dpa {self.t_dpa} is the hybrid split's switching time: add --hybrid")
        if self.root is not None and not (blink and self.collective in ("broadcast", "reduce", "allreduce")):
            raise UsageError("--root picks the packed trees' root of a broadcast, reduce or allreduce -A blink: "
                             "drop it")
        if self.root is not None and self.ranks is not None and self.root not in self.ranks:
            raise UsageError(f"--root {self.root} is not one of --ranks {','.join(map(str, self.ranks))}: "
                             "give a rank of the group")
        check_transit(self.transit)


# the topologies built on one given link (topology.parse): the only ones --latency/--bandwidth apply to
_LINKED_TOPOLOGY = re.compile(r"^(mesh|switch|ring):\d+$")


def topology_link(network: NetworkSpec, topology: str) -> Link | None:
    """The link --latency/--bandwidth give a mesh:P, switch:P or ring:P (None when not given); the other
    network options describe a machine, which --topology already gives: refused, not ignored."""
    machine = [f"--{f.name.replace('_', '-')}" for f in fields(network)
               if f.name not in ("ranks", "latency", "bandwidth", "reduce_bandwidth")
               and getattr(network, f.name) != f.default]
    if machine:
        raise UsageError(f"--topology {topology} gives the machine: drop {', '.join(machine)} (only --latency and "
                         "--bandwidth go with it, as the link of switch:P, mesh:P or ring:P)")
    if network.latency is None and network.bandwidth is None:
        return None
    if network.latency is None or network.bandwidth is None:
        raise UsageError(f"--topology {topology}: a link needs both --latency and --bandwidth (e.g. --latency 1us "
                         "--bandwidth 10GB/s)")
    if not _LINKED_TOPOLOGY.match(str(topology).strip()):
        raise UsageError(f"--topology {topology} has its own links: drop --latency/--bandwidth (they give the link "
                         "of switch:P, mesh:P or ring:P)")
    return Link.parse(network.latency, network.bandwidth, network.reduce_bandwidth)


def predict_network(network: NetworkSpec, ranks=None, root=None, hybrid: bool = False, t_dpa="0",
                    transit: str = "devices") -> NetworkSpec:
    """`collperf predict` without --topology: refuses the options that only place Blink's packed trees on a
    topology, and takes --ranks as a rank count (a group such as 0,1,2 needs --topology)."""
    given = [n for n, v in (("--root", root is not None), ("--hybrid", hybrid),
                            ("--t-dpa", units.parse_time(t_dpa) != 0), ("--transit", transit != "devices")) if v]
    if given:
        raise UsageError(f"{', '.join(given)} go with --topology (Blink's packed trees): add --topology dgx1v")
    if ranks is None:
        return network
    try:
        count = int(str(ranks).strip())
    except ValueError:
        raise UsageError(f"--ranks {ranks}: a number of ranks; a group of GPUs such as 0,1,2 goes with "
                         "--topology") from None
    return replace(network, ranks=count)


PATTERNS = ("chain-forward", "chain-reduce-forward", "chain-reduce-broadcast", "fan-in-forward",
            "fan-in-reduce-forward", "fan-out-forward")
# the collective each pattern's schedule computes (schedule/patterns.py): what its destinations must hold
def _refuse_unused_pattern_options(spec) -> None:
    """--center/--successor/--source name a fan's GPUs (a fan-out has a source, a fan-in a successor); chains
    take none: a given one that the pattern does not use is an error, not silently dropped."""
    fan = spec.pattern.startswith("fan")
    unused = [f"--{n}" for n in ("center", "successor", "source") if getattr(spec, n) is not None
              and (not fan or (n == "successor" and spec.pattern == "fan-out-forward")
                   or (n == "source" and spec.pattern != "fan-out-forward"))]
    if unused:
        raise UsageError(f"{' and '.join(unused)} do not apply to {spec.pattern}: drop them")


PATTERN_COLLECTIVES = {"chain-forward": "broadcast", "chain-reduce-forward": "reduce",
                       "chain-reduce-broadcast": "allreduce", "fan-in-forward": "gather",
                       "fan-in-reduce-forward": "reduce", "fan-out-forward": "broadcast"}


@dataclass
class PatternSpec:
    """One of Blink's micro-benchmarks (appendix A.1) simulated over sizes. Chains: `gpus` in chain
    order. Fan-in: `gpus` are the sources, sending to `center`, which forwards to `successor`.
    Fan-out: `source` sends to `center`, which forwards to every one of `gpus`. On dgx1v, unset
    values default to the appendix's GPUs (chain 0,1,2,3; center 4; fan-in 5,6,7 -> 4 -> 0; fan-out 5 -> 4 -> 0,6,7)."""

    pattern: str
    topology: str = "dgx1v"
    gpus: object = None
    center: int | None = None
    successor: int | None = None
    source: int | None = None
    size: object = "1M,16M,256M"
    mode: str = "rounds"
    segments: int = 32

    def __post_init__(self):
        if self.pattern not in PATTERNS:
            raise UsageError(f"--pattern {self.pattern!r}: expected one of {', '.join(PATTERNS)}")
        self.gpus = rank_list(self.gpus, "--gpus")
        for name in ("center", "successor", "source"):
            if getattr(self, name) is not None:
                _whole(name, getattr(self, name), 0, f"--{name}")
        check_mode(self.mode)
        _whole("segments", self.segments, flag="--segments")
        self.sizes_bytes = sizes(self.size)
        _refuse_unused_pattern_options(self)


# --- logs ---------------------------------------------------------------------------------------------

@dataclass
class LogSpec:
    """Logs to read (nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB), with what the user says of them."""

    paths: list = field(default_factory=list)
    collective: str | None = None
    ranks: int | None = None

    def __post_init__(self):
        if isinstance(self.paths, str) or hasattr(self.paths, "__fspath__"):
            self.paths = [self.paths]
        if not self.paths:
            raise UsageError("no log given: pass one or more files, e.g. collperf fit results.txt")
        if self.collective is not None:
            self.collective = get_collective(self.collective).name
        if self.ranks is not None:
            _whole("ranks", self.ranks, flag="--ranks")


@dataclass
class HardwareSpec:
    """The hardware a log or a measurement is judged on, as the user overrides it: a catalogue system
    (`cluster`, model/systems.py CATALOGUE), a GPU model, node count, NICs and their rate, NVLS on/off,
    the intra-node rate, or a calibrated profile. Unset values come from the log (diagnose/hardware.py)."""

    cluster: str | None = None
    gpu: str | None = None
    nodes: int | None = None
    nics_per_node: int | None = None
    nic_rate: str | float | None = None          # one NIC's line rate, e.g. '400Gb/s'
    nvls: bool | None = None
    intra_bandwidth: str | float | None = None   # one GPU's physical rate to its node's GPUs, per direction
    profile: str | None = None

    def __post_init__(self):
        from collperf.model.systems import CATALOGUE
        for name in ("nodes", "nics_per_node"):
            if getattr(self, name) is not None:
                _whole(name.replace("_", "-"), getattr(self, name), flag=f"--{name.replace('_', '-')}")
        if self.cluster is not None and str(self.cluster).strip().lower() not in CATALOGUE:
            raise UsageError(f"--cluster {self.cluster}: not a system of the catalogue; expected one of "
                             f"{', '.join(CATALOGUE)} (or give --gpu, --nics-per-node, --nic-rate, ...)")
        if self.cluster is not None and self.profile is not None:
            raise UsageError(f"--cluster {self.cluster} and --profile {self.profile} both describe the hardware: "
                             "give one")
        if self.gpu is not None and not str(self.gpu).strip():
            raise UsageError("--gpu '': expected a GPU model such as 'H100' or 'NVIDIA A100-SXM4-80GB'")
        self.nic_Gbps = units.parse_bandwidth(self.nic_rate) * 8 / 1e9 if self.nic_rate is not None else None
        self.intra_GBps = (units.parse_bandwidth(self.intra_bandwidth) / 1e9
                           if self.intra_bandwidth is not None else None)
        for label, value in (("--nic-rate", self.nic_Gbps), ("--intra-bandwidth", self.intra_GBps)):
            if value is not None and not (0 < value < float("inf")):
                raise UsageError(f"{label}: expected a finite rate > 0, e.g. 400Gb/s or 450GB/s")

    @property
    def given(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    @classmethod
    def from_network(cls, net: "NetworkSpec | None") -> "HardwareSpec":
        """diagnose's hardware from the network options other commands share (--cluster, --nodes,
        --profile, --nics-per-node, --intra-bandwidth, --inter-bandwidth as the NIC rate)."""
        if net is None:
            return cls()
        cluster = net.cluster
        if cluster is not None:
            from collperf.model.presets import ALIASES
            cluster = ALIASES.get(str(cluster).lower(), cluster)
        return cls(cluster=cluster, nodes=net.nodes, nics_per_node=net.nics_per_node, nic_rate=net.inter_bandwidth,
                   intra_bandwidth=net.intra_bandwidth, profile=net.profile)


@dataclass
class DiagnoseSpec:
    """Logs judged against NCCL's expected time on the hardware (from the log, `hardware` overrides it),
    the physical bound (the hardware's, or `peak` per rank), and optionally another log's fitted model.
    `network` (the shared network options) is read as hardware when `hardware` is not given."""

    logs: LogSpec
    peak: str | float | None = None
    network: NetworkSpec = field(default_factory=NetworkSpec)
    model_from: str | None = None
    hardware: HardwareSpec | None = None

    def __post_init__(self):
        if self.hardware is None:
            self.hardware = HardwareSpec.from_network(self.network)
        elif self.network.given:
            raise UsageError("diagnose got both network= and hardware=: give the hardware once (HardwareSpec)")
        self.peak_Bps = units.parse_bandwidth(self.peak) if self.peak is not None else None
        if self.peak_Bps is not None and not self.peak_Bps < float("inf"):
            raise UsageError(f"--peak {self.peak}: expected a finite rate per rank, e.g. 50GB/s")


@dataclass
class MeasurementSpec:
    """One measured number: `collective` of `size` took `time` on `ranks` GPUs (nccl-tests' size:
    the buffer per rank), judged like a row of a log on `hardware`."""

    collective: str
    size: str | int
    time: str | float
    ranks: int | None = None
    hardware: HardwareSpec = field(default_factory=HardwareSpec)
    peak: str | float | None = None

    def __post_init__(self):
        self.collective = get_collective(self.collective).name
        self.size_bytes = units.parse_size(self.size)
        if self.size_bytes <= 0:
            raise UsageError(f"--size {self.size}: expected a size > 0, e.g. 1GB")
        self.time_s = units.parse_time(self.time)
        if not (0 < self.time_s < float("inf")):
            raise UsageError(f"--time {self.time}: expected a time > 0, e.g. 500ms")
        if self.ranks is not None:
            _whole("ranks", self.ranks, low=2, flag="--ranks")
        if self.ranks is None and self.hardware.cluster is None:
            raise UsageError("a single measurement needs --ranks N (and --cluster SYSTEM --nodes N, or --gpu MODEL)")
        self.peak_Bps = units.parse_bandwidth(self.peak) if self.peak is not None else None


# --- training-step plans -------------------------------------------------------------------------------

@dataclass
class PlanSpec:
    """One training step's communication: a model, a layout, a cluster, and how compute is estimated."""

    model: object = "70b"                 # a preset name or a plan.ModelSpec
    layout: object = None                 # a plan.Layout (default: tp=pp=dp=1)
    network: NetworkSpec = field(default_factory=lambda: NetworkSpec(cluster="dgx-h100"))
    compute: str | float | None = None    # a time per step
    flops: str | float | None = None      # or an achieved FLOP/s per rank
    overlap: str | None = None
    algorithm: str = "best"
    intra_algorithm: str = "best"
    inter_algorithm: str = "best"

    def __post_init__(self):
        from collperf import plan as plans
        if not isinstance(self.model, plans.ModelSpec):
            self.model = plans.get_model(self.model)
        self.layout = self.layout or plans.Layout()
        if self.compute is not None and self.flops is not None:
            raise UsageError(f"--compute {self.compute} and --flops {self.flops} both set the compute time: give one")
        self.compute_s = units.parse_time(self.compute) if self.compute is not None else None
        self.flops_per_rank = flops(self.flops) if self.flops is not None else None
        self.overlap_fractions = plans.overlap_fractions(self.overlap)

    def cluster_network(self) -> NetworkSpec:
        """The network sized to the layout: preset nodes filled by the layout's ranks."""
        net, ranks = self.network, self.layout.ranks
        if net.profile is None and net.cluster is not None and net.nodes is None:
            from collperf.model.presets import get_preset
            per_node = net.ranks_per_node or get_preset(net.cluster).ranks_per_node
            if ranks % per_node:
                lay = self.layout
                raise UsageError(f"tp({lay.tp}) x pp({lay.pp}) x dp({lay.dp}) = {ranks} ranks do not fill nodes of "
                                 f"{per_node}: give --nodes and --ranks-per-node")
            net = replace(net, nodes=ranks // per_node)
        return net

    def variant(self, text: str) -> "PlanSpec":
        """Another layout and/or cluster to compare: '8x4x16', 'tp=8,pp=8,dp=8,zero=3', '8x8x8@dgx-a100:64'
        (nodes) or '...@dgx-a100:64x8' (nodes x ranks per node)."""
        from collperf.plan import parse_layout
        layout_text, _, where = text.partition("@")
        layout = parse_layout(layout_text, self.layout)
        net = self.network
        if where:
            preset, _, shape = where.partition(":")
            nodes = per_node = None
            try:
                if "x" in shape:
                    nodes, per_node = (int(x) for x in shape.split("x"))
                elif shape:
                    nodes = int(shape)
            except ValueError:
                raise UsageError(f"--compare {text!r}: expected LAYOUT@PRESET[:NODES[xRANKS_PER_NODE]], "
                                 "e.g. 8x8x8@dgx-a100:64") from None
            net = replace(net, cluster=preset, nodes=nodes, ranks_per_node=per_node, profile=None)
        else:
            net = replace(net, nodes=None)
        return replace(self, layout=layout, network=net)


def flops(value) -> float:
    """'400TFLOPS' (or a number) -> FLOP/s."""
    import re
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        rate = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9.]+(?:[eE][+-]?[0-9]+)?)\s*([kMGTP]?)FLOP/?S?\s*", str(value), re.IGNORECASE)
        if not m:
            raise UsageError(f"cannot read FLOP rate {value!r}: expected e.g. 400TFLOPS")
        rate = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}[m.group(2).lower()]
    if not rate > 0 or rate == float("inf"):
        raise UsageError(f"achieved FLOP rate {value!r} must be a positive finite number, e.g. 400TFLOPS")
    return rate
