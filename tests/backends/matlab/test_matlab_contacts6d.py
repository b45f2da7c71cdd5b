"""The MATLAB target on 6-D contacts (Octave): Solo-12 with one foot held flat (CONTACT_6D) and one point foot,
qddot_fun and contact_forces_fun (2 x 6: force, moment; the point foot's moment zero) equal to Pinocchio's
constraintDynamics with the same rigid contacts in LOCAL_WORLD_ALIGNED, and linearized_model equal to the Python
package's."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from octave import matlab_vector, needs_octave, octave_matrices

import sls
from sls.readers.urdf import load_urdf

pytestmark = needs_octave
pin = pytest.importorskip("pinocchio")
SOLO = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"
STATES = 5


def test_a_flat_foot_in_matlab_is_constraint_dynamics(tmp_path):
    model = load_urdf(SOLO, floating_base=True, contacts=["FL_FOOT:6d", "HR_FOOT"], name="solo_flat_matlab")
    # the functions called below (every function of a robot on its feet is generated in test_matlab_constrained.py)
    called = ["qddot_fun", "contact_forces_fun", "linearized_model", "contact_forces_jac_fun", "input_matrix_fun"]
    sls.generate(model, tmp_path / "m", target="matlab", functions=called)
    sls.generate(model, tmp_path / model.name, functions=called)
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(tmp_path))
    peer = pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())  # Solo's joints: the same order as sls's
    assert [peer.names[i] for i in range(2, peer.njoints)] == [s for s in package.STATE[7:19]]
    contacts = pin.StdVec_RigidConstraintModel()
    for foot, kind in (("FL_FOOT", pin.ContactType.CONTACT_6D), ("HR_FOOT", pin.ContactType.CONTACT_3D)):
        frame = peer.frames[peer.getFrameId(foot)]
        contacts.append(
            pin.RigidConstraintModel(kind, peer, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED)
        )
    datas = pin.StdVec_RigidConstraintData()
    for contact in contacts:
        datas.append(contact.createData())
    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    rng = np.random.default_rng(21)
    states = [
        (np.concatenate([pin.randomConfiguration(peer, -np.ones(19), np.ones(19)), rng.normal(size=18)]), u)
        for u in rng.normal(size=(STATES, package.N_INPUTS))
    ]
    script = " ".join(
        f"x = {matlab_vector(x)}; u = {matlab_vector(u)}; disp(mat2str(qddot_fun(x, u), 17)); "
        "disp(mat2str(contact_forces_fun(x, u), 17)); [A, B] = linearized_model(x, u); disp(mat2str(A, 17)); "
        "[F_x, F_u] = contact_forces_jac_fun(x, u); disp(mat2str(F_x(:), 17)); disp(mat2str(F_u(:), 17));"
        for x, u in states
    )
    values = octave_matrices(script, tmp_path / "m")
    for index, (x, u) in enumerate(states):
        qddot, forces, A, F_x, F_u = values[5 * index : 5 * index + 5]
        tau = package.input_matrix_fun(x) @ u
        settings = pin.ProximalSettings(1e-12, 0, 1)
        accelerations = pin.constraintDynamics(peer, data, x[:19], x[19:], tau, contacts, datas, settings)
        wrenches = np.zeros((2, 6))
        wrenches[0], wrenches[1, :3] = data.lambda_c[:6], data.lambda_c[6:]
        assert np.abs(qddot.ravel() - accelerations).max() <= 1e-8 * max(1.0, np.abs(accelerations).max())
        assert forces.shape == (2, 6)
        assert np.abs(forces - wrenches).max() <= 1e-8 * max(1.0, np.abs(wrenches).max())
        expected = package.linearized_model(x, u)[0]
        assert np.abs(A - expected).max() <= 1e-9 * max(1.0, np.abs(expected).max())
        for ours, theirs in zip((F_x, F_u), package.contact_forces_jac_fun(x, u)):  # MATLAB's column-major (:)
            assert np.abs(ours.ravel() - theirs.ravel(order="F")).max() <= 1e-9 * max(1.0, np.abs(theirs).max())
