"""The generated standalone C runs clean under AddressSanitizer and UndefinedBehaviorSanitizer.

For every bundled example the C target accepts (``ur5`` is the benchmark arm: the UR5 of ``python -m benchmarks``;
example-robot-data's file differs only by massless frames), for a rigid body with generalized speeds and for a drone
with a quaternion base (more coordinates than speeds), a small C driver is generated from the header: it calls every
function the header declares (batch entry points included, with three states) at a few random states, once with a
parameter array and once with ``p = NULL``. Every input and output is its own heap block of exactly the documented
size, so a read or write past an array is an AddressSanitizer report. The driver is compiled with
``-fsanitize=address,undefined -fno-sanitize-recover=all`` (at ``-O0``: nothing optimised away, and the UR5 compiles
in a third of ``-O1``'s time) and must exit 0 with no sanitizer report; the values it prints must equal the C-backed
package's (so the driver called what it meant to call).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.nlink import nlink_pendulum

CC = os.environ.get("CC") or "gcc"
SANITIZE = ["-std=c99", "-O0", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
ENV = {
    **os.environ,
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:exitcode=23",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
STATES = 3
BATCH = 3
TOL = 1e-12
PROTOTYPE = re.compile(r"^int (\w+)\(([^)]*)\);$", re.MULTILINE)


def sanitizers_work(tmp: Path) -> str | None:
    """None when ``CC`` builds and runs a sanitized program, else the reason."""
    if shutil.which(CC.split()[0]) is None:
        return f"no C compiler ({CC})"
    source = tmp / "probe.c"
    source.write_text("#include <stdlib.h>\nint main(void) { double *a = malloc(8); a[0] = 1.0; free(a); return 0; }\n")
    built = subprocess.run(
        [*CC.split(), *SANITIZE, str(source), "-o", str(tmp / "probe")], check=False, capture_output=True, text=True
    )
    if built.returncode != 0:
        return (
            f"{CC} cannot build with -fsanitize=address,undefined (libasan/libubsan missing?): "
            f"{built.stderr.strip().splitlines()[-1:]}"
        )
    ran = subprocess.run([str(tmp / "probe")], check=False, capture_output=True, text=True, env=ENV)
    if ran.returncode != 0:
        return f"a sanitized program does not run here: {ran.stderr.strip()[:200]}"
    return None


@pytest.fixture(scope="module")
def sanitizer(tmp_path_factory):
    reason = sanitizers_work(tmp_path_factory.mktemp("probe"))
    if reason:
        pytest.skip(reason)


#: A rigid body with body rates and ZYX Euler-angle kinematics (generalized speeds: ``xdot_fun`` and
#: ``linearized_model`` call ``qdot_fun`` and ``qdot_jac_fun``).
SPEEDS = dict(
    state=["yaw", "pitch", "roll", "w1", "w2", "w3"],
    T="1/2*(I1*w1^2 + I2*w2^2 + I3*w3^2)",
    V="0",
    fric="0",
    kinematics=[
        "(w2*sin(roll) + w3*cos(roll))/cos(pitch)",
        "w2*cos(roll) - w3*sin(roll)",
        "w1 + (w2*sin(roll) + w3*cos(roll))*tan(pitch)",
    ],
    params={"I1": 1.0, "I2": 2.0, "I3": 3.0},
    name="speeds_body",
)


#: A drone: one body, floating by itself with a quaternion base (13 state entries, a tangent-space linearization).
DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""


def c_models() -> list:
    """The bundled examples (the files sls ships, and ``nlink``); the bundled ``ur5`` is the benchmark arm; a body
    with generalized speeds; a drone with a quaternion base."""
    folder = Path(sls.__file__).parent / "examples"
    names = sorted(p.stem for p in folder.iterdir() if p.suffix in (".toml", ".urdf"))
    return [pytest.param(name, id=name) for name in names + ["nlink", "speeds_body", "drone"]]


def load(name: str, folder: Path):
    if name == "speeds_body":
        return sls.model_from_strings(**SPEEDS)
    if name == "drone":
        (folder / "drone.urdf").write_text(DRONE)
        return sls.load_urdf(folder / "drone.urdf")
    return nlink_pendulum(3) if name == "nlink" else sls.load_example(name)


def driver(prefix: str, package, rng) -> tuple:
    """A C program calling every function of ``<prefix>.h``, and the calls it makes.

    Returns ``(source, calls)``: ``calls`` lists ``(label, function, inputs)`` in the order the
    program prints its lines ``label rc v0 v1 ...``.
    """
    header = package_header(package, prefix)
    n, m = package.N_DOF, package.N_INPUTS
    n_q = getattr(package, "N_Q", n)  # more coordinates than speeds with a quaternion base
    params = [1.0 if v is None else float(v) for v in package.PARAMS.values()]
    defaults = all(v is not None for v in package.PARAMS.values())
    sizes = {"x": n_q + n, "u": m, "qddot": n, "p": len(params)}
    states = [
        (
            np.concatenate([rng.uniform(-np.pi, np.pi, n_q), rng.uniform(-1, 1, n)]),
            rng.uniform(-1, 1, m),
            rng.uniform(-1, 1, n),
        )
        for _ in range(STATES)
    ]
    body, calls = [], []
    lines = [f'#include "{prefix}.h"', "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>", ""]
    lines += [
        "static double *block(size_t count, const double *values)",
        "{",
        "    double *p = malloc(count ? count * sizeof(double) : 1);",
        "    if (p == NULL) exit(3);",
        "    if (values != NULL) memcpy(p, values, count * sizeof(double));",
        "    return p;",
        "}",
        "",
        "static void show(const char *label, int rc, const double *v, size_t count)",
        "{",
        "    size_t k;",
        '    printf("%s %d", label, rc);',
        '    for (k = 0; k < count; ++k) printf(" %.17g", v[k]);',
        '    printf("\\n");',
        "}",
        "",
        "int main(void)",
        "{",
    ]
    for match in PROTOTYPE.finditer(header):
        function, arguments = match.group(1), [a.strip() for a in match.group(2).split(",")]
        if not function.startswith(prefix + "_"):
            continue
        short = function[len(prefix) + 1 :]
        batch = short.endswith("_batch")
        base = short[: -len("_batch")] if batch else short
        if base not in package.__all__:  # a constrained model's fused kernel: C only, called by its solves
            continue
        names = [a.split("*")[-1].split()[-1] for a in arguments]
        outputs = [name for name, a in zip(names, arguments) if "*" in a and not a.startswith("const")]
        inputs = [name for name in names if name not in outputs and name != "count"]
        unknown = [name for name in inputs if name not in sizes]
        assert not unknown, f"{function}: inputs {unknown} are not in the README's C API"
        for p_null in [False, True] if defaults and "p" in inputs else [False]:
            selected = [states] if batch else [[s] for s in states[: (1 if p_null else STATES)]]
            for group in selected:
                label = f"c{len(calls)}"
                value = {"x": [s[0] for s in group], "u": [s[1] for s in group], "qddot": [s[2] for s in group]}
                out_shapes = output_shapes(package, base, group[0])
                count = len(group)
                body.append("    {")
                args = []
                for name in names:
                    if name == "count":
                        args.append(f"(size_t){count}")
                    elif name == "p":
                        if p_null:
                            args.append("NULL")
                        else:
                            values = ", ".join(repr(v) for v in params) or "0.0"
                            body.append(f"        static const double v_p[] = {{{values}}};")
                            body.append(f"        double *p = block({len(params)}, v_p);")
                            args.append("p")
                    elif name in inputs:
                        flat = np.concatenate(value[name]).tolist() if sizes[name] else []
                        body.append(
                            f"        static const double v_{name}[] = {{{', '.join(repr(v) for v in flat) or '0.0'}}};"
                        )
                        body.append(f"        double *{name} = block({count * sizes[name]}, v_{name});")
                        args.append(name)
                    else:
                        size = count * int(np.prod(out_shapes[outputs.index(name)]))
                        body.append(f"        double *{name} = block({size}, NULL);")
                        args.append(name)
                body.append(f"        int rc = {function}({', '.join(args)});")
                for name in outputs:
                    size = count * int(np.prod(out_shapes[outputs.index(name)]))
                    body.append(f'        show("{label}_{name}", rc, {name}, {size});')
                for name in names:
                    if name != "count" and not (name == "p" and p_null):
                        body.append(f"        free({name});")
                body.append("    }")
                calls.append((label, base, outputs, group, p_null))
    lines += body + ["    return 0;", "}", ""]
    return "\n".join(lines), calls, params


def package_header(package, prefix: str) -> str:
    return (Path(package.__file__).parent / "c" / f"{prefix}.h").read_text()


def output_shapes(package, function: str, state) -> list:
    """Shapes of the function's outputs at one state (from the C-backed package's Python API)."""
    x, u, qddot = state
    result = python_call(package, function, x, u, qddot, {})
    results = result if isinstance(result, tuple) else (result,)
    return [np.shape(r) for r in results]


def python_call(package, function: str, x, u, qddot, params: dict):
    f = getattr(package, function)
    if function in ("qddot_fun", "xdot_fun", "linearized_model", "multipliers_fun", "contact_forces_fun"):
        return f(x, u, **params)
    if function == "tau_fun":
        return f(x, qddot, **params)
    return f(x, **params)


@pytest.mark.parametrize("name", c_models())
def test_generated_c_is_sanitizer_clean(name, sanitizer, tmp_path):
    model = load(name, tmp_path)
    try:
        sls.generate(model, tmp_path / "pkg", target="c")
    except sls.SlsError as error:
        if "--target c" in str(error) and ("constrain" in str(error) or "cannot" in str(error)):
            pytest.skip(f"the C target refuses this model: {error}")
        raise
    package = import_package(tmp_path / "pkg")
    (header,) = (tmp_path / "pkg" / "c").glob("*.h")
    prefix = header.stem
    source, calls, params = driver(prefix, package, np.random.default_rng(5))
    (tmp_path / "driver.c").write_text(source)
    exe = tmp_path / "driver"
    built = subprocess.run(
        [
            *CC.split(),
            *SANITIZE,
            "-I",
            str(header.parent),
            str(tmp_path / "driver.c"),
            *(str(source) for source in sorted(header.parent.glob("*.c"))),  # with a constrained model's solves
            "-o",
            str(exe),
            "-lm",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(exe)], check=False, capture_output=True, text=True, env=ENV, timeout=120)
    report = ran.stderr
    assert ran.returncode == 0 and "runtime error" not in report and "Sanitizer" not in report, report[-3000:]
    printed = {}
    for line in ran.stdout.splitlines():
        label, rc, *values = line.split()
        printed[label] = (int(rc), np.array([float(v) for v in values]))
    kwargs = dict(zip(package.PARAMS, params))
    called = set()
    for label, function, outputs, group, p_null in calls:
        called.add(function)
        X = np.array([s[0] for s in group])
        U = np.array([s[1] for s in group])
        Q = np.array([s[2] for s in group])
        want = python_call(package, function, X, U, Q, {} if p_null else kwargs)
        want = want if isinstance(want, tuple) else (want,)
        for output, expected in zip(outputs, want):
            rc, got = printed[f"{label}_{output}"]
            assert rc == 0, f"{function} returned {rc}"
            expected = np.asarray(expected, float).ravel()
            scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
            np.testing.assert_allclose(
                got, expected, rtol=TOL, atol=TOL * scale, err_msg=f"{function} ({label}, {output})"
            )
    # not vdot_fun = qddot_fun, nor the Python functions of a quaternion base's _free_flyer.py
    runtime = package.__name__ + "._free_flyer"
    compiled = {name for name in package.__all__ if getattr(package, name).__module__ != runtime}
    own = {name for name in compiled if getattr(package, name).__name__ == name}
    assert own <= called, f"functions of the package the driver did not call: {own - called}"
