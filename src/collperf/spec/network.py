"""Where a collective runs (NetworkSpec, the one way to a Network) and the hardware a log is judged on
(HardwareSpec)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from collperf import units
from collperf.errors import UsageError
from collperf.jsonfile import read_json
from collperf.model.nccl.env import NCCL_ALGO_NAMES, NCCL_PROTO_NAMES, check as check_env
from collperf.model.network import Cluster, Link, Network
from collperf.model.hardware.nodes import nics_used, nodes_for
from collperf.model.hardware.presets import cluster_key, get_preset
from collperf.model.profile import cluster_from
from collperf.model.hardware.fabrics import MAX_GPU_LINK_GBps, MAX_NIC_Gbps, MIN_GPU_LINK_GBps
from collperf.model.hardware.catalogue import NETWORK_FABRICS
from collperf.spec.checks import PathArg, cli_option, whole

CPU_ARCHS = ("x86", "arm", "power")
# HardwareSpec's fields that predict takes only with --nccl: what NCCL's model reads. SHARP is not among them:
# plain predict takes it too (PredictSpec.sharp), for the NCCL band and the bound it prints beside our algorithms
NCCL_VIEW = ("cpu_arch", "nic_path", "proto", "algo")
NIC_PATHS = ("PIX", "PXB", "P2C", "PXN", "PHB", "SYS")  # NCCL 2.30.7 src/graph/topo.h path types up to SYS


def load_cluster(path: PathArg, nodes: int | None = None, ranks_per_node: int | None = None) -> Cluster:
    """The Cluster a profile file describes (model/profile.py; node and per-node rank counts may be changed)."""
    doc = read_json(path, "profile", "make one with `collperf calibrate -o FILE`")
    try:
        return cluster_from(doc, f"profile {Path(path).name}", nodes, ranks_per_node)
    except UsageError:
        raise
    except (KeyError, TypeError, ValueError, OverflowError, ZeroDivisionError) as e:  # a hand-edited profile
        what = f"missing field {e.args[0]!r}" if isinstance(e, KeyError) else str(e) or type(e).__name__
        raise UsageError(
            f"profile {path}: {what}: expected nodes, ranks_per_node, intra and inter "
            "{latency_s, bandwidth_Bps} as `collperf calibrate -o FILE` writes them"
        ) from None


FLAG_FABRICS = tuple(f for f in NETWORK_FABRICS if f != "nvl72")
_LEVELS = ("intra_latency", "intra_bandwidth", "inter_latency", "inter_bandwidth", "nics_per_node")


@dataclass(frozen=True, kw_only=True)
class NetworkSpec:
    """Where a collective runs: a uniform link (ranks, latency, bandwidth), a preset cluster (cluster,
    nodes), a two-level cluster given level by level, or a calibrated profile. Values are strings as
    the CLI takes them ('5us', '50GB/s') or numbers in seconds and bytes/s. Unset intra/inter values
    fall back to the preset's, then to latency/bandwidth when no preset is given."""

    ranks: int | None = field(
        default=None,
        metadata=cli_option("--ranks", "-p", type=int, help="Number of ranks (with --latency/--bandwidth)."),
    )
    latency: str | float | None = field(
        default=None, metadata=cli_option("--latency", help="Per-message latency alpha of a uniform link, e.g. 10us.")
    )
    bandwidth: str | float | None = field(
        default=None,
        metadata=cli_option("--bandwidth", help="Per-rank bandwidth of a uniform link, e.g. 100GB/s or 400Gbps."),
    )
    reduce_bandwidth: str | float = field(
        default="inf",
        metadata=cli_option(
            "--reduce-bandwidth", help="Local reduction rate (1/gamma), e.g. 500GB/s; default infinite."
        ),
    )
    cluster: str | None = field(
        default=None,
        metadata=cli_option(
            "--cluster", help="Preset: dgx-h100, dgx-a100, dgx-1v, dgx-2, trn1, pcie-gen4, nvlink300-400gbe."
        ),
    )
    nodes: int | None = field(
        default=None, metadata=cli_option("--nodes", type=int, help="Nodes of a two-level cluster.")
    )
    ranks_per_node: int | None = field(
        default=None, metadata=cli_option("--ranks-per-node", type=int, help="Ranks per node.")
    )
    intra_latency: str | float | None = field(
        default=None, metadata=cli_option("--intra-latency", help="Latency inside a node.")
    )
    intra_bandwidth: str | float | None = field(
        default=None, metadata=cli_option("--intra-bandwidth", help="Per-rank bandwidth inside a node.")
    )
    inter_latency: str | float | None = field(
        default=None, metadata=cli_option("--inter-latency", help="Latency between nodes.")
    )
    inter_bandwidth: str | float | None = field(
        default=None, metadata=cli_option("--inter-bandwidth", help="Bandwidth of one NIC.")
    )
    nics_per_node: int | None = field(
        default=None, metadata=cli_option("--nics-per-node", type=int, help="NICs per node (default: one per rank).")
    )
    profile: str | None = field(
        default=None, metadata=cli_option("--profile", help="A calibrated profile (collperf calibrate -o FILE).")
    )

    def __post_init__(self) -> None:
        for name in ("ranks", "nodes", "ranks_per_node", "nics_per_node"):
            if getattr(self, name) is not None:
                whole(name.replace("_", "-"), getattr(self, name), flag=f"--{name.replace('_', '-')}")
        uniform = [f"--{n}" for n in ("latency", "bandwidth") if getattr(self, n) is not None]
        if uniform and (self.cluster is not None or self.profile is not None):
            base = f"--cluster {self.cluster}" if self.cluster is not None else f"--profile {self.profile}"
            raise UsageError(
                f"{' and '.join(uniform)} describe a uniform link and would be ignored with {base}: "
                "drop them, or override one level with --intra-latency/--intra-bandwidth/"
                "--inter-latency/--inter-bandwidth"
            )
        if self.cluster is not None and self.profile is not None:
            raise UsageError(
                f"--cluster {self.cluster} and --profile {self.profile} both describe the network: give one"
            )

    @property
    def given(self) -> bool:
        """Whether any network option was set (a bench without one fits its own link)."""
        return any(getattr(self, f.name) != f.default for f in fields(self) if f.name != "ranks")

    @property
    def two_level(self) -> bool:
        return (
            self.cluster is not None
            or self.nodes is not None
            or self.ranks_per_node is not None
            or any(getattr(self, n) is not None for n in _LEVELS)
        )

    def with_ranks(self, ranks: int | None, nodes: int | None = None) -> "NetworkSpec":
        """The same network for another rank count (and node count, where given)."""
        return replace(self, ranks=ranks, nodes=nodes if nodes is not None else self.nodes)

    def resolve(self) -> Network:
        if self.profile is not None:
            c = load_cluster(self.profile, self.nodes, self.ranks_per_node)
            if (
                self.ranks is not None
                and self.ranks != c.ranks
                and self.nodes is None
                and self.ranks % c.ranks_per_node == 0
            ):
                c = replace(c, nodes=self.ranks // c.ranks_per_node)
            return Network.of(c, self.ranks)
        if not self.two_level:
            if self.latency is None or self.bandwidth is None:
                raise UsageError(
                    "no network given: pass --latency and --bandwidth (with --ranks), "
                    "or --cluster PRESET, or --nodes/--ranks-per-node with intra/inter links"
                )
            if self.ranks is None:
                raise UsageError("a uniform link needs a rank count: pass --ranks, e.g. --ranks 16")
            return Network.of(Link.parse(self.latency, self.bandwidth, self.reduce_bandwidth), self.ranks)
        return Network.of(self.resolve_cluster(), self.ranks)

    def resolve_cluster(self) -> Cluster:
        base = get_preset(self.cluster) if self.cluster is not None else None
        ranks, nodes, per_node = self.ranks, self.nodes, self.ranks_per_node
        if per_node is None:
            if base is not None:
                # the catalogue's node holds ranks_per_node GPUs: the ranks fill whole nodes, fit on one, or spread
                # over --nodes at most that many per node (model/hardware/nodes.py, diagnose's check too)
                nodes = nodes_for(
                    ranks,
                    nodes,
                    base.ranks_per_node,
                    system=f"--cluster {self.cluster}",
                    escape="; or --ranks-per-node N to price nodes of N ranks anyway",
                )
                per_node = ranks // nodes if ranks else base.ranks_per_node
            elif nodes and ranks:
                if ranks % nodes:
                    raise UsageError(
                        f"--ranks {ranks} does not split into --nodes {nodes} equal nodes: give --ranks "
                        f"a multiple of {nodes}, or --ranks-per-node"
                    )
                per_node = ranks // nodes
            else:
                raise UsageError("a two-level cluster needs --ranks-per-node (or --ranks with --nodes, or --cluster)")
        if nodes is not None and ranks is not None and nodes * per_node != ranks:
            raise UsageError(
                f"--ranks {ranks} is not --nodes {nodes} x --ranks-per-node {per_node} = "
                f"{nodes * per_node}: give --ranks {nodes * per_node} (or leave --ranks out), or "
                f"--nodes and --ranks-per-node that multiply to {ranks}"
            )
        if nodes is None:
            if ranks is not None and ranks % per_node:
                where = (
                    f"--ranks-per-node {per_node}"
                    if self.ranks_per_node is not None
                    else f"{per_node} ranks per node of --cluster {self.cluster} (--ranks-per-node overrides it)"
                )
                lower = ranks // per_node * per_node
                raise UsageError(
                    f"--ranks {ranks} does not fill whole nodes of {where}: give --ranks a multiple of "
                    f"{per_node} (e.g. {lower or per_node} or {lower + per_node}), or a --ranks-per-node "
                    f"that divides {ranks}"
                )
            nodes = 1 if ranks is None else ranks // per_node
        intra = self._level("intra", base.intra if base else None)
        inter = self._level("inter", base.inter if base else None)
        nics = self.nics_per_node if self.nics_per_node is not None else (base.nics_per_node if base else per_node)
        if self.nics_per_node is None and base is not None:
            # a run on some of a node's GPUs uses their NICs where each GPU has its own (as diagnose assumes)
            nics = nics_used(base.nics_per_node, base.ranks_per_node, per_node)
        return Cluster(
            nodes, per_node, intra, inter, nics, name=self.cluster or "custom", source=base.source if base else ""
        )

    def _level(self, name: str, preset: Link | None) -> Link:
        lat, bw = getattr(self, f"{name}_latency"), getattr(self, f"{name}_bandwidth")
        overridden = lat is not None or bw is not None
        lat = lat if lat is not None else (preset.latency_s if preset else self.latency)
        bw = bw if bw is not None else (preset.bandwidth_Bps if preset else self.bandwidth)
        if lat is None or bw is None:
            raise UsageError(
                f"the {name}-node link is not given: pass --{name}-latency and --{name}-bandwidth "
                "(or --latency/--bandwidth for both levels, or --cluster PRESET)"
            )
        return Link.parse(lat, bw, self.reduce_bandwidth, preset.name if preset and not overridden else name)


def network(**options: Any) -> Network:
    """A Network from CLI-style keyword options (see NetworkSpec)."""
    return NetworkSpec(**options).resolve()


def _in_bits(rate: object) -> bool:
    """Whether a rate as typed is in bits ('400Gb/s', '400Gbps', '400 Gbit/s'; units.py reads 'b' as bits)."""
    text = str(rate).strip()
    return bool(re.search(r"[kKmMgGtT]?(b/s|bps|bit)", text)) and not re.search(r"B/s|Bps|byte", text)


def _bits_reading(rate: object) -> str:
    """'400GB/s' -> '400Gb/s': the same number read in bits ('' where the rate is not in bytes)."""
    text = str(rate).strip()
    return re.sub(r"B(/s|ps)$", r"b\1", text) if re.search(r"B(/s|ps)$", text) else ""


def _bytes_reading(rate: object) -> str:
    text = str(rate).strip()
    return re.sub(r"b(/s|ps)$", r"B\1", text) if re.search(r"b(/s|ps)$", text) else text


@dataclass(frozen=True, kw_only=True)
class HardwareSpec:
    """The hardware a log or a measurement is judged on, as the user overrides it: a catalogue system
    (`cluster`, model/hardware/catalogue.py CATALOGUE), a GPU model, node count, NICs and their rate, NVLS on/off, SHARP on/off,
    the intra-node rate, or a calibrated profile. Unset values come from the log (expect/resolve.py)."""

    cluster: str | None = field(
        default=None,
        metadata=cli_option(
            "--cluster",
            "--system",
            help="A catalogue system or cloud instance (collperf systems lists them): dgx-h100, "
            "gb200-nvl72, gcp-a3-mega, aws-p5, azure-nd-h100-v5, oci-bm-gpu-h100, pcie-2080ti, ...",
        ),
    )
    gpu: str | None = field(
        default=None,
        metadata=cli_option(
            "--gpu", help="GPU model, e.g. H100 or 'NVIDIA A100-SXM4-80GB' (picks the catalogue system)."
        ),
    )
    nodes: int | None = field(
        default=None, metadata=cli_option("--nodes", type=int, help="Nodes (GPUs per node = ranks / nodes).")
    )
    nics_per_node: int | None = field(
        default=None, metadata=cli_option("--nics-per-node", type=int, help="NICs per node.")
    )
    nic_rate: str | float | None = field(
        default=None, metadata=cli_option("--nic-rate", help="One NIC's line rate, e.g. 400Gb/s.")
    )
    nvls: bool | None = field(
        default=None,
        metadata=cli_option("--nvls/--no-nvls", type=bool, help="NVLink SHARP (in-switch reduction) on or off."),
    )
    sharp: bool | None = field(
        default=None,
        metadata=cli_option(
            "--sharp/--no-sharp",
            type=bool,
            help="InfiniBand SHARP (in-network reduction, NCCL's CollNet) on or off between nodes.",
        ),
    )
    intra_bandwidth: str | float | None = field(
        default=None,
        metadata=cli_option(
            "--gpu-link-rate",
            "--intra-bandwidth",
            help="One GPU's physical rate to the other GPUs of its node, per "
            "direction, as sold: e.g. 450GB/s for NVLink 4 (--intra-bandwidth is kept as another name here; in predict it "
            "is the alpha-beta level).",
        ),
    )
    profile: str | None = field(
        default=None, metadata=cli_option("--profile", help="A calibrated profile (collperf calibrate -o FILE).")
    )
    fabric: str | None = field(
        default=None,
        metadata=cli_option(
            "--fabric",
            help="The network between nodes, where the log does not say: ib|roce|efa|tcpx|tcpxo|socket|slingshot.",
        ),
    )
    p2p: bool | None = field(
        default=None,
        metadata=cli_option(
            "--p2p/--no-p2p",
            type=bool,
            help="PCIe GPUs reach each other peer-to-peer (on), or through host memory (off: "
            "NCCL's SHM); default from the log's 'via P2P'/'via SHM' lines, else from the GPU (GeForce: off).",
        ),
    )
    pcie_switch: bool | None = field(
        default=None,
        metadata=cli_option(
            "--pcie-switch",
            type=bool,
            help="The node's PCIe GPUs sit behind one PCIe switch (nvidia-smi topo: PIX) and share its uplink.",
        ),
    )
    cpu_arch: str | None = field(
        default=None,
        metadata=cli_option(
            "--cpu-arch",
            help="x86|arm|power: NCCL's cpuArch (NVLS-tree size correction on x86 only; default from the "
            "system: Grace is arm).",
        ),
    )
    nic_path: str | None = field(
        default=None,
        metadata=cli_option(
            "--nic-path",
            help="The GPU-NIC path type of nvidia-smi topo -m: PIX|PXB|P2C|PXN|PHB|SYS (NCCL's LL128 rule "
            "reads it; default PIX).",
        ),
    )
    proto: str | None = field(
        default=None,
        metadata=cli_option("--proto", help="NCCL_PROTO as NCCL reads it, e.g. Simple, ^LL128, 'LL;allreduce:Simple'."),
    )
    algo: str | None = field(
        default=None, metadata=cli_option("--algo", help="NCCL_ALGO as NCCL reads it, e.g. Ring, Tree,Ring, ^NVLS.")
    )

    def __post_init__(self) -> None:
        for name in ("nodes", "nics_per_node"):
            if getattr(self, name) is not None:
                whole(name.replace("_", "-"), getattr(self, name), flag=f"--{name.replace('_', '-')}")
        if self.cluster is not None:
            try:
                cluster_key(self.cluster)
            except UsageError as e:
                raise UsageError(
                    f"--cluster {self.cluster}: {e} (or give --gpu, --nics-per-node, --nic-rate, ...)"
                ) from None
        if self.fabric is not None:
            object.__setattr__(self, "fabric", str(self.fabric).strip().lower())
            if self.fabric not in FLAG_FABRICS:
                raise UsageError(
                    f"--fabric {self.fabric}: expected one of {'|'.join(FLAG_FABRICS)} (the network "
                    "between nodes: InfiniBand, RoCE, AWS EFA, GCP GPUDirect-TCPX/TCPXO, sockets)"
                )
        self._check_nccl_view()
        if self.cluster is not None and self.profile is not None:
            raise UsageError(
                f"--cluster {self.cluster} and --profile {self.profile} both describe the hardware: give one"
            )
        if self.gpu is not None and not str(self.gpu).strip():
            raise UsageError("--gpu '': expected a GPU model such as 'H100' or 'NVIDIA A100-SXM4-80GB'")
        for label, value in (("--nic-rate", self.nic_Gbps), ("--gpu-link-rate", self.intra_GBps)):
            if value is not None and not (0 < value < float("inf")):
                raise UsageError(f"{label}: expected a finite rate > 0, e.g. 400Gb/s or 450GB/s")
        self._check_physical()

    def _check_physical(self) -> None:
        """A rate beyond every part shipped is a unit slip, refused with the reading that was probably meant: NICs
        are sold in Gb/s (bits), GPU links quoted in GB/s (bytes) per direction."""
        if self.nic_Gbps is not None and self.nic_Gbps > 2 * MAX_NIC_Gbps:
            as_bits = _bits_reading(self.nic_rate)
            hint = f": did you mean {as_bits}?" if as_bits else ""
            raise UsageError(
                f"--nic-rate {self.nic_rate} is {self.nic_Gbps:g} Gb/s ({self.nic_Gbps / 1000:g} Tb/s), "
                f"beyond any NIC (the fastest port ships at {MAX_NIC_Gbps:g} Gb/s){hint} NICs are rated "
                "in bits: write e.g. 400Gb/s"
            )
        if self.intra_GBps is not None and self.intra_GBps > 2 * MAX_GPU_LINK_GBps:
            raise UsageError(
                f"--gpu-link-rate {self.intra_bandwidth} is {self.intra_GBps:g} GB/s per direction, "
                f"beyond any GPU's links (NVLink 5: {MAX_GPU_LINK_GBps:g} GB/s per GPU per direction): "
                "give one GPU's rate per direction (data sheets print both directions: 900 GB/s NVLink 4 "
                "is 450GB/s)"
            )
        if self.intra_GBps is not None and self.intra_GBps < MIN_GPU_LINK_GBps:
            raise UsageError(
                f"--gpu-link-rate {self.intra_bandwidth} is {self.intra_GBps:g} GB/s, below any GPU's "
                f"host link (PCIe Gen3 x4: {MIN_GPU_LINK_GBps:g} GB/s): GPU links are quoted in bytes, "
                "e.g. 450GB/s (a value in bits is 8x smaller)"
            )

    def questioned(self) -> list[str]:
        """Notes on rates taken as given whose unit reads oddly for the link: a GPU link in bits, a NIC in bytes."""
        notes = []
        if self.intra_bandwidth is not None and _in_bits(self.intra_bandwidth):
            notes.append(
                f"--gpu-link-rate {self.intra_bandwidth} is {self.intra_GBps:g} GB/s (given in bits): GPU "
                f"links are quoted in bytes; if you meant {_bytes_reading(self.intra_bandwidth)} write it so"
            )
        if self.nic_rate is not None and isinstance(self.nic_rate, str) and not _in_bits(self.nic_rate):
            notes.append(
                f"--nic-rate {self.nic_rate} is {self.nic_Gbps:g} Gb/s (given in bytes): NICs are rated in "
                f"bits; if you meant {_bits_reading(self.nic_rate)} write it so"
            )
        return notes

    def _check_nccl_view(self) -> None:
        """What NCCL sees that a log or a data sheet does not say: the CPU, the GPU-NIC path, NCCL_PROTO/ALGO."""
        if self.cpu_arch is not None:
            object.__setattr__(self, "cpu_arch", str(self.cpu_arch).strip().lower())
            if self.cpu_arch not in CPU_ARCHS:
                raise UsageError(
                    f"--cpu-arch {self.cpu_arch}: expected one of {'|'.join(CPU_ARCHS)} (NCCL's cpuArch; "
                    "Grace systems such as GB200 are arm)"
                )
        if self.nic_path is not None:
            object.__setattr__(self, "nic_path", str(self.nic_path).strip().upper())
            if self.nic_path not in NIC_PATHS:
                raise UsageError(
                    f"--nic-path {self.nic_path}: expected one of {'|'.join(NIC_PATHS)} (the GPU-NIC "
                    "entry of nvidia-smi topo -m; PXN: through another GPU's NIC)"
                )
        check_env(self.proto or "", "--proto", NCCL_PROTO_NAMES)
        check_env(self.algo or "", "--algo", NCCL_ALGO_NAMES)

    @property
    def nic_Gbps(self) -> float | None:
        """--nic-rate in Gb/s (None: from the log)."""
        return units.parse_bandwidth(self.nic_rate) * 8 / 1e9 if self.nic_rate is not None else None

    @property
    def intra_GBps(self) -> float | None:
        """--gpu-link-rate in GB/s (None: from the log)."""
        return units.parse_bandwidth(self.intra_bandwidth) / 1e9 if self.intra_bandwidth is not None else None

    @property
    def given(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))

    @classmethod
    def from_network(cls, net: "NetworkSpec | None") -> "HardwareSpec":
        """diagnose's hardware from the network options other commands share (--cluster, --nodes,
        --profile, --nics-per-node, --inter-bandwidth as the NIC rate)."""
        if net is None:
            return cls()
        cluster = net.cluster
        if cluster is not None:
            cluster = cluster_key(cluster)
        # predict's --intra-bandwidth is the alpha-beta level of its cost models, not the GPU's link as sold
        # (--gpu-link-rate): the system's bound and band keep the parts' rate, and predict says where its own
        # algorithms price below that bound
        return cls(
            cluster=cluster,
            nodes=net.nodes,
            nics_per_node=net.nics_per_node,
            nic_rate=net.inter_bandwidth,
            profile=net.profile,
        )
