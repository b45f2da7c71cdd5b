"""Test systems and an independent reference for their equations of motion.

Every :class:`System` carries two descriptions of the same mechanics:

* ``make_model()`` — the model as sls receives it (a TOML file, a TOML string or
  the Python API);
* the *reference* — ``T``, ``V``, ``fric`` (and input map) as plain sympy
  expressions over plain (assumption-free) symbols, written independently of
  sls's parser: either by hand from Cartesian positions, or by
  ``sympy.parse_expr`` of the raw TOML strings.

:class:`Reference` derives the equations of motion from the reference by the
Euler–Lagrange equations with the coordinates as sympy functions of time
(``d/dt ∂L/∂q̇ − ∂L/∂q + fric``) and never calls into sls.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import sls

REFERENCE_DIR = Path(__file__).parent / "reference"

#: Functions that may appear in the raw TOML strings.
_FUNCTIONS = {name: getattr(sp, name) for name in ("sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "log", "sqrt")}


@dataclass(frozen=True)
class System:
    """A mechanical system: the sls model and its independent reference description."""

    name: str
    make_model: Callable[[], sls.Model]
    q: tuple
    dq: tuple
    T: sp.Expr
    V: sp.Expr
    fric: tuple
    params: dict  # name -> default value
    inputs: tuple = ()  # reference input symbols; empty: fully actuated (B_u = I)
    forces: tuple = ()
    q_range: tuple = ()  # per coordinate (low, high); default (-pi, pi)
    dq_scale: float = 2.0
    frictionless: dict = field(default_factory=dict)  # parameter values that switch friction off

    @property
    def n(self) -> int:
        return len(self.q)

    @property
    def m(self) -> int:
        return len(self.inputs) or self.n

    def sample_state(self, rng: np.random.Generator) -> np.ndarray:
        ranges = self.q_range or ((-np.pi, np.pi),) * self.n
        q = np.array([rng.uniform(lo, hi) for lo, hi in ranges])
        dq = rng.uniform(-self.dq_scale, self.dq_scale, self.n)
        return np.concatenate([q, dq])

    def sample_params(self, rng: np.random.Generator) -> dict:
        """Random parameter values within ±50 % of the defaults."""
        return {name: float(value * rng.uniform(0.5, 1.5)) for name, value in self.params.items()}


def _parse(text: str, names: dict) -> sp.Expr:
    """``sympy.parse_expr`` of a raw model string over plain symbols (independent of sls's parser)."""
    text = text.replace("^", "**")
    local = dict(_FUNCTIONS)
    for name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text):
        if name not in local:
            local[name] = names.setdefault(name, sp.Symbol(name))
    return sp.parse_expr(text, local_dict=local)


def from_toml_text(name: str, text: str, make_model: Callable[[], sls.Model], **extra) -> System:
    """A system whose reference is read from the raw strings of a TOML model."""
    data = tomllib.loads(text)
    names: dict = {}
    state = [names.setdefault(s, sp.Symbol(s)) for s in data["state"]]
    n = len(state) // 2
    fric = data["fric"]
    fric = [fric] * n if isinstance(fric, str) else fric
    inputs = tuple(names.setdefault(s, sp.Symbol(s)) for s in data.get("inputs", ()))
    return System(
        name=name,
        make_model=make_model,
        q=tuple(state[:n]),
        dq=tuple(state[n:]),
        T=_parse(data["T"], names),
        V=_parse(data["V"], names),
        fric=tuple(_parse(f, names) for f in fric),
        params=dict(data.get("params", {})),
        inputs=inputs,
        forces=tuple(_parse(f, names) for f in data.get("forces", ())),
        **extra,
    )


def reference_file(name: str, **extra) -> System:
    path = REFERENCE_DIR / f"{name}.toml"
    return from_toml_text(name, path.read_text(), lambda: sls.load_toml(path), **extra)


# --------------------------------------------------------------------------
# systems written for these tests

CART_POLE_TOML = """\
# Cart-pole: cart on a rail pushed by F, pole upright at th = 0, Coulomb-like tanh friction on the cart
state = ["s", "th", "ds", "dth"]
T = "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2"
V = "mp*g*l*cos(th)"
fric = ["c*tanh(k*ds)", "b*dth + d*dth^3"]
inputs = ["F"]
forces = ["F", "0"]
[params]
mc = 1.0
mp = 0.3
l = 0.6
g = 9.81
c = 0.4
k = 20.0
b = 0.05
d = 0.01
"""


def cart_pole() -> System:
    s, th, ds, dth, mc, mp, length, g, c, k, b, d, F = sp.symbols("s th ds dth mc mp l g c k b d F")
    # the bob at (s + l sin th, l cos th)
    bob_vx = ds + length * sp.cos(th) * dth
    bob_vy = -length * sp.sin(th) * dth
    return System(
        name="cart_pole",
        make_model=lambda: sls.load_toml("cart_pole.toml", text=CART_POLE_TOML),
        q=(s, th),
        dq=(ds, dth),
        T=mc * ds**2 / 2 + mp * (bob_vx**2 + bob_vy**2) / 2,
        V=mp * g * length * sp.cos(th),
        fric=(c * sp.tanh(k * ds), b * dth + d * dth**3),
        params={"mc": 1.0, "mp": 0.3, "l": 0.6, "g": 9.81, "c": 0.4, "k": 20.0, "b": 0.05, "d": 0.01},
        inputs=(F,),
        forces=(F, sp.Integer(0)),
        q_range=((-1.0, 1.0), (-np.pi, np.pi)),
        frictionless={"c": 0.0, "b": 0.0, "d": 0.0},
    )


POLAR_TOML = """\
# Particle in polar coordinates on a spring, in a vertical plane, with Rayleigh damping, pushed by a Cartesian force
state = ["r", "th", "dr", "dth"]
T = "1/2*m*(dr^2 + r^2*dth^2)"
V = "1/2*ks*(r - r0)^2 + m*g*r*sin(th)"
fric = ["c*dr", "c*r^2*dth"]
inputs = ["fx", "fy"]
forces = ["fx*cos(th) + fy*sin(th)", "r*(fy*cos(th) - fx*sin(th))"]
[params]
m = 0.7
ks = 12.0
r0 = 1.0
g = 9.81
c = 0.2
"""


def polar_particle() -> System:
    r, th, dr, dth, m, ks, r0, g, c, fx, fy = sp.symbols("r th dr dth m ks r0 g c fx fy")
    x, y = r * sp.cos(th), r * sp.sin(th)
    # generalized forces of the Cartesian force (fx, fy): Jᵀ f with J = ∂(x, y)/∂(r, th)
    J = sp.Matrix([x, y]).jacobian([r, th])
    generalized = J.T * sp.Matrix([fx, fy])
    vx = sp.diff(x, r) * dr + sp.diff(x, th) * dth
    vy = sp.diff(y, r) * dr + sp.diff(y, th) * dth
    return System(
        name="polar_particle",
        make_model=lambda: sls.load_toml("polar_particle.toml", text=POLAR_TOML),
        q=(r, th),
        dq=(dr, dth),
        T=m * (vx**2 + vy**2) / 2,
        V=ks * (r - r0) ** 2 / 2 + m * g * y,
        fric=(c * dr, c * r**2 * dth),
        params={"m": 0.7, "ks": 12.0, "r0": 1.0, "g": 9.81, "c": 0.2},
        inputs=(fx, fy),
        forces=tuple(generalized),
        q_range=((0.5, 2.0), (-np.pi, np.pi)),
        frictionless={"c": 0.0},
    )


def _velocities(position, q, dq):
    return [sum(sp.diff(p, qk) * dqk for qk, dqk in zip(q, dq)) for p in position]


def spherical_pendulum() -> System:
    """Built through the Python API from Cartesian positions (M = diag(m l², m l² sin²θ))."""
    th, ph, dth, dph, m, length, g, b = sp.symbols("th ph dth dph m l g b")
    position = [length * sp.sin(th) * sp.cos(ph), length * sp.sin(th) * sp.sin(ph), -length * sp.cos(th)]
    v = _velocities(position, (th, ph), (dth, dph))
    T = m * sum(vi**2 for vi in v) / 2
    V = m * g * position[2]
    fric = (b * dth, b * dph)
    params = {"m": 1.3, "l": 0.8, "g": 9.81, "b": 0.1}
    return System(
        name="spherical_pendulum",
        make_model=lambda: sls.model_from_sympy(
            T, V, list(fric), [th, ph, dth, dph], params=params, name="spherical_pendulum"
        ),
        q=(th, ph),
        dq=(dth, dph),
        T=T,
        V=V,
        fric=fric,
        params=params,
        q_range=((0.4, 2.7), (-np.pi, np.pi)),
        frictionless={"b": 0.0},
    )


def chain(n: int = 4) -> System:
    """Planar n-link pendulum, point masses at the link ends, absolute angles, symbolic masses and lengths."""
    q = sp.symbols(f"q1:{n + 1}")
    dq = sp.symbols(f"dq1:{n + 1}")
    m = sp.symbols(f"m1:{n + 1}")
    lengths = sp.symbols(f"l1:{n + 1}")
    g, b, d = sp.symbols("g b d")
    T = V = sp.Integer(0)
    x = y = sp.Integer(0)
    for k in range(n):
        x, y = x + lengths[k] * sp.sin(q[k]), y - lengths[k] * sp.cos(q[k])
        vx, vy = _velocities((x, y), q, dq)
        T += m[k] * (vx**2 + vy**2) / 2
        V += m[k] * g * y
    fric = tuple(b * dq[k] + d * dq[k] ** 3 for k in range(n))
    params = {**{f"m{k + 1}": 1.0 / (k + 1) for k in range(n)}, **{f"l{k + 1}": 1.0 - 0.1 * k for k in range(n)}}
    params.update(g=9.81, b=0.05, d=0.02)
    return System(
        name=f"chain{n}",
        make_model=lambda: sls.model_from_sympy(T, V, list(fric), list(q) + list(dq), params=params, name=f"chain{n}"),
        q=q,
        dq=dq,
        T=T,
        V=V,
        fric=fric,
        params=params,
        frictionless={"b": 0.0, "d": 0.0},
    )


@functools.cache
def systems() -> dict[str, System]:
    """Every test system by name."""
    all_systems = [
        reference_file("pendulum", frictionless={"b": 0.0}),
        reference_file("double_pendulum"),
        reference_file("two_link_arm", frictionless={"beta": 0.0}),
        reference_file("mobile_manipulator", q_range=((-1.0, 1.0), (-np.pi, np.pi), (-np.pi, np.pi))),
        cart_pole(),
        polar_particle(),
        spherical_pendulum(),
        chain(4),
    ]
    return {s.name: s for s in all_systems}


SYSTEM_NAMES = list(systems())


# --------------------------------------------------------------------------
# the independent reference


class Reference:
    """Equations of motion of a :class:`System` by Euler–Lagrange, numerically.

    Every method takes a state ``x`` (2n floats) and a parameter dict (missing
    names take the defaults); the arrays follow sls's conventions (Jacobian
    index last) so they can be compared entry by entry.
    """

    def __init__(self, system: System) -> None:
        self.system = s = system
        n = s.n
        self.n = n
        t = sp.Symbol("t")
        qt = [sp.Function(f"Q{k}")(t) for k in range(n)]
        self.qdd = qdd = sp.symbols(f"qdd0:{n}")
        to_time = {**{s.q[k]: qt[k] for k in range(n)}, **{s.dq[k]: qt[k].diff(t) for k in range(n)}}
        L = (s.T - s.V).xreplace(to_time)
        fric_t = [f.xreplace(to_time) for f in s.fric]
        el_t = [sp.diff(sp.diff(L, qt[k].diff(t)), t) - sp.diff(L, qt[k]) + fric_t[k] for k in range(n)]
        back = {**{qt[k].diff(t, 2): qdd[k] for k in range(n)}}
        back_1 = {qt[k].diff(t): s.dq[k] for k in range(n)}
        back_0 = {qt[k]: s.q[k] for k in range(n)}
        el = [e.subs(back).subs(back_1).subs(back_0) for e in el_t]
        self.el = sp.Matrix(el)  # d/dt dL/dqdot - dL/dq + fric, a function of q, qdot, qddot
        x = list(s.q) + list(s.dq)
        self.x_symbols = x
        self.param_symbols = sorted(
            (sym for e in [s.T, s.V, *s.fric, *s.forces] for sym in e.free_symbols if sym.name in s.params),
            key=lambda sym: sym.name,
        )
        self.param_symbols = list(dict.fromkeys(self.param_symbols))
        zero_qdd = {a: 0 for a in qdd}
        M_el = self.el.jacobian(qdd)  # from the time derivative
        bias = self.el.subs(zero_qdd)  # C qdot + phi + fric
        M_hess = sp.hessian(s.T, s.dq)  # from the definition M = d2T/dqdot2
        q = s.q
        christoffel = [
            [
                [
                    sp.Rational(1, 2)
                    * (sp.diff(M_hess[k, j], q[i]) + sp.diff(M_hess[k, i], q[j]) - sp.diff(M_hess[i, j], q[k]))
                    for k in range(n)
                ]
                for j in range(n)
            ]
            for i in range(n)
        ]
        C = sp.Matrix(n, n, lambda k, j: sum(christoffel[i][j][k] * s.dq[i] for i in range(n)))
        phi = sp.Matrix([sp.diff(s.V, qk) for qk in q])
        fric = sp.Matrix(s.fric)
        if s.inputs:
            B_u = sp.Matrix([[sp.diff(f, u) for u in s.inputs] for f in s.forces])
        else:
            B_u = sp.eye(n)

        def jac3(A):  # (n, k) matrix -> nested list (n, k, 2n)
            return [[[sp.diff(A[a, c], xl) for xl in x] for c in range(A.shape[1])] for a in range(A.shape[0])]

        args = x + list(qdd) + self.param_symbols
        compile_ = lambda expr: sp.lambdify(args, expr, modules="numpy")  # noqa: E731
        self._f = {
            "el": compile_(self.el),
            "M_el": compile_(M_el),
            "bias": compile_(bias),
            "M": compile_(M_hess),
            "C": compile_(C),
            "phi": compile_(phi),
            "fric": compile_(fric),
            "B_u": compile_(B_u),
            "T": compile_(s.T),
            "V": compile_(s.V),
            "M_jac": compile_(jac3(M_hess)),
            "C_jac": compile_(jac3(C)),
            "phi_jac": compile_(phi.jacobian(x)),
            "fric_jac": compile_(fric.jacobian(x)),
            "B_u_jac": compile_(jac3(B_u)),
        }

    def _args(self, x, qdd, params):
        values = {**self.system.params, **(params or {})}
        if qdd is None:
            qdd = np.zeros(self.n)
        return [*x, *qdd, *(values[p.name] for p in self.param_symbols)]

    def __call__(self, key: str, x, params=None, qdd=None):
        value = self._f[key](*self._args(x, qdd, params))
        value = np.array(value)
        if value.ndim == 2 and value.shape[1] == 1 and key in ("el", "bias", "phi", "fric"):
            value = value[:, 0]
        return value

    def qddot(self, x, u, params=None):
        """Forward dynamics from the Euler–Lagrange equations: M q̈ = B_u u − (C q̇ + φ + fric)."""
        M = self("M_el", x, params)
        return np.linalg.solve(M, self("B_u", x, params) @ np.asarray(u) - self("bias", x, params))

    def linearization(self, x, u, params=None, h=1e-30):
        """(A, B) of ẋ = [q̇; q̈] by complex-step differentiation of :meth:`qddot` (exact to round-off)."""
        n, m = self.n, self.system.m
        x = np.asarray(x, dtype=complex)
        u = np.asarray(u, dtype=complex)
        A = np.zeros((2 * n, 2 * n))
        B = np.zeros((2 * n, m))
        A[:n, n:] = np.eye(n)
        for col in range(2 * n):
            step = np.zeros(2 * n, dtype=complex)
            step[col] = 1j * h
            A[n:, col] = np.imag(self.qddot(x + step, u, params)) / h
        for j in range(m):
            step = np.zeros(m, dtype=complex)
            step[j] = 1j * h
            B[n:, j] = np.imag(self.qddot(x, u + step, params)) / h
        return A, B


@functools.cache
def reference(name: str) -> Reference:
    return Reference(systems()[name])


# --------------------------------------------------------------------------------------------------------------
# Models as sls.model_from_strings takes them, shared by the targets' agreement tests (each target against the
# numpy target): generalized speeds and rolling constraints, which the systems above do not have.

#: A planar two-link arm in absolute angles driven through generalized speeds v1 = q̇1, v2 = q̇2 − q̇1.
ARM_SPEEDS = dict(
    state=["q1", "q2", "v1", "v2"],
    T="1/2*m1*(l1/2)^2*v1^2 + 1/2*m2*(l1^2*v1^2 + (l2/2)^2*(v1+v2)^2 + l1*l2*cos(q2-q1)*v1*(v1+v2))"
    " + 1/2*i1*v1^2 + 1/2*i2*(v1+v2)^2",
    V="g*(m1*l1/2*sin(q1) + m2*(l1*sin(q1) + l2/2*sin(q2)))",
    fric=["b*v1", "b*v2"],
    kinematics=["v1", "v1 + v2"],
    params={"m1": 1.0, "m2": 0.7, "l1": 0.8, "l2": 0.6, "i1": 0.05, "i2": 0.03, "g": 9.81, "b": 0.1},
    name="arm_speeds",
)

#: A disc rolling upright without slipping (two velocity constraints), heading th, spin ph, pushed by F.
ROLLING_DISC = dict(
    state=["x", "y", "th", "ph", "dx", "dy", "dth", "dph"],
    T="1/2*m*(dx^2 + dy^2) + 1/2*Iz*dth^2 + 1/2*Is*dph^2",
    V="0",
    fric=["0", "0", "c*dth", "0"],
    inputs=["F", "tau"],
    forces=["F", "0", "tau", "0"],
    velocity_constraints=["dx - R*cos(th)*dph", "dy - R*sin(th)*dph"],
    params={"m": 2.0, "R": 0.3, "Iz": 0.05, "Is": 0.09, "c": 0.1},
    name="rolling_disc",
)
