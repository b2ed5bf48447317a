"""-A blink and -A blink-hybrid, registered as modes of the core's registry (model/algorithms/modes.py):
packed spanning trees placed on a topology (Wang et al., MLSys 2020). The core never names them."""

from collperf.model.algorithms.modes import Mode, register_mode

BLINK = register_mode(
    Mode(
        "blink",
        "Blink's packed spanning trees on the topology",
        collectives=("broadcast", "reduce", "allreduce", "allgather", "reducescatter"),
        needs_topology=True,
    )
)
BLINK_HYBRID = register_mode(
    Mode(
        "blink-hybrid",
        "Blink's PCIe + NVLink split of a broadcast (equation 8)",
        collectives=("broadcast",),
        needs_topology=True,
        hybrid=True,
    )
)
