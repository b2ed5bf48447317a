"""`collperf trace`: judge the collectives of a training step from PyTorch profiler (Kineto) traces.

stream.py   the streaming JSON reader (events one at a time, any file size)
fast.py     the C parser's path (msgspec): runs of events decoded into the fields read, kept exactly
fanout.py   rank files side by side: a process pool or a Dask cluster, progress, the memory estimate
events.py   what a scan keeps of each event kind
checks.py   the values of events and top-level keys, checked before they become numbers
kernels.py  NCCL/RCCL kernel names, PyTorch collective names, element types, nccl-tests' size
gloo.py     gloo's work annotations paired with the c10d ops that enqueued them
read.py     one file -> RankTrace (calls, computation, steps); files, directories, globs
flight.py   PyTorch Flight Recorder dumps (pickle, JSON) -> the rank's calls
profiler_plugin.py  NCCL's example profiler plugin traces -> calls on the GPUs' clock, per-peer proxy waits
inspector_trace.py  NCCL Inspector JSON lines -> per rank per call records, dropped records
inputs.py   one job's records, any mix, put together per rank
overlap.py  interval arithmetic (union, difference, covered time)
steps.py    per step: computation, communication, exposed communication, the critical calls
ranks.py    across ranks: matching, arrival skew, the transfer after the last arrival, duration spread
verdicts.py hang, desync, compute-side or network-side straggler, in words
system.py   the system assumed from the trace (diagnose's assume) and each process group's share
judge.py    per (process group, collective, size): verdict against expected and bound, choice check
whatif.py   the same collectives on another system or with our algorithms
core.py     analyse(spec) -> TraceReport
"""

from collperf import lazy_exports

# public name -> the module that defines it; imported on first use, so that a light caller (the report's
# timeline reads overlap.py) does not load the analysis and what it needs (diagnose, scipy)
_EXPORTS = {
    "analyse": "collperf.trace.core",
    "TraceReport": "collperf.trace.core",
    "Call": "collperf.trace.events",
    **{name: "collperf.trace.read" for name in ("RankTrace", "read_rank", "read_traces", "trace_files")},
}
__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
