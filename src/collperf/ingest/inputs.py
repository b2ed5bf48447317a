"""The inputs that describe a system or its links rather than a sweep of collectives: a standalone NCCL debug log,
NCCL's topology and graph dumps, `nvidia-smi topo -m`, and link tests (perftest, nvbandwidth,
p2pBandwidthLatencyTest). `load` finds them in the same sniffing chain as the tables and hands them on as OtherInput
(an error to the commands that need a table, fit and compare; the input itself to diagnose and report)."""

from __future__ import annotations

from collperf.ingest import link_tests, nccl_debug, nvsmi_topo, topo_xml
from collperf.ingest.table import IngestError

_WHAT = {"perftest": "perftest (ib_write_bw/ib_read_bw) output", "nvbandwidth": "nvbandwidth output",
         "p2pBandwidthLatencyTest": "p2pBandwidthLatencyTest output"}


class OtherInput(IngestError):
    """Not a table of measurements: `value` is what the input was read as (NcclDebugLog, NodeTopology, NcclGraphs,
    LinkTest). The message tells a command that needs a table where the input goes instead."""

    def __init__(self, value, what: str, source: str):
        super().__init__(f"{source}: {what}, not a table of collective measurements: `collperf diagnose {source}` "
                         "reads it (what the system is, what NCCL chose, what to check first)")
        self.value = value
        self.what = what


def sniff_tool(text: str, stripped: str, source: str):
    """A tool's output read in full (raises OtherInput), or None where the text is none of them. The order: the XML
    dumps first (their first tag says what they are), then the link tests and nvidia-smi's matrix (each has a header
    no other input prints); an NCCL debug log is tried only after the tables (nccl_debug_log): nccl-tests logs are
    full of the same NCCL INFO lines."""
    if stripped.startswith("<"):
        if topo_xml.looks_like_topology(stripped):
            raise OtherInput(topo_xml.parse_topology(stripped, source), "an NCCL topology dump (NCCL_TOPO_DUMP_FILE)",
                             source)
        if topo_xml.looks_like_graphs(stripped):
            raise OtherInput(topo_xml.parse_graphs(stripped, source), "an NCCL graph dump (NCCL_GRAPH_DUMP_FILE)",
                             source)
    tool = link_tests.detect(text)
    if tool is not None:
        raise OtherInput(link_tests.parse(text, source), _WHAT[tool], source)
    if nvsmi_topo.looks_like(text):
        raise OtherInput(nvsmi_topo.parse(text, source), "`nvidia-smi topo -m` output", source)
    return None


def nccl_debug_log(text: str, source: str) -> None:
    """Raises OtherInput for an NCCL/RCCL debug log with no table; returns where the text is not one."""
    if nccl_debug.looks_like(text):
        log = nccl_debug.parse(text, source)
        raise OtherInput(log, f"an {'RCCL' if log.rccl else 'NCCL'} debug log (NCCL_DEBUG=INFO) with no nccl-tests "
                              "table", source)
