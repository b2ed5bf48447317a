"""collperf.runtime's collectives from user code: torch.distributed's semantics, bit-exact on 1-5 real ranks."""

import pytest

torch = pytest.importorskip("torch", reason="the runtime needs torch (pip install -e '.[run]')")

from collperf.errors import UsageError  # noqa: E402
from collperf.runtime.launch import Job, run_local  # noqa: E402
from collperf import api
from collperf.model.auto.select import runnable_algorithms
from collperf.runtime import ops
from collperf.runtime.ops import _COLLECTIVE
from collperf.spec import NetworkSpec, PredictSpec

FUNCTIONS = (
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all",
    "all_to_all_single",
)
ALGORITHMS = {
    "all_reduce": ("ring", "recursive-doubling", "mesh"),
    "broadcast": ("binomial", "scatter-allgather"),
    "reduce": ("binomial",),
    "all_gather": ("ring", "bruck"),
    "all_gather_into_tensor": ("mesh",),
    "reduce_scatter": ("ring",),
    "reduce_scatter_tensor": ("mesh",),
    "all_to_all": ("pairwise",),
    "all_to_all_single": ("bruck",),
}


def cases(p, with_named=True):
    out = []
    for fn in FUNCTIONS:
        root = p - 1
        for n in (0, 1, 6, 37):
            out.append((fn, n, "float32", "sum", "auto", root))
        out.append((fn, 12, "float32", "sum", "builtin", root))
        if with_named:
            for a in ALGORITHMS[fn]:
                if a in runnable_algorithms(_COLLECTIVE[fn], p):
                    out.append((fn, 10, "float32", "sum", a, root))
    out += [
        ("all_reduce", 9, "float64", "prod", "auto", 0),
        ("all_reduce", 8, "bfloat16", "max", "ring", 0),
        ("all_reduce", 9, "int32", "min", "auto", 0),
        ("all_reduce", 10, "float32", "avg", "auto", 0),
        ("reduce_scatter_tensor", 5, "float16", "max", "auto", 0),
    ]
    return out


@pytest.mark.multiprocess
def test_user_collectives_are_bit_exact_on_1_to_5_ranks():
    # one run of 5 ranks: the world, and groups of 4, 3, 2 and 1 ranks whose group ranks are not their world
    # ranks (reversed, or skipping rank 0), so that roots given as world ranks must be translated
    plan = [
        (None, cases(5, False)),
        ([4, 3, 2, 1], cases(4)),
        ([1, 3, 4], cases(3)),
        ([2, 0], cases(2, False)),
        ([3], cases(1, False)),
    ]
    plan = [
        (m, [(fn, n, dt, op, a, root if m is None else min(root, len(m) - 1)) for fn, n, dt, op, a, root in c])
        for m, c in plan
    ]
    results = run_local(Job("collperf.runtime.ops_check:selftest", (plan,)), 5, timeout_s=180)
    wrong = [r for r in results if r[2]]
    assert not wrong, wrong[:5]
    assert len(results) == sum(len(c) for _, c in plan)


@pytest.mark.multiprocess
def test_user_collectives_on_one_rank():
    results = run_local(Job("collperf.runtime.ops_check:selftest", ([(None, cases(1))],)), 1, timeout_s=120)
    assert not [r for r in results if r[2]]


def test_bad_arguments_are_usage_errors():
    with pytest.raises(UsageError, match="reduction op"):
        ops._op_name("mean")
    assert ops._op_name(torch.distributed.ReduceOp.MAX) == "max"
    with pytest.raises(UsageError, match="async_op"):
        ops._check("all_reduce", True, torch.zeros(1))


def test_a_root_outside_the_group_is_a_usage_error(tmp_path):
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0, world_size=1)
    try:
        with pytest.raises(UsageError, match="rank 3 is not in the world of 1 ranks"):
            ops.broadcast(torch.zeros(4), src=3, algorithm="binomial")
        solo = dist.new_group([0])
        with pytest.raises(UsageError, match=r"rank 2 is not in the group \(global ranks \[0\]\)"):
            ops.reduce(torch.zeros(4), dst=2, group=solo, algorithm="binomial")
        t = torch.arange(4.0)
        ops.broadcast(t, src=0, group=solo, algorithm="binomial")  # a member: runs (one rank: a no-op)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    finally:
        dist.destroy_process_group()


def test_expected_bands_take_the_predict_spec_and_agree_with_predict():
    """One expectation, three ways in: a PredictSpec, the collective/size/network, and predict's own bands."""
    net = NetworkSpec(cluster="dgx-h100", nodes=2)
    spec = PredictSpec(collective="allreduce", size="1M,1G", network=net)
    assumed, bands = api.expected_bands(spec)
    again, bands_again = api.expected_bands("allreduce", "1M,1G", net)
    assert len(bands) == 2 and bands == bands_again and assumed == again
    predicted = api.predict(PredictSpec(collective="allreduce", size="1M,1G", network=net, expected=True))
    assert predicted.bands == bands
    with pytest.raises(UsageError, match="PredictSpec alone"):
        api.expected_bands(spec, "1G")
