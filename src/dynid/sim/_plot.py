"""PNG figures of closed-loop runs (position error and torque); matplotlib is imported lazily."""

from __future__ import annotations

import io
from typing import Mapping

import numpy as np

from ..errors import MissingExtraError
from .closed_loop import ClosedLoopRun

__all__ = ["plot_runs"]


def plot_runs(runs: Mapping[str, ClosedLoopRun], title: str, *, t_end: float | None = None,
              joint_names: tuple[str, ...] | None = None, max_seconds: float | None = 8.0) -> bytes:
    """Render position error (top) and measured torque (bottom) of each run, one column per joint.

    Parameters
    ----------
    runs : mapping label -> ClosedLoopRun
    title : str
    t_end : float, optional
        Profile end [s], drawn as a vertical line.
    joint_names : tuple of str, optional
    max_seconds : float, optional
        Plot only the first seconds of long runs.

    Returns
    -------
    bytes
        The PNG file content (the caller writes it).

    Raises
    ------
    MissingExtraError
        matplotlib is not installed (extra ``plot``).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise MissingExtraError("plotting a simulation", "plot", "matplotlib") from err
    first = next(iter(runs.values()))
    n = first.pfb.shape[1]
    names = joint_names or tuple(f"A{j + 1}" for j in range(n))
    fig, axes = plt.subplots(2, n, figsize=(3.6 * n, 5.6), squeeze=False, sharex=True)
    for label, run in runs.items():
        keep = slice(None) if max_seconds is None else run.t <= run.t[0] + max_seconds
        t = run.t[keep]
        err = run.position_error[keep]
        for j in range(n):
            axes[0, j].plot(t, err[:, j], lw=0.8, label=label)
            axes[1, j].plot(t, run.tfb[keep, j], lw=0.8, label=f"{label}: Tfb")
            if np.any(run.taddcmd[keep, j]):
                axes[1, j].plot(t, run.taddcmd[keep, j], lw=0.8, ls="--", label=f"{label}: Taddcmd")
            if np.any(run.external[keep, j]):
                axes[1, j].plot(t, run.external[keep, j], lw=1.0, color="k", label="external torque")
    for j in range(n):
        axes[0, j].set_title(names[j])
        axes[1, j].set_xlabel("t [s]")
        if t_end is not None:
            for r in range(2):
                axes[r, j].axvline(t_end, color="grey", lw=0.6, ls=":")
    axes[0, 0].set_ylabel("position error pcmd - pfb [rad or m]")
    axes[1, 0].set_ylabel("torque [N m or N]")
    axes[0, 0].legend(fontsize=7)
    axes[1, 0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()
