"""`collperf doctor`: is this cluster healthy, and which part is not (docs/doctor.md)."""

from __future__ import annotations

from rich.table import Table

from collperf import api, units
from collperf.cli.options import Json, command, flag, spec_options
from collperf.cli.render import out, print_json
from collperf.errors import UsageError
from collperf.spec import DoctorPlanSpec


@command()
@spec_options(DoctorPlanSpec, "spec")
def doctor(plan: bool = flag(False, "--plan", help="Predict the campaign: tests, rounds and wall time per "
                                                   "strategy for --nodes hosts (runs nothing)."),
           as_json: bool = Json, spec: DoctorPlanSpec = None):
    """Is this cluster healthy, and which part is not: a health campaign's cost (--plan)."""
    if not plan:
        raise UsageError("collperf doctor runs --plan for now: collperf doctor --plan --nodes 232 "
                         "(the campaign on hosts is not built yet; docs/doctor.md)")
    result = api.doctor_plan(spec)
    if as_json:
        print_json(result.to_json())
        return
    sizes = sorted({len(g) for g in result.groups})
    out.print(f"{result.nodes} hosts in {len(result.groups)} screening groups of "
              f"{'/'.join(map(str, sizes))}; fault prior {result.fault_rate:.3g} per host; "
              f"{units.format_time(result.test_time_s)} per round; round bound ceil(log2 N)+3 = {result.round_bound}")
    table = Table(title="per strategy (one fault: the mean over every faulty host)", title_justify="left")
    for name in ("strategy", "tests healthy", "rounds healthy", "tests 1 fault", "rounds 1 fault",
                 "expected tests", "expected wall time"):
        table.add_column(name, justify="left" if name == "strategy" else "right")
    for s in result.strategies:
        table.add_row(s.name, str(s.tests_healthy), str(s.rounds_healthy), f"{s.tests_one_fault:.1f}",
                      f"{s.rounds_one_fault:.1f}", f"{s.expected_tests:.1f}", units.format_time(s.wall_s))
    out.print(table)
    for s in result.strategies:
        out.print(f"  {s.name}: {s.note}")
