"""Balance the acrobot (torque at the elbow only) upright with LQR.

    python examples/acrobot_lqr.py [--plot acrobot.png] [--t-end 6]

The acrobot is underactuated: the shoulder is passive, so LQR has to use the
elbow torque to move the whole chain. Start: both joints off upright.
"""

import argparse
import tempfile

import numpy as np

import sls
import sls.control

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plot", metavar="FILE.png", help="write a plot of the closed-loop run")
parser.add_argument("--t-end", type=float, default=6.0, help="simulated time in seconds (default 6)")
args = parser.parse_args()

with tempfile.TemporaryDirectory() as folder:
    sls.generate(sls.load_example("acrobot"), folder)
    pkg = sls.control.load_package(folder)

    x_eq = np.zeros(4)  # both links straight up, at rest
    design = sls.control.lqr(pkg, x_eq, None, Q=[10, 10, 1, 1], R=1)  # u_eq computed: 0
    print("K =", np.array2string(design.K[0], precision=4))
    print("closed-loop poles:", np.array2string(design.poles, precision=4))

    x0 = np.array([0.05, -0.1, 0.0, 0.0])
    run = sls.control.simulate(pkg, x0, (0, args.t_end), design, t_eval=np.linspace(0, args.t_end, 601))
    print(f"peak torque {np.abs(run.u).max():.3g}, state within 2% after {sls.control.settling_time(run.t, run.y, x_eq):.3g} s")
    print("final state:", np.array2string(run.y[:, -1], precision=6))

    if args.plot:
        from sls.control.plot import plot_simulation

        plot_simulation(run, pkg.STATE, args.plot, input_names=pkg.INPUTS, title="acrobot: LQR balancing")
        print("wrote", args.plot)
