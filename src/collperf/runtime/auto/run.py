"""What -A auto runs at each size of a bench sweep, decided on the ranks, the same on every rank.

Given a network (lab/bench.py chose from --profile, --cluster or link options), the choices come in the
config. Otherwise rank 0 chooses from a quick calibration of this run's network (runtime/auto/calibration.py:
ping-pong links, the reduction rate; runtime/auto/builtin_fit.py: the executor's exchange, the built-in's fit,
flows per host link), every rank receives the choices, and every close call between ours and the built-in
is timed on the actual size (runtime/auto/confirm.py), so that auto runs ours only where it measured faster.
"""

from __future__ import annotations

import torch.distributed as dist

from collperf.model.network import Link, Network
from collperf.model.auto.select import AUTO_CALIBRATION_BYTES, auto_network, choices_for, choose_for
from collperf.runtime import launch
from collperf.runtime.auto.builtin_fit import auto_extras, auto_extras_text, auto_hosts, exchange_link, with_exchange
from collperf.runtime.auto.calibration import calibrate
from collperf.runtime.auto.confirm import confirm_choices
from collperf.runtime.job import BenchJob


def auto_here(job: BenchJob, dev) -> dict:
    """{"choices": [AutoChoice JSON per size], "network": what they were chosen on}; a collective call."""
    if job.auto is not None:
        return {"choices": list(job.auto), "network": job.auto_network}
    # a job that lab/bench.py did not plan (a benchmark's head_to_head): its ranks on one host
    rph = job.auto_ranks_per_host or dist.get_world_size()
    if dist.get_world_size() == 1:  # nothing moves: any algorithm does
        network = Network.of(Link(1e-6, 1e9), 1)
        return {"choices": choices_for(job, network), "network": "one rank"}
    raw = calibrate(rph, big_bytes=AUTO_CALIBRATION_BYTES, iters=3)
    fit, overhead = auto_extras(job, rph)
    several_hosts = dist.get_world_size() > rph
    raw = with_exchange(raw, exchange_link(job.sizes, rph), several_hosts)
    box = [None]
    if dist.get_rank() == 0:
        network = auto_network(raw, dist.get_world_size(), rph)
        hosts = auto_hosts(network, overhead)
        box[0] = (
            choose_for(job, network, fit, hosts),
            f"quick calibration: {network.describe()}" + auto_extras_text(fit, hosts),
        )
    dist.broadcast_object_list(box, src=0)
    choices, described = box[0]
    choices = confirm_choices(
        choices, job.collective, job.root, slice_bytes=job.slice_bytes, two_level=job.two_level, dev=dev
    )
    out = {"choices": [c.to_json() for c in choices], "network": described}
    if dist.get_rank() == 0:
        launch.report("auto_choices", out)
    return out
