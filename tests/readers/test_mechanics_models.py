"""sympy.physics.mechanics models as written (:func:`sls.model_from_mechanics`) against sympy's own equations.

The reference is the object's own right-hand side, ``mass_matrix_full⁻¹ forcing_full`` lambdified (for a
``KanesMethod`` as for ``kane.rhs()``; for a Lagrangian its first 2n rows, before the multipliers), at random
states: it shares no code with sls's derivation (Boltzmann–Hamel on ``T(q, u)``, multipliers for constraints).
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from conftest import build
from sympy.physics.mechanics import (
    KanesMethod,
    LagrangesMethod,
    LinearDamper,
    LinearPathway,
    LinearSpring,
    Particle,
    Point,
    PrismaticJoint,
    ReferenceFrame,
    RigidBody,
    System,
    cross,
    dot,
    dynamicsymbols,
    inertia,
)
from sympy.physics.mechanics import Lagrangian as lagrangian

import sls

TOLERANCE = 1e-10
m, g, length, r, k, b, I1, I2, I3 = sympy.symbols("m g l r k b I1 I2 I3")


def reference(method: object, coordinates: list, speeds: list, params: dict, inputs: list = ()):
    """``x, u ↦ ẋ`` of sympy's own equations: the first 2n entries of ``mass_matrix_full⁻¹ forcing_full``."""
    f = sympy.lambdify(
        (list(coordinates) + list(speeds), list(inputs), list(params)),
        [method.mass_matrix_full, method.forcing_full],
    )

    def rhs(x: np.ndarray, u: np.ndarray = ()) -> np.ndarray:
        M, F = f(list(x), list(u), list(params.values()))
        return np.linalg.solve(np.asarray(M, dtype=float), np.asarray(F, dtype=float).ravel())[: len(x)]

    return rhs


def assert_same_motion(package, rhs, states, inputs=None) -> float:
    """``xdot_fun`` = ``rhs`` at every state (inputs: one row per state, zeros by default); the largest error."""
    worst = 0.0
    for i, x in enumerate(states):
        u = np.zeros(package.N_INPUTS) if inputs is None else inputs[i]
        expected = rhs(x, u if inputs is not None else ())
        got = package.xdot_fun(x, u)
        worst = max(worst, float(np.max(np.abs(got - expected)) / max(1.0, float(np.max(np.abs(expected))))))
        np.testing.assert_allclose(got, expected, rtol=TOLERANCE, atol=TOLERANCE * max(1.0, np.max(np.abs(expected))))
    return worst


def random_states(n: int, count: int = 30, seed: int = 1) -> np.ndarray:
    """Coordinates in ±[0.2, 1.3] (away from the poles of the angle charts), speeds normal."""
    rng = np.random.default_rng(seed)
    angles = rng.choice([-1.0, 1.0], (count, n)) * rng.uniform(0.2, 1.3, (count, n))
    return np.hstack((angles, rng.normal(size=(count, n))))


# --------------------------------------------------------------------------
# (a) a heavy top: Euler angles and body-fixed speeds, gravity, a fixed point, a driving torque


def heavy_top(consistent: bool = True):
    q1, q2, q3, u1, u2, u3 = dynamicsymbols("q1:4 u1:4")
    torque = dynamicsymbols("T3")
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Body", [q1, q2, q3], "ZXZ")
    w_from_rates = B.ang_vel_in(N)
    B.set_ang_vel(N, u1 * B.x + u2 * B.y + u3 * B.z)
    pivot = Point("pivot")
    pivot.set_vel(N, 0)
    P = pivot.locatenew("P", length * B.z)
    P.v2pt_theory(pivot, N, B)
    top = RigidBody("top", P, B, m, (inertia(B, I1, I2, I3), P))
    if consistent:
        kd = [dot(w_from_rates, B.x) - u1, dot(w_from_rates, B.y) - u2, dot(w_from_rates, B.z) - u3]
    else:  # rates taken for the body rates: the mistake of the issue
        kd = [q1.diff() - u1, q2.diff() - u2, q3.diff() - u3]
    kane = KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd_eqs=kd)
    kane.kanes_equations([top], [(P, -m * g * N.z), (B, torque * B.z)])
    return kane, torque


TOP = {m: 1.3, g: 9.81, length: 0.4, I1: 0.2, I2: 0.3, I3: 0.5}


def test_a_heavy_top_with_body_fixed_speeds_is_kanes(tmp_path):
    kane, torque = heavy_top()
    model = sls.model_from_mechanics(kane, params=TOP, name="top", inputs=[torque])
    assert [s.name for s in model.state] == ["q1", "q2", "q3", "u1", "u2", "u3"]
    assert model.kinematics is not None and [s.name for s in model.inputs] == ["T3"]
    package = build(model, tmp_path / "top")
    rng = np.random.default_rng(4)
    states = random_states(3, 50)
    inputs = rng.normal(size=(50, 1))
    assert_same_motion(package, reference(kane, kane.q, kane.u, TOP, [torque]), states, inputs)
    # gravity became the potential of the mass centre: m g l (B.z · N.z) = m g l cos(q2) for ZXZ angles
    for x in states[:5]:
        assert package.V_fun(x) == pytest.approx(1.3 * 9.81 * 0.4 * np.cos(x[1]), rel=1e-12)


def test_the_top_without_inputs_is_fully_actuated_along_the_speeds(tmp_path):
    kane, _ = heavy_top()
    kane.kanes_equations(kane.bodies, kane.loads[:1])  # gravity only
    model = sls.model_from_mechanics(kane, params=TOP, ranges={kane.q[1]: (0.1, 3.0)})
    assert [s.name for s in model.inputs] == ["tau1", "tau2", "tau3"]  # the speeds are named u1..u3
    assert model.ranges == {"q2": (0.1, 3.0)}  # ranges keyed by the coordinates as functions of time
    package = build(model, tmp_path / "top")
    assert_same_motion(package, reference(kane, kane.q, kane.u, TOP), random_states(3, 10))


# --------------------------------------------------------------------------
# (b) a double pendulum with LagrangesMethod (q̇ = u), a damper and a driving torque


def test_a_double_pendulum_with_lagranges_method(tmp_path):
    q1, q2 = dynamicsymbols("q1 q2")
    torque = dynamicsymbols("tau")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    B = N.orientnew("B", "Axis", [q2, N.z])
    pivot = Point("pivot")
    pivot.set_vel(N, 0)
    P1 = pivot.locatenew("P1", length * A.x)
    P2 = P1.locatenew("P2", length * B.x)
    P1.v2pt_theory(pivot, N, A)
    P2.v2pt_theory(P1, N, B)
    bob1, bob2 = Particle("bob1", P1, m), Particle("bob2", P2, 2 * m)
    bob1.potential_energy = -m * g * length * sympy.cos(q1)
    bob2.potential_energy = -2 * m * g * length * (sympy.cos(q1) + sympy.cos(q2))
    loads = [(P1, -b * P1.vel(N)), (A, torque * N.z)]
    lagrange = LagrangesMethod(lagrangian(N, bob1, bob2), [q1, q2], forcelist=loads, frame=N)
    lagrange.form_lagranges_equations()
    params = {m: 0.7, g: 9.81, length: 0.5, b: 0.2}
    model = sls.model_from_mechanics(lagrange, params=params, inputs=[torque], name="double")
    assert [s.name for s in model.state] == ["q1", "q2", "dq1", "dq2"] and model.kinematics is None
    package = build(model, tmp_path / "double")
    inputs = np.random.default_rng(2).normal(size=(30, 1))
    rhs = reference(lagrange, lagrange.q, [s.diff() for s in lagrange.q], params, [torque])
    assert_same_motion(package, rhs, random_states(2), inputs)


# --------------------------------------------------------------------------
# (c) rolling discs: body-fixed speeds with dependent contact speeds and rolling constraints (the rolling disc of
# sympy's KanesMethod tests), the same disc formed from the contact point up (sympy's documentation), a pendulum
# in Cartesian coordinates (a configuration constraint)


def rolling_disc():
    """The disc of sympy's test_kane5: yaw q1, lean q2, spin q3, contact point q4, q5; disc-fixed angular speeds
    u1..u3 independent, contact speeds u4, u5 dependent; the centre's velocity written as ω × r (rolling)."""
    q1, q2, q3, q4, q5, u1, u2, u3, u4, u5 = dynamicsymbols("q1:6 u1:6")
    ground = RigidBody("ground")
    disc = RigidBody("disk", mass=m)
    disc.inertia = (m * r**2 / 4 * inertia(disc.frame, 1, 2, 1), disc.masscenter)
    ground.masscenter.set_vel(ground.frame, 0)
    disc.masscenter.set_vel(disc.frame, 0)
    tilted = ReferenceFrame("int_frame")
    tilted.orient_body_fixed(ground.frame, (q1, q2, 0), "zxy")
    disc.frame.orient_axis(tilted, tilted.y, q3)
    w_from_rates = disc.frame.ang_vel_in(ground.frame)
    disc.frame.set_ang_vel(ground.frame, u1 * disc.x + u2 * disc.y + u3 * disc.z)
    contact = ground.masscenter.locatenew("contact_point", q4 * ground.x + q5 * ground.y)
    contact.set_vel(ground.frame, u4 * ground.x + u5 * ground.y)
    disc.masscenter.set_pos(contact, r * tilted.z)
    disc.masscenter.set_vel(ground.frame, cross(disc.frame.ang_vel_in(ground.frame), disc.masscenter.pos_from(contact)))
    t = dynamicsymbols._t
    kdes = [dot(w_from_rates, disc.x) - u1, dot(w_from_rates, disc.y) - u2, dot(w_from_rates, disc.z) - u3]
    kdes += [q4.diff(t) - u4, q5.diff(t) - u5]
    slip = contact.vel(ground.frame) + cross(disc.frame.ang_vel_in(tilted), contact.pos_from(disc.masscenter))
    kane = KanesMethod(
        ground.frame,
        [q1, q2, q3, q4, q5],
        [u1, u2, u3],
        kdes,
        u_dependent=[u4, u5],
        velocity_constraints=[dot(slip, ground.x), dot(slip, ground.y)],
        bodies=[disc],
        forcelist=[(disc.masscenter, -disc.mass * g * ground.z)],
    )
    kane.kanes_equations()
    return kane


DISC = {g: 9.81, r: 0.26, m: 3.43}


def test_a_rolling_disc_with_dependent_speeds_is_kanes(tmp_path):
    kane = rolling_disc()
    model = sls.model_from_mechanics(kane, params=DISC, name="disc")
    assert len(model.velocity_constraints) == 2 and not model.constraints
    package = build(model, tmp_path / "disc")
    q, u = list(kane.q), list(kane.u)
    dependent = sympy.lambdify((q + u[:3], list(DISC)), kane._Ars * sympy.Matrix(u[:3]))
    states = []
    for x in random_states(5, 30):
        independent = list(x[5:8])
        contact = np.asarray(dependent(list(x[:5]) + independent, list(DISC.values())), dtype=float).ravel()
        states.append(np.concatenate((x[:5], independent, contact)))  # the contact speeds the rolling allows
    assert_same_motion(package, reference(kane, q, u, DISC), states)
    for x in states[:5]:
        np.testing.assert_allclose(package.constraint_fun(x), 0, atol=1e-12)


def contact_disc():
    """sympy's documented rolling disc: three coordinates, angular speeds in the lean frame, the rolling condition
    built into the centre's velocity (v = ω × r from a contact point at rest), no constraint left."""
    q1, q2, q3, u1, u2, u3 = dynamicsymbols("q1 q2 q3 u1 u2 u3")
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_from_rates = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = Point("C")
    C.set_vel(N, 0)
    centre = C.locatenew("Dmc", r * L.z)
    centre.v2pt_theory(C, N, R)
    disc = RigidBody("disc", centre, R, m, (inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2), centre))
    kane = KanesMethod(N, [q1, q2, q3], [u1, u2, u3], kd_eqs=[dot(R.ang_vel_in(N) - w_from_rates, e) for e in L])
    kane.kanes_equations([disc], [(centre, -m * g * Y.z)])
    return kane


def test_the_disc_formed_from_the_contact_point_up_is_kanes(tmp_path):
    kane = contact_disc()
    model = sls.model_from_mechanics(kane, params=DISC)
    assert any(f != 0 for f in model.friction)  # the part of Kane's inertia forces T(q, u) cannot give
    package = build(model, tmp_path / "disc3")
    assert_same_motion(package, reference(kane, kane.q, kane.u, DISC), random_states(3))


def cartesian_pendulum(velocity_constraints: bool = True):
    x, y, ux, uy = dynamicsymbols("x y ux uy")
    N = ReferenceFrame("N")
    pivot = Point("pivot")
    pivot.set_vel(N, 0)
    P = pivot.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, ux * N.x + uy * N.y)
    options = dict(q_dependent=[y], configuration_constraints=[x**2 + y**2 - length**2])
    if velocity_constraints:
        options.update(u_dependent=[uy], velocity_constraints=[x * ux + y * uy])
        coordinates, speeds = [x], [ux]
    else:
        coordinates, speeds = [x], [ux, uy]
    kane = KanesMethod(
        N,
        coordinates,
        speeds,
        kd_eqs=[x.diff() - ux, y.diff() - uy],
        bodies=[Particle("bob", P, m)],
        forcelist=[(P, -m * g * N.y)],
        **options,
    )
    kane.kanes_equations()
    return kane


def test_a_configuration_constraint_stays_holonomic(tmp_path):
    kane = cartesian_pendulum()
    params = {length: 0.8, m: 1.1, g: 9.81}
    model = sls.model_from_mechanics(kane, params=params, name="cartesian")
    assert len(model.constraints) == 1 and not model.velocity_constraints  # x ux + y uy = 0 is its derivative
    package = build(model, tmp_path / "cartesian")
    rng = np.random.default_rng(3)
    angles, rates = rng.uniform(-1.3, 1.3, 20), rng.normal(size=20)
    states = [
        np.array([0.8 * np.sin(a), -0.8 * np.cos(a), 0.8 * w * np.cos(a), 0.8 * w * np.sin(a)])
        for a, w in zip(angles, rates)
    ]
    assert_same_motion(package, reference(kane, kane.q, kane.u, params), states)


def test_lagranges_constraints_become_sls_constraints(tmp_path):
    """A pendulum in Cartesian coordinates (hol_coneqs) and a knife edge (nonhol_coneqs), with multipliers."""
    x, y, th = dynamicsymbols("x y th")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    pendulum = LagrangesMethod(
        m * (x.diff() ** 2 + y.diff() ** 2) / 2 - m * g * y, [x, y], hol_coneqs=[x**2 + y**2 - length**2]
    )
    pendulum.form_lagranges_equations()
    knife = LagrangesMethod(
        m * (x.diff() ** 2 + y.diff() ** 2) / 2 + I1 * th.diff() ** 2 / 2,
        [x, y, th],
        nonhol_coneqs=[-x.diff() * sympy.sin(th) + y.diff() * sympy.cos(th)],
        forcelist=[(A, b * A.z)],  # a torque turning the blade
        frame=N,
    )
    knife.form_lagranges_equations()
    params = {m: 1.2, g: 9.81, length: 0.7, I1: 0.3, b: 0.4}
    model = sls.model_from_mechanics(pendulum, params=params, name="pendulum")
    assert len(model.constraints) == 1 and not model.velocity_constraints
    package = build(model, tmp_path / "pendulum")
    rng = np.random.default_rng(8)
    states = [
        np.array([0.7 * np.sin(a), -0.7 * np.cos(a), 0.7 * w * np.cos(a), 0.7 * w * np.sin(a)])
        for a, w in zip(rng.uniform(-1.3, 1.3, 10), rng.normal(size=10))
    ]
    assert_same_motion(package, reference(pendulum, [x, y], [x.diff(), y.diff()], params), states)
    model = sls.model_from_mechanics(knife, params=params, name="knife")
    assert len(model.velocity_constraints) == 1
    package = build(model, tmp_path / "knife")
    states = []
    for z in random_states(3, 10):
        speed = z[3]
        states.append(np.concatenate((z[:3], [speed * np.cos(z[2]), speed * np.sin(z[2]), z[5]])))  # no side slip
    assert_same_motion(package, reference(knife, [x, y, th], [x.diff(), y.diff(), th.diff()], params), states)


# --------------------------------------------------------------------------
# (d) System objects: a particle on a spring


def test_a_system_with_a_particle_on_a_spring_is_kanes(tmp_path):
    """A particle in a vertical plane on a spring (a LinearSpring actuator) and a damper from the fixed point,
    uniform gravity; the System forms Kane's equations."""
    x, y, ux, uy = dynamicsymbols("x y ux uy")
    system = System()
    bob = Particle("bob", system.fixed_point.locatenew("P", x * system.x + y * system.y), m)
    bob.masscenter.set_vel(system.frame, ux * system.x + uy * system.y)
    system.add_coordinates(x, y)
    system.add_speeds(ux, uy)
    system.add_kdes(x.diff() - ux, y.diff() - uy)
    system.add_bodies(bob)
    path = LinearPathway(system.fixed_point, bob.masscenter)
    system.add_actuators(LinearSpring(k, path, equilibrium_length=length), LinearDamper(b, path))
    system.apply_uniform_gravity(-g * system.y)
    system.form_eoms()
    params = {m: 0.9, k: 40.0, length: 0.5, b: 0.3, g: 9.81}
    model = sls.model_from_mechanics(system, params=params, name="spring")
    assert str(model.V) == "g*m*y"  # gravity, from the fixed point; the spring and damper are generalized forces
    package = build(model, tmp_path / "spring")
    assert_same_motion(package, reference(system, system.q, system.u, params), random_states(2, 20))


def test_a_system_with_potential_energy_is_lagranges(tmp_path):
    """sympy's System example: a slider on a spring written as a potential energy, a damper as a load, the joint's
    speed the rate q̇ itself, the equations formed with LagrangesMethod."""
    q = dynamicsymbols("q")
    wall = RigidBody("W")
    system = System.from_newtonian(wall)
    bob = Particle("P", mass=m)
    bob.potential_energy = k * q**2 / 2
    system.add_joints(PrismaticJoint("J", wall, bob, q, q.diff()))
    system.add_loads((bob.masscenter, -b * q.diff() * system.x))
    system.form_eoms(LagrangesMethod)
    params = {m: 2.0, k: 30.0, b: 0.4}
    model = sls.model_from_mechanics(system, params=params)
    assert [s.name for s in model.state] == ["q", "dq"] and model.kinematics is None
    package = build(model, tmp_path / "slider")
    assert_same_motion(package, reference(system, system.q, [q.diff()], params), random_states(1, 10))


# --------------------------------------------------------------------------
# (e) what cannot be expressed is refused in one line


def refused(obj: object, match: str, **options: object) -> None:
    with pytest.raises(sls.SlsError, match=match) as info:
        sls.model_from_mechanics(obj, **options)
    assert "\n" not in str(info.value)


def test_not_a_mechanics_object_is_refused():
    refused(object(), "expected a KanesMethod, LagrangesMethod or System")


def test_speeds_without_kinematic_equations_are_refused_naming_kinematics():
    q1, u1 = dynamicsymbols("q1 u1")
    N = ReferenceFrame("N")
    P = Point("P")
    P.set_vel(N, u1 * N.x)
    kane = KanesMethod(N, [q1], [u1], bodies=[Particle("p", P, m)])
    refused(kane, r"u1\(t\) are not the coordinate rates .*kinematics")
    system = System()
    system.add_coordinates(q1)
    system.add_speeds(u1)
    system.add_bodies(Particle("p", P, m))
    refused(system, "kinematics")


def test_two_coordinates_moved_by_one_speed_read_as_fewer_speeds():
    """q̇1 = q̇2 = u1: one speed for two coordinates (their difference stays): sls's kinematics with n_v < n_q."""
    q1, q2, u1 = dynamicsymbols("q1 q2 u1")
    N = ReferenceFrame("N")
    P = Point("P")
    P.set_vel(N, u1 * N.x)
    kane = KanesMethod(N, [q1, q2], [u1], kd_eqs=[q1.diff() - u1, q2.diff() - u1], bodies=[Particle("p", P, m)])
    model = sls.model_from_mechanics(kane)
    assert [s.name for s in model.state] == ["q1", "q2", "u1"] and model.kinematics == (model.dq[0], model.dq[0])


def test_a_speed_without_a_coordinate_gets_one(tmp_path):
    """As the wheels of sympy's bicycle: a spin speed whose angle is left out (ignorable) gets the coordinate q_u2
    (q̇_u2 = u2), on which nothing depends."""
    q1, u1, u2 = dynamicsymbols("q1 u1 u2")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    A.set_ang_vel(N, u1 * N.z)
    wheel = ReferenceFrame("wheel")
    wheel.set_ang_vel(A, u2 * A.x)
    pivot = Point("pivot")
    pivot.set_vel(N, 0)
    body = RigidBody("wheel", pivot, wheel, m, (inertia(A, I1, I2, I2), pivot))
    kane = KanesMethod(N, [q1], [u1, u2], kd_eqs=[q1.diff() - u1], bodies=[body])
    kane.kanes_equations([body], [])
    params = {m: 1.0, I1: 0.3, I2: 0.2}
    model = sls.model_from_mechanics(kane, params=params, name="wheel")
    assert [s.name for s in model.state] == ["q1", "q_u2", "u1", "u2"] and model.kinematics is None
    package = build(model, tmp_path / "wheel")
    rhs = reference(kane, kane.q, kane.u, params)
    for x in random_states(2, 10):
        got = package.xdot_fun(x, np.zeros(package.N_INPUTS))
        np.testing.assert_allclose(got[[0, 2, 3]], rhs(x[[0, 2, 3]]), atol=1e-12)
        assert got[1] == x[3]


def test_an_angular_velocity_that_is_not_the_rate_of_the_orientation_is_refused():
    kane, _ = heavy_top(consistent=False)
    refused(kane, "frame B: its angular velocity in N is not the rate of its orientation")


def test_a_potential_energy_kanes_method_ignores_is_refused():
    kane, _ = heavy_top()
    kane.bodies[0].potential_energy = m * g
    refused(kane, "potential_energy, which KanesMethod ignores")


def test_a_function_of_time_not_declared_an_input_is_refused():
    kane, torque = heavy_top()
    refused(kane, r"depends on T3\(t\), .*declared input", params=TOP)


def test_an_explicit_time_dependence_is_refused():
    kane, _ = heavy_top()
    t = dynamicsymbols._t
    frame = kane.bodies[0].frame
    kane.kanes_equations(kane.bodies, [(frame, sympy.sin(t) * frame.z)])
    refused(kane, "depends on the time t explicitly")


def test_a_lagrangian_linear_in_the_rates_is_refused():
    q1 = dynamicsymbols("q1")
    lagrange = LagrangesMethod(m * q1.diff() ** 2 / 2 + b * q1 * q1.diff(), [q1])
    refused(lagrange, "linear in the rates")


def test_a_configuration_constraint_without_its_velocity_constraint_is_refused():
    refused(cartesian_pendulum(velocity_constraints=False), "time derivatives of the configuration constraints")


def test_the_face_exports_it():
    import sls.readers

    assert sls.model_from_mechanics is sls.readers.model_from_mechanics
