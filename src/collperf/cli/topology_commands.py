"""Commands over topologies: trees (Blink's packed spanning trees on a group of GPUs)."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render_blink
from collperf.cli.options import Json, command
from collperf.cli.render import print_json
from collperf.spec import TreesSpec


@command()
def trees(topology: str = typer.Option("dgx1v", "--topology", "-t", help="dgx1v | dgx2 | a topology file.json."),
          ranks: Optional[str] = typer.Option(None, "--ranks", help="The group of GPUs, e.g. 0,1,4 (default: all)."),
          collective: str = typer.Option("broadcast", "--collective",
                                         help="broadcast | allreduce | allgather | reducescatter."),
          root: Optional[str] = typer.Option(None, "--root", help="A rank of the group, or best (default: the "
                                             "group's first; not for allgather/reducescatter)."),
          links: str = typer.Option("all", "--links", help="all | nvlink | pcie: the links trees may use."),
          transit: str = typer.Option("devices", "--transit", help="devices: trees on the group's GPUs, through "
                                      "PCIe switches and CPUs (Blink's setting); any: idle GPUs forward too."),
          size: str = typer.Option("1G", "--size", "-s", help="Size for the times (nccl-tests convention)."),
          as_json: bool = Json):
    """Blink's packed spanning trees on a group of GPUs: trees, rate, max-flow bound, NCCL's rings beside."""
    result = api.trees(TreesSpec(topology=topology, ranks=ranks, collective=collective, root=root, links=links, transit=transit, size=size))
    print_json(result.to_json()) if as_json else render_blink.print_trees(result)
