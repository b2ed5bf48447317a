"""The inputs that describe a system or its links rather than a sweep of collectives: a standalone NCCL debug log,
NCCL's topology and graph dumps, `nvidia-smi topo -m`, and link tests (perftest, nvbandwidth,
p2pBandwidthLatencyTest). `load` finds them in the same table as the tables (formats.FORMATS) and hands them on as
OtherInput (an error to the commands that need a table, fit and compare; the input itself to diagnose and report)."""

from __future__ import annotations

from collperf.ingest.table import IngestError


class OtherInput(IngestError):
    """Not a table of measurements: `value` is what the input was read as (NcclDebugLog, NodeTopology, NcclGraphs,
    LinkTest). The message tells a command that needs a table where the input goes instead."""

    def __init__(self, value, what: str, source: str):
        super().__init__(
            f"{source}: {what}, not a table of collective measurements: `collperf diagnose {source}` "
            "reads it (what the system is, what NCCL chose, what to check first)"
        )
        self.value = value
        self.what = what
