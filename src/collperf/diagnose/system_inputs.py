"""One system input (what ingest read an NCCL debug log, a topology or graph dump, or a link test as) to its report."""

from __future__ import annotations

from collperf.diagnose import links, nccl_choices
from collperf.diagnose.inputs import InputReport
from collperf.errors import UsageError
from collperf.ingest.link_tests import LinkTest
from collperf.ingest.nccl_debug import NcclDebugLog
from collperf.ingest.topo_xml import NcclGraphs, NodeTopology
from collperf.spec import HardwareSpec


def judge_input(value, hw: HardwareSpec | None = None) -> InputReport:
    """The report of one system input as ingest read it (ingest.OtherInput.value)."""
    if isinstance(value, NcclDebugLog):
        return nccl_choices.report(value, hw)
    if isinstance(value, NodeTopology):
        return links.topology_report(value, hw)
    if isinstance(value, NcclGraphs):
        return links.graphs_report(value)
    if isinstance(value, LinkTest):
        return links.link_test_report(value, hw)
    raise UsageError(f"not a system input: {type(value).__name__}")
