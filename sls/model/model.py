"""The :class:`Model` type: a checked mechanical model, as every reader hands it to the derivation.

Conventions
-----------
* ``x`` has length ``2n``: the ``n`` coordinates ``q`` first, then their
  rates ``q̇`` in the same order.
* Every symbol is ``Symbol(name, real=True)`` (see
  :func:`sls.algebra.expressions.symbol`).
* Symbols that are neither states nor inputs are parameters; each becomes a
  keyword argument of every generated function, defaulting to its value in
  ``params`` (or required, when it has no value).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field

import sympy

from sls.model.tree import Robot

#: The run-time parameter of every constrained model that carries its Baumgarte rate ω (default: ``stabilization``).
STABILIZATION_PARAMETER = "constraint_stabilization"


@dataclass(frozen=True)
class Model:
    """A validated mechanical model.

    Attributes
    ----------
    name : str
        Short name, used in generated headers (e.g. ``"pendulum"``).
    source : str
        Where the model came from (``"model file pendulum.toml"``, ...).
    q, dq : tuple of sympy.Symbol, length n
        Coordinates and their rates; the state is ``x = q + dq``.
    T, V : sympy.Expr
        Kinetic energy (homogeneous quadratic in ``dq``) and potential energy
        (independent of ``dq``).
    fric : tuple of sympy.Expr, length n
        Every generalized force on the left-hand side that no input produces:
        ``M q̈ + C q̇ + φ + fric = B_u u``. This is the user's friction minus
        the input-free part of ``forces`` and of the loads (affine forces, see
        the README), so every generated function sees it.
    inputs : tuple of sympy.Symbol, length m
        Input symbols. When the model declares no input map this is
        ``u1 … un`` and ``forces == inputs`` (``B_u = I``).
    forces : tuple of sympy.Expr, length n
        Generalized forces produced by the inputs, linear in ``inputs`` (the
        input part of the declared forces and loads; ``B_u = ∂forces/∂u``).
    params : dict str → float or None
        Every parameter in signature order with its default (``None``: required).
    actuated : bool
        ``True`` when the model declared no input map (the classic SLS case).
    unused_params : tuple of str
        Parameters given a value that appear in no expression.
    file : str or None
        The model file it was read from (errors found later name it).
    constraints : tuple of sympy.Expr
        Holonomic constraints ``c(q) = 0`` (expressions in q).
    velocity_constraints : tuple of sympy.Expr
        Rolling/velocity constraints ``a(q) q̇ = 0``, each linear in q̇.
    stabilization : float
        Baumgarte rate ω (0: off): the constraints are kept as
        ``A q̈ + Ȧ q̇ + 2ω A q̇ + ω² c = 0``. It is the default of the parameter
        :data:`STABILIZATION_PARAMETER` (``constraint_stabilization``), which every
        constrained model has (added last to ``params``), so the rate can be changed at
        run time (``f(x, constraint_stabilization=20)``, ``--param constraint_stabilization=20``).
    friction : tuple of sympy.Expr
        The user's own friction (``fric`` before the input-free forces were folded in).
    renamed : tuple of (str, str)
        Symbol names given through the Python API that were mapped onto
        identifiers (e.g. ``I_{1zz}`` → ``I_1zz``).
    tree : object or None
        The kinematic tree a robot model was read from (a parsed
        :class:`sls.model.tree.Robot`), for derivations that follow the tree; ``None``
        for models given by their energies.
    functions : tuple of str or None
        The generated functions chosen (their dependencies are added, see
        :func:`sls.functions.for_model`); ``None``: every one.
    kinematics : tuple of sympy.Expr, length n, or None
        Generalized speeds: the kinematic equations ``q̇ = S(q) v``, one
        expression per coordinate, linear in the speeds ``dq`` (which are then
        speeds, not rates: ``T``, forces, friction and loads are written in
        ``q`` and ``v``). ``None``: the speeds are the rates, ``v = q̇``.
    contacts : tuple of (str, str)
        A robot's contacts ``(link, kind)``, after ``constraints``: ``"point"`` holds the link's origin at the
        parameters ``contact_<link>_x, _y, _z`` (world frame; three holonomic constraints), ``"6d"`` its origin and
        orientation (``contact_<link>_roll, _pitch, _yaw`` too; six).
    frames : tuple of str
        Links of a robot model (``tree``) whose poses, Jacobians and ``J̇v`` are generated, with the centre
        of mass (:data:`sls.functions.FRAME_FUNCTIONS`); or the names of ``frame_points``; empty: none.
    frame_points : tuple of (tuple, tuple or None)
        A model given by its energies: each frame's world position (3 expressions in ``q`` and parameters) and
        rotation (3 × 3, rows; ``None``: the world's axes), in the order of ``frames``
        (:mod:`sls.derive.point_frames`); empty for a robot.
    ranges : dict str → (float, float)
        Where the model lives: declared ``(low, high)`` intervals of state
        variables (coordinates or rates), in state order. The checks of
        :mod:`sls.derive.validate` sample only there; undeclared coordinates are
        sampled in [−π, π], undeclared rates in [−1, 1] (:meth:`sample_box`).
        They do not change the generated code.
    stances : tuple of (str, tuple)
        Named states of a robot at rest (its SRDF file's reference configurations, :mod:`sls.readers.urdf.srdf`):
        ``(name, x)`` with ``x`` the ``n_q + n`` state values (speeds zero); empty: none. The package keeps
        them as ``STANCES`` (``sls lqr --stance NAME``); they do not change the equations.
    jacobians : str
        How the Jacobian modules ``M_jac_fun`` and ``C_jac_fun`` are written: ``"entries"``, each entry in the code,
        or ``"directions"``, from the directional derivatives ``M_dir_fun`` and ``C_dir_fun`` evaluated along every
        state direction (set by :func:`sls.generate` for a target that can, when ``C_jac`` would have at least
        :data:`sls.functions.DIRECTIONS_FROM` entries).
    """

    name: str
    source: str
    q: tuple
    dq: tuple
    T: sympy.Expr
    V: sympy.Expr
    fric: tuple
    inputs: tuple
    forces: tuple
    params: dict = field(default_factory=dict)
    actuated: bool = True
    unused_params: tuple = ()
    file: str | None = None
    constraints: tuple = ()
    velocity_constraints: tuple = ()
    stabilization: float = 0.0
    friction: tuple | None = None
    renamed: tuple = ()
    tree: Robot | None = None
    functions: tuple | None = None
    ranges: dict = field(default_factory=dict)
    kinematics: tuple | None = None
    frames: tuple = ()
    contacts: tuple = ()
    frame_points: tuple = ()
    jacobians: str = "entries"
    stances: tuple = ()

    def __post_init__(self) -> None:
        """A constrained model carries its Baumgarte rate as the parameter ``constraint_stabilization``."""
        if self.constrained and STABILIZATION_PARAMETER not in self.params:
            params = {**self.params, STABILIZATION_PARAMETER: float(self.stabilization)}
            object.__setattr__(self, "params", params)

    def sample_box(self) -> tuple[list, list]:
        """``(low, high)``, each of length 2n: the interval the checks sample every state variable in.

        Declared :attr:`ranges` first; else [−π, π] for a coordinate and [−1, 1] for a rate.
        """
        low = [-math.pi] * self.n_q + [-1.0] * self.n
        high = [math.pi] * self.n_q + [1.0] * self.n
        for i, s in enumerate(self.state):
            if s.name in self.ranges:
                low[i], high[i] = self.ranges[s.name]
        return low, high

    def warnings(self) -> list[str]:
        """Likely mistakes worth a warning: parameters given a value but unused, and
        names that became required parameters although the model gives parameter values."""
        notes = [f"parameter '{name}' is not used by the model" for name in self.unused_params]
        notes += [f"symbol '{old}' is named '{new}' in the generated code" for old, new in self.renamed]
        given = [name for name, value in self.params.items() if value is not None]
        required = [name for name, value in self.params.items() if value is None]
        if given and required:
            quoted = ", ".join(f"'{name}'" for name in required)
            one = len(required) == 1
            guesses = []
            for name in required:
                close = difflib.get_close_matches(name, given + [s.name for s in self.state], n=1)
                if close:
                    guesses.append(f"'{close[0]}' for '{name}'" if not one else f"'{close[0]}'")
            guess = f"; did you mean {', '.join(guesses)}?" if guesses else ""
            notes.append(
                f"{quoted} {'has' if one else 'have'} no value among the model's parameters and "
                f"{'becomes a required keyword argument' if one else 'become required keyword arguments'} "
                f"of every generated function{guess}"
            )
        return notes

    @property
    def n(self) -> int:
        """Number of degrees of freedom: of speeds (``len(dq)``), as many as coordinates unless a quaternion turns."""
        return len(self.dq)

    @property
    def n_q(self) -> int:
        """Number of coordinates (``len(q)``): ``n``, or more when some move through kinematics (a quaternion)."""
        return len(self.q)

    @property
    def m(self) -> int:
        """Number of inputs."""
        return len(self.inputs)

    @property
    def state(self) -> tuple:
        """The state symbols ``q + dq`` (length ``n_q + n``: 2n unless a quaternion turns)."""
        return self.q + self.dq

    @property
    def k(self) -> int:
        """Number of constraints (holonomic first: ``constraints``, then the contacts' rows; then velocity
        constraints)."""
        return self.n_holonomic + len(self.velocity_constraints)

    @property
    def n_holonomic(self) -> int:
        """Number of holonomic constraint rows: ``constraints``, three per point contact and six per 6-D one."""
        return len(self.constraints) + sum(6 if kind == "6d" else 3 for _, kind in self.contacts)

    @property
    def qdot(self) -> tuple:
        """``q̇`` in the state (length n): the kinematic equations ``S(q) v``, or the rates themselves."""
        return self.kinematics if self.kinematics is not None else self.dq

    @property
    def constrained(self) -> bool:
        return self.k > 0
