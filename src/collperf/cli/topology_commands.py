"""Commands over topologies: trees (Blink's packed spanning trees on a group of GPUs)."""

from __future__ import annotations

from collperf import api
from collperf.cli import render_blink
from collperf.cli.options import command, Json, spec_options
from collperf.cli.render import print_json
from collperf.spec import TreesSpec


@command()
@spec_options(TreesSpec, "spec")
def trees(as_json: bool = Json, spec: TreesSpec = None):
    """Blink's packed spanning trees on a group of GPUs: trees, rate, max-flow bound, NCCL's rings beside."""
    result = api.trees(spec)
    print_json(result.to_json()) if as_json else render_blink.print_trees(result)
