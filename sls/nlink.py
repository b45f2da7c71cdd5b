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
reads that text with :func:`sls.model.load_toml`, so the model is exactly what
the equivalent model file gives.
"""

from __future__ import annotations

from .errors import ModelError
from .model import Model, load_toml

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
    lines = [
        f"# Planar {n}-link pendulum: point masses m1..m{n} on massless rods l1..l{n}, absolute angles, no friction",
        "state = [" + ", ".join(f'"{s}"' for s in q + dq) + "]",
        'T = "' + _sum(kinetic) + '"',
        'V = "-g*(' + _sum(potential) + ')"',
        'fric = "0"',
        "[params]",
        *[f"m{i} = 1.0" for i in range(1, n + 1)],
        *[f"l{i} = 1.0" for i in range(1, n + 1)],
        "g = 9.81",
    ]
    return "\n".join(lines) + "\n"


def nlink_pendulum(n: int) -> Model:
    """The planar n-link pendulum with symbolic masses and lengths as a :class:`~sls.model.Model`."""
    return load_toml(f"nlink{n}.toml", name=f"nlink{n}", source=f"n-link pendulum generator (n = {n})", text=nlink_toml(n))
