"""Fewer speeds than coordinates written by the user (a rigid body's unit quaternion and body rates in TOML)."""

import importlib
import sys

import numpy as np

import sls

BODY = {
    "state": ["qx", "qy", "qz", "qw", "w1", "w2", "w3"],
    "kinematics": [
        "(qw*w1 + qy*w3 - qz*w2)/2",
        "(qw*w2 + qz*w1 - qx*w3)/2",
        "(qw*w3 + qx*w2 - qy*w1)/2",
        "-(qx*w1 + qy*w2 + qz*w3)/2",
    ],
    "T": "(I1*w1^2 + I2*w2^2 + I3*w3^2)/2",
    "V": "m*g*(2*(qx*qz - qy*qw)*c1 + 2*(qy*qz + qx*qw)*c2 + (1 - 2*(qx^2 + qy^2))*c3)",
    "fric": ["0", "0", "0"],
    "params": {"I1": 1.0, "I2": 2.0, "I3": 3.0, "m": 1.5, "g": 9.81, "c1": 0.1, "c2": -0.2, "c3": 0.3},
    "name": "quaternion_body",
}


def package(tmp_path):
    sls.generate(sls.model_from_strings(**BODY), tmp_path / BODY["name"], target="python")
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(BODY["name"])
    finally:
        sys.path.remove(str(tmp_path))


def state(rng: np.random.Generator) -> np.ndarray:
    quaternion = rng.normal(size=4)
    return np.concatenate([quaternion / np.linalg.norm(quaternion), rng.normal(size=3)])


def world_z_in_body(q: np.ndarray) -> np.ndarray:
    """The world's vertical in the body frame: the third row of R(q)."""
    x, y, z, w = q
    return np.array([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)])


def test_heavy_body_in_quaternion_and_body_rates_follows_euler_equations(tmp_path):
    """I ω̇ + ω × I ω = c × (−m g e_z) in the body frame (the weight at the centre of mass c)."""
    body = package(tmp_path)
    assert (body.N_Q, body.N_V) == (4, 3)
    inertia, c = np.diag([1.0, 2.0, 3.0]), np.array([0.1, -0.2, 0.3])
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = state(rng)
        u = rng.normal(size=3)
        w = x[4:]
        torque = np.cross(c, -1.5 * 9.81 * world_z_in_body(x[:4])) + u
        expected = np.linalg.solve(inertia, torque - np.cross(w, inertia @ w))
        assert np.abs(body.vdot_fun(x, u) - expected).max() < 1e-12
        assert abs(body.qdot_fun(x) @ x[:4]) < 1e-15  # the quaternion's rate is tangent to the sphere


def test_linearization_in_the_tangent_chart_is_the_finite_difference(tmp_path):
    """A (6×6) for x = (q̄ + S(q̄) δ, v̄ + δv): central differences of δ̇ = pinv(S(q̄)) q̇ and of v̇."""
    body = package(tmp_path)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, u = state(rng), rng.normal(size=3)
        A, B = body.linearized_model(x, u)
        S = body.qdot_jac_fun(x)[:, 4:]
        W = np.linalg.pinv(S)

        def tangent_rate(delta, x=x, u=u, S=S, W=W):
            moved = np.concatenate([x[:4] + S @ delta[:3], x[4:] + delta[3:]])
            return np.concatenate([W @ body.qdot_fun(moved), body.vdot_fun(moved, u)])

        h = 1e-6
        numeric = np.column_stack([(tangent_rate(h * e) - tangent_rate(-h * e)) / (2 * h) for e in np.eye(6)])
        assert np.abs(A - numeric).max() < 1e-7 * max(1.0, np.abs(numeric).max())
        inputs = np.column_stack(
            [(body.vdot_fun(x, u + h * e) - body.vdot_fun(x, u - h * e)) / (2 * h) for e in np.eye(3)]
        )
        assert np.abs(B[3:] - inputs).max() < 1e-7 and not B[:3].any()
