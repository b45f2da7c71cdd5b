"""Closed-loop poles of the cart-pole LQR against the pole mass, from one generation.

    python examples/pole_mass_sweep.py [--plot sweep.png] [--masses 0.05 0.1 0.5 1 2]

Every generated function takes the parameters as keyword arguments
(pkg.linearized_model(x, u, mp=0.5)), so one generated package serves the
whole sweep; sls.control passes them on with params={"mp": ...}.
"""

import argparse
import tempfile

import numpy as np

import sls
import sls.control

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plot", metavar="FILE.png", help="write the poles in the complex plane")
parser.add_argument("--masses", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0])
args = parser.parse_args()

with tempfile.TemporaryDirectory() as folder:
    sls.generate(sls.load_example("cart_pole"), folder)  # generated once
    pkg = sls.control.load_package(folder)

    x_eq, u_eq = np.zeros(4), np.zeros(1)
    A, B = pkg.linearized_model(x_eq, u_eq, mp=0.5)  # a parameter as a keyword argument
    print(f"open-loop poles at mp = 0.5: {np.array2string(np.linalg.eigvals(A).real, precision=4)}")

    rows = []
    print(f"{'mp':>6}  closed-loop poles (Q = diag(10, 10, 1, 1), R = 1)")
    for mp in args.masses:
        design = sls.control.lqr(pkg, x_eq, u_eq, Q=[10, 10, 1, 1], R=1, params={"mp": mp})
        rows.append((mp, design.poles))
        print(f"{mp:6.3g}  " + "  ".join(f"{p.real:8.3f}{p.imag:+8.3f}j" for p in design.poles))

    if args.plot:
        from matplotlib.figure import Figure

        figure = Figure(figsize=(5, 4), layout="constrained")
        ax = figure.subplots()
        for mp, poles in rows:
            ax.plot(poles.real, poles.imag, "o", label=f"mp = {mp:g}")
        ax.set_xlabel("Re")
        ax.set_ylabel("Im")
        ax.set_title("cart-pole LQR: closed-loop poles vs pole mass")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        figure.savefig(args.plot, dpi=80)
        print("wrote", args.plot)
