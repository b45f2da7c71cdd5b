"""The simulation plot: legends beside the curves, no offset on the energy axis, seconds on the time axis, n = 9."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from sls.control.plot import plot_simulation, simulation_figure  # noqa: E402


def _run(n: int, energy_offset: float = 384.9, drift: float = 1e-8):
    t = np.linspace(0.0, 3.0, 301)
    y = np.array([np.sin(t * (k + 1) / 3 + k) for k in range(2 * n)])
    return SimpleNamespace(t=t, y=y, u=np.vstack([np.cos(t)]), energy=energy_offset - drift * t)


def _boxes(figure):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


@pytest.mark.parametrize("n", [1, 2, 9, 23])
def test_legends_are_beside_the_axes_never_over_the_curves(n):
    names = [f"q{k + 1}" for k in range(n)] + [f"dq{k + 1}" for k in range(n)]
    figure = simulation_figure(_run(n), names, input_names=["F"])
    renderer = _boxes(figure)
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, frame = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert box.x0 >= frame.x1 - 1, "the legend must sit to the right of the axes"
        assert box.y0 >= -1 and box.x1 <= figure.bbox.x1 + 1, "and stay inside the figure"
        texts = [text.get_text() for text in legend.get_texts()]
        assert len(texts) == len(ax.get_lines())
        for other in legend.get_texts():  # entries do not overlap each other
            assert other.get_window_extent(renderer).height > 0
    assert sum(ax.get_legend() is not None for ax in figure.axes) == 3  # q, dq, u; not the energy


def test_energy_axis_has_no_offset_and_time_is_in_seconds():
    figure = simulation_figure(_run(9), [f"x{k}" for k in range(18)])
    _boxes(figure)
    energy_ax = figure.axes[-1]
    assert energy_ax.yaxis.get_offset_text().get_text() in ("", "1e−8", "1e-8")  # at most a scale, never "+3.849e2"
    assert "+" not in energy_ax.yaxis.get_offset_text().get_text()
    assert "E₀ = 384.9" in energy_ax.get_ylabel()
    labels = [label.get_text() for label in energy_ax.get_yticklabels() if label.get_text()]
    assert max(len(label) for label in labels) <= 8
    assert energy_ax.get_xlabel() == "t [s]"
    # an energy that changes a lot is plotted as it is
    figure = simulation_figure(_run(2, energy_offset=0.5, drift=0.1), [f"x{k}" for k in range(4)])
    _boxes(figure)
    assert figure.axes[-1].get_ylabel() == "T + V" and figure.axes[-1].yaxis.get_offset_text().get_text() == ""


def test_plot_simulation_writes_a_png(tmp_path):
    path = plot_simulation(_run(9), [f"x{k}" for k in range(18)], tmp_path / "run.png", title="n = 9")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("n_q", "n_v", "m"), [(2, 2, 1), (19, 18, 12), (30, 30, 45)])
def test_no_two_curves_of_a_legend_look_alike(n_q, n_v, m):
    """A 37-state robot (quaternion base: 19 coordinates, 18 speeds) and wider: every line of a panel has its own
    colour and line style."""
    from matplotlib.colors import to_rgba

    t = np.linspace(0.0, 1.0, 11)
    y = np.array([np.sin(t + k) for k in range(n_q + n_v)])
    u = np.array([np.cos(t + k) for k in range(m)])
    run = SimpleNamespace(t=t, y=y, u=u, energy=1.0 + 0 * t, n_q=n_q)
    names = [f"x{k}" for k in range(n_q + n_v)]
    figure = simulation_figure(run, names, input_names=[f"u{k}" for k in range(m)])
    counts = []
    for ax in figure.axes:
        lines = ax.get_lines()
        if ax.get_legend() is None:
            continue
        looks = {(to_rgba(line.get_color()), line.get_linestyle()) for line in lines}
        assert len(looks) == len(lines), f"{ax.get_ylabel()}: {len(lines)} curves, {len(looks)} looks"
        counts.append(len(lines))
    assert counts == [n_q, n_v, m]
