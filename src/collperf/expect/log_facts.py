"""A log's own NCCL lines over a system's values, each value quoting its line, and the NCCL settings a network's
transport requires where the log echoes none (expect/resolve.py's third and fourth steps)."""

from __future__ import annotations

from collperf.errors import UsageError
from collperf.expect.hints import bridge_values
from collperf.expect.loglines import LogFacts
from collperf.model.hardware.catalogue import System, fabric_nccl_settings
from collperf.model.hardware.fabrics import NICS
from collperf.model.nccl.env import NCCL_ALGO_NAMES, NCCL_PROTO_NAMES, check as check_env


def apply_facts(system: System, facts: LogFacts, ngpus: int) -> System:
    """The log's own lines over the catalogue's defaults, each value quoting its line."""

    def quote(key: str) -> str:
        return f"from the log line '{facts.line(key)}'"

    if "fabric" in facts and system.nodes > 1:
        if facts.get("fabric") == "slingshot" and system.fabric != "slingshot":
            # one NIC on Slingshot 11: the Cassini NIC's 200 Gb/s (model/hardware/fabrics.py), not the board's NIC
            system = system.with_(quote("fabric") + " (HPE Slingshot 11 NIC, 200 Gb/s)", nic_Gbps=NICS["cassini"].Gbps)
        system = system.with_(quote("fabric"), fabric=facts.get("fabric"))
        if facts.get("fabric") == "socket":
            system = system.with_(quote("fabric"), net_gdr=False)
    if "nics" in facts and system.nodes > 1:
        system = system.with_(quote("nics"), nics_per_node=int(facts.get("nics")))
    if "net_gdr" in facts and system.nodes > 1:
        system = system.with_(quote("net_gdr"), net_gdr=bool(facts.get("net_gdr")))
    if "cross_socket" in facts and not system.nvlink_links and system.gpus_per_node > 1:
        # PCIe cards on two CPU sockets: NCCL 2.30.7 src/graph/paths.cc ncclTopoCheckP2p allows P2P only up to
        # PATH_PXB on Intel and ARM hosts, so their traffic goes through host memory (SHM); a 'via P2P' line
        # below overrides this
        system = system.with_(
            f"from the PCI buses in the device lines ('{facts.line('cross_socket')}'): GPUs on two CPU sockets",
            p2p=False,
        )
    bridge = bridge_values(system)
    if facts.get("intra_path") == "NVL" and bridge and system.gpus_per_node > 1:
        # NCCL's graph runs over NVLink between PCIe cards: their NVLink bridge
        system = system.with_(quote("intra_path") + " (an NVLink bridge)", **bridge)
    if "p2p" in facts and not system.nvlink_links and system.gpus_per_node > 1:
        system = system.with_(quote("p2p"), p2p=bool(facts.get("p2p")))
    if "nvls" in facts:
        system = system.with_(
            quote("nvls"), nvls=bool(facts.get("nvls")) and system.nvswitch and system.compute_capability >= 90
        )
    if "collnet" in facts and system.nodes > 1:
        system = system.with_(quote("collnet"), collnet=bool(facts.get("collnet")))
    if "protocols" in facts:
        system = system.with_(quote("protocols"), protocols=tuple(facts.get("protocols")))
    for fact, key, names in (
        ("nccl_proto", "nccl_proto", NCCL_PROTO_NAMES),
        ("algorithms", "nccl_algo", NCCL_ALGO_NAMES),
    ):
        if fact in facts and _nccl_accepts(str(facts.get(fact)), names):
            system = system.with_(quote(fact), **{key: str(facts.get(fact))})
    if "nccl_version" in facts:
        system = system.with_(quote("nccl_version"), nccl_version=str(facts.get("nccl_version")))
    if ngpus > 1:
        # One host thread launching g kernels per iteration (nccl-tests -g g) adds about 2.5 us per GPU to
        # every call (samples 01 and 10: 35 us and 11.7 us floors vs NCCL's 15 us / 8.6 us model latency).
        system = system.with_("from nccl-tests -g (one thread launches every GPU)", launch_overhead_us=2.5 * ngpus)
    return system


def transport_settings(system: System) -> System:
    """What the network's transport makes NCCL run, where the log does not say: the catalogue's settings for
    the fabric class (model/hardware/catalogue.py FABRIC_NCCL_SETTINGS; GPUDirect-TCPX: NCCL_ALGO=Ring, NCCL_PROTO=Simple)."""
    settings, source = fabric_nccl_settings(system.fabric_class)
    if system.nodes < 2:
        return system
    why = f"the {system.fabric_class} transport's required NCCL settings ({source})"
    for key, value in settings.items():
        if not getattr(system, key):  # an echoed NCCL_ALGO/NCCL_PROTO in the log rules
            system = system.with_(why, **{key: value})
    return system


def _nccl_accepts(value: str, names: tuple[str, ...]) -> bool:
    """Whether this NCCL's parser reads an NCCL_PROTO/NCCL_ALGO echo (an older NCCL's names are left out)."""
    try:
        check_env(value, "NCCL_ALGO/NCCL_PROTO", names)
    except UsageError:
        return False
    return True
