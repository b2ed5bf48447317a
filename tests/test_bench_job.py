"""What the ranks of a sweep are sent: a frozen BenchJob (runtime/job.py), not a string-keyed dict; its JSON is
the config a bench's Results echo."""

import dataclasses
import pickle

import pytest

from collperf.lab.bench import auto_plan
from collperf.model.network import Link, Network
from collperf.runtime.job import BenchJob
from collperf.spec import SweepSpec


def test_the_job_holds_the_sweep_in_bytes_and_its_json_is_the_config_in_order():
    job = BenchJob.of(SweepSpec(min_bytes="1K", max_bytes="4K", slice_bytes="64K", segments=3))
    assert (job.min_bytes, job.max_bytes, job.slice_bytes, job.step_bytes) == (1024, 4096, 65536, 1 << 20)
    assert job.sizes == (1024, 2048, 4096) and job.step == "2(factor)" and job.segments_given
    doc = job.to_json()
    # SweepSpec's fields in their order, then what the job adds; no auto fields where -A auto does not run
    assert list(doc) == [
        "collective",
        "algorithms",
        "min_bytes",
        "max_bytes",
        "factor",
        "step_bytes",
        "iters",
        "warmup",
        "dtype",
        "op",
        "root",
        "check",
        "average",
        "segments",
        "slice_bytes",
        "in_place",
        "progress",
        "size_list",
        "min_time_s",
        "segments_given",
        "sizes",
        "step",
        "two_level",
    ]
    assert doc["algorithms"] == ["builtin"] and doc["sizes"] == [1024, 2048, 4096] and doc["segments"] == 3
    assert BenchJob.of(SweepSpec(factor=1, step_bytes="1K", min_bytes="1K", max_bytes="3K")).step == "1024(bytes)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.iters = 3


def test_auto_is_planned_into_a_new_job():
    job = BenchJob.of(SweepSpec(algorithms="auto", min_bytes="1K", max_bytes="4K"))
    left = auto_plan(job, 4, None, 2)  # no network: the ranks choose
    assert job.auto_ranks_per_host is None and left.auto_ranks_per_host == 2 and left.auto is None
    assert list(left.to_json())[-3:] == ["auto_ranks_per_host", "auto_network", "auto"]
    chosen = auto_plan(job, 4, Network.of(Link(1e-5, 1e9), 4), 4)
    assert [c["size"] for c in chosen.auto] == [1024, 2048, 4096]
    assert chosen.auto_network.startswith("given: ")


def test_the_job_travels_pickled_with_its_schedules_and_they_stay_out_of_the_json():
    job = dataclasses.replace(BenchJob.of(SweepSpec()), two_level=(2, 2), schedules={("blink", 1024): "s"})
    back = pickle.loads(pickle.dumps(job))
    assert back == job and back.schedules == {("blink", 1024): "s"}
    assert "schedules" not in job.to_json() and job.to_json()["two_level"] == [2, 2]
