"""The inertial parameters of a robot's bodies (sls.model.inertial): their names, the lumping of fixed links into
the moving link they hang on, and the regressor's columns."""

import numpy as np

from sls.model.inertial import SUFFIXES, lumped, owners, parameter_label, parameter_names, regressor_names
from sls.readers.urdf import load_urdf, parse_urdf

#: A link fixed to a moving one, off its origin and turned: its mass lumped by the parallel-axis theorem.
LUMPED = """<robot name="r">
  <link name="base"/>
  <link name="arm-1"><inertial><origin xyz="0.1 0 0"/><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
  <link name="tool"><inertial><origin xyz="0 0.2 0" rpy="0 0 1.5707963267948966"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm-1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="weld" type="fixed"><parent link="arm-1"/><child link="tool"/><origin xyz="0 0 0.5"/></joint>
</robot>"""


def test_names_are_identifiers():
    assert parameter_label("arm-1") == "arm_1" and parameter_label("1st link") == "link_1st_link"
    assert parameter_label("_hidden") == "link_hidden"
    assert parameter_names("arm-1") == tuple(f"arm_1_{s}" for s in SUFFIXES)
    assert SUFFIXES == ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def test_fixed_links_are_lumped_into_their_moving_link():
    robot = parse_urdf(LUMPED, "r.urdf")
    assert owners(robot)["tool"][0] == "arm-1" and owners(robot)["base"] is None
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = lumped(robot)["arm-1"]
    c_tool = np.array([0.0, 0.2, 0.5])  # the tool's centre of mass in arm-1's frame; its inertia turned a quarter
    I_tool = np.diag([0.02, 0.01, 0.03]) + 1.0 * (c_tool @ c_tool * np.eye(3) - np.outer(c_tool, c_tool))
    c_arm = np.array([0.1, 0.0, 0.0])
    I_arm = np.diag([0.1, 0.2, 0.3]) + 2.0 * (c_arm @ c_arm * np.eye(3) - np.outer(c_arm, c_arm))
    total = I_tool + I_arm
    np.testing.assert_allclose([m, hx, hy, hz], [3.0, *(2.0 * c_arm + 1.0 * c_tool)], atol=1e-15)
    places = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
    np.testing.assert_allclose([xx, xy, yy, xz, yz, zz], [total[i, j] for i, j in places], atol=1e-15)


def test_the_regressor_columns(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(LUMPED.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1"/><dynamics damping="0.5"/>'))
    assert regressor_names(load_urdf(path)) == ()
    model = load_urdf(path, inertial_params="all")
    assert regressor_names(model) == parameter_names("arm-1") + ("damping_j",)
    assert model.tree.inertial_params == ("arm-1",)
    assert model.params["arm_1_m"] == 3.0 and model.params["damping_j"] == 0.5
