import pytest

from collperf import collectives as C
from collperf.errors import UsageError
from collperf.ingest import nccltests, parse
from collperf.lab.results import Results, to_text


def test_chapter_efficiency_example():
    # 8 ranks, 1 GB allreduce in 80 ms: algbw 12.5 GB/s, busbw 21.875 GB/s (cost-model chapter)
    assert C.algbw(1e9, 0.080) == pytest.approx(12.5e9)
    assert C.busbw("allreduce", 8, 1e9, 0.080) == pytest.approx(21.875e9)


@pytest.mark.parametrize(
    "name, p, factor",
    [
        ("allreduce", 8, 2 * 7 / 8),
        ("allgather", 8, 7 / 8),
        ("reducescatter", 4, 3 / 4),
        ("alltoall", 16, 15 / 16),
        ("broadcast", 8, 1),
        ("reduce", 8, 1),
        ("gather", 2, 1 / 2),
        ("scatter", 3, 2 / 3),
        ("sendrecv", 8, 1),
    ],
)
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


# --- each collective's buffers, before and after, by hand ----------------------------------------------
# (collective, p, root): blocks of the whole buffer, (input, output) elements for count = 5, the blocks of
# each rank's input, the blocks each rank's output must hold (in order), and each block's source rank
# (None: the reduction over all ranks). Rooted collectives use root p - 1, so that root != 0 shows.
BUFFERS = [
    ("allreduce", 1, 0, 1, (5, 5), [[0]], [[0]], [None]),
    ("allreduce", 3, 0, 1, (5, 5), [[0], [0], [0]], [[0], [0], [0]], [None]),
    ("allreduce", 4, 0, 1, (5, 5), [[0], [0], [0], [0]], [[0], [0], [0], [0]], [None]),
    ("allgather", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    ("allgather", 3, 0, 3, (5, 15), [[0], [1], [2]], [[0, 1, 2]] * 3, [0, 1, 2]),
    ("allgather", 4, 0, 4, (5, 20), [[0], [1], [2], [3]], [[0, 1, 2, 3]] * 4, [0, 1, 2, 3]),
    ("reducescatter", 1, 0, 1, (5, 5), [[0]], [[0]], [None]),
    ("reducescatter", 3, 0, 3, (15, 5), [[0, 1, 2]] * 3, [[0], [1], [2]], [None] * 3),
    ("reducescatter", 4, 0, 4, (20, 5), [[0, 1, 2, 3]] * 4, [[0], [1], [2], [3]], [None] * 4),
    ("broadcast", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    ("broadcast", 3, 2, 1, (5, 5), [[], [], [0]], [[0], [0], [0]], [2]),
    ("broadcast", 4, 3, 1, (5, 5), [[], [], [], [0]], [[0], [0], [0], [0]], [3]),
    ("reduce", 1, 0, 1, (5, 5), [[0]], [[0]], [None]),
    ("reduce", 3, 2, 1, (5, 5), [[0], [0], [0]], [[], [], [0]], [None]),
    ("reduce", 4, 3, 1, (5, 5), [[0], [0], [0], [0]], [[], [], [], [0]], [None]),
    ("alltoall", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    (
        "alltoall",
        3,
        0,
        9,
        (15, 15),
        [[0, 1, 2], [3, 4, 5], [6, 7, 8]],
        [[0, 3, 6], [1, 4, 7], [2, 5, 8]],
        [0, 0, 0, 1, 1, 1, 2, 2, 2],
    ),
    (
        "alltoall",
        4,
        0,
        16,
        (20, 20),
        [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]],
        [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]],
        [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4,
    ),
    ("scatter", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    ("scatter", 3, 2, 3, (15, 5), [[], [], [0, 1, 2]], [[0], [1], [2]], [2, 2, 2]),
    ("scatter", 4, 3, 4, (20, 5), [[], [], [], [0, 1, 2, 3]], [[0], [1], [2], [3]], [3, 3, 3, 3]),
    ("gather", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    ("gather", 3, 2, 3, (5, 15), [[0], [1], [2]], [[], [], [0, 1, 2]], [0, 1, 2]),
    ("gather", 4, 3, 4, (5, 20), [[0], [1], [2], [3]], [[], [], [], [0, 1, 2, 3]], [0, 1, 2, 3]),
    ("sendrecv", 1, 0, 1, (5, 5), [[0]], [[0]], [0]),
    ("sendrecv", 3, 0, 3, (5, 5), [[0], [1], [2]], [[2], [0], [1]], [0, 1, 2]),
    ("sendrecv", 4, 0, 4, (5, 5), [[0], [1], [2], [3]], [[3], [0], [1], [2]], [0, 1, 2, 3]),
]


@pytest.mark.parametrize("name, p, root, whole, elements, inputs, outputs, sources", BUFFERS)
def test_buffers_before_and_after_by_hand(name, p, root, whole, elements, inputs, outputs, sources):
    c = C.get_collective(name)
    assert c.blocks(p) == whole
    assert c.elements(5, p) == elements
    assert [list(c.input_blocks(r, p, root)) for r in range(p)] == inputs
    assert [list(c.output_blocks(r, p, root)) for r in range(p)] == outputs
    assert c.sources(p, root) == sources


def test_every_collective_has_its_buffers_checked_by_hand():
    assert {b[0] for b in BUFFERS} == set(C.COLLECTIVES)
    assert {(b[0], b[1]) for b in BUFFERS} == {(n, p) for n in C.COLLECTIVES for p in (1, 3, 4)}


def _lands(c, src, block, p, root=0):
    """(rank, output block) pairs where input block `block` of rank `src` ends up."""
    g = c.input_blocks(src, p, root)[block]
    return [(d, list(c.output_blocks(d, p, root)).index(g)) for d in range(p) if g in c.output_blocks(d, p, root)]


def test_where_a_contribution_lands():
    # allgather: rank 2's input is block 2 of every rank's output
    assert _lands(C.get_collective("allgather"), 2, 0, 4) == [(0, 2), (1, 2), (2, 2), (3, 2)]
    # alltoall: rank 1's input block 3 (what it sends to rank 3) is block 1 of rank 3's output
    assert _lands(C.get_collective("alltoall"), 1, 3, 4) == [(3, 1)]
    # sendrecv: rank 2's message is rank 0's output (p = 3: the right neighbour, wrapping)
    assert _lands(C.get_collective("sendrecv"), 2, 0, 3) == [(0, 0)]
    # scatter from root 1: the root's block 2 is rank 2's output; gather to root 1: rank 2's input is block 2
    assert _lands(C.get_collective("scatter"), 1, 2, 3, root=1) == [(2, 0)]
    assert _lands(C.get_collective("gather"), 2, 0, 3, root=1) == [(1, 2)]
    # reducescatter: block 3 of every input is rank 3's output
    assert _lands(C.get_collective("reducescatter"), 0, 3, 4) == [(3, 0)]


@pytest.mark.parametrize(
    "name, p, size, want",
    [
        # 1000 bytes of float32 = 250 elements; divided collectives round count down to whole blocks
        ("allreduce", 3, 1000, (250, 1000, 250, 250)),
        ("allgather", 3, 1000, (83, 996, 83, 249)),
        ("reducescatter", 4, 1000, (62, 992, 248, 62)),
        ("alltoall", 3, 1000, (83, 996, 249, 249)),
        ("scatter", 3, 1000, (83, 996, 249, 83)),
        ("gather", 4, 1000, (62, 992, 62, 248)),
        ("sendrecv", 4, 1000, (250, 1000, 250, 250)),
        ("broadcast", 4, 1000, (250, 1000, 250, 250)),
        ("allgather", 1, 1000, (250, 1000, 250, 250)),
    ],
)
def test_nccl_tests_counts_by_hand(name, p, size, want):
    assert C.get_collective(name).counts(size, p, 4) == want


def test_whole_buffer_from_one_rank_input():
    g = C.get_collective
    assert g("allgather").buffer_elements(5, 3) == 15
    assert g("gather").buffer_elements(5, 4) == 20
    assert g("reducescatter").buffer_elements(15, 3) == 15
    assert g("alltoall").buffer_elements(10, 4) == 10  # not a multiple of p: kept as is
    assert g("sendrecv").buffer_elements(5, 4) == 5


@pytest.mark.parametrize(
    "name, factors",
    [
        # p = 1, 3, 4: 2(p-1)/p, (p-1)/p, or 1 (nccl-tests doc/PERFORMANCE.md)
        ("allreduce", (0, 4 / 3, 3 / 2)),
        ("allgather", (0, 2 / 3, 3 / 4)),
        ("reducescatter", (0, 2 / 3, 3 / 4)),
        ("alltoall", (0, 2 / 3, 3 / 4)),
        ("scatter", (0, 2 / 3, 3 / 4)),
        ("gather", (0, 2 / 3, 3 / 4)),
        ("broadcast", (1, 1, 1)),
        ("reduce", (1, 1, 1)),
        ("sendrecv", (1, 1, 1)),
    ],
)
def test_busbw_factors_by_hand(name, factors):
    c = C.get_collective(name)
    assert [c.busbw_factor(p) for p in (1, 3, 4)] == pytest.approx(list(factors))
    # the module function is the same number
    assert [C.busbw_factor(name, p) for p in (1, 3, 4)] == pytest.approx(list(factors))


def test_bandwidths_and_rank_count_from_a_factor():
    ar = C.get_collective("allreduce")
    # 4 ranks, 1 GB in 0.1 s: algbw 10 GB/s, busbw 10 x 2 x 3/4 = 15 GB/s
    assert ar.bandwidths_GBps(1e9, 4, 0.1) == pytest.approx((10.0, 15.0))
    assert float(ar.busbw(1e9, 4, 0.1)) == pytest.approx(15e9)
    assert ar.ranks_for_busbw_factor(1.5) == pytest.approx(4)
    assert C.get_collective("allgather").ranks_for_busbw_factor(0.875) == pytest.approx(8)
    assert C.get_collective("broadcast").ranks_for_busbw_factor(1.0) is None


def test_program_names_round_trip():
    assert len(C.PROGRAMS) == len(C.COLLECTIVES)
    for name, c in C.COLLECTIVES.items():
        assert C.PROGRAMS[c.nccl_tests_binary] is c
        found = nccltests._BINARY.search(f"# Collective test starting: {c.nccl_tests_binary}")
        assert nccltests._COLLECTIVE[found.group(1)] == name
    assert C.get_collective("all_reduce").nccl_tests_binary == "all_reduce_perf"


@pytest.mark.parametrize("name", list(C.COLLECTIVES))
def test_bench_text_names_the_program_and_reads_back(name):
    c = C.get_collective(name)
    rows = []
    for size in (1 << 20, 1 << 22):
        count = size // 4 // c.count_divisor(4)
        algbw, busbw = c.bandwidths_GBps(size, 4, 1e-3)
        rows.append(
            {
                "algorithm": "builtin",
                "size": size,
                "count": count,
                "type": "float",
                "redop": "sum" if c.reduces else "none",
                "root": 0 if c.rooted else -1,
                **{
                    placement: {
                        "time_us": 1e3,
                        "min_us": 1e3,
                        "p50_us": 1e3,
                        "algbw": algbw,
                        "busbw": busbw,
                        "wrong": 0,
                    }
                    for placement in ("out_of_place", "in_place")
                },
            }
        )
    config = {"sizes": [1 << 20, 1 << 22], "step": 2, "warmup": 1, "iters": 1, "check": 1}
    text = to_text(Results(name, 4, "gloo", config, rows))
    assert f"# Collective test starting: {c.nccl_tests_binary}" in text
    # the nccl-tests reader does not take collperf's appended columns (algorithm, pred, meas/pred) yet:
    # keep nccl-tests' 13 columns of each row
    text = "\n".join(line if line.startswith("#") else " ".join(line.split()[:13]) for line in text.splitlines())
    (table,) = parse(text)
    assert table.collective == name and len(table.rows) == 4  # 2 sizes x (out-of-place, in-place)


def test_aliases():
    for alias, name in [
        ("p2p", "sendrecv"),
        ("bcast", "broadcast"),
        ("a2a", "alltoall"),
        ("Reduce-Scatter", "reducescatter"),
        (" ALL_GATHER ", "allgather"),
        ("send_recv", "sendrecv"),
    ]:
        assert C.get_collective(alias).name == name
    c = C.get_collective("allreduce")
    assert C.get_collective(c) is c
    with pytest.raises(UsageError) as err:
        C.get_collective("allsum")
    assert str(err.value) == (
        "unknown collective 'allsum': expected one of allreduce, allgather, reducescatter, "
        "broadcast, reduce, alltoall, scatter, gather, sendrecv"
    )
