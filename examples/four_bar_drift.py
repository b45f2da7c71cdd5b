"""Simulate the bundled four-bar linkage and report how far it drifts off its loop constraints.

    python examples/four_bar_drift.py [--plot drift.png] [--t-end 10] [--stabilization 10]

The four-bar has three link angles and two holonomic loop-closure constraints
(one degree of freedom). The generated qddot_fun solves the constrained
dynamics exactly (A qddot = -Adot qdot), so the constraints drift only through
the integrator's error; the script prints that drift and the energy drift for
two tolerances, and again with Baumgarte stabilization (constraint_stabilization).
"""

import argparse
import tempfile
from importlib import resources

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

import sls
import sls.control

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plot", metavar="FILE.png", help="write |constraint_fun| against t")
parser.add_argument("--t-end", type=float, default=10.0)
parser.add_argument("--stabilization", type=float, default=10.0, help="Baumgarte rate w of the stabilized run (1/s)")
args = parser.parse_args()

text = resources.files("sls").joinpath("examples/four_bar.toml").read_text()
models = {
    "plain": sls.load_example("four_bar"),
    f"Baumgarte w = {args.stabilization:g}": sls.load_toml(
        "four_bar.toml", text=text.replace("[params]", f"constraint_stabilization = {args.stabilization}\n\n[params]")
    ),
}

curves = []
with tempfile.TemporaryDirectory() as folder:
    for k, (label, model) in enumerate(models.items()):
        sls.generate(model, f"{folder}/pkg{k}")
        pkg = sls.control.load_package(f"{folder}/pkg{k}")
        # A consistent start: th1 = 0.5, th2 and th3 close the loop; dth1 = 2, the other rates keep A qdot = 0.
        th1 = 0.5
        th23 = fsolve(lambda v: pkg.constraint_fun([th1, v[0], v[1], 0, 0, 0]), [0.5, 1.5], xtol=1e-14)
        A = pkg.constraint_jac_fun(np.r_[th1, th23, 0, 0, 0])
        x0 = np.r_[th1, th23, 2.0, np.linalg.solve(A[:, 1:], -A[:, 0] * 2.0)]
        for rtol in (1e-6, 1e-9):
            sol = solve_ivp(lambda t, x: pkg.xdot_fun(x, [0.0]), (0, args.t_end), x0, rtol=rtol, atol=rtol)
            X = sol.y.T
            drift = np.abs(pkg.constraint_fun(X)).max(axis=1)
            energy = pkg.T_fun(X) + pkg.V_fun(X)
            print(
                f"{label:<20} rtol {rtol:.0e}: {len(sol.t):5d} steps, constraint drift {drift.max():.2e}, "
                f"energy drift {np.abs(energy - energy[0]).max():.2e}"
            )
            curves.append((f"{label}, rtol {rtol:.0e}", sol.t, drift))

if args.plot:
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 4.5))
    axes = figure.add_subplot()
    for label, t, drift in curves:
        axes.semilogy(t, np.maximum(drift, 1e-16), label=label)
    axes.set_xlabel("t [s]")
    axes.set_ylabel("max |constraint_fun(x)|")
    axes.set_title("Four-bar linkage: drift off the loop constraints")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(args.plot, dpi=100)
    print(f"wrote {args.plot}")
