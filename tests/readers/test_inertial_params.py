"""The ``inertial_params`` option of the robot readers (sls.readers.inertial): URDF, a TOML file's [urdf] and [mjcf],
MJCF, the command line's --inertial-params; the same package without it; the one-line refusals."""

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.errors import ModelFileError
from sls.model.inertial import SUFFIXES

DATA = __import__("pathlib").Path(__file__).resolve().parents[1] / "data"


def test_without_the_option_no_inertial_parameter(tmp_path):
    model = sls.load_urdf(DATA / "arm.urdf")
    sls.generate(model, tmp_path / "arm")
    package = import_package(tmp_path / "arm")
    assert not hasattr(package, "PI") and not hasattr(package, "PI_NAMES") and not hasattr(package, "regressor_fun")
    assert not any(name.endswith(tuple(f"_{s}" for s in SUFFIXES)) for name in package.PARAMS)
    assert "regressor" not in (tmp_path / "arm" / "__init__.py").read_text()


def test_named_links_only(tmp_path):
    full = sls.load_urdf(DATA / "arm.urdf", inertial_params="all")
    last = full.tree.inertial_params[-1]
    model = sls.load_urdf(DATA / "arm.urdf", inertial_params=[last])
    assert model.tree.inertial_params == (last,)
    assert [p for p in model.params if p.startswith(last)] == [f"{last}_{s}" for s in SUFFIXES]
    assert not model.warnings()  # parameters tau does not depend on are zero columns, not mistakes


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        ("no_such_link", "inertial_params: 'no_such_link' is not a link of the robot"),
        ([], "inertial_params: name at least one link (or 'all')"),
        ("LINK,LINK", "inertial_params: a link is named twice"),
    ],
)
def test_refusals_are_one_line(chosen, message):
    links = sls.load_urdf(DATA / "arm.urdf", inertial_params="all").tree.inertial_params
    chosen = chosen.replace("LINK", links[0]) if isinstance(chosen, str) else chosen
    with pytest.raises(ModelFileError) as error:
        sls.load_urdf(DATA / "arm.urdf", inertial_params=chosen)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert str(error.value).startswith(str(DATA / "arm.urdf"))


def test_a_fixed_link_names_the_moving_link_it_is_lumped_into():
    with pytest.raises(ModelFileError) as error:
        sls.load_urdf(DATA / "arm.urdf", inertial_params="tool")
    assert str(error.value).endswith(
        "inertial_params: link 'tool' is fixed to link 'lower', whose parameters hold its inertia (lumped); "
        "name 'lower'"
    )
    with pytest.raises(ModelFileError, match="link 'base' never moves .it is fixed to the world."):
        sls.load_urdf(DATA / "arm.urdf", inertial_params="base")


def test_option_on_a_model_that_is_no_robot_file():
    with pytest.raises(ModelFileError, match="is not a URDF robot: floating_base, frames and inertial_params"):
        sls.load_example("pendulum", inertial_params="all")


def test_command_line(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sls.cli.app import main

    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["generate", "ur5", "--inertial-params", "wrist_3_link", "-o", "pkg", "-q"])
    assert done.exit_code == 0, done.output
    package = import_package(tmp_path / "pkg")
    assert package.PI_NAMES == tuple(f"wrist_3_link_{s}" for s in SUFFIXES)
    x, a = np.linspace(-1, 1, 12), np.linspace(0, 1, 6)
    # some links chosen: Y PI is their part of tau, the rest is tau with their parameters zero
    rest = package.tau_fun(x, a, **dict.fromkeys(package.PI_NAMES, 0.0))
    np.testing.assert_allclose(package.regressor_fun(x, a) @ package.PI + rest, package.tau_fun(x, a), atol=1e-12)
    wrong = CliRunner().invoke(main, ["generate", "ur5", "--inertial-params", "wrist3_link", "-o", "pkg2", "-q"])
    assert wrong.exit_code == 1
    assert wrong.stderr.strip().endswith("'wrist3_link' is not a link of the robot; did you mean 'wrist_3_link'?")
    assert len(wrong.stderr.strip().splitlines()) == 1
    other = CliRunner().invoke(main, ["generate", "pendulum", "--inertial-params", "all", "-o", "pkg3", "-q"])
    assert other.exit_code == 2 and "--inertial-params goes with a robot file" in other.stderr


def test_toml_model_files(tmp_path):
    (tmp_path / "arm.urdf").write_text((DATA / "arm.urdf").read_text())
    (tmp_path / "arm.toml").write_text('inertial_params = "all"\n[urdf]\nfile = "arm.urdf"\n')
    model = sls.load_toml(tmp_path / "arm.toml")
    assert model.tree.inertial_params == sls.load_urdf(DATA / "arm.urdf", inertial_params="all").tree.inertial_params
    (tmp_path / "bad.toml").write_text('inertial_params = 3\n[urdf]\nfile = "arm.urdf"\n')
    with pytest.raises(ModelFileError, match="'inertial_params' must be a list of link names"):
        sls.load_toml(tmp_path / "bad.toml")


def test_mjcf(tmp_path):
    """The MJCF reader's bodies, and its joints' armature as parameters (columns of the regressor, after the
    damping): tau unchanged at the defaults, Y PI = tau."""
    path = DATA / "mjcf" / "reacher.xml"
    for name, options in (("plain", {}), ("params", {"inertial_params": "all"})):
        sls.generate(sls.load_mjcf(path, **options), tmp_path / name)
    plain, params = import_package(tmp_path / "plain"), import_package(tmp_path / "params")
    assert params.PI_NAMES[-4:] == ("damping_joint0", "damping_joint1", "armature_joint0", "armature_joint1")
    rng = np.random.default_rng(1)
    for _ in range(5):
        x, a = rng.normal(size=len(plain.STATE)), rng.normal(size=plain.N_V)
        np.testing.assert_allclose(params.tau_fun(x, a), plain.tau_fun(x, a), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(params.regressor_fun(x, a) @ params.PI, params.tau_fun(x, a), atol=1e-12)
    (tmp_path / "m.toml").write_text(f'inertial_params = ["nope"]\n[mjcf]\nfile = "{path}"\n')
    with pytest.raises(ModelFileError, match="'nope' is not a link of the robot"):
        sls.load_toml(tmp_path / "m.toml")


def test_the_energies_agree_with_the_tree(tmp_path):
    """The reader's T and V in the parameters (the fixed tool lumped into its link) give the tree route's regressor,
    torques and mass matrix on the graph and expanded routes."""
    model = sls.load_urdf(DATA / "arm.urdf", inertial_params="all")
    packages = {}
    for method in ("tree", "graph", "expanded"):
        sls.generate(model, tmp_path / method, method=method, functions=["M_fun", "tau_fun", "regressor_fun"])
        packages[method] = import_package(tmp_path / method)
    tree = packages["tree"]
    rng = np.random.default_rng(5)
    for _ in range(5):
        x, a = rng.normal(size=len(tree.STATE)), rng.normal(size=tree.N_V)
        for package in packages.values():
            np.testing.assert_allclose(package.regressor_fun(x, a), tree.regressor_fun(x, a), atol=1e-12)
            np.testing.assert_allclose(package.tau_fun(x, a), tree.tau_fun(x, a), atol=1e-12)
            np.testing.assert_allclose(package.M_fun(x), tree.M_fun(x), atol=1e-12)


def test_two_links_with_the_same_parameter_names(tmp_path):
    text = (DATA / "arm.urdf").read_text()
    links = sls.load_urdf(DATA / "arm.urdf", inertial_params="all").tree.inertial_params
    clash = links[0].replace("_", "-") if "_" in links[0] else links[0] + "-x"
    twin = clash.replace("-", "_")
    path = tmp_path / "twins.urdf"
    path.write_text(text.replace(f'"{links[0]}"', f'"{clash}"').replace(f'"{links[1]}"', f'"{twin}"'))
    with pytest.raises(ModelFileError, match=f"links '{clash}' and '{twin}' both give the parameter names"):
        sls.load_urdf(path, inertial_params="all")
