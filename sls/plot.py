"""Plots of simulations (:func:`sls.control.simulate` results) with matplotlib.

matplotlib is an optional dependency: ``pip install "sls[plot]"``. Without it,
:func:`require_matplotlib` and :func:`plot_simulation` raise
:class:`sls.errors.MissingDependencyError` with a one-line message. Figures are
drawn with ``matplotlib.figure.Figure`` directly (no pyplot, no GUI backend),
so plotting works headless.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import MissingDependencyError, OutputError
from .write import replacing

__all__ = ["plot_simulation", "require_matplotlib"]

INSTALL_HINT = 'writing a plot needs matplotlib, which is not installed; install it with: pip install "sls[plot]"'


def require_matplotlib():
    """Import and return ``matplotlib.figure``, or raise :class:`MissingDependencyError`."""
    try:
        import matplotlib.figure
    except ImportError:
        raise MissingDependencyError(INSTALL_HINT) from None
    return matplotlib.figure


def plot_simulation(result, state_names, path, *, input_names=(), title: str | None = None, dpi: int = 80) -> Path:
    """Write a PNG (or any format matplotlib infers from ``path``) of a simulation.

    Panels: the coordinates q(t), the rates q̇(t), the inputs u(t) when
    ``result.u`` is not all zero, and the total energy T + V (when the result
    carries ``energy``, as :func:`sls.control.simulate` results do).

    Parameters
    ----------
    result : OdeResult
        ``t``, ``y`` (2n, len(t)) and optionally ``u``, ``energy``.
    state_names : sequence of 2n str
        Names for the legend, q first then q̇.
    path : str or Path
        Output file.
    """
    figure_module = require_matplotlib()
    t = np.asarray(result.t)
    y = np.asarray(result.y)
    n = y.shape[0] // 2
    names = list(state_names) or [f"x{i + 1}" for i in range(2 * n)]
    u = getattr(result, "u", None)
    energy = getattr(result, "energy", None)
    panels = ["q", "dq"]
    if u is not None and np.any(np.asarray(u) != 0):
        panels.append("u")
    if energy is not None:
        panels.append("energy")
    figure = figure_module.Figure(figsize=(6.4, 1.8 * len(panels) + 0.4), layout="constrained")
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        if panel == "q":
            for i in range(n):
                ax.plot(t, y[i], label=names[i])
            ax.set_ylabel(r"$q$")
        elif panel == "dq":
            for i in range(n, 2 * n):
                ax.plot(t, y[i], label=names[i])
            ax.set_ylabel(r"$\dot q$")
        elif panel == "u":
            u = np.atleast_2d(np.asarray(u))
            labels = list(input_names) or [f"u{i + 1}" for i in range(u.shape[0])]
            for i in range(u.shape[0]):
                ax.plot(t, u[i], label=labels[i])
            ax.set_ylabel(r"$u$")
        else:
            ax.plot(t, energy, color="k", label="T + V")
            ax.set_ylabel("T + V")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize="small")
    axes[-1].set_xlabel("t")
    if title:
        figure.suptitle(title)
    path = Path(path)
    try:
        with replacing(path) as temporary:
            figure.savefig(temporary, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    except (OSError, ValueError) as exc:
        raise OutputError(f"{path}: cannot write the plot: {exc}") from None
    return path
