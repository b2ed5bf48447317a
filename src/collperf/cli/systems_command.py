"""`collperf systems`: the hardware catalogue, every value with its data sheet."""

from __future__ import annotations

from rich.table import Table

from collperf import api
from collperf.cli.options import Json, command
from collperf.cli.render import escape, out, print_json


def _row(s) -> dict:
    return {"name": s.name, "instance": s.instance, "gpu": s.gpu, "gpus_per_node": s.gpus_per_node,
            "nvlink_GBps_per_direction": s.nvlink_GBps, "nvswitch": s.nvswitch, "nvls": s.nvls, "pcie_gen": s.pcie_gen,
            "nics_per_node": s.nics_per_node, "nic_Gbps": s.nic_Gbps, "node_network_Gbps": s.nics_per_node * s.nic_Gbps,
            "fabric": s.fabric, "gpudirect_rdma": s.net_gdr, "sources": s.sources}


@command()
def systems(as_json: bool = Json):
    """List the hardware catalogue (--cluster names): GPUs, NVLink, NICs x rate, fabric, GPUDirect RDMA, data sheet."""
    catalogue, aliases = api.systems()
    if as_json:
        print_json({"systems": [_row(s) for s in catalogue], "aliases": aliases})
        return
    table = Table(title="the hardware catalogue (--cluster NAME; rates per direction)", title_justify="left")
    for column in ("name", "instance", "GPUs", "NVLink GB/s", "NICs", "fabric", "GDR", "data sheet"):
        table.add_column(column, overflow="fold")
    for s in catalogue:
        table.add_row(s.name, s.instance, f"{s.gpus_per_node}x {s.gpu}", f"{s.nvlink_GBps:g}" if s.nvlink_links else
                      f"PCIe Gen{s.pcie_gen}", f"{s.nics_per_node}x {s.nic_Gbps:g}G", s.fabric,
                      "yes" if s.net_gdr else "no", escape(s.source))
    out.print(table)
    out.print("aliases: " + ", ".join(f"{k} -> {v}" for k, v in aliases.items()))
