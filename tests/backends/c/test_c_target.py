"""The C target (``--target c``): the C-backed package drops in for the Python target, and the
standalone C99 compiles with strict flags and agrees.

Every function is compared with the Python target on the reference systems (both derivation
routes) to 1e-12: single states, batches of every shape (lists, tuples, float32, strided and
Fortran-ordered arrays, broadcast inputs, large batches through the lane kernels and threads),
parameters, and errors. A small C program links the standalone files and checks the C API
itself (``p = NULL``, return codes, batch entry points).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import METHODS, agree, import_package
from systems import SYSTEM_NAMES, systems

import sls
from sls.backends import c as cbackend
from sls.backends.c import body as cbody
from sls.backends.c import build as cbuild

CC = os.environ.get("CC") or "cc"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]

pytestmark = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})")

#: Functions of x alone.
X_FUNCTIONS = [
    "M_fun",
    "M_jac_fun",
    "C_fun",
    "C_jac_fun",
    "phi_fun",
    "phi_jac_fun",
    "fric_fun",
    "fric_jac_fun",
    "input_matrix_fun",
    "input_matrix_jac_fun",
    "T_fun",
    "V_fun",
]


def build_pair(model, folder: Path, method: str = "auto"):
    sls.generate(model, folder / "py", method=method)
    sls.generate(model, folder / "c", method=method, target="c")
    return import_package(folder / "py"), import_package(folder / "c")


@pytest.fixture(scope="session", params=METHODS)
def pair(request, tmp_path_factory):
    """``pair(name)`` → (Python package, C package) of the test system ``name``, per derivation route."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = build_pair(
                systems()[name].make_model(), tmp_path_factory.mktemp(f"c-{name}-{request.param}"), request.param
            )
        return cache[name]

    return get


def calls(system, x, rng):
    """Every function with arguments for state(s) ``x``: name → (args,)."""
    u = rng.normal(size=x.shape[:-1] + (system.m,))
    qdd = rng.normal(size=x.shape[:-1] + (system.n,))
    result = {name: (x,) for name in X_FUNCTIONS}
    result.update({"qddot_fun": (x, u), "linearized_model": (x, u), "tau_fun": (x, qdd)})
    return result


@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_every_function_agrees_with_the_python_target(name, pair):
    py, c = pair(name)
    system = systems()[name]
    rng = np.random.default_rng(1)
    for trial in range(4):
        x = system.sample_state(rng)
        params = system.sample_params(rng) if trial % 2 else {}
        for function, args in calls(system, x, rng).items():
            agree(getattr(c, function)(*args, **params), getattr(py, function)(*args, **params), f"{name} {function}")


@pytest.mark.parametrize("name", SYSTEM_NAMES)
@pytest.mark.parametrize("shape", [(5,), (2, 3), (40,)], ids=["5", "2x3", "40"])
def test_batches_agree(name, shape, pair):
    py, c = pair(name)
    system = systems()[name]
    rng = np.random.default_rng(2)
    X = np.array([system.sample_state(rng) for _ in range(int(np.prod(shape)))]).reshape(shape + (2 * system.n,))
    params = system.sample_params(rng)
    for function, args in calls(system, X, rng).items():
        agree(
            getattr(c, function)(*args, **params), getattr(py, function)(*args, **params), f"{name} {function} {shape}"
        )
    u = rng.normal(size=system.m)  # one input for the whole batch, and one state for a batch of inputs
    agree(c.qddot_fun(X, u), py.qddot_fun(X, u), f"{name} broadcast u")
    x = X.reshape(-1, 2 * system.n)[0]
    agree(
        c.linearized_model(x, np.stack([u, 2 * u])), py.linearized_model(x, np.stack([u, 2 * u])), f"{name} broadcast x"
    )


def test_argument_types_agree(pair):
    py, c = pair("two_link_arm")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 4))
    U = rng.normal(size=(6, 2))
    variants = [
        (list(X[0]), list(U[0])),
        (tuple(X[0]), tuple(U[0])),
        ([1, 2, 0, 1], [0, 1]),  # ints
        (X[0].astype(np.float32), U[0]),
        (X[::2], U[::2]),  # strided
        (np.asfortranarray(X), U),
        (X[:, None, :], U[None, :, :]),  # outer product through broadcasting
        (np.empty((0, 4)), np.empty((0, 2))),
    ]
    for x, u in variants:
        for function in ("qddot_fun", "linearized_model"):
            agree(getattr(c, function)(x, u), getattr(py, function)(x, u), f"{function} {type(x).__name__}")
        agree(c.M_fun(x), py.M_fun(x), "M_fun")
        agree(c.T_fun(x, m1=2), py.T_fun(x, m1=2), "T_fun")
    agree(c.M_fun(x=X[0], m2=1), py.M_fun(x=X[0], m2=1), "keywords")


def test_parameter_arrays_sweep_a_batch(pair):
    py, c = pair("cart_pole")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(7, 4))
    mp = np.linspace(0.1, 1.0, 7)
    agree(c.qddot_fun(X, [1.0], mp=mp), py.qddot_fun(X, [1.0], mp=mp), "qddot_fun parameter array")
    agree(c.M_fun(X, mp=mp), py.M_fun(X, mp=mp), "M_fun parameter array")
    agree(c.M_fun(X[0], mp=np.float64(0.5)), py.M_fun(X[0], mp=np.float64(0.5)), "numpy scalar")


@pytest.mark.parametrize("threads", ["1", "2"])
def test_large_batches_through_lanes_and_threads(threads, tmp_path):
    """20000 states: the lane kernels (blocks of 16 states), threads, and lanes recomputed one by one
    (huge angles beyond the lane sine's range, a non-positive-definite state)."""
    code = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from conftest import import_package
        py, c = import_package(sys.argv[1]), import_package(sys.argv[2])
        rng = np.random.default_rng(5)
        X = np.hstack([rng.uniform(-np.pi, np.pi, (20000, 3)), rng.uniform(-2, 2, (20000, 3))])
        U = rng.uniform(-2, 2, (20000, 3))
        X[17, 1] = 1e6; X[19000, 2] = -3e7
        worst = 0.0
        for f in ("qddot_fun", "linearized_model"):
            got, want = getattr(c, f)(X, U), getattr(py, f)(X, U)
            for g, w in zip(got if isinstance(got, tuple) else [got], want if isinstance(want, tuple) else [want]):
                worst = max(worst, float(np.max(np.abs(g - w) / np.maximum(1.0, np.abs(w)))))
        print(json.dumps(worst))
        """
    )
    model = sls.load_example("mobile_manipulator")
    sls.generate(model, tmp_path / "py")
    sls.generate(model, tmp_path / "c", target="c")
    env = {**os.environ, "SLS_THREADS": threads}
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "py"), str(tmp_path / "c")], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 1e-12


def _non_pd_model():
    # M = [[1, k cos(q1)], [k cos(q1), 1]]: positive definite for |k cos(q1)| < 1.
    return sls.model_from_strings(
        state=["q1", "q2", "dq1", "dq2"],
        T="dq1**2/2 + k*cos(q1)*dq1*dq2 + dq2**2/2",
        V="0",
        fric="0",
        params={"k": 0.5},
        name="indefinite",
    )


def test_errors_are_the_python_targets(tmp_path):
    py, c = build_pair(_non_pd_model(), tmp_path)
    bad, good = [0.0, 0.3, 0.1, 0.2], [1.2, 0.3, 0.1, 0.2]

    def same_error(call, kind, match=None, exact=True):
        with pytest.raises(kind, match=match) as expected:
            call(py)
        with pytest.raises(kind) as got:
            call(c)
        assert str(got.value) == str(expected.value) or not exact

    same_error(lambda p: p.qddot_fun(bad, [0.0, 0.0], k=2.0), np.linalg.LinAlgError, "q1=0")
    same_error(lambda p: p.linearized_model(bad, [0.0, 0.0], k=1.0), np.linalg.LinAlgError, "q1=0")
    same_error(lambda p: p.qddot_fun(np.stack([good, good, bad]), [0.0, 0.0], k=2.0), np.linalg.LinAlgError, "q1=0")
    same_error(
        lambda p: p.qddot_fun(np.tile(good, (40, 1)) * np.r_[np.ones(39), 0.0][:, None], [0.0, 0.0], k=2.0),
        np.linalg.LinAlgError,
    )
    same_error(lambda p: p.M_fun([0.0, 0.0, 0.0]), ValueError, "length 4")
    same_error(lambda p: p.qddot_fun([0.0, np.nan, 0.0, 0.0], [0.0, 0.0]), ValueError, "finite")
    same_error(lambda p: p.qddot_fun(np.full((20, 4), np.inf), [0.0, 0.0]), ValueError, "finite")
    same_error(lambda p: p.qddot_fun([0.0, 0.0, 0.0, 0.0], [0.0]), ValueError, "length 2")
    same_error(
        lambda p: p.qddot_fun([0.0, 0.0, 0.0, 0.0], [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]], k=np.ones(2)), ValueError
    )
    same_error(lambda p: p.M_fun("abc"), ValueError)
    same_error(lambda p: p.M_fun([0.0] * 4, zz=1.0), TypeError, "zz")
    same_error(lambda p: p.M_fun([0.0] * 4, [0.0]), TypeError, "positional")
    same_error(lambda p: p.M_fun([0.0] * 4, x=[0.0] * 4), TypeError, "multiple values")
    same_error(lambda p: p.qddot_fun([0.0] * 4), TypeError, "missing 1 required positional argument: 'u'")
    same_error(lambda p: p.qddot_fun(), TypeError, "missing 2 required positional arguments: 'x' and 'u'")


def test_required_parameters(tmp_path):
    model = sls.model_from_strings(
        state=["q", "dq"],
        T="1/2*m*ell^2*dq^2",
        V="m*g*ell*(1 - cos(q))",
        fric=["b*dq"],
        params={"m": 1.0, "g": 9.81, "b": 0.1},
    )
    py, c = build_pair(model, tmp_path)
    for p in (py, c):
        with pytest.raises(TypeError, match="ell"):
            p.qddot_fun([0.1, 0.2], [0.0])
    agree(c.qddot_fun([0.1, 0.2], [0.0], ell=2.0), py.qddot_fun([0.1, 0.2], [0.0], ell=2.0), "ell given")
    assert c.PARAMS == py.PARAMS


def test_reserved_names_are_renamed(tmp_path):
    """User names C, libm or the generated code use (y0, double, x, out, w, M_PI, ...) are renamed in the C files."""
    model = sls.model_from_strings(
        state=["x", "y0", "out", "w"],
        T="1/2*double*out^2 + 1/2*M_PI*w^2 + j1*out*w*cos(y0 - x)/10",
        V="double*p*(1 - cos(x)) + M_PI*p*(1 - cos(y0))",
        fric=["j1*out", "j1*w"],
        params={"double": 1.5, "p": 9.81, "M_PI": 0.7, "j1": 0.2},
        name="reserved names",
    )
    py, c = build_pair(model, tmp_path)
    rng = np.random.default_rng(6)
    for x in rng.normal(size=(3, 4)):
        for function, args in calls(systems()["pendulum"], x, rng).items():
            if function in ("qddot_fun", "linearized_model"):
                args = (x, rng.normal(size=2))
            elif function == "tau_fun":
                args = (x, rng.normal(size=2))
            agree(getattr(c, function)(*args), getattr(py, function)(*args), function)
    header = (tmp_path / "c" / "c" / "reserved_names.h").read_text()
    assert "y0 -> y0_" in header and "double -> double_" in header
    compile_strict(tmp_path / "c" / "c" / "reserved_names.c", tmp_path)


def compile_strict(source: Path, folder: Path) -> None:
    result = subprocess.run(
        [*CC.split(), *STRICT, "-c", str(source), "-o", str(folder / (source.stem + ".o"))],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_standalone_sources_compile_strictly(name, method, pair, tmp_path):
    _, c = pair(name)
    folder = Path(c.__file__).parent / "c"
    (source,) = folder.glob("*.c")
    compile_strict(source, tmp_path)


def test_long_functions_in_parts_agree(tmp_path, monkeypatch):
    """Bodies longer than PART_LINES become parts sharing a workspace: force that on a small model."""
    monkeypatch.setattr(cbody, "PART_LINES", 7)
    model = sls.load_example("mobile_manipulator")
    py, c = build_pair(model, tmp_path, method="graph")
    text = (tmp_path / "c" / "c" / "mobile_manipulator.c").read_text()
    assert "_part3(" in text and "double w[" in text
    compile_strict(tmp_path / "c" / "c" / "mobile_manipulator.c", tmp_path)
    rng = np.random.default_rng(7)
    system = systems()["mobile_manipulator"]
    for x in (system.sample_state(rng) for _ in range(3)):
        for function, args in calls(system, x, rng).items():
            agree(getattr(c, function)(*args), getattr(py, function)(*args), function)


def _compiled_units(monkeypatch) -> list:
    """Record every compile command of the package's library: a list of ``{source: (flags, text)}``, one per build."""
    builds, run = [], cbuild._run_compiler

    def recording(commands, folder):
        units = {}
        for command in commands:
            if "-c" in command:
                source = command[command.index("-c") + 1]
                units[source] = ([a for a in command if a.startswith("-O")], (Path(folder) / source).read_text())
        if units:
            builds.append(units)
        run(commands, folder)

    monkeypatch.setattr(cbuild, "_run_compiler", recording)
    return builds


def _defined(text: str, prefix: str) -> set:
    """Names of the generated functions (and batch loops) a C source defines."""
    return set(re.findall(rf"^int {prefix}_(\w+)\(", text, flags=re.MULTILINE))


def test_library_units_split_the_functions_by_role(tmp_path, monkeypatch):
    """The package's library compiles every function of the standalone file exactly once: linearized_model
    in a unit of its own, the other solving functions optimized in one unit, the Jacobians in their own
    (cheaply compiled) unit, the rest in a fourth; units with nothing to compile are left out. The C-backed
    values are checked against the Python target."""
    builds = _compiled_units(monkeypatch)
    model = sls.load_example("cart_pole")
    py, c = build_pair(model, tmp_path)
    (units,) = builds
    library = {name: item for name, item in units.items() if name != f"{cbackend.NATIVE}.c"}
    assert set(library) == set(cbackend.UNITS)
    defined = {name: _defined(text, "cart_pole") for name, (_, text) in library.items()}
    standalone = _defined((tmp_path / "c" / "c" / "cart_pole.c").read_text(), "cart_pole")
    assert sorted(f for names in defined.values() for f in names) == sorted(standalone)
    assert {"qddot_fun", "qddot_fun_batch", "xdot_fun"} == defined["c/_solve.c"]
    assert {"linearized_model", "linearized_model_batch"} == defined["c/_linearize.c"]
    assert {f for f in standalone if f.endswith("_jac_fun")} == defined["c/_jac.c"]
    assert {"M_fun", "C_fun", "tau_fun"} <= defined["c/_eval.c"]
    for name in ("c/_linearize.c", "c/_solve.c", "c/_eval.c"):
        assert library[name][0] and library[name][0][-1] != "-O0", f"{name} is compiled without optimization"
    rng = np.random.default_rng(3)
    system = systems()["cart_pole"]
    for x in (system.sample_state(rng) for _ in range(2)):
        for function, args in calls(system, x, rng).items():
            agree(getattr(c, function)(*args), getattr(py, function)(*args), function)

    sls.generate(model, tmp_path / "few", target="c", functions=["qddot_fun", "M_fun"])
    assert set(builds[1]) == {"c/_solve.c", "c/_eval.c", f"{cbackend.NATIVE}.c"}
    assert _defined(builds[1]["c/_eval.c"][1], "cart_pole") == {"M_fun"}


def test_long_functions_parts_are_compiled_in_units_of_their_own(tmp_path, monkeypatch):
    """A function with more than ``UNIT_PARTS`` parts keeps its last parts in its unit and has the others
    compiled in units of their own (``c/_linearize_1.c``, …), each part defined exactly once (and ``static`` only
    in the standalone file); the package agrees with the Python target."""
    monkeypatch.setattr(cbackend, "UNIT_PARTS", 2)
    builds = _compiled_units(monkeypatch)
    model = sls.load_example("ur5")
    py, c = build_pair(model, tmp_path)
    (units,) = builds
    standalone = (tmp_path / "c" / "c" / "ur5.c").read_text()
    parts = set(re.findall(r"^static UR5_NOINLINE int (ur5_linearized_model_part\d+)\(", standalone, re.MULTILINE))
    assert len(parts) > 2
    defined = [
        name
        for _, text in units.values()
        for name in re.findall(r"^UR5_NOINLINE int (ur5_linearized_model_part\d+)\(", text, re.MULTILINE)
    ]
    assert sorted(defined) == sorted(parts)
    extra = sorted(name for name in units if name.startswith("c/_linearize_"))
    assert extra == [f"c/_linearize_{k}.c" for k in range(1, len(extra) + 1)] and len(extra) == (len(parts) - 1) // 2
    assert {tuple(units[name][0]) for name in extra} == {tuple(units["c/_linearize.c"][0])}
    assert "ur5_solve_rows(" in units["c/_linearize.c"][1] and "ur5_solve_rows(" not in units[extra[0]][1]
    rng = np.random.default_rng(5)
    for _ in range(3):
        x, u = rng.normal(size=12), rng.normal(size=6)
        agree(c.linearized_model(x, u), py.linearized_model(x, u), "ur5 linearized_model")
        agree(c.qddot_fun(x, u), py.qddot_fun(x, u), "ur5 qddot_fun")


C_PROGRAM = r"""
#include <math.h>
#include <stdio.h>
#include "cart_pole.h"

static void show(const char *name, const double *v, int count)
{
    int k;
    printf("%s", name);
    for (k = 0; k < count; ++k) printf(" %.17g", v[k]);
    printf("\n");
}

int main(void)
{
    const double x[4] = {0.3, -0.2, 0.5, 1.5}, u[1] = {2.0}, qdd[2] = {0.1, -0.4};
    const double p[CART_POLE_N_PARAMS] = {1.5, 0.2, 0.7, 9.81}, defaults[CART_POLE_N_PARAMS] = CART_POLE_PARAMS_DEFAULT;
    double out[64], A[16], B[4], X[12], U[3], Q[6], AB[48], BB[12];
    int k;
    if (cart_pole_M_fun(x, NULL, out) != CART_POLE_OK) return 1;
    show("M_fun", out, 4);
    cart_pole_M_fun(x, p, out);
    show("M_fun_p", out, 4);
    cart_pole_M_fun(x, defaults, out);
    show("M_fun_defaults", out, 4);
    cart_pole_C_jac_fun(x, NULL, out);
    show("C_jac_fun", out, 16);
    cart_pole_T_fun(x, p, out);
    show("T_fun_p", out, 1);
    cart_pole_tau_fun(x, qdd, NULL, out);
    show("tau_fun", out, 2);
    cart_pole_qddot_fun(x, u, p, out);
    show("qddot_fun_p", out, 2);
    cart_pole_linearized_model(x, u, NULL, A, B);
    show("A", A, 16);
    show("B", B, 4);
    for (k = 0; k < 12; ++k) X[k] = x[k % 4] + 0.1 * (k / 4);
    for (k = 0; k < 3; ++k) U[k] = u[0] - k;
    printf("batch %d\n", cart_pole_qddot_fun_batch(3, X, U, NULL, Q));
    show("Q", Q, 6);
    printf("batch_lin %d\n", cart_pole_linearized_model_batch(3, X, U, NULL, AB, BB));
    show("AB", AB + 16, 16);
    printf("dims %d %d %d %d\n", CART_POLE_N_DOF, CART_POLE_N_STATE, CART_POLE_N_INPUTS, CART_POLE_N_PARAMS);
    {
        const double lmp[4] = {1.0, 0.1, -0.5, 9.81};  /* l < 0 with mc + mp > 0: M = [[1.1, ml cos], [.., m l^2]] */
        const double zero_mass[4] = {0.0, 0.0, 0.5, 9.81};
        printf("not_pd %d\n", cart_pole_qddot_fun(x, u, zero_mass, out));
        printf("not_pd_lin %d\n", cart_pole_linearized_model(x, u, zero_mass, A, B));
        printf("ok_negative_l %d\n", cart_pole_qddot_fun(x, u, lmp, out));
        for (k = 0; k < 8; ++k) X[k] = 0.0;
        k = cart_pole_qddot_fun_batch(2, X, U, zero_mass, Q);
        printf("batch_not_pd %d %d %d\n", k, isnan(Q[0]) != 0, isnan(Q[3]) != 0);
    }
    return 0;
}
"""


def test_c_program_agrees_with_the_python_target(tmp_path):
    model = sls.load_example("cart_pole")
    py, c = build_pair(model, tmp_path)
    folder = tmp_path / "c" / "c"
    (tmp_path / "main.c").write_text(C_PROGRAM)
    exe = tmp_path / "main"
    built = subprocess.run(
        [
            *CC.split(),
            *STRICT,
            "-I",
            str(folder),
            str(tmp_path / "main.c"),
            str(folder / "cart_pole.c"),
            "-o",
            str(exe),
            "-lm",
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(exe)], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    lines = {line.split()[0]: line.split()[1:] for line in ran.stdout.splitlines()}
    values = {key: np.array([float(v) for v in value]) for key, value in lines.items()}
    x, u, qdd = np.array([0.3, -0.2, 0.5, 1.5]), np.array([2.0]), np.array([0.1, -0.4])
    params = dict(zip(py.PARAMS, [1.5, 0.2, 0.7, 9.81]))
    agree(values["M_fun"], py.M_fun(x).ravel(), "M_fun")
    agree(values["M_fun_p"], py.M_fun(x, **params).ravel(), "M_fun with p")
    agree(values["M_fun_defaults"], py.M_fun(x).ravel(), "PARAMS_DEFAULT")
    agree(values["C_jac_fun"], py.C_jac_fun(x).ravel(), "C_jac_fun (row-major, state index last)")
    agree(float(values["T_fun_p"][0]), py.T_fun(x, **params), "T_fun")
    agree(values["tau_fun"], py.tau_fun(x, qdd), "tau_fun")
    agree(values["qddot_fun_p"], py.qddot_fun(x, u, **params), "qddot_fun")
    A, B = py.linearized_model(x, u)
    agree(values["A"], A.ravel(), "A")
    agree(values["B"], B.ravel(), "B")
    X = np.array([x + 0.1 * k for k in range(3)])
    U = np.array([[2.0], [1.0], [0.0]])
    assert lines["batch"] == ["0"] and lines["batch_lin"] == ["0"]
    agree(values["Q"], py.qddot_fun(X, U).ravel(), "qddot_fun_batch")
    agree(values["AB"], py.linearized_model(X, U)[0][1].ravel(), "linearized_model_batch")
    assert lines["dims"] == ["2", "4", "1", "4"]
    assert lines["not_pd"] == ["1"] and lines["not_pd_lin"] == ["1"] and lines["ok_negative_l"] == ["0"]
    assert lines["batch_not_pd"] == ["1", "1", "1"]


def test_missing_parameters_return_code(tmp_path):
    model = sls.model_from_strings(
        state=["q", "dq"], T="1/2*m*ell^2*dq^2", V="m*g*ell*(1 - cos(q))", fric=["0"], params={"m": 1.0, "g": 9.81}
    )
    sls.generate(model, tmp_path / "pkg", target="c")
    header = (tmp_path / "pkg" / "c" / "model.h").read_text()
    assert "#define MODEL_MISSING_PARAMS 2" in header and "required" in header
    (tmp_path / "main.c").write_text(
        '#include "model.h"\nint main(void) { double out[1]; const double p[3] = {1.0, 2.0, 9.81};\n'
        "return model_M_fun((const double[2]){0.1, 0.2}, NULL, out) == MODEL_MISSING_PARAMS"
        " && model_M_fun((const double[2]){0.1, 0.2}, p, out) == 0 ? 0 : 1; }\n"
    )
    folder = tmp_path / "pkg" / "c"
    built = subprocess.run(
        [
            *CC.split(),
            *STRICT,
            "-I",
            str(folder),
            str(tmp_path / "main.c"),
            str(folder / "model.c"),
            "-o",
            str(tmp_path / "main"),
            "-lm",
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    assert subprocess.run([str(tmp_path / "main")]).returncode == 0


def test_output_is_deterministic(tmp_path):
    code = "import sys, sls; sls.generate(sls.load_example('acrobot'), sys.argv[1], target='c')"
    texts = []
    for seed in ("0", "777"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", code, str(out)], check=True, env=env)
        texts.append(
            {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.suffix in (".c", ".h", ".py")
            }
        )
    assert texts[0] == texts[1] and "c/acrobot.c" in texts[0] and "_native.c" in texts[0]


def test_regeneration_switches_targets_and_keeps_user_files(tmp_path):
    out = tmp_path / "pkg"
    model = sls.load_example("pendulum")
    sls.generate(model, out)
    sls.generate(model, out, target="c")
    assert not (out / "M_fun.py").exists() and (out / "c" / "pendulum.h").exists()
    (out / "c" / "notes.txt").write_text("mine")
    (out / "script.py").write_text("print('mine')\n")
    sls.generate(model, out, target="c")
    assert (out / "c" / "notes.txt").read_text() == "mine"
    sls.generate(model, out)
    assert (out / "M_fun.py").exists() and not (out / "c" / "pendulum.c").exists() and not list(out.glob("_native*"))
    assert (out / "c" / "notes.txt").read_text() == "mine" and (out / "script.py").exists()
    pkg = import_package(out)
    assert pkg.qddot_fun([0.1, 0.0], [0.0]).shape == (1,)


def test_files_sls_did_not_write_are_never_overwritten(tmp_path):
    out = tmp_path / "pkg"
    out.mkdir()
    library = out / cbackend.native_file_name()
    library.write_bytes(b"\x7fELF not sls's")
    with pytest.raises(sls.OutputError, match="not written by sls"):
        sls.generate(sls.load_example("pendulum"), out, target="c")
    library.unlink()
    (out / "c").mkdir()
    (out / "c" / "pendulum.c").write_text("/* my own controller */\n")
    with pytest.raises(sls.OutputError, match="not written by sls"):
        sls.generate(sls.load_example("pendulum"), out, target="c")


REPO = Path(__file__).resolve().parents[3]


def sls_command(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """``sls ARGS`` as this checkout's ``python -m sls`` (no console script needed)."""
    env = {**(env or os.environ), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "sls", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def test_no_compiler_is_one_error_line(tmp_path):
    result = sls_command(
        "generate",
        "cart_pole",
        "--target",
        "c",
        "--out",
        "out",
        cwd=tmp_path,
        env={**os.environ, "CC": "/nonexistent/cc"},
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert "C compiler" in result.stderr and "--target python" in result.stderr
    assert not (tmp_path / "out").exists()


def test_cli_generates_a_drop_in_package(tmp_path):
    for args in (("--target", "c", "--out", "cp"), ("--out", "cp_py")):
        result = sls_command("generate", "cart_pole", *args, cwd=tmp_path)
        assert result.returncode == 0 and "wrote" in result.stdout, result.stderr
    c, py = import_package(tmp_path / "cp"), import_package(tmp_path / "cp_py")
    import sls.control as ctl

    for pkg in (py, c):
        assert pkg.STATE == ("s", "th", "ds", "dth") and pkg.N_DOF == 2
    design_py = ctl.lqr(py, np.zeros(4), Q=[10, 10, 1, 1], R=1)
    design_c = ctl.lqr(c, np.zeros(4), Q=[10, 10, 1, 1], R=1)
    np.testing.assert_allclose(design_c.K, design_py.K, rtol=1e-10)
    assert sorted(p.name for p in (tmp_path / "cp" / "c").iterdir()) == ["cart_pole.c", "cart_pole.h"]


def test_piecewise_terms_agree(tmp_path):
    """Contact-style laws (Max, and the Heaviside of its derivative) print as C conditionals."""
    model = sls.model_from_strings(
        state=["y", "dy"],
        T="1/2*m*dy^2",
        V="m*g*y + k*Max(0, -y)**2",
        fric=["b*dy"],
        params={"m": 1.0, "g": 9.81, "k": 100.0, "b": 0.1},
        name="bounce",
    )
    for method in METHODS:
        py, c = build_pair(model, tmp_path / method, method)
        for x in ([0.3, 0.1], [-0.2, 0.5], [0.0, 1.0]):
            for function in ("qddot_fun", "linearized_model"):
                agree(getattr(c, function)(x, [0.5]), getattr(py, function)(x, [0.5]), f"{method} {function} at {x}")
            agree(c.phi_jac_fun(x), py.phi_jac_fun(x), "phi_jac_fun")
        compile_strict(tmp_path / method / "c" / "c" / "bounce.c", tmp_path)


def test_readme_c_example_compiles_and_agrees(tmp_path):
    """The C page's program (docs/c-target.md) against the cart-pole it generates."""
    import re

    readme = (REPO / "docs" / "c-target.md").read_text(encoding="utf-8")
    program = re.search(r"```c\n(.*?)```", readme, re.S).group(1)
    assert "sls generate cart_pole --target c --out cart_pole_c" in readme
    sls.generate(sls.load_example("cart_pole"), tmp_path / "cart_pole_c", target="c")
    (tmp_path / "step.c").write_text(program)
    folder = tmp_path / "cart_pole_c" / "c"
    built = subprocess.run(
        [
            *CC.split(),
            *STRICT,
            "-I",
            str(folder),
            str(tmp_path / "step.c"),
            str(folder / "cart_pole.c"),
            "-lm",
            "-o",
            str(tmp_path / "step"),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    out = subprocess.run([str(tmp_path / "step")], capture_output=True, text=True, check=True).stdout
    c = import_package(tmp_path / "cart_pole_c")
    qddot = [float(v) for v in re.search(r"qddot = \[(.*), (.*)\]", out).groups()]
    np.testing.assert_allclose(qddot, c.qddot_fun([0.0, 0.1, 0.0, 0.0], [0.0], mp=0.2), rtol=1e-5)
    x = np.array([0.0, 0.1, 0.0, 0.0])
    for _ in range(100):
        qdd = c.qddot_fun(x, [0.0])
        x = x + 1e-3 * np.concatenate([x[2:], qdd])
    assert abs(float(re.search(r"th\(0.1\) = (\S+)", out).group(1)) - x[1]) < 1e-6
    A, B = c.linearized_model(x, [0.0])
    a, b = (float(v) for v in re.search(r"dthddot/dth = (\S+), dthddot/dF = (\S+)", out).groups())
    np.testing.assert_allclose([a, b], [A[3, 1], B[3, 0]], rtol=1e-4)


ROBOT_PROGRAM = r"""
#include <stdio.h>
#include "ur5.h"

int main(void)
{
    double x[UR5_N_STATE], u[UR5_N_INPUTS], A[UR5_N_STATE * UR5_N_STATE], B[UR5_N_STATE * UR5_N_INPUTS];
    int k, status;
    for (k = 0; k < UR5_N_STATE; ++k) x[k] = 0.3 * k - 0.7;
    for (k = 0; k < UR5_N_INPUTS; ++k) u[k] = 0.5 - 0.2 * k;
    status = ur5_linearized_model(x, u, NULL, A, B);
    printf("status %d\nA", status);
    for (k = 0; k < UR5_N_STATE * UR5_N_STATE; ++k) printf(" %.17g", A[k]);
    printf("\nB");
    for (k = 0; k < UR5_N_STATE * UR5_N_INPUTS; ++k) printf(" %.17g", B[k]);
    printf("\n");
    return 0;
}
"""


def test_robot_linearization_with_and_without_clones(tmp_path):
    """A URDF arm's ``linearized_model`` (tree route: long, in parts, its solves in the loops of
    ``ur5_solve_rows``; on GCC x86-64 Linux also built for AVX2 + FMA) in a strict C99 program,
    built as is and with ``UR5_NO_CLONES`` (the baseline code every CPU runs), agrees with the
    Python target, and the file holds the helper and the clone attributes it documents."""
    model = sls.load_example("ur5")
    py, _ = build_pair(model, tmp_path)
    folder = tmp_path / "c" / "c"
    source = (folder / "ur5.c").read_text()
    assert "static void ur5_solve_rows(" in source and "target_clones(" in source and "UR5_NO_CLONES" in source
    (tmp_path / "main.c").write_text(ROBOT_PROGRAM)
    x, u = 0.3 * np.arange(12) - 0.7, 0.5 - 0.2 * np.arange(6)
    A, B = py.linearized_model(x, u)
    for defines in ([], ["-DUR5_NO_CLONES"]):
        exe = tmp_path / f"main{len(defines)}"
        command = [
            *CC.split(),
            *STRICT,
            "-O1",
            *defines,
            "-I",
            str(folder),
            str(tmp_path / "main.c"),
            str(folder / "ur5.c"),
            "-o",
            str(exe),
            "-lm",
        ]
        built = subprocess.run(command, capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        ran = subprocess.run([str(exe)], capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
        lines = {line.split()[0]: line.split()[1:] for line in ran.stdout.splitlines()}
        assert lines["status"] == ["0"], defines
        agree(np.array([float(v) for v in lines["A"]]), A.ravel(), f"A {defines}")
        agree(np.array([float(v) for v in lines["B"]]), B.ravel(), f"B {defines}")


def test_keyword_names_match_interned_or_not(tmp_path):
    """The extension matches keyword names by identity (interned strings, the usual case) and by text
    otherwise: a parameter, ``x`` and ``u`` given under names built at run time are still theirs."""
    model = sls.load_example("cart_pole")
    py, c = build_pair(model, tmp_path)
    x, u = np.array([0.3, -0.2, 0.5, 1.5]), np.array([2.0])
    name = next(iter(py.PARAMS))
    built = "".join(list(name))  # equal text, another string object
    assert built == name and built is not name
    want = py.qddot_fun(x, u, **{name: 2.5})
    agree(c.qddot_fun(x, u, **{built: 2.5}), want, "parameter by a non-interned name")
    agree(c.qddot_fun(**{"".join("x"): x, "".join(["u"]): u, built: 2.5}), want, "x and u by non-interned names")
    agree(c.qddot_fun(x, u, **{name: 2.5}), want, "parameter by its interned name")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        c.qddot_fun(x, u, **{"".join(["bo", "gus"]): 1.0})
