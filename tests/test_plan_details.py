"""The planner's details, each against arithmetic done by hand in the comments:
gradient accumulation, ZeRO per micro-batch, SP pipeline messages, the 1F1B bubble, memory, recompute,
MoE, context parallel, custom models, the layout search."""

from dataclasses import replace

import pytest

from collperf.errors import UsageError
from collperf.model.hardware.presets import get_preset
from collperf.plan import (
    Layout,
    ModelSpec,
    activation_per_layer,
    compute_time,
    custom_model,
    get_model,
    memory,
    plan,
    search,
)
from collperf.plan.memory import model_states

GIB = 2**30
CHAPTER_70B = ModelSpec("chapter-70b", 70e9, 80, 4096, 8192, activation_bytes=64e6)
M8 = ModelSpec("m", 8e9, 32, 4096, 2048)


def items(p, kind):
    return [i for i in p.items if i.kind == kind]


# --- DP with gradient accumulation -----------------------------------------------------------------


def test_dp_hides_only_under_the_last_micro_batch_backward():
    # 70e9 / 64 x 2 B = 2.1875 GB of gradients per rank in 25 MB buckets: 87 of 25 MB + one of 12.5 MB;
    # ring allreduce over 8 nodes at 5 us / 50 GB/s: 14 x 5 us + 1.75 n / 50 GB/s
    bucket, rest = 70e-6 + 1.75 * 25e6 / 50e9, 70e-6 + 1.75 * 12.5e6 / 50e9  # 945 us, 507.5 us
    total = 87 * bucket + rest  # 82.7225 ms
    cluster = get_preset("chapter", 64)
    p = plan(CHAPTER_70B, Layout(8, 8, 8, micro_batches=8), cluster, compute_s=0.5, algorithm="ring")
    assert p.by_kind()["DP"] == pytest.approx(total)
    # backward = 2/3 of 0.5 s; only the last of 8 micro-batches' backward (41.667 ms) hides buckets
    assert p.exposed["DP"] == pytest.approx(total - 0.5 * 2 / 3 / 8)  # 41.06 ms, not 0.5 ms
    assert p.exposed["DP"] == pytest.approx(41.0558e-3, rel=1e-4)
    every = plan(
        CHAPTER_70B,
        Layout(8, 8, 8, micro_batches=8, reduce_every_microbatch=True),
        cluster,
        compute_s=0.5,
        algorithm="ring",
    )
    assert every.by_kind()["DP"] == pytest.approx(8 * total)
    assert every.exposed["DP"] == pytest.approx(8 * (total - 0.5 * 2 / 3 / 8))


# --- ZeRO per micro-batch ---------------------------------------------------------------------------


def moved(p):  # bytes each rank sends: allreduce 2(p-1)/p n, allgather and reducescatter (p-1)/p n
    factor = {"allreduce": 2 * 7 / 8, "allgather": 7 / 8, "reducescatter": 7 / 8}
    return sum(i.count * i.size_bytes * factor[i.collective] for i in p.items)


def test_zero3_gathers_and_reduces_again_every_micro_batch():
    cluster = get_preset("chapter", 1, 8)
    dp = plan(M8, Layout(1, 1, 8, bucket_bytes=1e12, micro_batches=4), cluster)
    z3 = plan(M8, Layout(1, 1, 8, zero=3, micro_batches=4), cluster)
    kept = plan(M8, Layout(1, 1, 8, zero=3, micro_batches=4, keep_params=True), cluster)
    assert moved(dp) == pytest.approx(2 * 7 / 8 * 16e9)  # 28 GB: one allreduce of 16 GB per step
    assert sum(i.count for i in z3.items) == 4 * (2 * 32 + 32)  # 384 collectives, not 96
    assert moved(z3) == pytest.approx(4 * 3 * 7 / 8 * 16e9)  # 168 GB = 6 x DP (1.5 x DP x 4 micro-batches)
    assert sum(i.count for i in kept.items) == 32 + 32
    assert moved(kept) == pytest.approx(moved(dp))  # gathered once, reduced once: DP's bytes


def test_zero2_reduces_every_micro_batch_zero1_once():
    cluster = get_preset("chapter", 1, 8)
    z1 = plan(M8, Layout(1, 1, 8, zero=1, micro_batches=4, bucket_bytes=1e12), cluster)
    z2 = plan(M8, Layout(1, 1, 8, zero=2, micro_batches=4, bucket_bytes=1e12), cluster)
    count = lambda p, c: sum(i.count for i in p.items if i.collective == c)  # noqa: E731
    assert (count(z1, "reducescatter"), count(z1, "allgather")) == (1, 1)
    assert (count(z2, "reducescatter"), count(z2, "allgather")) == (4, 1)


def test_zero3_prefetch_hides_the_next_layer_allgather():
    cluster = get_preset("chapter", 1, 8)
    layout = Layout(1, 1, 8, zero=3, micro_batches=2)
    slow = plan(M8, replace(layout, prefetch=False), cluster, compute_s=100.0)
    fast = plan(M8, layout, cluster, compute_s=100.0)
    ag, rs = (next(i.time_per_op_s for i in fast.items if i.collective == c) for c in ("allgather", "reducescatter"))
    assert slow.exposed["ZeRO"] == pytest.approx(slow.by_kind()["ZeRO"])
    # 100 s of compute over 2 micro-batches x 32 layers hides everything but each pass's first layer
    assert fast.exposed["ZeRO"] == pytest.approx(2 * (ag + (ag + rs)))


# --- pipeline -----------------------------------------------------------------------------------------


def test_sequence_parallel_pipeline_message_is_the_1_over_t_shard():
    model = get_model("13b")  # 4096 x 5120 x 2 B = 41,943,040 B activation per micro-batch
    cluster = get_preset("dgx-h100", 4)
    sp = plan(model, Layout(8, 4, 1, sequence_parallel=True, micro_batches=8), cluster)
    plain = plan(model, Layout(8, 4, 1, micro_batches=8), cluster)
    sg = plan(model, Layout(8, 4, 1, micro_batches=8, scatter_gather=True), cluster)
    send = lambda p: next(i for i in p.items if i.collective == "sendrecv")  # noqa: E731
    assert send(plain).size_bytes == 41_943_040
    assert send(sp).size_bytes == 5_242_880 == send(sg).size_bytes  # / 8
    assert [(i.collective, i.count, i.size_bytes) for i in items(sg, "PP") if i.collective == "allgather"] == [
        ("allgather", 16, 41_943_040)
    ]  # scatter/gather: the shard is gathered again inside the node


def test_1f1b_bubble_and_interleaving():
    model = get_model("gpt3-175b")
    cluster = get_preset("dgx-a100", 128)
    p = plan(model, Layout(8, 8, 16, micro_batches=64), cluster, compute_s=12.0)
    assert p.bubble_s == pytest.approx(7 / 64 * 12.0)  # (p-1)/m x compute = 1.3125 s
    v4 = plan(model, Layout(8, 8, 16, micro_batches=64, virtual_stages=4), cluster, compute_s=12.0)
    assert v4.bubble_s == pytest.approx(7 / 256 * 12.0)  # / v
    assert items(v4, "PP")[0].count == 4 * items(p, "PP")[0].count == 4 * 128  # v x the messages
    assert p.step_s == pytest.approx(12.0 + 1.3125 + p.exposed_s)


# --- memory -------------------------------------------------------------------------------------------


def test_activation_memory_of_korthikanti_table2_for_gpt3_175b():
    # Table 3's GPT-3 175B: s 2048, b 1, h 12288, a 96, L 96, t 8, p 8; the first stage holds p micro-
    # batches of L/p layers = L layers' worth. s b h L = 2048 x 12288 x 96 = 2,415,919,104; 5 a s / (h t) = 10
    # (the paper's unfused attention core; a fused one stores no scores, as selective recompute)
    model = get_model("gpt3-175b")
    full_l = lambda **kw: (
        memory(
            model,
            Layout(
                8,
                8,
                1,
                micro_batches=64,
                flash_attention=False,  # noqa: E731
                **kw,
            ),
        ).activations_bytes
    )
    assert memory(model, Layout(8, 8, 1, micro_batches=64)).activations_bytes == 2_415_919_104 * (10 + 24 / 8)
    assert full_l() == 2_415_919_104 * (10 + 24 / 8 + 10)  # eq. 2: 55.6 GB, 51.75 GiB
    assert full_l(sequence_parallel=True) == 2_415_919_104 * (34 / 8 + 10)  # eq. 3: 32.06 GiB
    assert full_l(sequence_parallel=True, recompute="selective") == 2_415_919_104 * 34 / 8  # 9.56 GiB
    assert full_l(recompute="full") == 2_415_919_104 * 2  # 4.5 GiB
    no_parallel = activation_per_layer(model, Layout(flash_attention=False))
    assert no_parallel == 2048 * 12288 * (34 + 5 * 96 * 2048 / 12288)  # eq. 1: s b h (34 + 5as/h)


def test_gpt3_175b_without_recompute_does_not_fit_80gb():
    # 16 B per parameter / 64 GPUs: 174.6e9 x 16 / 64 = 43.65 GB of model states + 55.57 GB activations
    # (unfused attention, as in the paper)
    model = get_model("gpt3-175b")
    p = plan(model, Layout(8, 8, 1, micro_batches=64, flash_attention=False), get_preset("dgx-a100", 8))
    states = 16 * model.params / 64
    assert p.memory.total_bytes == pytest.approx(states + 2_415_919_104 * 23)
    assert p.memory.total_bytes / GIB == pytest.approx(92.4, abs=0.05)
    assert p.fits is False and "does not fit" in p.warnings[0] and "92.4 GiB" in p.warnings[0]
    bigger = plan(
        model,
        Layout(8, 8, 1, micro_batches=64, gpu_memory_bytes=100 * GIB, flash_attention=False, memory_headroom=0.0),
        get_preset("dgx-a100", 8),
    )
    assert bigger.fits and not bigger.warnings
    # the default headroom keeps 10 GiB of those 100 free: 92.4 GiB is more than the 90 usable
    kept = plan(
        model,
        Layout(8, 8, 1, micro_batches=64, gpu_memory_bytes=100 * GIB, flash_attention=False),
        get_preset("dgx-a100", 8),
    )
    assert kept.fits is False and "90.0 GiB usable" in kept.warnings[0] and "10 % kept free" in kept.warnings[0]
    assert plan(
        model,
        Layout(8, 8, 1, micro_batches=64, recompute="selective", sequence_parallel=True),
        get_preset("dgx-a100", 8),
    ).fits


def test_zero_memory_matches_the_zero_paper_figure_1():
    # Rajbhandari et al. 2020 Fig. 1: 7.5B parameters, Nd = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    model = ModelSpec("7.5b", 7.5e9, 32, 4096, 2048)
    gb = [sum(model_states(model, Layout(1, 1, 64, zero=z))) / 1e9 for z in range(4)]
    buffer = 2 * 7.5e9 * 2 / 32 / 1e9  # ZeRO-3 also holds the layer in use and the prefetched one
    assert gb[:3] == pytest.approx([120, 31.4, 16.6], abs=0.05)
    assert gb[3] - buffer == pytest.approx(1.875)


# --- recompute ---------------------------------------------------------------------------------------------


def test_recompute_compute_and_tp_collectives():
    cluster = get_preset("dgx-h100", 1)
    base = plan(M8, Layout(8, 1, 1, micro_batches=2), cluster)
    full = plan(M8, Layout(8, 1, 1, micro_batches=2, recompute="full"), cluster)
    sel = plan(M8, Layout(8, 1, 1, micro_batches=2, recompute="selective"), cluster)
    assert items(base, "TP")[0].count == 4 * 32 * 2 and items(sel, "TP")[0].count == 4 * 32 * 2
    assert items(full, "TP")[0].count == 6 * 32 * 2  # the forward's 2 allreduces again in the backward
    # per token: 6 x 8e9 + 12 x 32 x 2048 x 4096 = 51.221e9; full adds 2 x 8e9 + 4 x 32 x 2048 x 4096
    per_token, attn = 6 * 8e9 + 12 * 32 * 2048 * 4096, 4 * 32 * 2048 * 4096
    tokens = 2 * 2048
    assert compute_time(M8, Layout(8, 1, 1, micro_batches=2), 1e14) == pytest.approx(per_token * tokens / 8e14)
    assert compute_time(M8, Layout(8, 1, 1, micro_batches=2, recompute="full"), 1e14) == pytest.approx(
        (per_token + 2 * 8e9 + attn) * tokens / 8e14
    )
    assert compute_time(M8, Layout(8, 1, 1, micro_batches=2, recompute="selective"), 1e14) == pytest.approx(
        (per_token + attn) * tokens / 8e14
    )


# --- MoE and context parallel ---------------------------------------------------------------------------


def test_moe_alltoalls_and_context_parallel_ring():
    moe = ModelSpec("moe", 47e9, 32, 4096, 4096, experts=8, top_k=2)
    cluster = get_preset("dgx-h100", 2)
    p = plan(moe, Layout(1, 1, 16, micro_batches=2, expert_parallel=8, zero=1), cluster)
    (a2a,) = items(p, "EP")
    # 4 alltoalls (dispatch, combine; forward and backward) x 32 layers x 2 micro-batches of 4096 x 2 x 4096 x 2 B
    assert (a2a.collective, a2a.count, a2a.size_bytes, a2a.group_ranks, a2a.level) == (
        "alltoall",
        256,
        4096 * 2 * 4096 * 2,
        8,
        "intra",
    )
    # expert gradients reduce over the 2 ranks holding the same experts (one per node), the rest over all 16
    groups = {(i.group_ranks, i.level) for i in items(p, "DP")}
    assert groups == {(16, "two-level"), (2, "inter")}
    cp = plan(get_model("7b"), Layout(2, 1, 1, cp=4, micro_batches=1), get_preset("dgx-h100", 1))
    (ring,) = items(cp, "CP")
    # 3 (cp - 1) hops per layer: K and V of 4096/4 tokens x 4096/2 hidden x 2 B each
    assert (ring.count, ring.size_bytes) == (3 * 3 * 32, 2 * 1024 * 2048 * 2)


# --- models, validation, search -----------------------------------------------------------------------


def test_custom_model_gets_its_own_label_and_rule():
    edited = replace(get_model("70b"), params=13e9, layers=40, hidden=5120)
    assert edited.name.startswith("custom") and "70b" not in edited.name
    assert replace(get_model("70b"), seq_len=8192).name == "70b"
    guess = custom_model(175e9)  # hidden = (175e9 x 128 / 12)^(1/3) = 12311 -> 12288; layers 96.6 -> 97
    assert (guess.hidden, guess.layers, guess.n_heads) == (12288, 97, 96)
    assert custom_model(13e9, layers=40).hidden == 5248  # sqrt(13e9 / 480) = 5204 -> 41 x 128


def test_layout_validation_names_every_factor():
    with pytest.raises(UsageError, match="recompute 'some'"):
        Layout(recompute="some")
    with pytest.raises(UsageError, match=r"micro_batches\(6\) must be a multiple of pp\(4\)"):
        Layout(1, 4, 1, micro_batches=6, virtual_stages=2)
    with pytest.raises(UsageError, match=r"expert_parallel\(3\) must divide dp\(8\)"):
        Layout(1, 1, 8, expert_parallel=3)
    with pytest.raises(UsageError, match="keep_params"):
        Layout(zero=1, keep_params=True)
    with pytest.raises(UsageError, match=r"tp\(2\) x cp\(2\) x pp\(1\) x dp\(1\) = 4 != ranks\(8\)"):
        plan(M8, Layout(2, 1, 1, cp=2), get_preset("dgx-h100", 1))


def test_search_ranks_fitting_layouts_and_agrees_with_plan():
    model = get_model("gpt3-175b")
    cluster = get_preset("dgx-a100")
    result = search(model, 64, cluster, global_batch=64, flops_per_rank=190e12, micro_batch_sizes=(1,))
    assert result.plans and result.too_big > 0 and len(result.plans) == result.considered - result.too_big
    steps = [p.step_s for p in result.plans]
    assert steps == sorted(steps)
    assert all(p.fits and p.layout.ranks == 64 and p.layout.dp * p.layout.micro_batches == 64 for p in result.plans)
    best = result.best
    again = plan(best.model, best.layout, get_preset("dgx-a100", 8), best.compute_s)
    assert again.step_s == pytest.approx(best.step_s)
    with pytest.raises(UsageError, match=r"gpus\(60\) is not a multiple of ranks_per_node\(8\)"):
        search(model, 60, cluster, global_batch=64, flops_per_rank=1e14)
