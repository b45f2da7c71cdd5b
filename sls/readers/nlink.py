"""The planar n-link pendulum, for any n: a scalable model for benchmarks.

Link ``k`` (``k = 1 … n``) is a massless rod of length ``lk`` carrying a point
mass ``mk`` at its tip; the links hang from a fixed pivot and are chained tip to
pivot. Coordinates are absolute angles ``q1 … qn`` from the downward vertical,
rates ``dq1 … dqn``; gravity ``g`` points down; there is no friction. With
``μ_j = Σ_{k≥j} m_k`` (the mass carried beyond joint ``j``)::

    T = ½ Σ_i μ_i l_i² dq_i² + Σ_{i<j} μ_j l_i l_j cos(q_i − q_j) dq_i dq_j
    V = −g Σ_i μ_i l_i cos(q_i)

which is exactly ``½ Σ_k m_k |ṗ_k|²`` and ``g Σ_k m_k y_k`` for the tip
positions ``p_k``. Masses and lengths stay symbolic (keyword arguments of the
generated functions, default 1), so one generation serves every mass and length.

:func:`nlink_toml` writes the model as TOML text and :func:`nlink_pendulum`
reads that text with :func:`sls.readers.load_toml`, so the model is exactly what
the equivalent model file gives.
"""

from __future__ import annotations

from sls.errors import ModelError
from sls.model import Model
from sls.readers.files import load_toml

#: Largest n accepted (the model text must stay within the parser's length limit).
MAX_LINKS = 30


def _mass_sum(j: int, n: int) -> str:
    """``μ_j = m_j + … + m_n`` as text (1-based ``j``)."""
    terms = [f"m{k}" for k in range(j, n + 1)]
    return terms[0] if len(terms) == 1 else "(" + " + ".join(terms) + ")"


def _sum(terms: list, chunk: int = 16) -> str:
    """``terms`` joined by `` + ``, grouped in parentheses so the text nests shallowly."""
    while len(terms) > chunk:
        terms = ["(" + " + ".join(terms[i : i + chunk]) + ")" for i in range(0, len(terms), chunk)]
    return " + ".join(terms)


def nlink_toml(n: int) -> str:
    """The n-link pendulum as the text of a TOML model file."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_LINKS:
        raise ModelError(f"nlink: n must be an integer from 1 to {MAX_LINKS}, got {n!r}")
    q = [f"q{i}" for i in range(1, n + 1)]
    dq = [f"dq{i}" for i in range(1, n + 1)]
    kinetic = []
    for i in range(1, n + 1):
        kinetic.append(f"{_mass_sum(i, n)}*l{i}**2*dq{i}**2/2")
        for j in range(i + 1, n + 1):
            kinetic.append(f"{_mass_sum(j, n)}*l{i}*l{j}*cos(q{i} - q{j})*dq{i}*dq{j}")
    potential = [f"{_mass_sum(i, n)}*l{i}*cos(q{i})" for i in range(1, n + 1)]
    return _toml(
        f"Planar {n}-link pendulum: point masses m1..m{n} on massless rods l1..l{n}, absolute angles, no friction",
        q + dq,
        _sum(kinetic),
        "-g*(" + _sum(potential) + ")",
        '"0"',
        {**{f"m{i}": 1.0 for i in range(1, n + 1)}, **{f"l{i}": 1.0 for i in range(1, n + 1)}, "g": 9.81},
    )


def _toml(comment: str, state: list, T: str, V: str, fric: str, params: dict) -> str:
    """A TOML model file's text (``fric`` is already TOML: a quoted string or a list)."""
    lines = [
        f"# {comment}",
        "state = [" + ", ".join(f'"{s}"' for s in state) + "]",
        f'T = "{T}"',
        f'V = "{V}"',
        f"fric = {fric}",
        "[params]",
        *[f"{name} = {value!r}" for name, value in params.items()],
    ]
    return "\n".join(lines) + "\n"


def nlink_pendulum(n: int) -> Model:
    """The planar n-link pendulum with symbolic masses and lengths as a :class:`~sls.model.Model`."""
    return load_toml(
        f"nlink{n}.toml", name=f"nlink{n}", source=f"n-link pendulum generator (n = {n})", text=nlink_toml(n)
    )


def chain_toml(n: int) -> str:
    """A planar chain of ``n`` uniform rods with *relative* joint angles, as TOML text.

    Written the way people write it, not the way that is cheap to derive:
    centre-of-mass positions from the joint angles, their velocities as the
    Jacobian of the positions times ``dq``, rod inertia ``m l²/12`` about the
    centre, symbolic masses ``m1…`` and lengths ``l1…``, viscous friction
    ``b*dqk``, and ``T`` never simplified (its text grows like n³: 202 134
    characters at n = 20). This is the unkind benchmark of the robot-scale
    work; :func:`nlink_toml` is the kind one.
    """
    import sympy

    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_LINKS:
        raise ModelError(f"chain: n must be an integer from 1 to {MAX_LINKS}, got {n!r}")
    q = sympy.symbols(f"q1:{n + 1}", real=True)
    dq = sympy.symbols(f"dq1:{n + 1}", real=True)
    m = sympy.symbols(f"m1:{n + 1}", real=True)
    length = sympy.symbols(f"l1:{n + 1}", real=True)
    g = sympy.Symbol("g", real=True)
    T, V = sympy.Integer(0), sympy.Integer(0)
    angle, base_x, base_y = sympy.Integer(0), sympy.Integer(0), sympy.Integer(0)
    for k in range(n):
        angle = angle + q[k]
        cx = base_x + length[k] / 2 * sympy.sin(angle)
        cy = base_y - length[k] / 2 * sympy.cos(angle)
        vx = sum(sympy.diff(cx, q[j]) * dq[j] for j in range(n))
        vy = sum(sympy.diff(cy, q[j]) * dq[j] for j in range(n))
        omega = sum(dq[: k + 1])
        T += m[k] * (vx**2 + vy**2) / 2 + m[k] * length[k] ** 2 / 24 * omega**2
        V += m[k] * g * cy
        base_x = base_x + length[k] * sympy.sin(angle)
        base_y = base_y - length[k] * sympy.cos(angle)
    return _toml(
        f"Planar {n}-link chain of uniform rods, relative angles, T unsimplified (the unkind benchmark)",
        [s.name for s in q + dq],
        str(T),
        str(V),
        "[" + ", ".join(f'"b*{s}"' for s in dq) + "]",
        {**{f"m{i}": 1.0 for i in range(1, n + 1)}, **{f"l{i}": 0.5 for i in range(1, n + 1)}, "g": 9.81, "b": 0.1},
    )


def relative_chain(n: int) -> Model:
    """The relative-angle chain of :func:`chain_toml` as a :class:`~sls.model.Model`."""
    return load_toml(
        f"chain{n}.toml", name=f"chain{n}", source=f"relative-angle chain generator (n = {n})", text=chain_toml(n)
    )
