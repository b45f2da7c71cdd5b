"""Simulate the pendulum, then hold it upright with LQR (run after `sls generate pendulum.toml --out pendulum_eom`)."""
import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import solve_continuous_are

import pendulum_eom as eom  # the package sls generated

# 1. Open loop: let it swing from q = 1 rad without torque (xdot_fun(x, u) is [qdot; qddot]).
def swing(t, x):
    return eom.xdot_fun(x, [0.0])

sol = solve_ivp(swing, (0.0, 10.0), [1.0, 0.0], rtol=1e-10, atol=1e-10)
E = eom.T_fun(sol.y.T) + eom.V_fun(sol.y.T)  # one batch call for the whole trajectory
print(f"open loop: energy {E[0]:.4f} J -> {E[-1]:.4f} J (friction b = {eom.PARAMS['b']})")

# 2. Linearize around the upright equilibrium; u_eq = phi(q_eq) is the holding torque (zero upright).
x_eq = np.array([np.pi, 0.0])
u_eq = eom.phi_fun(x_eq)
A, B = eom.linearized_model(x_eq, u_eq)

# 3. LQR gain from the continuous-time algebraic Riccati equation.
Q = np.diag([10.0, 1.0])
R = np.array([[0.1]])
P = solve_continuous_are(A, B, Q, R)
K = np.linalg.solve(R, B.T @ P)
print(f"open-loop eigenvalues: {np.linalg.eigvals(A).real.round(3)}")
print(f"largest real part of the closed-loop eigenvalues: {np.linalg.eigvals(A - B @ K).real.max():.3f}")

# 4. Closed loop on the nonlinear model, starting 0.5 rad from upright.
def controlled(t, x):
    return eom.xdot_fun(x, u_eq - K @ (x - x_eq))

sol = solve_ivp(controlled, (0.0, 5.0), x_eq + [0.5, 0.0], rtol=1e-10, atol=1e-10)
print(f"closed loop: |q(5) - pi| = {abs(sol.y[0, -1] - np.pi):.2e} rad")
