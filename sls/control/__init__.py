"""The control workflow on a generated package: equilibrium, LQR, ZOH, simulation.

Every function takes ``pkg``: an imported generated package (a module) or the
path of one (the folder ``sls generate --out`` wrote), and ``params``: a dict
of parameter values passed as keyword arguments to the generated functions
(missing ones keep the model's defaults), so one generation serves a sweep.

* :func:`equilibrium_input` — the input ``u`` that holds a state at rest
  (``q̈ = 0``), least squares for underactuated systems.
* :func:`lqr` — the infinite-horizon LQR gain for ``u = u_eq − K (x − x_eq)``
  on the linearization at an equilibrium, with equilibrium and
  stabilizability checks; :func:`dlqr` the same for the zero-order-hold
  discretization with sample time ``dt``.
* :func:`discretize` — exact zero-order-hold discretization of ``(A, B)``.
* :func:`ctrb`, :func:`controllability_rank` — the controllability matrix and its rank.
* :func:`state_space` — the linearization as a python-control ``StateSpace``
  (needs python-control: ``pip install "sls[control]"``).
* :func:`simulate` — the nonlinear model, open or closed loop, with
  :func:`scipy.integrate.solve_ivp`; the result carries the energy. A constrained package's start must keep
  its constraints (``project=True`` projects it) and the run keeps them with Baumgarte stabilization
  (:mod:`~sls.control.constraints`).
  :func:`settling_time` — when a trajectory stays near the equilibrium.
* :func:`sweep` — a parameter sweep or Monte-Carlo run (simulations, LQR
  gains, or any function of the package) on a ``dask.distributed`` cluster,
  local by default or at any scheduler address (needs ``sls[dask]``).
* :func:`save_design`, :func:`load_design` — an LQR design as a JSON file
  (what ``sls lqr --save`` writes and ``sls simulate --lqr-from`` reads).
* :func:`tangent_names` — the names of the tangent-space entries a gain acts
  on: a package with a quaternion base (``N_Q = N_V + 1``) has full states
  ``x = [q; v]`` (``N_Q + N_V``) but linearizes and designs in the tangent
  space (``2 N_V``), ``u = u_eq − K [difference(q_eq, q); v − v_eq]``
  (:mod:`~sls.control.tangent`). A robot with a yaw-pitch-roll base is
  stopped near its chart's singularity (:mod:`~sls.control.chart`).

The modules, one job each: :mod:`~sls.control.package` (loading a package,
checking arguments), :mod:`~sls.control.equilibrium`,
:mod:`~sls.control.riccati` (LQR), :mod:`~sls.control.constraints` (consistent states of constrained
packages), :mod:`~sls.control.linear` (controllability,
discretization, python-control), :mod:`~sls.control.simulation`,
:mod:`~sls.control.design` (the design file), :mod:`~sls.control.sweeps` (sweeps on Dask) and
:mod:`~sls.control.plot`.

Mistakes end in :class:`sls.errors.ControlError` (a ``ValueError``) with a
one-line message, also when a generated function fails (a mass matrix that is
singular for the given parameters, a state where the model is not defined):
the message names the function, the state and the cause.
"""

from __future__ import annotations

from sls.control.design import LQRDesign, design_document, load_design, save_design
from sls.control.equilibrium import constraint_basis, equilibrium_input
from sls.control.linear import controllability_rank, ctrb, discretize, state_space
from sls.control.package import load_package
from sls.control.riccati import LQRResult, dlqr, lqr, weight_matrix
from sls.control.simulation import METHODS, StiffnessWarning, closed_loop_jacobian, settling_time, simulate
from sls.control.sweeps import parameter_sets, sweep
from sls.control.tangent import tangent_names
from sls.errors import ControlError

__all__ = [
    "ControlError",
    "LQRDesign",
    "LQRResult",
    "METHODS",
    "StiffnessWarning",
    "closed_loop_jacobian",
    "constraint_basis",
    "controllability_rank",
    "ctrb",
    "design_document",
    "discretize",
    "dlqr",
    "equilibrium_input",
    "load_design",
    "load_package",
    "lqr",
    "parameter_sets",
    "save_design",
    "settling_time",
    "simulate",
    "state_space",
    "sweep",
    "tangent_names",
    "weight_matrix",
]
