"""Option groups shared by several commands: one definition each, added to a command by a decorator."""

from __future__ import annotations

import functools
import inspect
from typing import Optional

import typer
from typer.core import TyperCommand, TyperGroup

from collperf import __version__
from collperf.spec import HardwareSpec, NetworkSpec

class Command(TyperCommand):
    """A command whose --help option shows no value placeholder (typer prints <bool> for flags)."""

    def get_help_option(self, ctx):
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option


class _Group(TyperGroup, Command):
    pass


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=_Group,
                  help="Performance of collective communication: predict, explain, compare.")


def command(*args, **kwargs):
    """`app.command` for our commands (their --help without placeholders)."""
    return app.command(*args, cls=Command, **kwargs)


def sub_app(**kwargs) -> typer.Typer:
    """A command group (e.g. `testbed`) whose commands and help read like the others'."""
    return typer.Typer(cls=_Group, no_args_is_help=True, **kwargs)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"collperf {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Performance of collective communication: predict, explain, compare."""

_PANEL = "Network"


def _opt(*names, help=None, default=None):
    return typer.Option(default, *names, help=help, rich_help_panel=_PANEL)


# name -> (annotation, typer option); the names are NetworkSpec's fields
NETWORK_OPTIONS = {
    "ranks": (Optional[int], _opt("--ranks", "-p", help="Number of ranks (with --latency/--bandwidth).")),
    "latency": (Optional[str], _opt("--latency", help="Per-message latency alpha of a uniform link, e.g. 10us.")),
    "bandwidth": (Optional[str], _opt("--bandwidth", help="Per-rank bandwidth of a uniform link, e.g. 100GB/s "
                                                         "or 400Gbps.")),
    "reduce_bandwidth": (str, _opt("--reduce-bandwidth", default="inf",
                                   help="Local reduction rate (1/gamma), e.g. 500GB/s; default infinite.")),
    "cluster": (Optional[str], _opt("--cluster", help="Preset: dgx-h100, dgx-a100, dgx-1v, dgx-2, trn1, pcie-gen4, "
                                                      "nvlink300-400gbe.")),
    "nodes": (Optional[int], _opt("--nodes", help="Nodes of a two-level cluster.")),
    "ranks_per_node": (Optional[int], _opt("--ranks-per-node", help="Ranks per node.")),
    "intra_latency": (Optional[str], _opt("--intra-latency", help="Latency inside a node.")),
    "intra_bandwidth": (Optional[str], _opt("--intra-bandwidth", help="Per-rank bandwidth inside a node.")),
    "inter_latency": (Optional[str], _opt("--inter-latency", help="Latency between nodes.")),
    "inter_bandwidth": (Optional[str], _opt("--inter-bandwidth", help="Bandwidth of one NIC.")),
    "nics_per_node": (Optional[int], _opt("--nics-per-node", help="NICs per node (default: one per rank).")),
    "profile": (Optional[str], _opt("--profile", help="A calibrated profile (collperf calibrate -o FILE).")),
}


def flag(default: bool, *names, **options):
    """A boolean option: shown in --help without a value placeholder (it takes none)."""
    return typer.Option(default, *names, metavar="", **options)


def network_options(*, only=None, exclude=()):
    """Add the network options to a command; the command receives them as one NetworkSpec in its
    `network` parameter (built and validated before the command runs)."""
    names = [n for n in (only or NETWORK_OPTIONS) if n not in exclude]

    def decorate(command):
        signature = inspect.signature(command)
        params = [p for p in signature.parameters.values() if p.name != "network"]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=NETWORK_OPTIONS[n][1],
                                     annotation=NETWORK_OPTIONS[n][0]) for n in names]

        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            kwargs["network"] = NetworkSpec(**{n: kwargs.pop(n) for n in names})
            return command(*args, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)
        wrapper.__annotations__ = {**command.__annotations__, **{n: NETWORK_OPTIONS[n][0] for n in names}}
        return wrapper

    return decorate


_HW_PANEL = "Hardware (default: from the log)"


def _hw(*names, help=None, default=None, **extra):
    return typer.Option(default, *names, help=help, rich_help_panel=_HW_PANEL, **extra)


# name -> (annotation, typer option); the names are HardwareSpec's fields
HARDWARE_OPTIONS = {
    "cluster": (Optional[str], _hw("--cluster", "--system", help="A catalogue system or cloud instance (collperf "
                                   "systems lists them): dgx-h100, gb200-nvl72, gcp-a3-mega, aws-p5, azure-nd-h100-v5, "
                                   "oci-bm-gpu-h100, pcie-2080ti, ...")),
    "gpu": (Optional[str], _hw("--gpu", help="GPU model, e.g. H100 or 'NVIDIA A100-SXM4-80GB' (picks the "
                                             "catalogue system).")),
    "nodes": (Optional[int], _hw("--nodes", help="Nodes (GPUs per node = ranks / nodes).")),
    "nics_per_node": (Optional[int], _hw("--nics-per-node", help="NICs per node.")),
    "nic_rate": (Optional[str], _hw("--nic-rate", help="One NIC's line rate, e.g. 400Gb/s.")),
    "nvls": (Optional[bool], _hw("--nvls/--no-nvls", metavar="", help="NVLink SHARP (in-switch reduction) on or off.")),
    "intra_bandwidth": (Optional[str], _hw("--intra-bandwidth", help="One GPU's physical rate to the other GPUs "
                                                                     "of its node, per direction, e.g. 450GB/s.")),
    "profile": (Optional[str], _hw("--profile", help="A calibrated profile (collperf calibrate -o FILE).")),
    "fabric": (Optional[str], _hw("--fabric", help="The network between nodes, where the log does not say: "
                                  "ib|roce|efa|tcpx|tcpxo|socket.")),
    "pcie_switch": (Optional[bool], _hw("--pcie-switch", metavar="", help="The node's PCIe GPUs sit behind one "
                                        "PCIe switch (nvidia-smi topo: PIX) and share its uplink.")),
    "cpu_arch": (Optional[str], _hw("--cpu-arch", help="x86|arm|power: NCCL's cpuArch (NVLS-tree size correction "
                                    "on x86 only; default from the system: Grace is arm).")),
    "nic_path": (Optional[str], _hw("--nic-path", help="The GPU-NIC path type of nvidia-smi topo -m: PIX|PXB|P2C|PXN|"
                                    "PHB|SYS (NCCL's LL128 rule reads it; default PIX).")),
    "proto": (Optional[str], _hw("--proto", help="NCCL_PROTO as NCCL reads it, e.g. Simple, ^LL128, "
                                 "'LL;allreduce:Simple'.")),
    "algo": (Optional[str], _hw("--algo", help="NCCL_ALGO as NCCL reads it, e.g. Ring, Tree,Ring, ^NVLS.")),
}


def hardware_options():
    """Add the hardware options to a command; it receives them as one HardwareSpec in `hardware`."""
    names = list(HARDWARE_OPTIONS)

    def decorate(command):
        signature = inspect.signature(command)
        params = [p for p in signature.parameters.values() if p.name != "hardware"]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=HARDWARE_OPTIONS[n][1],
                                     annotation=HARDWARE_OPTIONS[n][0]) for n in names]

        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            kwargs["hardware"] = HardwareSpec(**{n: kwargs.pop(n) for n in names})
            return command(*args, **kwargs)

        wrapper.__signature__ = signature.replace(parameters=params)
        wrapper.__annotations__ = {**command.__annotations__, **{n: HARDWARE_OPTIONS[n][0] for n in names}}
        return wrapper

    return decorate


Collective = typer.Argument(..., help="allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter, "
                                      "gather or sendrecv.")
Json = flag(False, "--json", help="Print one JSON document to stdout.")
IntraAlg = typer.Option("best", "--intra-algorithm", help="Algorithm of the intra-node phases (or best).")
InterAlg = typer.Option("best", "--inter-algorithm", help="Algorithm of the inter-node phase (or best).")
TestbedOpt = typer.Option(None, "--testbed", help="hosts=4,rate=200mbit[,ranks-per-host=2]: brought up and torn down.")
Timeout = typer.Option(300.0, "--timeout", help="Seconds before the whole run is stopped.")


def one_or_many(docs: list):
    return docs[0] if len(docs) == 1 else docs


# Blink's options, in predict (--topology panel) and simulate (Blink panel): one wording for both
def Hybrid(panel: str):
    return flag(False, "--hybrid", rich_help_panel=panel,
                help="-A blink broadcast over NVLink and PCIe trees at once (the appendix's equation 8).")


def TDpa(panel: str):
    return typer.Option("0", "--t-dpa", rich_help_panel=panel, help="--hybrid: the switching overhead T_dpa, e.g. 0.5ms.")


def Transit(panel: str):
    return typer.Option("devices", "--transit", rich_help_panel=panel,
                        help="-A blink: devices (trees on the group's GPUs, PCIe switches and CPUs) or any (idle "
                             "GPUs forward too).")
