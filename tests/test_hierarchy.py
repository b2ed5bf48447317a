"""The cost-model chapter's two-level examples, recomputed, and the composition's structure."""

import numpy as np
import pytest

from collperf.model.costs import cost
from collperf.model.two_level.hierarchy import PLANS, two_level_cost
from collperf.model.network import Cluster, Link
from collperf.model.hardware.presets import PRESETS, get_preset

NV = Link(1e-6, 300e9, name="nvlink")
NET = Link(5e-6, 50e9, name="net")


def chapter(nodes, g):
    return Cluster(nodes, g, NV, NET, nics_per_node=g)  # one 50 GB/s NIC per GPU


def phases_ms(c):
    return [float(ph.cost.total_s[0]) * 1e3 for ph in c.phases]


def test_chapter_exercise_4x4_same_links():
    link = Link(10e-6, 100e9)
    c = two_level_cost("allreduce", Cluster(4, 4, link, link, 4), [100e6], "ring", "ring")
    assert phases_ms(c) == pytest.approx([0.78, 0.435, 0.78])
    assert float(c.total_s[0]) == pytest.approx(1.995e-3)


def test_chapter_8x8_2GB():
    c = two_level_cost("allreduce", chapter(8, 8), [2e9], "ring", "ring")
    assert phases_ms(c) == pytest.approx([5.840, 8.820, 5.840], abs=5e-4)
    flat = cost("allreduce", "ring", 64, [2e9], chapter(8, 8).bottleneck)
    assert float(flat.total_s[0]) / float(c.total_s[0]) == pytest.approx(3.87, abs=0.01)  # "3.9x faster"


def test_chapter_8x8_versus_16x4():
    a = two_level_cost("allreduce", chapter(8, 8), [4e9], "ring", "ring")
    b = two_level_cost("allreduce", chapter(16, 4), [4e9], "ring", "ring")
    assert float(a.total_s[0]) * 1e3 == pytest.approx(40.92, abs=0.01)
    assert float(b.total_s[0]) * 1e3 == pytest.approx(57.66, abs=0.01)


def test_per_rank_inter_bandwidth_shares_the_nics():
    c = Cluster(2, 8, NV, Link(5e-6, 400e9 / 8), nics_per_node=4)
    assert c.inter_per_rank.bandwidth_Bps == pytest.approx(50e9 * 4 / 8)


@pytest.mark.parametrize(
    "collective", ["allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "scatter", "gather"]
)
def test_one_node_is_the_flat_intra_algorithm(collective):
    one_node = Cluster(1, 8, NV, NET, 8)
    alg = {
        "broadcast": "binomial",
        "reduce": "binomial",
        "scatter": "binomial",
        "gather": "binomial",
        "alltoall": "pairwise",
    }.get(collective, "ring")
    c = two_level_cost(collective, one_node, [1e6, 1e9], alg, alg)
    assert np.allclose(c.total_s, cost(collective, alg, 8, [1e6, 1e9], NV).total_s)
    assert [ph.name.split()[0] for ph in c.phases] == [level for level, _, _ in PLANS[collective] if level == "intra"]


def test_allgather_and_reducescatter_phase_order_and_sizes():
    cl = chapter(4, 8)
    ag = two_level_cost("allgather", cl, [1e9], "ring", "ring")
    assert [ph.name for ph in ag.phases] == ["inter allgather", "intra allgather"]
    # inter: 4 nodes on n/8 at 50 GB/s per rank
    assert float(ag.phases[0].cost.total_s[0]) == pytest.approx(3 * 5e-6 + 0.75 * 1e9 / 8 / 50e9)
    rs = two_level_cost("reducescatter", cl, [1e9], "ring", "ring")
    assert [ph.name for ph in rs.phases] == ["intra reducescatter", "inter reducescatter"]
    # identity: two-level allreduce = two-level RS + inter AR phase difference ... RS + AG of the same plan
    ar = two_level_cost("allreduce", cl, [1e9], "ring", "ring")
    rs_ag = float(rs.phases[0].cost.total_s[0]) + float(ag.phases[1].cost.total_s[0])
    inter_ar = float(cost("allreduce", "ring", 4, [1e9 / 8], cl.inter_per_rank).total_s[0])
    assert float(ar.total_s[0]) == pytest.approx(rs_ag + inter_ar)


def test_best_phase_algorithms_never_lose_to_fixed_ones():
    cl = chapter(8, 8)
    sizes = np.geomspace(8, 8e9, 30)
    best = two_level_cost("allreduce", cl, sizes).total_s
    for intra in ("ring", "mesh"):
        for inter in ("ring", "rhd", "recursive-doubling"):
            assert np.all(best <= two_level_cost("allreduce", cl, sizes, intra, inter).total_s * (1 + 1e-12))


def test_presets_cite_sources_and_parse():
    for name, preset in PRESETS.items():
        assert preset.source
        assert get_preset(name, nodes=4).ranks == 4 * preset.ranks_per_node
    h100 = get_preset("dgx-h100")
    assert h100.inter_per_rank.bandwidth_Bps == pytest.approx(50e9)  # 8 x 400 Gb/s for 8 GPUs
