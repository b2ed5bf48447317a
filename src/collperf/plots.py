"""Plots (matplotlib, headless): PNG or SVG by the file's suffix."""

from __future__ import annotations

from pathlib import Path

from collperf.errors import UsageError


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_timeline(result, schedule, path) -> None:
    """One bar per step from its start to its end (the simulator's timeline)."""
    if Path(path).suffix.lower() not in (".png", ".svg"):
        raise UsageError(f"timeline file {path!r}: expected a .png or .svg name")
    plt = _pyplot()
    steps = len(result.step_start_s)
    fig, ax = plt.subplots(figsize=(9, max(2.5, min(12, 0.25 * steps + 1.5))))
    scale = 1e3
    ax.barh(range(steps), (result.step_end_s - result.step_start_s) * scale, left=result.step_start_s * scale,
            color="tab:blue")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("step")
    ax.invert_yaxis()
    ax.set_title(f"{schedule.collective} {schedule.algorithm}, {schedule.ranks} ranks, {result.mode} mode: "
                 f"{result.time_s * scale:.3f} ms")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
