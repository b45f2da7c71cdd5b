"""Balance a cart-pole with LQR, from a 10° tilt, in the full nonlinear model.

    python examples/cart_pole_lqr.py                      # prints the design and the result
    python examples/cart_pole_lqr.py --plot cart_pole.png # and writes a plot (needs matplotlib)

generate → equilibrium → lqr → simulate → plot. Nothing opens a window; the
plot is written to a file. --t-end shortens the run (the tests use it).
"""

import argparse
import tempfile

import numpy as np

import sls
import sls.control

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plot", metavar="FILE.png", help="write a plot of the closed-loop run")
parser.add_argument("--t-end", type=float, default=8.0, help="simulated time in seconds (default 8)")
args = parser.parse_args()

with tempfile.TemporaryDirectory() as folder:
    # 1. Generate the bundled cart-pole (state [s, th, ds, dth], input F on the cart).
    sls.generate(sls.load_example("cart_pole"), folder)
    pkg = sls.control.load_package(folder)

    # 2. The upright pole at rest is an equilibrium; find the input that holds it (F = 0).
    x_eq = np.zeros(4)
    u_eq, residual = sls.control.equilibrium_input(pkg, x_eq)

    # 3. LQR on the linearization there: u = u_eq - K (x - x_eq).
    design = sls.control.lqr(pkg, x_eq, u_eq, Q=[10, 10, 1, 1], R=1)
    print("K =", np.array2string(design.K[0], precision=4))
    print("closed-loop poles:", np.array2string(design.poles, precision=4))

    # 4. The nonlinear closed loop from a 10 degree tilt.
    x0 = np.array([0.0, np.deg2rad(10), 0.0, 0.0])
    run = sls.control.simulate(pkg, x0, (0, args.t_end), design, t_eval=np.linspace(0, args.t_end, 801))
    settle = sls.control.settling_time(run.t, run.y, x_eq)
    angle = sls.control.settling_time(run.t, run.y[1:2], x_eq[1:2])
    print(f"peak force {np.abs(run.u).max():.3g} N, pole angle within 2% after {angle:.3g} s, whole state after {settle:.3g} s")
    print("final state:", np.array2string(run.y[:, -1], precision=6))

    # 5. Plot q(t), q̇(t), F(t) and T + V.
    if args.plot:
        from sls.control.plot import plot_simulation

        plot_simulation(run, pkg.STATE, args.plot, input_names=pkg.INPUTS, title="cart-pole: LQR from a 10° tilt")
        print("wrote", args.plot)
