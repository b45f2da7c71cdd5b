"""Plots of simulations (:func:`sls.control.simulate` results) with matplotlib.

matplotlib is an optional dependency: ``pip install "sls[plot]"``. Without it, :func:`require_matplotlib` and
:func:`plot_simulation` raise
:class:`sls.errors.MissingDependencyError` with a one-line message. Figures are
drawn with ``matplotlib.figure.Figure`` directly (no pyplot, no GUI backend),
so plotting works headless.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from sls.errors import MissingDependencyError, OutputError
from sls.output.write import replacing

__all__ = ["plot_simulation", "require_matplotlib", "simulation_figure"]

INSTALL_HINT = 'writing a plot needs matplotlib, which is not installed; install it with: pip install "sls[plot]"'


def require_matplotlib() -> ModuleType:
    """Import and return ``matplotlib.figure``, or raise :class:`MissingDependencyError`."""
    try:
        import matplotlib.figure
    except ImportError:
        raise MissingDependencyError(INSTALL_HINT) from None
    return matplotlib.figure


def plot_simulation(
    result: Any,
    state_names: Sequence[str],
    path: str | Path,
    *,
    input_names: Sequence[str] = (),
    title: str | None = None,
    dpi: int = 80,
) -> Path:
    """Write a PNG (or any format matplotlib infers from ``path``) of a simulation.

    Panels: the coordinates q(t), the rates q̇(t), the inputs u(t) when
    ``result.u`` is not all zero, and the total energy T + V (when the result
    carries ``energy``, as :func:`sls.control.simulate` results do). See
    :func:`simulation_figure`.

    Parameters
    ----------
    result : OdeResult
        ``t``, ``y`` (2n, len(t)) and optionally ``u``, ``energy``, ``n_q``
        (the number of coordinates, the first rows of ``y``: with a
        quaternion base ``N_Q``, and ``y`` has ``N_Q + N_V`` rows).
    state_names : sequence of str
        Names for the legend, q first then q̇ (or the speeds v).
    path : str or Path
        Output file.
    """
    figure = simulation_figure(result, state_names, input_names=input_names, title=title)
    path = Path(path)
    try:
        with replacing(path) as temporary:
            figure.savefig(temporary, dpi=dpi, format=path.suffix.lstrip(".") or "png")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write the plot: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise OutputError(f"{path}: cannot write the plot: {exc}") from None
    return path


#: Legend entries per column (more curves: more columns).
LEGEND_ROWS = 10

#: matplotlib's ten default colours ("tab10") and the line styles that tell apart curves of one colour.
COLORS = tuple(f"C{k}" for k in range(10))
LINE_STYLES = ("-", "--", ":", "-.")


def curve_styles(count: int) -> list[tuple[Any, str]]:
    """A distinct ``(color, linestyle)`` for each of ``count`` curves of one panel, so that no two entries of a legend
    look alike: matplotlib's ten colours, solid, up to ten curves; then each colour in turn with its next line
    style, up to forty; beyond, ``count`` colours spread over the "turbo" colour map with the styles in turn."""
    if count <= len(COLORS) * len(LINE_STYLES):
        return [(COLORS[k % len(COLORS)], LINE_STYLES[k // len(COLORS)]) for k in range(count)]
    from matplotlib import colormaps

    spread = colormaps["turbo"](np.linspace(0.0, 1.0, count))
    return [(tuple(spread[k]), LINE_STYLES[k % len(LINE_STYLES)]) for k in range(count)]


def simulation_figure(
    result: Any, state_names: Sequence[str], *, input_names: Sequence[str] = (), title: str | None = None
) -> Any:
    """The :func:`plot_simulation` figure (a ``matplotlib.figure.Figure``).

    Legends sit to the right of the axes, never over the curves (several
    columns for many coordinates); time is in seconds; the energy axis never
    uses an offset (such as ``+4.83e-1``): a drift that is small against the
    energy itself is plotted as ``T + V − E₀`` with ``E₀`` in the label.
    """
    figure_module = require_matplotlib()
    t = np.asarray(result.t)
    y = np.asarray(result.y)
    n = int(getattr(result, "n_q", None) or y.shape[0] // 2)  # the coordinates: the first n rows of y
    names = list(state_names) or [f"x{i + 1}" for i in range(y.shape[0])]
    u = getattr(result, "u", None)
    energy = getattr(result, "energy", None)
    panels = ["q", "dq"]
    if u is not None and np.any(np.asarray(u) != 0):
        panels.append("u")
    if energy is not None:
        panels.append("energy")
    rows = min(n, LEGEND_ROWS)
    height = max(1.8, 0.22 * rows + 0.5)  # room for one legend column of `rows` entries
    columns = -(-n // LEGEND_ROWS)
    width = 6.4 + 1.1 * columns
    figure = figure_module.Figure(figsize=(width, height * len(panels) + 0.4), layout="constrained")
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        if panel == "q":
            for i, (color, style) in zip(range(n), curve_styles(n)):
                ax.plot(t, y[i], label=names[i], color=color, linestyle=style)
            ax.set_ylabel(r"$q$")
        elif panel == "dq":
            for i, (color, style) in zip(range(n, y.shape[0]), curve_styles(y.shape[0] - n)):
                ax.plot(t, y[i], label=names[i], color=color, linestyle=style)
            ax.set_ylabel(r"$\dot q$" if y.shape[0] == 2 * n else r"$v$")
        elif panel == "u":
            u = np.atleast_2d(np.asarray(u))
            labels = list(input_names) or [f"u{i + 1}" for i in range(u.shape[0])]
            for i, (color, style) in zip(range(u.shape[0]), curve_styles(u.shape[0])):
                ax.plot(t, u[i], label=labels[i], color=color, linestyle=style)
            ax.set_ylabel(r"$u$")
        else:
            energy = np.asarray(energy, dtype=float)
            start = float(energy[0])
            if np.ptp(energy) < 1e-2 * abs(start):  # a small drift of a large value: plot the drift itself
                ax.plot(t, energy - start, color="k")
                ax.set_ylabel(f"T + V − E₀\n(E₀ = {start:.6g})")
            else:
                ax.plot(t, energy, color="k")
                ax.set_ylabel("T + V")
            ax.ticklabel_format(axis="y", useOffset=False)
        ax.grid(True, alpha=0.3)
        if panel != "energy":
            count = len(ax.get_lines())
            ax.legend(
                loc="upper left",
                bbox_to_anchor=(1.01, 1.0),
                borderaxespad=0.0,
                fontsize="small",
                ncol=-(-count // LEGEND_ROWS),
                frameon=False,
                handlelength=1.5,
            )
    axes[-1].set_xlabel("t [s]")
    if title:
        figure.suptitle(title)
    return figure
