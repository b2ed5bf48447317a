"""Blink on our topologies: packed trees vs NCCL rings on fragmented DGX-1V groups, the hybrid
PCIe + NVLink gain for 3..8 GPUs, single-hop trees vs ring and double-binary-tree on a DGX-2.

    PYTHONPATH=src python benchmarks/blink_tables.py [--t-dpa-per-gpu-ms 0.5] [--size 1e9]
"""

from __future__ import annotations

import argparse

import numpy as np

from collperf import topology as T
from collperf.blink import model as B, packed
from collperf.model.network import Link
from collperf.blink.packing import pack
from collperf.model.two_level.build import build
from collperf.simulate import simulate
from collperf.model.costs import cost

GROUPS = [
    (0, 1, 4),
    (0, 3, 4, 5),
    (1, 2, 4, 7),
    (0, 1, 3),
    (0, 1, 2, 5, 6),
    (0, 1, 2, 3),
    (4, 5, 6, 7),
    (0, 1, 2, 3, 4, 5),
    tuple(range(8)),
]


def packed_vs_ring(size: float):
    topo = T.dgx1v()
    print(
        "Broadcast from the first GPU on dgx1v: packed trees vs NCCL rings (GB/s); "
        f"simulated: {size / 2**30:g} GiB, events mode"
    )
    print(
        f"{'GPUs':<18}{'ring':>22}{'packed own':>12}{'packed any':>12}{'x ring':>8}{'sim own':>9}{'allreduce own ms':>18}"
    )
    for group in GROUPS:
        rings = B.nccl_rings(topo, group)
        own = pack(topo, group, [group[0]], transit="devices")
        anyw = pack(topo, group, [group[0]], transit="any")
        sim = simulate(packed.broadcast(own, 16, 512), own.topology, size, "events").time_s
        ar = float(B.allreduce_time_s(own, size)) * 1e3
        print(
            f"{','.join(map(str, group)):<18}{rings.kind:>8} {rings.rate_Bps / 1e9:>8.1f} x{len(rings.rings)}"
            f"{own.rate_Bps / 1e9:>12.1f}{anyw.rate_Bps / 1e9:>12.1f}{own.rate_Bps / rings.rate_Bps:>8.2f}"
            f"{size / sim / 1e9:>9.1f}{ar:>18.2f}"
        )
    print("  own: trees on the group's GPUs, PCIe switches and CPUs; any: idle GPUs may forward too\n")


def hybrid(size: float, per_gpu_s: float):
    topo = T.dgx1v()
    print(
        f"Hybrid PCIe + NVLink broadcast from GPU 0 on GPUs 0..n-1, {size / 1e9:g} GB (GB/s); "
        f"T_dpa = {per_gpu_s * 1e3:g} ms x GPUs"
    )
    print(f"{'GPUs':>5}{'NVLink':>9}{'PCIe':>7}{'hybrid':>9}{'gain':>7}{'PCIe share':>12}{'sim hybrid':>12}")
    for n in range(3, 9):
        h = B.hybrid_broadcast(topo, range(n), 0, size, per_gpu_s * n)
        s = packed.hybrid_broadcast(h.nvlink, h.pcie, h.pcie_bytes / size, 32, 512)
        # the simulator has no T_dpa: simulated only without it (32 pipeline segments, fill included)
        sim = (
            f"{size / simulate(s, h.nvlink.topology, size, 'rounds').time_s / 1e9:>12.1f}"
            if per_gpu_s == 0
            else f"{'-':>12}"
        )
        print(
            f"{n:>5}{h.nvlink_only_Bps / 1e9:>9.1f}{h.pcie.rate_Bps / 1e9:>7.1f}{h.throughput_Bps / 1e9:>9.1f}"
            f"{h.gain_Bps / 1e9:>7.1f}{h.pcie_bytes / size:>12.3f}{sim}"
        )
    print()


def single_hop():
    topo = T.dgx2()
    link = Link(1e-6, 150e9)  # topology.dgx2: 1 us rank to rank through the switch, 6 NVLink2 = 150 GB/s
    sizes = np.array([1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9])
    model = B.single_hop_vs_nccl(16, sizes, link)
    dbt_k = cost("allreduce", "double-binary-tree", 16, sizes, link).segments
    print(
        "AllReduce on dgx2 (16 GPUs): single-hop trees vs ring vs double-binary-tree, time in us "
        "(model = closed form; sim = rounds mode on topology dgx2)"
    )
    print(
        f"{'size':>8}{'single':>10}{'ring':>10}{'dbt':>10}{'ring/single':>13}{'dbt/single':>12}"
        f"{'sim single':>12}{'sim ring':>10}{'sim dbt':>10}"
    )
    single_s, ring_s = build("allreduce", "mesh", 16), build("allreduce", "ring", 16)
    for i, n in enumerate(sizes):
        dbt_s = build("allreduce", "double-binary-tree", 16, segments=int(dbt_k[i]))
        sims = [simulate(s, topo, n, "rounds").time_s * 1e6 for s in (single_s, ring_s, dbt_s)]
        m = [model[k][i] * 1e6 for k in ("single-hop", "ring", "double-binary-tree")]
        print(
            f"{n:>8.0e}{m[0]:>10.2f}{m[1]:>10.2f}{m[2]:>10.2f}{m[1] / m[0]:>13.2f}{m[2] / m[0]:>12.2f}"
            f"{sims[0]:>12.2f}{sims[1]:>10.2f}{sims[2]:>10.2f}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=float, default=1e9)
    parser.add_argument(
        "--t-dpa-per-gpu-ms",
        type=float,
        default=0.5,
        help="T_dpa per GPU (the appendix measures it, grows with the GPU count; no value given)",
    )
    args = parser.parse_args()
    packed_vs_ring(2**30)
    hybrid(args.size, 0.0)
    hybrid(args.size, args.t_dpa_per_gpu_ms * 1e-3)
    single_hop()


if __name__ == "__main__":
    main()
