"""The training-step planner: plan (and --compare, --search)."""

from __future__ import annotations

import shlex
from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import command, flag, Json, network_options, spec_options
from collperf.cli.progress import progress
from collperf.cli.render import print_json
from collperf.errors import UsageError
from collperf.spec import NetworkSpec, PlanLayoutSpec, PlanModelSpec, PlanSpec, SearchSpec

_STEP = "Step"


@command("plan")
@network_options(exclude=("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster"))
@spec_options(PlanModelSpec, "model_options", panel="Model")
@spec_options(PlanLayoutSpec, "layout_options", panel="Layout")
@spec_options(
    PlanSpec,
    "step_options",
    panel=_STEP,
    build=False,
    only=("compute", "flops", "overlap", "algorithm", "intra_algorithm", "inter_algorithm", "from_trace"),
)
@spec_options(SearchSpec, "search_options", panel=_STEP, build=False, only=("gpus", "global_batch", "top"))
def plan_command(
    ctx: typer.Context,
    compare: Optional[list[str]] = typer.Option(
        None,
        "--compare",
        rich_help_panel=_STEP,
        help="Another layout or cluster to set beside: 8x4x16, tp=8,pp=8,dp=8,zero=3, or 8x8x8@dgx-a100:64.",
    ),
    search: bool = flag(
        False,
        "--search",
        rich_help_panel=_STEP,
        help="Rank every layout of --gpus GPUs that fits memory (also what plan does when no --tp/--pp/--dp is given).",
    ),
    require_fit: bool = flag(
        False, "--require-fit", rich_help_panel=_STEP, help="Exit 1 when a plan does not fit in GPU memory."
    ),
    as_json: bool = Json,
    cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    network: NetworkSpec = None,
    model_options: PlanModelSpec = None,
    layout_options: PlanLayoutSpec = None,
    step_options: dict = None,
    search_options: dict = None,
):
    """Plan one training step (TP, PP, CP, EP, DP, ZeRO) on a cluster: compute, exposed communication, the
    pipeline bubble and memory per GPU. Without --tp/--pp/--dp: the best layouts for --nodes, and why."""
    from_trace = step_options["from_trace"]
    searching = search or (
        not layout_options.degrees_given and layout_options.cp == 1 and not compare and not from_trace
    )
    if search and from_trace:
        raise UsageError("--from-trace feeds one layout's plan: give its --tp/--pp/--dp instead of --search")
    spec = api.plan_spec(
        model_options, None, layout_options, network, cluster, fill_dp=layout_options.dp is None, **step_options
    )
    if searching:
        with progress("searching layouts", as_json) as steps:
            top = search_options["top"] or (10 if search else 3)
            found = api.plan_search(
                SearchSpec(plan=spec, **{**search_options, "top": top}, defaults=not search),
                on_step=lambda text, done, total: steps.done(done, total, text),
            )
        detail = detail_command(ctx.meta.get("collperf.args", []), found.best)
        print_json(found.to_json()) if as_json else render.print_search(found, why=not search, detail=detail)
        if not found.plans:
            raise typer.Exit(1)  # nothing to plan: the reason is printed (found.why_empty)
        return
    plans, best = api.plan_compare(spec, compare or [])
    if as_json:
        docs = [p.to_json() for p in plans]
        print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": best})
    else:
        render.print_plans(plans, best)
    if require_fit and any(p.fits is False for p in plans):
        raise typer.Exit(1)


# the words a search's own options and the layout take: (flag, takes a value); dropped from the user's command
# line before the chosen layout's flags are added, so the detail command runs as printed
_REPLACED = {
    "--search": False,
    "--json": False,
    "--gpus": True,
    "--global-batch": True,
    "--top": True,
    "--nodes": True,
    "--tp": True,
    "--pp": True,
    "--dp": True,
    "--zero": True,
    "--micro-batch": True,
    "--micro-batches": True,
    "--recompute": True,
    "--virtual-stages": True,
    "--sp": False,
    "--no-sp": False,
    "--keep-params": False,
    "--no-keep-params": False,
}


def detail_command(args: list[str], best) -> str | None:
    """`collperf plan` with the user's own options and the first layout's degrees, ZeRO stage, micro-batches,
    recomputation and nodes: the one layout in detail, runnable as printed."""
    if best is None:
        return None
    kept, skip = [], False
    for word in args:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in _REPLACED:
            skip = _REPLACED[name] and "=" not in word
            continue
        kept.append(word)
    lay, cluster = best.layout, best.cluster
    extra = (
        [
            "--nodes",
            cluster.nodes,
            "--tp",
            lay.tp,
            "--pp",
            lay.pp,
            "--dp",
            lay.dp,
            "--zero",
            lay.zero,
            "--micro-batch",
            best.model.micro_batch,
            "--micro-batches",
            lay.micro_batches,
            "--recompute",
            lay.recompute,
        ]
        + (["--sp"] if lay.sequence_parallel else [])
        + (["--virtual-stages", lay.virtual_stages] if lay.virtual_stages > 1 else [])
    )
    return "collperf plan " + shlex.join([*kept, *map(str, extra)])
