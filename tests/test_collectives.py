import pytest

from collperf import collectives as C
from collperf.errors import UsageError


def test_chapter_efficiency_example():
    # 8 ranks, 1 GB allreduce in 80 ms: algbw 12.5 GB/s, busbw 21.875 GB/s (cost-model chapter)
    assert C.algbw(1e9, 0.080) == pytest.approx(12.5e9)
    assert C.busbw("allreduce", 8, 1e9, 0.080) == pytest.approx(21.875e9)


@pytest.mark.parametrize("name, p, factor", [
    ("allreduce", 8, 2 * 7 / 8), ("allgather", 8, 7 / 8), ("reducescatter", 4, 3 / 4), ("alltoall", 16, 15 / 16),
    ("broadcast", 8, 1), ("reduce", 8, 1), ("gather", 2, 1 / 2), ("scatter", 3, 2 / 3), ("sendrecv", 8, 1),
])
def test_busbw_factors_as_nccl_tests(name, p, factor):
    assert C.busbw_factor(name, p) == pytest.approx(factor)


def test_formula_bytes_is_the_nccl_tests_size_for_every_collective():
    for name in C.COLLECTIVES:
        assert float(C.formula_bytes(name, 4096)) == 4096


def test_aliases_and_errors():
    assert C.get_collective("all_reduce").name == "allreduce"
    assert C.get_collective("AllGather").name == "allgather"
    with pytest.raises(UsageError, match="unknown collective 'allsum'.*allreduce"):
        C.get_collective("allsum")
    with pytest.raises(UsageError, match="ranks 0"):
        C.busbw_factor("allreduce", 0)
