"""sympy.physics.mechanics systems of sympy's and PyDy's own tests and examples, read as written
(:func:`sls.model_from_mechanics`): fewer speeds than coordinates (sympy's quaternion free body, ``sub_qdot``),
dependent speeds beyond the coordinates (sympy's Whipple bicycle of ``test_kane3`` and its benchmark eigenvalues,
``non_central_inertia``), a ``System`` whose speeds are its rates in another order, PyDy's 9-DOF 3-D n-body
pendulum, sympy's chaos pendulum as a ``System`` read again and again, and a refusal that names its place once.

Each system is built as its source builds it; the reference is the object's own right-hand side
(``mass_matrix_full⁻¹ forcing_full``) or, for the quaternion body, the Newton–Euler equations in the body frame.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import sympy
from conftest import build
from sympy import Matrix, S, acos, cos, pi, sin, sqrt, symbols
from sympy.physics.mechanics import (
    KanesMethod,
    LagrangesMethod,
    Particle,
    PinJoint,
    Point,
    PrismaticJoint,
    ReferenceFrame,
    RigidBody,
    System,
    TorqueActuator,
    dot,
    dynamicsymbols,
    inertia,
)

import sls

TOLERANCE = 1e-10


def kanes_rhs(method: object, coordinates: list, speeds: list, params: dict, inputs: list = (), zero: list = ()):
    """``x, u ↦ ẋ`` of the object's own equations: the first entries of ``mass_matrix_full⁻¹ forcing_full`` (the
    functions of time in ``zero``, auxiliary speeds, and their rates set to zero)."""
    t = dynamicsymbols._t
    nothing = {f.diff(t): 0 for f in zero} | {f: 0 for f in zero}
    f = sympy.lambdify(
        (list(coordinates) + list(speeds), list(inputs), list(params)),
        [method.mass_matrix_full.subs(nothing), method.forcing_full.subs(nothing)],
        cse=True,
    )

    def rhs(x: np.ndarray, u: np.ndarray = ()) -> np.ndarray:
        M, F = f(list(x), list(u), list(params.values()))
        return np.linalg.solve(np.asarray(M, dtype=float), np.asarray(F, dtype=float).ravel())[: len(x)]

    return rhs


def assert_close(got: np.ndarray, expected: np.ndarray) -> None:
    scale = max(1.0, float(np.abs(expected).max()))
    assert float(np.abs(got - expected).max()) <= TOLERANCE * scale


def dependent_values(constraints: sympy.Matrix, unknowns: list, known: dict, guess: np.ndarray) -> np.ndarray:
    """The values of ``unknowns`` that make ``constraints`` vanish with ``known`` substituted (Newton steps)."""
    residual = sympy.lambdify(unknowns, constraints.xreplace(known), cse=True)
    jacobian = sympy.lambdify(unknowns, constraints.xreplace(known).jacobian(unknowns), cse=True)
    x = np.array(guess, dtype=float)
    for _ in range(50):
        r = np.asarray(residual(*x), dtype=float).ravel()
        if np.abs(r).max() < 1e-14:
            break
        x = x - np.linalg.lstsq(np.asarray(jacobian(*x), dtype=float), r, rcond=None)[0]
    assert np.abs(np.asarray(residual(*x), dtype=float)).max() < 1e-12
    return x


# --------------------------------------------------------------------------
# fewer speeds than coordinates: sympy's quaternion free body (test_kane.py, test_implicit_kinematics)


def quaternion_body():
    """As sympy's test_implicit_kinematics writes it: a unit quaternion (lambda_0 dependent, its norm a configuration
    constraint and its rate a kinematic equation), the position in body axes, body-frame speeds; the bodies and
    loads given to the constructor."""
    NED = ReferenceFrame("NED")
    NED_o = Point("NED_o")
    NED_o.set_vel(NED, 0)
    q_att = dynamicsymbols("lambda_0:4", real=True)
    B = NED.orientnew("B", "Quaternion", q_att)
    q_pos = dynamicsymbols("B_x:z")
    B_cm = NED_o.locatenew("B_cm", q_pos[0] * B.x + q_pos[1] * B.y + q_pos[2] * B.z)
    q_ind = q_att[1:] + q_pos
    q_dep = [q_att[0]]
    B_ang_vel = B.ang_vel_in(NED)
    P, Q, R = dynamicsymbols("P Q R")
    B.set_ang_vel(NED, P * B.x + Q * B.y + R * B.z)
    B_ang_vel_kd = (B.ang_vel_in(NED) - B_ang_vel).simplify()
    kinematic_eqs = [B_ang_vel_kd & B.x, B_ang_vel_kd & B.y, B_ang_vel_kd & B.z]
    B_cm_vel = B_cm.vel(NED)
    U, V, W = dynamicsymbols("U V W")
    B_cm.set_vel(NED, U * B.x + V * B.y + W * B.z)
    B_ref_vel_kd = B_cm.vel(NED) - B_cm_vel
    kinematic_eqs += [B_ref_vel_kd & B.x, B_ref_vel_kd & B.y, B_ref_vel_kd & B.z]
    q_att_vec = Matrix(q_att)
    config_cons = [(q_att_vec.T * q_att_vec)[0] - 1]
    kinematic_eqs = kinematic_eqs + [(q_att_vec.T * q_att_vec.diff())[0]]
    M_B = symbols("M_B")
    J_B = inertia(B, *[S(f"J_B_{ax}") * (1 if ax[0] == ax[1] else -1) for ax in ["xx", "yy", "zz", "xy", "yz", "xz"]])
    J_B = J_B.subs({S("J_B_xy"): 0, S("J_B_yz"): 0})
    RB = RigidBody("RB", B_cm, B, M_B, (J_B, B_cm))
    torque, force = dynamicsymbols("T_z F_z")
    loads = [(RB.masscenter, RB.mass * S("g") * NED.z), (RB.frame, torque * B.z), (RB.masscenter, force * B.z)]
    kane = KanesMethod(
        NED,
        q_ind,
        [U, V, W, P, Q, R],
        q_dependent=q_dep,
        kd_eqs=kinematic_eqs,
        configuration_constraints=config_cons,
        velocity_constraints=[],
        u_dependent=[],
        u_auxiliary=[],
        explicit_kinematics=False,
        bodies=[RB],
        forcelist=loads,
    )
    params = {M_B: 1.3, S("g"): 9.81, S("J_B_xx"): 0.2, S("J_B_yy"): 0.3, S("J_B_zz"): 0.5, S("J_B_xz"): 0.05}
    return kane, params, [torque, force], (NED, B, RB)


def test_sympys_quaternion_free_body_reads_with_fewer_speeds_than_coordinates(tmp_path):
    """7 coordinates, 6 speeds: the quaternion's rates are sls's kinematics (n_v < n_q), its unit norm is kept by
    them (no constraint left); the motion is Newton's and Euler's in the body frame."""
    kane, params, inputs, (NED, B, RB) = quaternion_body()
    model = sls.model_from_mechanics(kane, params=params, inputs=inputs, name="quaternion_body")
    names = [s.name for s in model.state]
    assert names == ["lambda_1", "lambda_2", "lambda_3", "B_x", "B_y", "B_z", "lambda_0", "U", "V", "W", "P", "Q", "R"]
    assert len(model.q) == 7 and len(model.dq) == 6 and not model.constraints and not model.velocity_constraints
    folder = tmp_path / "quaternion_body"
    sls.generate(model, folder, functions=["xdot_fun"])
    from conftest import import_package

    package = import_package(folder)
    values = list(params.values())
    gravity = sympy.lambdify(list(kane.q) + list(params), (RB.mass * S("g") * NED.z).to_matrix(B))
    J = np.array([[0.2, 0, -0.05], [0, 0.3, 0], [-0.05, 0, 0.5]])
    rng = np.random.default_rng(5)
    for _ in range(10):
        quaternion = rng.normal(size=4)
        quaternion /= np.linalg.norm(quaternion)
        l0, l1, l2, l3 = quaternion
        p, v, w, (Tz, Fz) = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3), rng.normal(size=2)
        x = np.concatenate([[l1, l2, l3], p, [l0], v, w])
        weight = np.asarray(gravity(*x[:7], *values), dtype=float).ravel()
        rates = (
            0.5
            * np.array(
                [[0, -w[0], -w[1], -w[2]], [w[0], 0, w[2], -w[1]], [w[1], -w[2], 0, w[0]], [w[2], w[1], -w[0], 0]]
            )
            @ quaternion
        )  # (λ0, λ1, λ2, λ3)
        expected = np.concatenate(
            [
                rates[1:],
                v - np.cross(w, p),
                rates[:1],
                (weight + [0, 0, Fz]) / 1.3 - np.cross(w, v),
                np.linalg.solve(J, [0, 0, Tz] - np.cross(w, J @ w)),
            ]
        )
        assert_close(package.xdot_fun(x, [Tz, Fz]), expected)


#: The values of the parameters of sympy's disc cart (test_sub_qdot, test_non_central_inertia), in the order R, M,
#: g, e, f, theta, a, b, mA, mB, IA, J, K, IA22, IA23, IA33, Q1, Q2, Q3.
CART_VALUES = (0.3, 2.0, 9.81, 0.2, 0.4, 0.3, 0.1, 0.25, 1.0, 0.5, 0.2, 0.05, 0.03, 0.3, 0.01, 0.4, 0.1, 0.2, 0.3)


def test_sympys_sub_qdot_disc_cart_reads_with_fewer_speeds_than_coordinates(generate_package):
    """sympy's test_sub_qdot (Kane 1985, exercises 8.12 and 8.17): three coordinates (the tilt and the wheels'
    angles), two speeds, the wheels' rates from rolling as kinematic equations, an auxiliary speed."""
    q1, q2, q3 = dynamicsymbols("q1:4")
    q1d = dynamicsymbols("q1", level=1)
    u1, u2, u3 = dynamicsymbols("u1:4")
    R, M, g, e, f, theta = symbols("R, M, g, e, f, theta")
    a, b, mA, mB, IA, J, K = symbols("a b mA mB IA J K")
    IA22, IA23, IA33 = symbols("IA22 IA23 IA33")
    Q1, Q2, Q3 = symbols("Q1 Q2 Q3")
    F = ReferenceFrame("F")
    P = F.orientnew("P", "axis", [-theta, F.y])
    A = P.orientnew("A", "axis", [q1, P.x])
    A.set_ang_vel(F, u1 * A.x + u3 * A.z)
    B = A.orientnew("B", "axis", [q2, A.z])
    C = A.orientnew("C", "axis", [q3, A.z])
    pD = Point("D")
    pD.set_vel(A, 0)
    pD.set_vel(F, u2 * A.y)
    pS_star = pD.locatenew("S*", e * A.y)
    pQ = pD.locatenew("Q", f * A.y - R * A.x)
    pA_star = pD.locatenew("A*", a * A.y)
    pB_star = pD.locatenew("B*", b * A.z)
    pC_star = pD.locatenew("C*", -b * A.z)
    for point in [pS_star, pQ, pA_star, pB_star, pC_star]:
        point.v2pt_theory(pD, F, A)
    pB_hat = pB_star.locatenew("B^", -R * A.x)
    pC_hat = pC_star.locatenew("C^", -R * A.x)
    pB_hat.v2pt_theory(pB_star, F, B)
    pC_hat.v2pt_theory(pC_star, F, C)
    kde = [dot(point.vel(F), A.y) for point in [pB_hat, pC_hat]] + [u1 - q1d]
    rbA = RigidBody("rbA", pA_star, A, mA, (inertia(A, IA, IA22, IA33, 0, IA23, 0), pA_star))
    rbB = RigidBody("rbB", pB_star, B, mB, (inertia(B, K, K, J), pB_star))
    rbC = RigidBody("rbC", pC_star, C, mB, (inertia(C, K, K, J), pC_star))
    km = KanesMethod(F, [q1, q2, q3], [u1, u2], kd_eqs=kde, u_auxiliary=[u3])
    km.kanes_equations([rbA, rbB, rbC], [(pS_star, -M * g * F.x), (pQ, Q1 * A.x + Q2 * A.y + Q3 * A.z)])
    params = dict(zip([R, M, g, e, f, theta, a, b, mA, mB, IA, J, K, IA22, IA23, IA33, Q1, Q2, Q3], CART_VALUES))
    model = sls.model_from_mechanics(km, params=params, name="sub_qdot")
    assert [s.name for s in model.state] == ["q1", "q2", "q3", "u1", "u2"] and len(model.kinematics) == 3
    package = generate_package(model)
    rhs = kanes_rhs(km, km.q, km.u, params, zero=[u3])
    rng = np.random.default_rng(6)
    for _ in range(10):
        x = np.concatenate([rng.uniform(-1.2, 1.2, 3), rng.normal(size=2)])
        assert_close(package.xdot_fun(x, np.zeros(package.N_INPUTS)), rhs(x))


def test_fewer_speeds_with_nonholonomic_kinematics_are_refused():
    """A knife edge with its two speeds only (ẋ = v cos θ, ẏ = v sin θ, θ̇ = ω): the directions of v and ω do not
    close, so T(q, v) cannot give its equations; the dependent speeds must be written out."""
    x, y, th, v, w = dynamicsymbols("x y th v w")
    m, J = symbols("m J")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, w * N.z)
    origin = Point("O")
    origin.set_vel(N, 0)
    P = origin.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, v * A.x)
    blade = RigidBody("blade", P, A, m, (inertia(A, J, J, J), P))
    kd = [x.diff() - v * sympy.cos(th), y.diff() - v * sympy.sin(th), th.diff() - w]
    kane = KanesMethod(N, [x, y, th], [v, w], kd_eqs=kd, bodies=[blade], forcelist=[])
    with pytest.raises(sls.SlsError, match="KanesMethod: kinematics are nonholonomic") as info:
        sls.model_from_mechanics(kane)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------
# dependent speeds beyond the coordinates: sympy's Whipple bicycle (test_kane3.py) and test_non_central_inertia


def whipple_bicycle():
    """sympy's test_bicycle (Meijaard et al. 2007 in Kane's method, ported from Autolev) as written: four
    coordinates, six speeds (the wheels' spins have no coordinate), three dependent, a configuration constraint."""
    q1, q2, q4, q5 = dynamicsymbols("q1 q2 q4 q5")
    q1d, q2d, q4d, q5d = dynamicsymbols("q1 q2 q4 q5", 1)
    u1, u2, u3, u4, u5, u6 = dynamicsymbols("u1 u2 u3 u4 u5 u6")
    WFrad, WRrad, htangle, forkoffset = symbols("WFrad WRrad htangle forkoffset")
    forklength, framelength, forkcg1 = symbols("forklength framelength forkcg1")
    forkcg3, framecg1, framecg3, Iwr11 = symbols("forkcg3 framecg1 framecg3 Iwr11")
    Iwr22, Iwf11, Iwf22, Iframe11 = symbols("Iwr22 Iwf11 Iwf22 Iframe11")
    Iframe22, Iframe33, Iframe31, Ifork11 = symbols("Iframe22 Iframe33 Iframe31 Ifork11")
    Ifork22, Ifork33, Ifork31, g = symbols("Ifork22 Ifork33 Ifork31 g")
    mframe, mfork, mwf, mwr = symbols("mframe mfork mwf mwr")
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    Frame = R.orientnew("Frame", "Axis", [q4 + htangle, R.y])
    WR = ReferenceFrame("WR")
    TempFrame = Frame.orientnew("TempFrame", "Axis", [-htangle, Frame.y])
    Fork = Frame.orientnew("Fork", "Axis", [q5, Frame.x])
    TempFork = Fork.orientnew("TempFork", "Axis", [-htangle, Fork.y])
    WF = ReferenceFrame("WF")
    WR_cont = Point("WR_cont")
    WR_mc = WR_cont.locatenew("WR_mc", WRrad * R.z)
    Steer = WR_mc.locatenew("Steer", framelength * Frame.z)
    Frame_mc = WR_mc.locatenew("Frame_mc", -framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew("Fork_mc", -forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew("WF_mc", forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew("WF_cont", WFrad * (dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    Frame_I = (inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31), Frame_mc)
    Fork_I = (inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31), Fork_mc)
    WR_I = (inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)
    WF_I = (inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc)
    BodyFrame = RigidBody("BodyFrame", Frame_mc, Frame, mframe, Frame_I)
    BodyFork = RigidBody("BodyFork", Fork_mc, Fork, mfork, Fork_I)
    BodyWR = RigidBody("BodyWR", WR_mc, WR, mwr, WR_I)
    BodyWF = RigidBody("BodyWF", WF_mc, WF, mwf, WF_I)
    kd = [q1d - u1, q2d - u2, q4d - u4, q5d - u5]
    conlist_speed = [WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z]
    conlist_coord = [WF_cont.pos_from(WR_cont) & Y.z]
    FL = [(Frame_mc, -mframe * g * Y.z), (Fork_mc, -mfork * g * Y.z), (WF_mc, -mwf * g * Y.z), (WR_mc, -mwr * g * Y.z)]
    BL = [BodyFrame, BodyFork, BodyWR, BodyWF]
    KM = KanesMethod(
        N,
        q_ind=[q1, q2, q5],
        q_dependent=[q4],
        configuration_constraints=conlist_coord,
        u_ind=[u2, u3, u5],
        u_dependent=[u1, u4, u6],
        velocity_constraints=conlist_speed,
        kd_eqs=kd,
        constraint_solver="CRAMER",
    )
    KM.kanes_equations(BL, FL)
    # the benchmark's parameters, as test_kane3 enters them
    PaperRadRear = 0.3
    PaperRadFront = 0.35
    HTA = (pi / 2 - pi / 10).evalf()
    TrailPaper = 0.08
    rake = (-(TrailPaper * sin(HTA) - (PaperRadFront * cos(HTA)))).evalf()
    PaperWb = 1.02
    PaperFrameCgX = 0.3
    PaperFrameCgZ = 0.9
    PaperForkCgX = 0.9
    PaperForkCgZ = 0.7
    FrameLength = (PaperWb * sin(HTA) - (rake - (PaperRadFront - PaperRadRear) * cos(HTA))).evalf()
    FrameCGNorm = ((PaperFrameCgZ - PaperRadRear - (PaperFrameCgX / sin(HTA)) * cos(HTA)) * sin(HTA)).evalf()
    FrameCGPar = (
        PaperFrameCgX / sin(HTA) + (PaperFrameCgZ - PaperRadRear - PaperFrameCgX / sin(HTA) * cos(HTA)) * cos(HTA)
    ).evalf()
    tempa = PaperForkCgZ - PaperRadFront
    tempb = PaperWb - PaperForkCgX
    tempc = (sqrt(tempa**2 + tempb**2)).evalf()
    PaperForkL = (PaperWb * cos(HTA) - (PaperRadFront - PaperRadRear) * sin(HTA)).evalf()
    ForkCGNorm = (rake + (tempc * sin(pi / 2 - HTA - acos(tempa / tempc)))).evalf()
    ForkCGPar = (tempc * cos((pi / 2 - HTA) - acos(tempa / tempc)) - PaperForkL).evalf()
    values = {
        WFrad: PaperRadFront,
        WRrad: PaperRadRear,
        htangle: HTA,
        forkoffset: rake,
        forklength: PaperForkL,
        framelength: FrameLength,
        forkcg1: ForkCGPar,
        forkcg3: ForkCGNorm,
        framecg1: FrameCGNorm,
        framecg3: FrameCGPar,
        Iwr11: 0.0603,
        Iwr22: 0.12,
        Iwf11: 0.1405,
        Iwf22: 0.28,
        Ifork11: 0.05892,
        Ifork22: 0.06,
        Ifork33: 0.00708,
        Ifork31: 0.00756,
        Iframe11: 9.2,
        Iframe22: 11,
        Iframe33: 2.8,
        Iframe31: -2.4,
        mfork: 4,
        mframe: 85,
        mwf: 3,
        mwr: 2,
        g: 9.81,
    }
    return KM, {k: float(value) for k, value in values.items()}


#: test_kane3's linearization for (lean, steer, lean rate, steer rate) at forward speed v, its "precomputed" Res.
def benchmark_matrix(v: float) -> np.ndarray:
    return np.array(
        [
            [0, 0, 1.0, 0],
            [0, 0, 0, 1.0],
            [
                9.48977444677355,
                -0.891197738059089 * v**2 - 0.571523173729245,
                -0.105522449805691 * v,
                -0.330515398992311 * v,
            ],
            [
                11.7194768719633,
                -1.97171508499972 * v**2 + 30.9087533932407,
                3.67680523332152 * v,
                -3.08486552743311 * v,
            ],
        ]
    )


@pytest.fixture(scope="module")
def bicycle(tmp_path_factory):
    kane, params = whipple_bicycle()
    model = sls.model_from_mechanics(kane, params=params, name="bicycle")
    return kane, params, model, build(model, tmp_path_factory.mktemp("bicycle") / "bicycle", method="graph")


def test_the_whipple_bicycle_reads_with_its_dependent_speeds_and_moves_as_kanes(bicycle):
    """The wheels' spins get coordinates (q_u3, q_u6); the speeds follow the coordinates (each q̇ is one speed);
    the contact's two rolling conditions are velocity constraints, the front wheel's height a configuration
    constraint. At random states on the constraints xdot_fun is KanesMethod's right-hand side."""
    kane, params, model, package = bicycle
    names = [s.name for s in model.state]
    assert names == ["q1", "q2", "q5", "q4", "q_u3", "q_u6", "u1", "u2", "u5", "u4", "u3", "u6"]
    assert model.kinematics is None and len(model.constraints) == 1 and len(model.velocity_constraints) == 2
    q, u = list(kane.q), list(kane.u)  # [q1, q2, q5, q4], [u2, u3, u5, u1, u4, u6]
    rhs = kanes_rhs(kane, q, u, params)
    height = sympy.Matrix(kane._f_h).xreplace(params)
    rolling = (kane._k_nh * sympy.Matrix(u) + kane._f_nh).xreplace(params)
    rng = np.random.default_rng(11)
    for _ in range(6):
        lean_steer = dict(zip([q[0], q[1], q[2]], rng.uniform(-0.4, 0.4, 3)))
        pitch = dependent_values(height, [q[3]], lean_steer, [0.0])[0]
        coordinates = lean_steer | {q[3]: pitch}
        free = dict(zip(u[:3], rng.normal(size=3)))
        dependent = dependent_values(rolling, u[3:], coordinates | free, np.zeros(3))
        speeds = free | dict(zip(u[3:], dependent))
        x_kane = np.array([coordinates[s] for s in q] + [speeds[s] for s in u], dtype=float)
        by_symbol = coordinates | speeds  # the wheels' angles (q_u3, q_u6) are free: nothing depends on them
        x_sls = np.array([by_symbol.get(dynamicsymbols(name), 0.3) for name in names], dtype=float)
        got = dict(zip(names, package.xdot_fun(x_sls, np.zeros(package.N_INPUTS))))
        assert_close(np.array([got[s.name] for s in q + u]), rhs(x_kane))


def test_the_whipple_bicycle_has_the_benchmark_eigenvalues(bicycle):
    """As test_kane3 checks them: the linearization upright at forward speed v = 0 … 5 m/s, reduced to the
    independent coordinates and speeds through the constraints, restricted to (lean, steer, lean rate, steer
    rate), is the benchmark's matrix to 1e-12 (and so has its eigenvalues: at 5 m/s weave −0.775 ± 4.465i)."""
    _, _, model, package = bicycle
    index = {s.name: i for i, s in enumerate(model.state)}
    n = len(model.q)
    dependent_q, dependent_u = [index["q4"]], [index["u1"], index["u4"], index["u6"]]
    independent = [i for i in range(2 * n) if i not in dependent_q + dependent_u]
    for speed in range(6):
        x = np.zeros(2 * n)
        x[index["u3"]], x[index["u6"]] = speed / 0.3, speed / 0.35  # rolling upright: both wheels at v / radius
        assert np.abs(package.constraint_fun(x)).max() < 1e-14
        A, _ = package.linearized_model(x, np.zeros(package.N_INPUTS))
        rows = package.constraint_jac_fun(x)  # [∂c/∂q; a(q)], k × n
        rates = np.einsum("ijl,j->il", package.constraint_jac_jac_fun(x)[:, :, :n], x[n:])  # ∂(A u)/∂q
        basis = np.zeros((2 * n, len(independent)))  # δx = basis δz over the independent coordinates and speeds
        for column, i in enumerate(independent):
            basis[i, column] = 1.0
        basis[dependent_q[0]] = -(rows[0, :n] @ basis[:n]) / rows[0, dependent_q[0]]
        held = basis[n:].copy()
        held[[i - n for i in dependent_u]] = 0.0
        basis[dependent_u] = -np.linalg.solve(rows[:, [i - n for i in dependent_u]], rates @ basis[:n] + rows @ held)
        reduced = (A @ basis)[independent]
        pick = [independent.index(index[name]) for name in ("q2", "q5", "u2", "u5")]
        lean_steer = reduced[np.ix_(pick, pick)]
        assert np.abs(lean_steer - benchmark_matrix(speed)).max() < 1e-12
    weave = np.linalg.eigvals(lean_steer)
    assert np.abs(np.sort_complex(weave) - np.sort_complex(np.linalg.eigvals(benchmark_matrix(5.0)))).max() < 1e-10
    assert np.abs(weave - complex(-0.77534188, 4.46486771)).min() < 1e-7


def test_sympys_non_central_inertia_cart_reads_with_more_speeds_than_coordinates(generate_package):
    """sympy's test_non_central_inertia (Kane 1985, 8.12 and 8.17): three coordinates, four speeds (the cart's
    forward speed u2 has no coordinate: it gets q_u2, and the speeds follow the coordinates), the wheels' rates
    dependent through rolling, an auxiliary speed."""
    q1, q2, q3 = dynamicsymbols("q1:4")
    q1d, q2d, q3d = dynamicsymbols("q1:4", level=1)
    u1, u2, u3, u4, u5 = dynamicsymbols("u1:6")
    R, M, g, e, f, theta = symbols("R, M, g, e, f, theta")
    a, b, mA, mB, IA, J, K = symbols("a b mA mB IA J K")
    Q1, Q2, Q3 = symbols("Q1, Q2 Q3")
    IA22, IA23, IA33 = symbols("IA22 IA23 IA33")
    F = ReferenceFrame("F")
    P = F.orientnew("P", "axis", [-theta, F.y])
    A = P.orientnew("A", "axis", [q1, P.x])
    A.set_ang_vel(F, u1 * A.x + u3 * A.z)
    B = A.orientnew("B", "axis", [q2, A.z])
    C = A.orientnew("C", "axis", [q3, A.z])
    B.set_ang_vel(A, u4 * A.z)
    C.set_ang_vel(A, u5 * A.z)
    pD = Point("D")
    pD.set_vel(A, 0)
    pD.set_vel(F, u2 * A.y)
    pS_star = pD.locatenew("S*", e * A.y)
    pQ = pD.locatenew("Q", f * A.y - R * A.x)
    for point in [pS_star, pQ]:
        point.v2pt_theory(pD, F, A)
    pA_star = pD.locatenew("A*", a * A.y)
    pB_star = pD.locatenew("B*", b * A.z)
    pC_star = pD.locatenew("C*", -b * A.z)
    for point in [pA_star, pB_star, pC_star]:
        point.v2pt_theory(pD, F, A)
    pB_hat = pB_star.locatenew("B^", -R * A.x)
    pC_hat = pC_star.locatenew("C^", -R * A.x)
    pB_hat.v2pt_theory(pB_star, F, B)
    pC_hat.v2pt_theory(pC_star, F, C)
    kde = [q1d - u1, q2d - u4, q3d - u5]
    vc = [dot(point.vel(F), A.y) for point in [pB_hat, pC_hat]]
    rbA = RigidBody("rbA", pA_star, A, mA, (inertia(A, IA, IA22, IA33, 0, IA23, 0), pA_star))
    rbB = RigidBody("rbB", pB_star, B, mB, (inertia(B, K, K, J), pB_star))
    rbC = RigidBody("rbC", pC_star, C, mB, (inertia(C, K, K, J), pC_star))
    km = KanesMethod(
        F,
        q_ind=[q1, q2, q3],
        u_ind=[u1, u2],
        kd_eqs=kde,
        u_dependent=[u4, u5],
        velocity_constraints=vc,
        u_auxiliary=[u3],
    )
    km.kanes_equations([rbA, rbB, rbC], [(pS_star, -M * g * F.x), (pQ, Q1 * A.x + Q2 * A.y + Q3 * A.z)])
    params = dict(zip([R, M, g, e, f, theta, a, b, mA, mB, IA, J, K, IA22, IA23, IA33, Q1, Q2, Q3], CART_VALUES))
    model = sls.model_from_mechanics(km, params=params, name="non_central")
    assert [s.name for s in model.state] == ["q1", "q2", "q3", "q_u2", "u1", "u4", "u5", "u2"]
    assert len(model.velocity_constraints) == 2
    package = generate_package(model)
    rhs = kanes_rhs(km, km.q, km.u, params, zero=[u3])
    rolling = (km._k_nh * sympy.Matrix(km.u) + km._f_nh).xreplace(params | {u3: 0})
    rng = np.random.default_rng(7)
    for _ in range(8):
        coordinates = dict(zip(km.q, rng.uniform(-1.2, 1.2, 3)))
        free = dict(zip([u1, u2], rng.normal(size=2)))
        wheels = dependent_values(rolling, [u4, u5], coordinates | free, np.zeros(2))
        x = np.array(list(coordinates.values()) + list(free.values()) + list(wheels), dtype=float)  # Kane's order
        x_sls = np.array([*x[:3], 0.4, x[3], x[5], x[6], x[4]])  # q1 q2 q3 q_u2 u1 u4 u5 u2
        got = package.xdot_fun(x_sls, np.zeros(package.N_INPUTS))
        assert got[3] == x[4]  # q̇_u2 = u2
        assert_close(got[[0, 1, 2, 4, 7, 5, 6]], rhs(x))


def test_sympys_aux_dep_rolling_disc_reads_with_its_dependent_speeds(generate_package):
    """sympy's test_aux_dep: a rolling disc with a dependent coordinate (the centre's height), three dependent speeds
    (the centre's velocity; two of them no coordinate's rate: they get q_u3 and q_u4) and auxiliary contact speeds."""
    r, m, g, I, J = symbols("r m g I J")  # noqa: E741
    Fx, Fy, Fz = symbols("Fx Fy Fz")
    t = dynamicsymbols._t
    q = dynamicsymbols("q:4")
    qd = [qi.diff(t) for qi in q]
    u = dynamicsymbols("u:6")
    ua = dynamicsymbols("ua:3")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q[0], N.z])
    B = A.orientnew("B", "Axis", [q[1], A.x])
    C = B.orientnew("C", "Axis", [q[2], B.y])
    C.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    C.set_ang_acc(N, C.ang_vel_in(N).diff(t, B) + B.ang_vel_in(N).cross(C.ang_vel_in(N)))
    P = Point("P")
    P.set_vel(N, ua[0] * A.x + ua[1] * A.y + ua[2] * A.z)
    O = P.locatenew("O", q[3] * A.z + r * sin(q[1]) * A.y)  # noqa: E741
    O.set_vel(N, u[3] * A.x + u[4] * A.y + u[5] * A.z)
    O.set_acc(N, O.vel(N).diff(t, A) + A.ang_vel_in(N).cross(O.vel(N)))
    w_c_n_qd = qd[0] * A.z + qd[1] * B.x + qd[2] * B.y
    v_o_n_qd = O.pos_from(P).diff(t, A) + A.ang_vel_in(N).cross(O.pos_from(P))
    kindiffs = Matrix([dot(w_c_n_qd - C.ang_vel_in(N), uv) for uv in B] + [dot(v_o_n_qd - O.vel(N), A.z)])
    f_c = Matrix([dot(-r * B.z, A.z) - q[3]])
    f_v = Matrix([dot(O.vel(N) - (P.vel(N) + C.ang_vel_in(N).cross(O.pos_from(P))), ai).expand() for ai in A])
    disc = RigidBody("disc", O, C, m, (inertia(B, I, J, I), O))
    kane = KanesMethod(
        N,
        q_ind=q[:3],
        u_ind=u[:3],
        kd_eqs=kindiffs,
        q_dependent=q[3:],
        configuration_constraints=f_c,
        u_dependent=u[3:],
        velocity_constraints=f_v,
        u_auxiliary=ua,
    )
    kane.kanes_equations([disc], [(O, m * g * A.z), (P, Fx * A.x + Fy * A.y + Fz * A.z)])
    params = {r: 0.3, m: 2.0, g: 9.81, I: 0.05, J: 0.1, Fx: 0.0, Fy: 0.0, Fz: 0.0}
    model = sls.model_from_mechanics(kane, params=params, name="aux_dep")
    names = [s.name for s in model.state]
    assert names == ["q0", "q1", "q2", "q3", "q_u3", "q_u4", "u0", "u1", "u2", "u3", "u4", "u5"]
    assert len(model.constraints) == 1 and len(model.velocity_constraints) == 2
    package = generate_package(model)
    rhs = kanes_rhs(kane, kane.q, kane.u, params, zero=list(ua))
    rolling = (kane._k_nh * sympy.Matrix(kane.u) + kane._f_nh).xreplace(params | {a: 0 for a in ua})
    rng = np.random.default_rng(9)
    for _ in range(8):
        coordinates = dict(zip(q[:3], rng.uniform(-1.2, 1.2, 3)))
        coordinates[q[3]] = -0.3 * np.cos(coordinates[q[1]])
        free = dict(zip(u[:3], rng.normal(size=3)))
        dependent = dependent_values(rolling, u[3:], coordinates | free, np.zeros(3))
        x = np.array([coordinates[s] for s in q] + [free[s] for s in u[:3]] + list(dependent), dtype=float)
        got = package.xdot_fun(np.concatenate([x[:4], [0.2, -0.1], x[4:]]), np.zeros(package.N_INPUTS))
        assert_close(np.concatenate([got[:4], got[6:]]), rhs(x))


# --------------------------------------------------------------------------
# a System whose speeds are its coordinates' rates in another order (test_system_class, the cart pendulum)


def test_a_system_with_the_rates_in_another_order_reads_as_the_rates(generate_package):
    """sympy's cart pendulum with LagrangesMethod after ``q_ind, q_dep = qp, qc``: System.q = [qp, qc] while its
    speeds are the joints' [qc', qp']."""
    g, l, mc, mp, k = symbols("g l mc mp k")  # noqa: E741
    F, qp, qc = dynamicsymbols("F qp qc")
    qpd, qcd = dynamicsymbols("qp qc", 1)
    rail = RigidBody("rail")
    cart = RigidBody("cart", mass=mc)
    bob = Particle("bob", mass=mp)
    bob_frame = ReferenceFrame("bob_frame")
    system = System.from_newtonian(rail)
    slider = PrismaticJoint("slider", rail, cart, qc, qcd, joint_axis=rail.x)
    pin = PinJoint(
        "pin", cart, bob, qp, qpd, joint_axis=cart.z, child_interframe=bob_frame, child_point=l * bob_frame.y
    )
    system.add_joints(slider, pin)
    for body in system.bodies:
        body.potential_energy = body.mass * g * body.masscenter.pos_from(system.fixed_point).dot(system.y)
    system.add_loads((cart.masscenter, F * rail.x))
    system.add_actuators(TorqueActuator(k * qp, cart.z, bob_frame, cart))
    system.add_holonomic_constraints(sympy.sympify(bob.masscenter.pos_from(rail.masscenter).dot(system.x)))
    system.q_ind, system.q_dep = qp, qc
    assert list(system.q) == [qp, qc] and list(system.u) == [qcd, qpd]
    system.form_eoms(LagrangesMethod)
    params = {g: 9.81, l: 0.5, mc: 1.0, mp: 0.3, k: 2.0}
    model = sls.model_from_mechanics(system, params=params, inputs=[F], name="cart_pendulum")
    assert [s.name for s in model.state] == ["qp", "qc", "dqp", "dqc"] and model.kinematics is None
    assert len(model.constraints) == 1
    package = generate_package(model)
    rhs = kanes_rhs(system.eom_method, [qp, qc], [qpd, qcd], params, [F])
    rng = np.random.default_rng(2)
    for _ in range(10):
        angle, rate, force = rng.uniform(-1, 1), rng.normal(), rng.normal(size=1)
        x = np.array([angle, -0.5 * np.sin(angle), rate, -0.5 * np.cos(angle) * rate])
        assert_close(package.xdot_fun(x, force), rhs(x, force))


# --------------------------------------------------------------------------
# PyDy's 3-D n-body pendulum (docs/examples/3d-n-body-pendulum), n = 3: nine coordinates, nine speeds


def n_body_pendulum(n: int = 3):
    """As PyDy's example writes it: balls on massless rods, each body's orientation XYZ body-fixed in the previous
    one, its speeds its angular velocity in its own axes; a red dot of mass m1 on each ball; collisions as
    Heaviside springs."""
    m, m1, g, r, l, reibung, k = symbols("m, m1, g, r, l, reibung, k")  # noqa: E741
    iXX, iYY, iZZ = symbols("iXX, iYY, iZZ")
    q, u, A, Dmc, P, punkt = [], [], [], [], [], []
    for i in range(n):
        for j in ("x", "y", "z"):
            q.append(dynamicsymbols("q" + j + str(i)))
            u.append(dynamicsymbols("u" + j + str(i)))
        A.append(ReferenceFrame("A" + str(i)))
        Dmc.append(Point("Dmc" + str(i)))
        P.append(Point("P" + str(i)))
        punkt.append(Point("punkt" + str(i)))
    N = ReferenceFrame("N")
    P0 = Point("P0")
    rot, rot1 = [], []
    A[0].orient_body_fixed(N, (q[0], q[1], q[2]), "123")
    rot.append(A[0].ang_vel_in(N))
    A[0].set_ang_vel(N, u[0] * A[0].x + u[1] * A[0].y + u[2] * A[0].z)
    rot1.append(A[0].ang_vel_in(N))
    for i in range(1, n):
        A[i].orient_body_fixed(A[i - 1], (q[3 * i], q[3 * i + 1], q[3 * i + 2]), "123")
        rot.append(A[i].ang_vel_in(N))
        A[i].set_ang_vel(N, u[3 * i] * A[i].x + u[3 * i + 1] * A[i].y + u[3 * i + 2] * A[i].z)
        rot1.append(A[i].ang_vel_in(N))
    P[0].set_pos(P0, 0.0)
    P[0].set_vel(N, 0.0)
    Dmc[0].set_pos(P[0], l / 2.0 * A[0].y)
    Dmc[0].v2pt_theory(P[0], N, A[0])
    punkt[0].set_pos(Dmc[0], r * A[0].z)
    punkt[0].v2pt_theory(Dmc[0], N, A[0])
    for i in range(1, n):
        P[i].set_pos(P[i - 1], l * A[i - 1].y)
        P[i].v2pt_theory(P[i - 1], N, A[i - 1])
        Dmc[i].set_pos(P[i], l / S(2.0) * A[i].y)
        Dmc[i].v2pt_theory(P[i], N, A[i])
        punkt[i].set_pos(Dmc[i], r * A[i].z)
        punkt[i].v2pt_theory(Dmc[i], N, A[i])
    bodies = []
    for i in range(n):
        I = inertia(A[i], iXX, iYY, iZZ)  # noqa: E741
        bodies.append(RigidBody("body" + str(i), Dmc[i], A[i], m, (I, Dmc[i])))
        bodies.append(Particle("punct" + str(I), punkt[i], m1))
    FG = [(Dmc[i], -m * g * N.y) for i in range(n)] + [(punkt[i], -m1 * g * N.y) for i in range(n)]
    FB = []
    for i in range(n):
        for j in range(i + 1, n):
            aa = Dmc[j].pos_from(Dmc[i])
            bb = aa.magnitude()
            aa = aa.normalize()
            FB.append((Dmc[j], k * (2 * r - bb) * aa * sympy.Heaviside(2.0 * r - bb)))
            FB.append((Dmc[i], -k * (2 * r - bb) * aa * sympy.Heaviside(2.0 * r - bb)))
    kd = []
    for i in range(n):
        for uv in A[i]:
            kd.append(dot(rot[i] - rot1[i], uv))
    KM = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=kd)
    KM.kanes_equations(bodies, FG + FB)
    r1, mass = 1.5, 1.0
    i1 = 2.0 / 5.0 * mass * r1**2
    params = {m: mass, m1: mass / 5.0, g: 9.8, r: r1, l: 6.0, iXX: i1, iYY: i1, iZZ: i1, reibung: 0.0, k: 1000.0}
    return KM, params


def test_pydys_3d_n_body_pendulum_reads_in_bounded_time_and_is_kanes():
    """Nine speeds, each body's angular velocity in its own axes: the kinematics are block-triangular (each body's
    rates use its own and its parent's speeds) and are solved by forward substitution, the structure coefficients
    recognised as the constants they are. The model's terms, through sls's Boltzmann–Hamel equations (the
    functions the expanded route generates: M = ∂²T/∂v², h = C v, φ = Sᵀ∂V/∂q), give KanesMethod's motion."""
    from sls.derive.speeds import potential_forces, speed_mass_matrix, velocity_forces
    from sls.model.kinematics import kinematics
    from sls.readers.mechanics_probe import evaluate

    kane, params = n_body_pendulum()
    start = time.perf_counter()
    model = sls.model_from_mechanics(kane, params=params, name="n_body")
    assert time.perf_counter() - start < 120
    assert len(model.q) == len(model.dq) == 9 and len(model.kinematics) == 9
    speeds = kinematics(model.kinematics, model.q, model.dq)
    assert {g for plane in speeds.structure for row in plane for g in row} <= {0, 1, -1}
    h = velocity_forces(model.T, speeds)
    phi = potential_forces(model.V, speeds)
    M = speed_mass_matrix(model.T, model.dq)
    rhs = kanes_rhs(kane, kane.q, kane.u, params)
    by_name = {name: value for name, value in model.params.items()}
    symbols_of = {s.name: s for e in (*h, *phi, *model.fric, *model.kinematics, model.T) for s in e.free_symbols}
    rng = np.random.default_rng(3)
    for _ in range(4):
        x = np.concatenate([rng.uniform(-1, 1, 9), rng.normal(size=9)])
        at = {s: np.array(complex(value)) for s, value in zip(model.state, x)}
        at |= {symbols_of[name]: np.array(complex(value)) for name, value in by_name.items() if name in symbols_of}
        values = np.real(
            np.array(
                [
                    complex(v)
                    for v in evaluate([*h, *phi, *model.fric, *(e for row in M for e in row), *model.kinematics], at)
                ]
            )
        )
        h_x, phi_x, fric_x, M_x, rates = values[:9], values[9:18], values[18:27], values[27:108], values[108:]
        vdot = np.linalg.solve(M_x.reshape(9, 9), -(h_x + phi_x + fric_x))
        assert_close(np.concatenate([rates, vdot]), rhs(x))


# --------------------------------------------------------------------------
# bounds: the chaos pendulum read fifty times in a row, a simplification past its time, a refusal named once


def chaos_pendulum() -> tuple:
    """sympy's test_chaos_pendulum (PyDy's chaos pendulum) as a System of RigidBody and PinJoint objects."""
    mA, mB, lA, lB, IAxx, IBxx, IByy, IBzz, g = symbols("mA, mB, lA, lB, IAxx, IBxx, IByy, IBzz, g")
    theta, phi, omega, alpha = dynamicsymbols("theta phi omega alpha")
    rod = RigidBody("rod", mass=mA)
    rod.inertia = (inertia(rod.frame, IAxx, IAxx, 0), rod.masscenter)
    plate = RigidBody("plate", mass=mB)
    plate.inertia = (inertia(plate.frame, IBxx, IByy, IBzz), plate.masscenter)
    C = RigidBody("C")
    system = System.from_newtonian(C)
    J1 = PinJoint("J1", C, rod, coordinates=theta, speeds=omega, child_point=-lA * rod.z, joint_axis=C.y)
    J2 = PinJoint("J2", rod, plate, coordinates=phi, speeds=alpha, parent_point=(lB - lA) * rod.z, joint_axis=rod.z)
    system.add_joints(J1, J2)
    system.add_loads((rod.masscenter, mA * g * C.z), (plate.masscenter, mB * g * C.z))
    return system, {mA: 0.01, mB: 0.1, lA: 0.05, lB: 0.2, IAxx: 1e-4, IBxx: 2e-4, IByy: 3e-4, IBzz: 1e-4, g: 9.81}


def test_the_chaos_pendulum_system_reads_fifty_times_in_a_row_in_bounded_time():
    """Each reading builds new objects (the order of their terms changes with them): every one ends, each in a
    few seconds, with the same model."""
    first = None
    start = time.perf_counter()
    for _ in range(50):
        system, params = chaos_pendulum()
        begun = time.perf_counter()
        model = sls.model_from_mechanics(system, params=params, name="chaos")
        assert time.perf_counter() - begun < 20
        first = first or model
        assert sympy.expand(model.T - first.T) == 0 and model.V == first.V
    assert time.perf_counter() - start < 150


def test_a_refusal_names_its_place_once():
    """A frame whose orientation uses a function of time that is no coordinate: "body B: frame B: orientation"
    once, after the object's kind."""
    q1, u1, e = dynamicsymbols("q1 u1 e")
    m = symbols("m")
    N = ReferenceFrame("N")
    B = N.orientnew("B", "Axis", [q1 + e, N.z])
    B.set_ang_vel(N, u1 * N.z)
    origin = Point("O")
    origin.set_vel(N, 0)
    P = origin.locatenew("P", N.x)
    P.v2pt_theory(origin, N, B)
    kane = KanesMethod(
        N, [q1], [u1], kd_eqs=[q1.diff() - u1], bodies=[RigidBody("B", P, B, m, (inertia(B, 1, 1, 1), P))], forcelist=[]
    )
    with pytest.raises(sls.SlsError) as info:
        sls.model_from_mechanics(kane)
    message = str(info.value)
    assert message.startswith("KanesMethod: body B: frame B: orientation: depends on e(t)")
    assert message.count("body B") == 1 and "\n" not in message
