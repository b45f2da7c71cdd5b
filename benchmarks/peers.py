"""The implementations timed by the benchmark: sls and its peers.

Each ``build_*`` function takes a :class:`sls.Model` (parameters fixed at their
defaults) and returns an :class:`Impl`, or raises :class:`Skip` with a note when
the peer is not installed or cannot handle the model. Every implementation
computes ``qddot(x, u)``; where it can, also ``linearize(x, u) -> (A, B)``
(the full ``2n × 2n`` and ``2n × m`` matrices of ``ẋ = [q̇; q̈]``) and
``batch(X, U)`` on ``(N, 2n)``/``(N, m)`` arrays.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sympy

import sls
from sls import derive as sls_derive


class Skip(Exception):
    """The peer is not available for this model (the message says why)."""


@dataclass
class Impl:
    name: str
    qddot: Callable
    linearize: Callable | None = None
    batch: Callable | None = None
    build_time: float = 0.0
    note: str = ""


# --------------------------------------------------------------------------
# the symbolic terms, parameters substituted


@dataclass
class Terms:
    model: sls.Model
    x: tuple
    u: tuple
    M: sympy.Matrix
    rhs: sympy.Matrix
    dyn: object
    subs: dict


def terms(model: sls.Model) -> Terms:
    # The peers start from sympy expressions written out entry by entry, as a sympy user has them.
    dyn = sls_derive.derive(model, method="expanded")
    subs = {sympy.Symbol(k, real=True): v for k, v in model.params.items()}
    n, m = model.n, model.m
    M = sympy.Matrix(dyn.mass_matrix).xreplace(subs)
    u = model.inputs
    rhs = sympy.Matrix(
        [
            sum((dyn.input_matrix[k][j] * u[j] for j in range(m)), sympy.Integer(0))
            - dyn.coriolis_force[k]
            - dyn.potential_gradient[k]
            - dyn.friction[k]
            for k in range(n)
        ]
    ).xreplace(subs)
    return Terms(model=model, x=model.state, u=u, M=M, rhs=rhs, dyn=dyn, subs=subs)


def _assemble_AB(n: int, lower_A: np.ndarray, lower_B: np.ndarray) -> tuple:
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:] = lower_A
    B = np.zeros((2 * n, lower_B.shape[1]))
    B[n:] = lower_B
    return A, B


# --------------------------------------------------------------------------
# sls


_counter = itertools.count()


def import_generated(out: Path):
    """Import the generated package in folder ``out`` under a fresh name."""
    name = f"_sls_bench_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, out / "__init__.py", submodule_search_locations=[str(out)])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def build_sls(model: sls.Model, t: Terms, folder: Path, target: str = "python") -> Impl:
    start = time.perf_counter()
    out = folder / f"sls_{target}_{model.name}"
    sls.generate(model, out, target=target)
    package = import_generated(out)
    return Impl(
        "sls" if target == "python" else f"sls --target {target}",
        qddot=package.qddot_fun,
        linearize=package.linearized_model,
        batch=package.qddot_fun,
        build_time=time.perf_counter() - start,
        note="" if target == "python" else "the C target (compiled C behind the same Python API)",
    )


def build_sls_c(model: sls.Model, t: Terms, folder: Path) -> Impl:
    """sls's C target: the same API, compiled (needs a C compiler)."""
    import shutil

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        raise Skip("no C compiler")
    return build_sls(model, t, folder, target="c")


# --------------------------------------------------------------------------
# sympy lambdify


def build_lambdify_seed(model: sls.Model, t: Terms, folder: Path) -> Impl:
    """Seed style: one lambdified function per term, assembled with numpy at each call."""
    start = time.perf_counter()
    d, s, n = t.dyn, t.subs, model.n
    args = list(t.x)

    def lam(array):
        return sympy.lambdify(args, sympy.Array(array).xreplace(s).tolist(), modules="numpy")

    M_f, C_f, phi_f, fric_f, B_f = (
        lam(a) for a in (d.mass_matrix, d.coriolis, d.potential_gradient, d.friction, d.input_matrix)
    )
    Mj_f, Cj_f, phij_f, fricj_f, Bj_f = (
        lam(a)
        for a in (d.mass_matrix_jac, d.coriolis_jac, d.potential_gradient_jac, d.friction_jac, d.input_matrix_jac)
    )

    def parts(x, u):
        x = np.asarray(x, dtype=float)
        u = np.asarray(u, dtype=float)
        M = np.array(M_f(*x), dtype=float)
        C = np.array(C_f(*x), dtype=float)
        rhs = (
            np.array(B_f(*x), dtype=float) @ u
            - C @ x[n:]
            - np.array(phi_f(*x), dtype=float)
            - np.array(fric_f(*x), dtype=float)
        )
        return x, u, M, C, rhs

    def qddot(x, u):
        _, _, M, _, rhs = parts(x, u)
        return np.linalg.solve(M, rhs)

    def linearize(x, u):
        x, u, M, C, rhs = parts(x, u)
        B_u = np.array(B_f(*x), dtype=float)
        qdd = np.linalg.solve(M, rhs)
        dM = np.array(Mj_f(*x), dtype=float)
        dC = np.array(Cj_f(*x), dtype=float)
        dq_dx = np.hstack([np.zeros((n, n)), np.eye(n)])
        drhs = (
            np.einsum("kjl,j->kl", np.array(Bj_f(*x), dtype=float), u)
            - np.einsum("kjl,j->kl", dC, x[n:])
            - C @ dq_dx
            - np.array(phij_f(*x), dtype=float)
            - np.array(fricj_f(*x), dtype=float)
        )
        cols = drhs - np.einsum("abl,b->al", dM, qdd)
        solved = np.linalg.solve(M, np.hstack([cols, B_u]))
        return _assemble_AB(n, solved[:, : 2 * n], solved[:, 2 * n :])

    return Impl("lambdify (seed)", qddot, linearize, None, time.perf_counter() - start)


def build_lambdify_cse(model: sls.Model, t: Terms, folder: Path) -> Impl:
    """One lambdified function with cse=True for [M, rhs] (and one for the linearization terms)."""
    start = time.perf_counter()
    d, s, n = t.dyn, t.subs, model.n
    args = list(t.x) + list(t.u)
    core = sympy.lambdify(args, [t.M.tolist(), list(t.rhs)], modules="numpy", cse=True)
    u_sym = t.u
    drhs = [
        [
            (
                sum((d.input_matrix_jac[k][j][col] * u_sym[j] for j in range(model.m)), sympy.Integer(0))
                - d.coriolis_force_jac[k][col]
                - d.potential_gradient_jac[k][col]
                - d.friction_jac[k][col]
            ).xreplace(s)
            for col in range(2 * n)
        ]
        for k in range(n)
    ]
    dM = sympy.Array(d.mass_matrix_jac).xreplace(s).tolist()
    lin = sympy.lambdify(
        args,
        [t.M.tolist(), list(t.rhs), dM, drhs, sympy.Matrix(d.input_matrix).xreplace(s).tolist()],
        modules="numpy",
        cse=True,
    )

    def qddot(x, u):
        M, rhs = core(*x, *u)
        return np.linalg.solve(np.array(M, dtype=float), np.array(rhs, dtype=float))

    def linearize(x, u):
        M, rhs, dM_, drhs_, B_u = (np.array(a, dtype=float) for a in lin(*x, *u))
        qdd = np.linalg.solve(M, rhs)
        cols = drhs_ - np.einsum("abl,b->al", dM_, qdd)
        solved = np.linalg.solve(M, np.hstack([cols, B_u]))
        return _assemble_AB(n, solved[:, : 2 * n], solved[:, 2 * n :])

    return Impl("lambdify (cse)", qddot, linearize, None, time.perf_counter() - start)


# --------------------------------------------------------------------------
# sympy.physics.mechanics LagrangesMethod (+ linearize)

#: LagrangesMethod.linearize inverts M symbolically; beyond this n it takes too long.
LAGRANGE_LINEARIZE_MAX_N = 3


def lagranges_method(model: sls.Model, t: Terms, linearize: bool):
    """Form the equations with LagrangesMethod (and its linearization); returns (lm, qs, A or None, plain subs)."""
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    n = model.n
    qs = dynamicsymbols(f"_lq0:{n}")
    qds = [q.diff() for q in qs]
    to_dyn = {**{a: b for a, b in zip(model.q, qs)}, **{a: b for a, b in zip(model.dq, qds)}}
    L = (model.T - model.V).xreplace(t.subs).xreplace(to_dyn)
    # Generalized forces u - fric as a term linear in q (constant inputs): dL/dq gains u.
    L = L + sum((u_k * q for u_k, q in zip(t.u, qs)), sympy.Integer(0))
    lm = LagrangesMethod(L, qs)
    lm.form_lagranges_equations()
    A = None
    if linearize:
        A = lm.linearize(q_ind=qs, qd_ind=qds, A_and_B=True, simplify=False)[0]
    back = {}
    for k, (q, qd, xs, dxs) in enumerate(zip(qs, qds, model.q, model.dq)):
        back[qd.diff()] = sympy.Symbol(f"_lqdd{k}", real=True)
        back[qd] = dxs
        back[q] = xs
    return lm, qs, qds, A, back


def build_lagrange(model: sls.Model, t: Terms, folder: Path) -> Impl:
    start = time.perf_counter()
    n = model.n
    if any(f != 0 for f in model.fric):
        raise Skip("friction not modelled in this peer")
    do_lin = n <= LAGRANGE_LINEARIZE_MAX_N
    lm, qs, qds, A_sym, back = lagranges_method(model, t, do_lin)

    # Replace derivatives before the functions themselves.
    def plain(expr):
        # xreplace works top-down: q'(t) is replaced before the q(t) inside it.
        return expr.xreplace(back)

    args = list(t.x) + list(t.u)
    M = plain(lm.mass_matrix)
    F = plain(lm.forcing)
    f = sympy.lambdify(args, [M.tolist(), list(F)], modules="numpy", cse=True)

    def qddot(x, u):
        M_, F_ = f(*x, *u)
        return np.linalg.solve(np.array(M_, dtype=float), np.array(F_, dtype=float))

    lin = None
    if A_sym is not None:
        qdd_syms = [sympy.Symbol(f"_lqdd{k}", real=True) for k in range(n)]
        fa = sympy.lambdify(args + qdd_syms, plain(A_sym).tolist(), modules="numpy", cse=True)
        fm = sympy.lambdify(args, M.tolist(), modules="numpy", cse=True)

        def lin(x, u):
            A = np.array(fa(*x, *u, *qddot(x, u)), dtype=float)
            Minv_solved = np.linalg.solve(np.array(fm(*x, *u), dtype=float), np.eye(n))
            B = np.zeros((2 * n, model.m))
            B[n:] = Minv_solved
            return A, B

    note = "" if do_lin else f"linearize skipped for n > {LAGRANGE_LINEARIZE_MAX_N} (symbolic inverse of M)"
    return Impl("LagrangesMethod", qddot, lin, None, time.perf_counter() - start, note)


# --------------------------------------------------------------------------
# JAX


def build_jax(model: sls.Model, t: Terms, folder: Path) -> Impl:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        raise Skip("jax not installed") from None
    jax.config.update("jax_enable_x64", True)
    start = time.perf_counter()
    n = model.n
    args = list(t.x) + list(t.u)
    f_M = sympy.lambdify(args, t.M.tolist(), modules="jax")
    f_r = sympy.lambdify(args, list(t.rhs), modules="jax")

    def dyn(x, u):
        vals = [x[i] for i in range(2 * n)] + [u[j] for j in range(model.m)]
        M = jnp.array([[jnp.asarray(e, dtype=jnp.float64) for e in row] for row in f_M(*vals)])
        r = jnp.array([jnp.asarray(e, dtype=jnp.float64) for e in f_r(*vals)])
        return jnp.linalg.solve(M, r)

    qdd_j = jax.jit(dyn)
    jac_j = jax.jit(jax.jacfwd(dyn, argnums=(0, 1)))
    batch_j = jax.jit(jax.vmap(dyn))

    def qddot(x, u):
        return qdd_j(x, u).block_until_ready()

    def linearize(x, u):
        ja, jb = jac_j(x, u)
        return _assemble_AB(n, np.asarray(ja), np.asarray(jb))

    def batch(X, U):
        return batch_j(X, U).block_until_ready()

    x0 = np.zeros(2 * n)
    u0 = np.zeros(model.m)
    qddot(x0, u0), linearize(x0, u0), batch(np.zeros((2, 2 * n)), np.zeros((2, model.m)))  # compile
    return Impl(
        "jax jit", qddot, linearize, batch, time.perf_counter() - start, "jit(jacfwd), vmap; compile time in build"
    )


# --------------------------------------------------------------------------
# CasADi


def _to_casadi(expr, table, cache, ca):
    if expr in cache:
        return cache[expr]
    if expr in table:
        result = table[expr]
    elif expr.is_Number:
        result = float(expr)
    elif expr.is_Add:
        result = 0
        for a in expr.args:
            result = result + _to_casadi(a, table, cache, ca)
    elif expr.is_Mul:
        result = 1
        for a in expr.args:
            result = result * _to_casadi(a, table, cache, ca)
    elif expr.is_Pow:
        base = _to_casadi(expr.base, table, cache, ca)
        e = expr.exp
        result = base ** int(e) if e.is_Integer else base ** float(e)
    else:
        funcs = {
            sympy.sin: ca.sin,
            sympy.cos: ca.cos,
            sympy.tan: ca.tan,
            sympy.exp: ca.exp,
            sympy.log: ca.log,
            sympy.tanh: ca.tanh,
        }
        if expr.func not in funcs:
            raise Skip(f"no CasADi translation for {expr.func}")
        result = funcs[expr.func](_to_casadi(expr.args[0], table, cache, ca))
    cache[expr] = result
    return result


def build_casadi(model: sls.Model, t: Terms, folder: Path) -> Impl:
    try:
        import casadi as ca
    except ImportError:
        raise Skip("casadi not installed") from None
    start = time.perf_counter()
    n, m = model.n, model.m
    xs = ca.SX.sym("x", 2 * n)
    us = ca.SX.sym("u", m)
    table = {s: xs[i] for i, s in enumerate(t.x)}
    table.update({s: us[j] for j, s in enumerate(t.u)})
    cache = {}
    M = ca.SX(n, n)
    for a in range(n):
        for b in range(n):
            M[a, b] = _to_casadi(t.M[a, b], table, cache, ca)
    r = ca.vertcat(*[_to_casadi(e, table, cache, ca) for e in t.rhs])
    qdd = ca.solve(M, r)
    f = ca.Function("f", [xs, us], [qdd])
    jac = ca.Function("linearization", [xs, us], [ca.jacobian(qdd, xs), ca.jacobian(qdd, us)])

    def qddot(x, u):
        return np.asarray(f(x, u)).reshape(-1)

    def linearize(x, u):
        ja, jb = jac(x, u)
        return _assemble_AB(n, np.asarray(ja), np.asarray(jb))

    maps = {}

    def batch(X, U):
        N = X.shape[0]
        if N not in maps:
            maps[N] = f.map(N)
        return np.asarray(maps[N](X.T, U.T)).T

    return Impl(
        "CasADi SX", qddot, linearize, batch, time.perf_counter() - start, "symbolic solve of M inside the SX graph"
    )


# --------------------------------------------------------------------------
# PyDy (cython backend)


def build_pydy(model: sls.Model, t: Terms, folder: Path) -> Impl:
    try:
        import Cython  # noqa: F401
        from pydy.codegen.ode_function_generators import generate_ode_function
        from sympy.physics.mechanics import dynamicsymbols
    except ImportError:
        raise Skip("pydy or cython not installed") from None
    start = time.perf_counter()
    n, m = model.n, model.m
    qs = dynamicsymbols(f"_pq0:{n}")
    ws = dynamicsymbols(f"_pw0:{n}")
    rs = dynamicsymbols(f"_pr0:{m}")
    sub = {**dict(zip(model.q, qs)), **dict(zip(model.dq, ws)), **dict(zip(t.u, rs))}
    M = t.M.xreplace(sub)
    F = t.rhs.xreplace(sub)
    import os

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        rhs = generate_ode_function(
            F,
            qs,
            ws,
            [sympy.Symbol("_pydy_unused")],
            mass_matrix=M,
            coordinate_derivatives=sympy.Matrix(ws),
            specifieds=rs,
            generator="cython",
        )
    finally:
        os.chdir(cwd)
    p = np.zeros(1)  # pydy needs at least one constant

    def qddot(x, u):
        return rhs(x, 0.0, u, p)[n:]

    return Impl(
        "PyDy cython", qddot, None, None, time.perf_counter() - start, "generate_ode_function(generator='cython')"
    )


# --------------------------------------------------------------------------
# Pinocchio


def _planar_chain(pm, model: sls.Model, body) -> None:
    """Revolute-z joints in series hanging along −y, joint k at the tip of rod k−1; ``body(m, l)`` is link k's
    inertia."""
    import pinocchio as pin

    params = model.params
    parent = 0
    for k in range(1, model.n + 1):
        offset = np.array([0.0, -params[f"l{k - 1}"], 0.0]) if k > 1 else np.zeros(3)
        joint = pm.addJoint(parent, pin.JointModelRZ(), pin.SE3(np.eye(3), offset), f"j{k}")
        pm.appendBodyToJoint(joint, body(params[f"m{k}"], params[f"l{k}"]), pin.SE3.Identity())
        parent = joint
    pm.gravity.linear = np.array([0.0, -params["g"], 0.0])


def _pinocchio_model(model: sls.Model):
    import pinocchio as pin

    pm = pin.Model()
    name = model.name
    if name.startswith("nlink"):
        # point masses at the rod tips; absolute angles q = S θ (θ relative joint angles), S lower-triangular ones
        _planar_chain(pm, model, lambda m, length: pin.Inertia(m, np.array([0.0, -length, 0.0]), np.zeros((3, 3))))
        return pm, np.tril(np.ones((model.n, model.n)))
    if name.startswith("chain"):
        # sls.readers.nlink.chain_toml: uniform rods, relative angles from the downward vertical, viscous damping b
        rod = lambda m, length: pin.Inertia(  # noqa: E731
            m, np.array([0.0, -length / 2, 0.0]), np.diag([m * length**2 / 12, 0.0, m * length**2 / 12])
        )
        _planar_chain(pm, model, rod)
        return pm, np.eye(model.n)
    if name == "mobile_manipulator":
        rail = pm.addJoint(0, pin.JointModelPX(), pin.SE3.Identity(), "rail")
        pm.appendBodyToJoint(rail, pin.Inertia(3.0, np.zeros(3), np.eye(3) * 0.01), pin.SE3.Identity())
        j2 = pm.addJoint(rail, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([0.1, 0.1, 0.0])), "t2")
        pm.appendBodyToJoint(
            j2, pin.Inertia(2.0, np.array([0.5, 0.0, 0.0]), np.diag([1e-3, 2.0 / 12, 2.0 / 12])), pin.SE3.Identity()
        )
        j3 = pm.addJoint(j2, pin.JointModelRZ(), pin.SE3(np.eye(3), np.array([1.0, 0.0, 0.0])), "t3")
        pm.appendBodyToJoint(
            j3, pin.Inertia(1.0, np.array([0.25, 0.0, 0.0]), np.diag([1e-3, 0.25 / 12, 0.25 / 12])), pin.SE3.Identity()
        )
        pm.gravity.linear = np.array([0.0, -9.8, 0.0])
        return pm, np.eye(3)
    raise Skip("no Pinocchio model for this benchmark model")


def build_pinocchio(model: sls.Model, t: Terms, folder: Path) -> Impl:
    try:
        import pinocchio as pin
    except ImportError:
        raise Skip("pinocchio (pip: pin) not installed") from None
    start = time.perf_counter()
    pm, S = _pinocchio_model(model)
    data = pm.createData()
    n = model.n
    Sinv = np.linalg.inv(S)
    identity = np.allclose(S, np.eye(n))

    damping = model.params.get("b", 0.0) if model.name.startswith("chain") else 0.0  # fric = b*dq

    def qddot(x, u):
        if identity:
            return pin.aba(pm, data, x[:n], x[n:], u - damping * x[n:])
        th = Sinv @ x[:n]
        dth = Sinv @ x[n:]
        return S @ pin.aba(pm, data, th, dth, S.T @ u)

    def linearize(x, u):
        if identity:
            pin.computeABADerivatives(pm, data, x[:n], x[n:], u - damping * x[n:])
            low_A = np.hstack([data.ddq_dq, data.ddq_dv - damping * data.Minv])
            low_B = data.Minv
        else:
            pin.computeABADerivatives(pm, data, Sinv @ x[:n], Sinv @ x[n:], S.T @ u)
            low_A = np.hstack([S @ data.ddq_dq @ Sinv, S @ data.ddq_dv @ Sinv])
            low_B = S @ data.Minv @ S.T
        return _assemble_AB(n, low_A, low_B)

    return Impl("Pinocchio", qddot, linearize, None, time.perf_counter() - start, "aba / computeABADerivatives (C++)")


PEERS = [
    ("sls --target c", build_sls_c),
    ("lambdify (seed)", build_lambdify_seed),
    ("lambdify (cse)", build_lambdify_cse),
    ("LagrangesMethod", build_lagrange),
    ("jax jit", build_jax),
    ("CasADi SX", build_casadi),
    ("PyDy cython", build_pydy),
    ("Pinocchio", build_pinocchio),
]
QUICK_PEERS = ["sls --target c", "lambdify (seed)", "lambdify (cse)"]


def temp_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="sls-bench-"))
