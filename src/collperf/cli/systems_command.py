"""`collperf systems`: the hardware catalogue, every value with its data sheet."""

from __future__ import annotations

import typer
from rich.table import Table

from collperf import api
from collperf.cli.options import Json, command
from collperf.cli.render import escape, out, print_json


def _row(s) -> dict:
    return {
        "name": s.name,
        "instance": s.instance,
        "gpu": s.gpu,
        "gpus_per_node": s.gpus_per_node,
        "nvlink_GBps_per_direction": s.nvlink_GBps,
        "nvswitch": s.nvswitch,
        "nvls": s.nvls,
        "pcie_gen": s.pcie_gen,
        "nics_per_node": s.nics_per_node,
        "nic_Gbps": s.nic_Gbps,
        "node_network_Gbps": s.nics_per_node * s.nic_Gbps,
        "fabric": s.fabric,
        "gpudirect_rdma": s.net_gdr,
        "sources": s.sources,
    }


def _part(g) -> dict:
    return {
        "key": g.key,
        "name": g.name,
        "vendor": g.vendor,
        "family": g.family,
        "arch": g.arch,
        "form": g.form,
        "compute_capability": g.compute_capability,
        "memory_GB": g.memory_GB,
        "memory_TBps": g.memory_TBps,
        "tflops_dense": g.tflops,
        "link": g.link,
        "links": g.links,
        "link_total_GBps": g.link_total_GBps,
        "pcie_gen": g.pcie_gen,
        "pcie_lanes": g.pcie_lanes,
        "p2p": g.p2p,
        "devices_per_package": g.gcds,
        "sources": g.sources,
    }


def _parts(as_json: bool) -> None:
    parts = api.gpu_parts()
    if as_json:
        print_json({"gpus": [_part(g) for g in parts]})
        return
    table = Table(
        title="the GPU parts (--gpu NAME, or as --cluster: the part on its usual board; figures as the "
        "sheets print them)",
        title_justify="left",
    )
    for column in ("key", "name", "form", "memory", "bf16 TFLOPS", "GPU links", "host", "P2P"):
        table.add_column(column, overflow="fold")
    for g in parts:
        bf16 = g.tflops.get("bf16", g.tflops.get("fp16"))
        table.add_row(
            g.key,
            g.name,
            g.form,
            f"{g.memory_GB:g} GB, {g.memory_TBps:g} TB/s",
            f"{bf16:g}" if bf16 else "-",
            f"{g.links}x {g.link}, {g.link_total_GBps:g} GB/s" if g.links else "-",
            f"PCIe Gen{g.pcie_gen} x{g.pcie_lanes}",
            "yes" if g.p2p else "no",
        )
    out.print(table)


@command()
def systems(
    as_json: bool = Json,
    gpus: bool = typer.Option(
        False,
        "--gpus",
        help="List the GPU parts table instead: every GPU collperf "
        "knows, with memory, peak FLOP/s, links and host interface.",
    ),
):
    """List the hardware catalogue (--cluster names): GPUs, NVLink, NICs x rate, fabric, GPUDirect RDMA, data sheet."""
    if gpus:
        _parts(as_json)
        return
    catalogue, aliases = api.systems()
    if as_json:
        print_json({"systems": [_row(s) for s in catalogue], "aliases": aliases})
        return
    table = Table(title="the hardware catalogue (--cluster NAME; rates per direction)", title_justify="left")
    for column in ("name", "instance", "GPUs", "NVLink GB/s", "NICs", "fabric", "GDR", "data sheet"):
        table.add_column(column, overflow="fold")
    for s in catalogue:
        table.add_row(
            s.name,
            s.instance,
            f"{s.gpus_per_node}x {s.gpu}",
            f"{s.nvlink_GBps:g}" if s.nvlink_links else f"PCIe Gen{s.pcie_gen}",
            f"{s.nics_per_node}x {s.nic_Gbps:g}G",
            s.fabric,
            "yes" if s.net_gdr else "no",
            escape(s.source),
        )
    out.print(table)
    out.print("aliases: " + ", ".join(f"{k} -> {v}" for k, v in aliases.items()))
