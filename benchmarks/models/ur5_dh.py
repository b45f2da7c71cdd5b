"""A UR5-like 6-DOF arm as a user's Python model file: standard DH transforms multiplied out with sympy,
T = sum of 1/2 m v.v + 1/2 w' R I R' w per link, v from the Jacobian of the centre-of-mass position.

Numbers: the UR5's public DH parameters and link masses; centres of mass and inertias rounded from
the ROS-Industrial description. Run: ``sls generate benchmarks/models/ur5_dh.py``.
"""

import sympy as sp

n = 6
q = sp.symbols("q1:7", real=True)
dq = sp.symbols("dq1:7", real=True)
g = sp.Symbol("g", real=True)

d = [0.089159, 0, 0, 0.10915, 0.09465, 0.0823]
a = [0, -0.425, -0.39225, 0, 0, 0]
alpha = [sp.pi / 2, 0, 0, sp.pi / 2, -sp.pi / 2, 0]
mass = [3.7, 8.393, 2.275, 1.219, 1.219, 0.1879]
com = [
    (0, -0.02561, 0.00193),
    (0.2125, 0, 0.11336),
    (0.15, 0, 0.0265),
    (0, -0.0018, 0.01634),
    (0, 0.0018, 0.01634),
    (0, 0, -0.001159),
]
inertia = [
    (0.0084, 0.0064, 0.0084),
    (0.0078, 0.21, 0.21),
    (0.0016, 0.0462, 0.0462),
    (0.0016, 0.0016, 0.0009),
    (0.0016, 0.0016, 0.0009),
    (0.0001, 0.0001, 0.0001),
]


def dh(theta, d_, a_, alpha_):
    ct, st, ca, sa = sp.cos(theta), sp.sin(theta), sp.cos(alpha_), sp.sin(alpha_)
    return sp.Matrix(
        [[ct, -st * ca, st * sa, a_ * ct], [st, ct * ca, -ct * sa, a_ * st], [0, sa, ca, d_], [0, 0, 0, 1]]
    )


T = 0
V = 0
pose = sp.eye(4)
axes = []
qdot = sp.Matrix(dq)
for i in range(n):
    axes.append(pose[:3, 2])
    pose = pose * dh(q[i], d[i], a[i], alpha[i])
    R = pose[:3, :3]
    p = (pose * sp.Matrix([*com[i], 1]))[:3, :]
    v = p.jacobian(q) * qdot
    w = sp.zeros(3, 1)
    for j in range(i + 1):
        w += axes[j] * dq[j]
    I_world = R * sp.diag(*inertia[i]) * R.T
    T += mass[i] * (v.T * v)[0] / 2 + (w.T * I_world * w)[0] / 2
    V += mass[i] * g * p[2]

fric = [0] * n
x = list(q) + list(dq)
params = {"g": 9.81}
