"""The C target: standalone C99 for controllers, and a Python package backed by it.

``sls generate MODEL --target c --out DIR`` writes

* ``DIR/c/<name>.h`` and ``DIR/c/<name>.c`` — C99, libm only, no
  allocation, no mutable globals, re-entrant: one function
  ``<name>_<function>`` per generated function (:mod:`sls.functions`) and
  ``_batch`` loops for ``qddot_fun`` and ``linearized_model``;
* ``DIR/_native.c`` — a small CPython extension (stable ABI on Python ≥ 3.11)
  that parses arguments and calls the C functions, compiled at generation
  time with ``$CC`` (else ``cc``) into ``DIR/_native.<suffix>``;
* ``DIR/__init__.py``, ``DIR/_runtime.py`` (the Python target's argument
  checks and errors) and ``DIR/_dispatch.py`` (batches, broadcasting and
  errors, through the compiled batch loop): the Python target's API.

Printing: the expanded route through :class:`CPrinter` (sympy's C99 printer
with exact float literals, no integer division, products for small powers),
the graph route through :class:`~sls.graph_print.GraphPrinter` with a C
:class:`~sls.graph_print.Style`. Every function binds the states, inputs and
parameters it uses to ``const double`` locals named as in the model; names
that C, libm or the generated code already use (``y0``, ``double``, ``x``,
…, :data:`RESERVED`) get a trailing ``_``, listed in the files' headers.
"""

from __future__ import annotations

import importlib.machinery
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sympy
from sympy.printing.c import C99CodePrinter

from .. import functions, lowering, render
from ..errors import MissingDependencyError, ModelError, OutputError, brief
from ..graph_print import ATOM, Style
from ..lowering import Check, Fail, Let, text_of
from ..render import C_HEADER_MARK
from . import Backend

#: Base name of the compiled extension module in the package.
NATIVE = "_native"

#: C99 keywords.
KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long register "
    "restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Bool _Complex _Imaginary".split()
)
#: Names <math.h> and <stddef.h> declare (ISO C99, POSIX and GNU), and macros compilers predefine.
LIBRARY_NAMES = frozenset(
    (
        "acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ilogb ldexp log log10 "
        "log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil floor nearbyint rint "
        "lrint llrint round lround llround trunc fmod remainder remquo copysign nan nextafter nexttoward fdim fmax fmin "
        "fma j0 j1 jn y0 y1 yn gamma drem finite significand scalb signgam sincos exp10 pow10 "
        "isfinite isinf isnan isnormal signbit fpclassify isgreater isgreaterequal isless islessequal islessgreater "
        "isunordered math_errhandling "
        "size_t ptrdiff_t wchar_t offsetof max_align_t errno linux unix i386"
    ).split()
)
#: Argument and local names of the generated C functions.
LOCAL_NAMES = frozenset("x u p out A B qddot count status k i w".split())


def _reserved_pattern(name: str) -> bool:
    """Macro-like names of the headers: ``HUGE_VAL``, ``FP_NAN``, ``M_PI``, ``INFINITY``, ``NAN``, ``NULL``, ..."""
    return (
        name in ("NULL", "NAN", "INFINITY", "EOF", "MATH_ERRNO", "MATH_ERREXCEPT")
        or name.startswith(("HUGE_VAL", "FP_", "M_", "__"))
        or (name[:-1] in LIBRARY_NAMES and name[-1] in "fl")
    )


def c_identifier(name: str) -> str:
    """The model's name made a C identifier (the prefix of every C function)."""
    text = re.sub(r"\W", "_", name, flags=re.ASCII).strip("_") or "model"
    if text[0].isdigit():
        text = "model_" + text
    if text in KEYWORDS or text in LIBRARY_NAMES or _reserved_pattern(text):
        text = "model_" + text
    return text


def reserved(name: str, prefix: str) -> bool:
    """True when ``name`` cannot be a local of the generated C code with model prefix ``prefix``."""
    return (
        name in KEYWORDS
        or name in LIBRARY_NAMES
        or name in LOCAL_NAMES
        or _reserved_pattern(name)
        or name.upper().startswith(prefix.upper() + "_")
    )


def renames(names: list, prefix: str) -> dict:
    """``{name: C name}`` for the user's names C cannot use as they are (a ``_`` appended, or ``v_`` put in front)."""
    taken = set(names)
    result = {}
    for name in names:
        if not reserved(name, prefix):
            continue
        candidate = name + "_"
        while candidate in taken or reserved(candidate, prefix):
            candidate = "v_" + candidate if not candidate.startswith("v_") else candidate + "_"
        taken.add(candidate)
        result[name] = candidate
    return result


class CPrinter(C99CodePrinter):
    """sympy's C99 printer for sls: exact float literals, ``x*x`` for squares and cubes, no ``M_PI`` (not C99),
    renamed symbols (:func:`renames`)."""

    def __init__(self, names: dict | None = None) -> None:
        super().__init__({"strict": True} if "strict" in C99CodePrinter._default_settings else {})
        self.names = dict(names or {})

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        return self.names.get(expr.name, expr.name)

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pi(self, expr: sympy.Expr) -> str:
        return repr(math.pi)

    def _print_Exp1(self, expr: sympy.Expr) -> str:
        return repr(math.e)

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return f"{int(expr)}.0"

    def _print_Pow(self, expr: sympy.Pow) -> str:
        base, exponent = expr.base, expr.exp
        if exponent.is_Integer and 2 <= int(exponent) <= 3:
            b = self.parenthesize(base, 50)  # below every operator: parenthesize any compound base
            return "(" + "*".join([b] * int(exponent)) + ")"
        if exponent == -1:
            return f"(1.0/{self.parenthesize(base, 50)})"
        if exponent == sympy.Rational(1, 2):
            return f"sqrt({self._print(base)})"
        if exponent == -sympy.Rational(1, 2):
            return f"(1.0/sqrt({self._print(base)}))"
        return f"pow({self._print(base)}, {self._print(exponent)})"

    def _print_Heaviside(self, expr: sympy.Expr) -> str:
        # H(a) = 1 for a > 0, 0 for a < 0 and H0 (sympy's default 1/2) at a = 0.
        a = self._print(expr.args[0])
        at_zero = self._print(expr.args[1]) if len(expr.args) > 1 else "0.5"
        return f"(({a}) > 0.0 ? 1.0 : (({a}) < 0.0 ? 0.0 : {at_zero}))"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        if expr.args[-1].cond != sympy.true:
            raise NotImplementedError("a Piecewise without an 'otherwise' branch")
        text = self._print(expr.args[-1].expr)
        for value, condition in reversed(expr.args[:-1]):
            text = f"(({self._print(condition)}) ? {self._print(value)} : {text})"
        return text

    def expression(self, expr: sympy.Expr) -> str:
        from ..codegen import _strip_parens

        text = self.doprint(expr)
        if self._not_supported:
            raise NotImplementedError(f"not supported in C: {brief(sorted(map(str, self._not_supported))[0], 80)}")
        return _strip_parens(text)


def _c_assign(name: str, text: str) -> str:
    return f"const double {name} = {text};"


def _c_power(base: str, exponent: str) -> tuple:
    return f"pow({base}, {exponent})", ATOM


def _c_prefix(array: str) -> str:
    """Entry names in C start with ``_`` and a lower-case letter (``_M`` is reserved in C)."""
    return "_" + array.lower().replace("_", "")


def c_path(names: dict) -> lowering.Path:
    """The one path of the C target (every entry a double)."""
    printer = CPrinter(names)
    style = Style(printer, "", scalar=True, power=_c_power, integer=lambda k: f"{k}.0", assign=_c_assign, names=dict(names))
    return lowering.Path(text=printer.expression, style=style, assign=_c_assign, prefix=_c_prefix)


# --------------------------------------------------------------------------
# function bodies


@dataclass(frozen=True)
class Part:
    """Straight-line statements of one part of a long C function (see :func:`split`).

    Values of earlier parts are read as ``w[slot]``, values later parts need
    are stored there; ``fails`` is true when the part may return a failure code.
    """

    lines: list
    fails: bool = False


@dataclass(frozen=True)
class CFunction:
    """The code of one C function: its statements after the argument binding, dead code removed,
    and for a long function its :class:`Part`\\ s (``workspace`` doubles carry values between them)."""

    name: str
    lines: list
    parts: list
    workspace: int = 0


_DECLARATION = re.compile(r"^const double (\w+) = ")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
#: Statements per part of a long function (see :func:`split`): the compiler's time grows faster than
#: linearly with a function's length, and values crossing parts go through a small workspace array.
PART_LINES = 300


def eliminate_dead_code(lines: list) -> list:
    """Drop ``const double NAME = ...;`` lines whose ``NAME`` no later line uses."""
    used: set = set()
    kept = []
    for line in reversed(lines):
        match = _DECLARATION.match(line)
        if match and match.group(1) not in used:
            continue
        rest = line[match.end() :] if match else line
        used.update(_IDENTIFIER.findall(rest))
        kept.append(line)
    kept.reverse()
    return kept


def schedule(lines: list) -> list:
    """Reorder straight-line code so each value is computed just before it is first needed.

    Statements that are not declarations (checks, returns, output stores)
    keep their order; each pulls in, depth first, the declarations it needs
    that are not computed yet. Live ranges get short, which keeps long
    functions cheap to compile and parts (:func:`split`) nearly independent.
    """
    defined, uses, roots = {}, [], []
    for i, line in enumerate(lines):
        match = _DECLARATION.match(line)
        uses.append(_IDENTIFIER.findall(line[match.end() :] if match else line))
        if match:
            defined[match.group(1)] = i
        else:
            roots.append(i)
    done, order = set(), []
    for root in roots:
        stack = [(root, False)]
        while stack:
            i, ready = stack.pop()
            if i in done:
                continue
            if ready:
                done.add(i)
                order.append(i)
                continue
            stack.append((i, True))
            for name in reversed(uses[i]):
                j = defined.get(name)
                if j is not None and j not in done:
                    stack.append((j, False))
    return [lines[i] for i in order]


def split(lines: list, size: int) -> tuple:
    """Split a long body into parts of about ``size`` statements: ``(parts, workspace)``.

    A value used in a later part than the one computing it is stored into
    the workspace ``w`` (``w[slot] = name;``) and read as ``w[slot]`` there;
    slots are reused once their value is dead, so ``workspace`` (the length
    of ``w``) stays far below the number of values.
    """
    chunks = [lines[i : i + size] for i in range(0, len(lines), size)]
    home, last = {}, {}
    for c, chunk in enumerate(chunks):
        for line in chunk:
            match = _DECLARATION.match(line)
            for name in _IDENTIFIER.findall(line[match.end() :] if match else line):
                if name in home and home[name] < c:
                    last[name] = c
            if match:
                home[match.group(1)] = c
    slots, free, active, size_used = {}, [], [], 0
    for c in range(len(chunks)):
        for name in [name for name in active if last[name] < c]:  # dead before part c: free its slot
            active.remove(name)
            free.append(slots[name])
        for name in sorted((name for name in last if home[name] == c), key=lambda name: last[name]):
            if free:
                slots[name] = free.pop()
            else:
                slots[name] = size_used
                size_used += 1
            active.append(name)
    parts = []
    for c, chunk in enumerate(chunks):
        imported = {name for name in last if home[name] < c <= last[name]}
        out = []
        for line in chunk:
            match = _DECLARATION.match(line)
            head, rest = (line[: match.end()], line[match.end() :]) if match else ("", line)
            rest = _IDENTIFIER.sub(lambda m: f"w[{slots[m.group(0)]}]" if m.group(0) in imported else m.group(0), rest)
            out.append(head + rest)
            if match and match.group(1) in last:
                out.append(f"w[{slots[match.group(1)]}] = {match.group(1)};")
        parts.append(Part(out, fails=any(line.startswith(("if (", "return ")) for line in chunk)))
    return parts, size_used


def c_function(name: str, lines: list) -> CFunction:
    """A :class:`CFunction` from its statements: dead code removed, scheduled, split when long."""
    lines = schedule(eliminate_dead_code(lines))
    if len(lines) <= PART_LINES * 3 // 2:
        return CFunction(name, lines, [Part(lines)])
    parts, workspace = split(lines, PART_LINES)
    return CFunction(name, lines, parts, workspace)


def _fill(target: str, values: list) -> list:
    """Stores of ``values`` (texts, ``"0.0"`` for zeros) into ``target``; many zeros become one loop."""
    zeros = sum(v == "0.0" for v in values)
    if zeros < 16:
        return [f"{target}[{k}] = {v};" for k, v in enumerate(values)]
    return [f"for (size_t k = 0; k < {len(values)}; ++k) {target}[k] = 0.0;"] + [
        f"{target}[{k}] = {v};" for k, v in enumerate(values) if v != "0.0"
    ]


def _op_lines(ops: list, failure: str) -> list:
    lines = []
    for op in ops:
        if isinstance(op, Let):
            lines.append(_c_assign(op.name, op.value))
        elif isinstance(op, Check):
            lines.append(f"if (!({op.pivot} > 0.0)) return {failure};")
        elif isinstance(op, Fail):
            lines.append(f"return {failure};")
    return lines


def kernel_body(lowered: lowering.Lowered) -> list:
    """An array function: temporaries, then every entry of its one output into ``out`` (row-major)."""
    (name,) = lowered.outputs
    _, texts, constants = lowered.output(name)
    return list(lowered.printed.lines) + _fill("out", [repr(c) if c is not None else t for t, c in zip(texts, constants)])


def solve_body(name: str, program: lowering.SolveProgram, n: int, m: int, failure: str) -> list:
    """``qddot_fun``/``linearized_model``: kernel, unrolled factorization (a pivot ≤ 0 returns ``failure``), solves, outputs."""
    lines = list(program.lines) + _op_lines(program.bindings, failure) + _op_lines(program.factor, failure)
    lines += _op_lines(program.steps, failure)
    if program.phased:  # bind q̈, evaluate what depends on it, solve A and B
        qddot = program.results["qddot"]
        lines += [_c_assign(name, text_of(value)) for name, value in zip(program.accelerations, qddot)]
        lines += _op_lines(program.late, failure) + _op_lines(program.tail, failure)
    if name == "qddot_fun":
        return lines + _fill("out", [text_of(v) for v in program.results["qddot"]])
    A_rows, B_rows = program.results["A"], program.results["B"]
    A = [(1.0 if l == n + a else 0.0) if a < n else A_rows[a - n][l] for a in range(2 * n) for l in range(2 * n)]
    B = [0.0 if a < n else B_rows[a - n][j] for a in range(2 * n) for j in range(m)]
    return lines + _fill("A", [text_of(v) for v in A]) + _fill("B", [text_of(v) for v in B])


# --------------------------------------------------------------------------
# lanes: the batch kernels of the compiled package

#: Largest body (statements) given a lane kernel, and the lane count of one block.
LANE_LINES = 2000
LANES = 16
_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")
_STORE = re.compile(r"^(out|A|B)\[(\d+)\] = (.*);$")


def lane_kernel(code: CFunction, prefix: str) -> dict | None:
    """A solving function's body rewritten for :data:`LANES` states at once (the package's batch loop).

    Each statement becomes one step of a loop over the lanes of a block, on
    arrays with the lane index last, which compilers vectorize (AVX2 on
    x86-64: four states per instruction). ``sin``/``cos`` become
    branch-free polynomial versions (``<prefix>_lane_sin``, within an ulp of
    libm, ``NaN`` beyond ``|x| < 823549.6``); a pivot ``≤ 0`` sets the lane's
    flag. The package recomputes flagged lanes, lanes with results that are
    not finite (so also huge angles) and lanes with inputs that are not
    finite one by one with the C function itself. ``None`` when the body
    calls other functions or is too long.
    """
    if len(code.parts) > 1 or len(code.lines) > LANE_LINES:
        return None
    calls = {m.group(1) for line in code.lines for m in _CALL.finditer(line)} - {"if"}
    if not calls <= {"sin", "cos"}:
        return None
    lines, stores = [], {}
    for line in code.lines:
        store = _STORE.match(line)
        if line.startswith("for (size_t k = 0;"):
            continue  # zeros: every output entry not stored below is zero
        if store:
            target, index, value = store.groups()
            stores.setdefault(1 if target == "B" else 0, []).append(int(index))
            line = f"{'_o1' if target == 'B' else '_o0'}[{index}][i] = {value};"
        elif line.startswith("if (!("):
            line = "_bad = _bad | " + line[len("if (") : line.rindex(")) return")] + ");"
        elif line.startswith("return "):
            line = "_bad = 1;"
        lines.append(re.sub(r"\b(sin|cos)\(", lambda m: f"{prefix}_lane_{m.group(1)}(", line))
    return {"lines": lines, "stores": stores, "trig": bool(calls)}


# --------------------------------------------------------------------------
# the backend


def compiler() -> list:
    """The C compiler command: ``$CC`` (may hold flags), else ``cc``."""
    return shlex.split(os.environ.get("CC", "").strip() or "cc")


def python_include() -> Path:
    return Path(sysconfig.get_paths()["include"])


def limited_api() -> bool:
    """Build the extension for CPython's stable ABI (Python ≥ 3.11, where it includes the buffer protocol)."""
    return sys.version_info >= (3, 11) and not hasattr(sys, "pypy_version_info")


def native_file_name() -> str:
    """File name of the compiled extension (``_native.abi3.so`` on the stable ABI)."""
    if limited_api() and ".abi3.so" in importlib.machinery.EXTENSION_SUFFIXES:
        return NATIVE + ".abi3.so"
    return NATIVE + importlib.machinery.EXTENSION_SUFFIXES[0]


#: Flags of the package's shared library (the standalone files also compile with
#: ``-std=c99 -Wall -Wextra -pedantic -Werror``). The model's functions are compiled as two translation
#: units, in parallel with the extension (``-O3``: its lane kernels vectorize): the solving functions
#: (``qddot_fun``, ``linearized_model``, ``xdot_fun``) at ``-O2``, the others at ``-O2`` too unless their
#: code is longer than :data:`LARGE_SOURCE` lines, then at ``-O1`` (long straight-line code gains little
#: from ``-O2`` and takes about twice as long to compile).
LIBRARY_FLAGS = ["-fPIC", "-fvisibility=hidden"]
LARGE_SOURCE = 20000
#: The translation units of the library: the model's solving functions, and the others.
UNITS = ("c/_solve.c", "c/_other.c")


class CBackend(Backend):
    name = "c"
    compiles = True

    def __init__(self) -> None:
        self.units: dict = {}

    # -- environment --------------------------------------------------

    def check_environment(self) -> None:
        command = compiler()
        if not command or shutil.which(command[0]) is None:
            where = f"$CC is '{os.environ['CC']}', which" if os.environ.get("CC", "").strip() else "'cc'"
            raise MissingDependencyError(
                f"--target c needs a C compiler: {where} was not found (set CC to one); the default --target python needs nothing"
            )
        if not (python_include() / "Python.h").is_file():
            raise MissingDependencyError(
                f"--target c needs Python's C headers: {python_include() / 'Python.h'} does not exist (install the "
                f"python{sys.version_info[0]}.{sys.version_info[1]}-dev package or equivalent); the default --target python needs nothing"
            )

    def check_model(self, model: object) -> None:
        if getattr(model, "constrained", False):
            raise ModelError(
                "--target c does not support constrained models yet (constraints, velocity_constraints): "
                "generate them with the default --target python"
            )

    # -- names --------------------------------------------------------

    def file_names(self, model: object) -> list:
        name = c_identifier(model.name)
        return [f"c/{name}.h", f"c/{name}.c", f"{NATIVE}.c", native_file_name(), "__init__.py", "_runtime.py", "_dispatch.py"]

    def _names(self, model: object) -> tuple:
        prefix = c_identifier(model.name)
        user = [s.name for s in model.state] + [s.name for s in model.inputs] + list(model.params)
        return prefix, renames(user, prefix)

    # -- code ---------------------------------------------------------

    def builders(self, dynamics: object) -> dict:
        model = dynamics.model
        n, m = model.n, model.m
        prefix, names = self._names(model)
        failure = f"{prefix.upper()}_NOT_POSITIVE_DEFINITE"
        path = c_path(names)
        result = {}
        for name, lower in lowering.lowerers(dynamics, [path], unroll_max=None).items():
            if functions.BY_NAME[name].solve:
                result[name] = lambda name=name, lower=lower: c_function(name, solve_body(name, lower()[0], n, m, failure))
            else:
                result[name] = lambda name=name, lower=lower: c_function(name, kernel_body(lower()[0]))
        for function in functions.FUNCTIONS:
            if function.uses == "qddot_fun":  # xdot = [qdot; qddot]
                lines = [f"{{ const int status = {prefix}_qddot_fun(x, u, p, out + {n}); if (status != 0) return status; }}"]
                lines += [f"out[{k}] = x[{n + k}];" for k in range(n)]
                result[function.name] = lambda name=function.name, lines=lines: c_function(name, lines)
        return result

    # -- files --------------------------------------------------------

    def render(self, model: object, code: dict, simplify: bool, method: str) -> dict:
        env = render.environment()
        ctx = render.context(model, simplify, method)
        prefix, names = self._names(model)
        ctx = {**ctx, **c_context(model, prefix, names)}
        specs = [function_spec(f, model, prefix, names, code[f.name]) for f in functions.FUNCTIONS]
        native = {
            "native": NATIVE,
            "limited": limited_api(),
            "max_extra": max(model.n, model.m, 1),
            "lanes": LANES,
        }
        files = {
            f"c/{prefix}.h": env.get_template("c_model.h.j2").render(ctx=ctx, functions=specs),
            f"c/{prefix}.c": env.get_template("c_model.c.j2").render(ctx=ctx, functions=specs),
            f"{NATIVE}.c": env.get_template("c_native.c.j2").render(ctx=ctx, functions=specs, **native),
            "__init__.py": env.get_template("__init__.py.j2").render(ctx=ctx, modules=functions.NAMES, native=NATIVE),
            "_dispatch.py": env.get_template("c_dispatch.py.j2").render(ctx=ctx, functions=specs),
            "_runtime.py": env.get_template("_runtime.py.j2").render(ctx=ctx),
        }
        # The library compiles the same functions in two units (see UNITS), in parallel.
        template = env.get_template("c_model.c.j2")
        self.units = {
            UNITS[0]: template.render(ctx=ctx, functions=[f for f in specs if f["solve"] or functions.BY_NAME[f["name"]].uses]),
            UNITS[1]: template.render(ctx=ctx, functions=[f for f in specs if not f["solve"] and not functions.BY_NAME[f["name"]].uses]),
        }
        return {name: render._tidy(text) for name, text in sorted(files.items())}

    def compile(self, files: dict, on_step: object = None) -> dict:
        """Compile the model's functions (:data:`UNITS`) and ``_native.c``, in parallel, into the extension:
        ``{file name: bytes}``."""
        target = native_file_name()
        sources = {**files, **self.units}
        with tempfile.TemporaryDirectory(prefix="sls-cc-") as folder:
            for name, text in sources.items():
                path = Path(folder) / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            steps = [
                ["-O1" if self.units[unit].count("\n") > LARGE_SOURCE * (3 if unit == UNITS[0] else 1) else "-O2", *LIBRARY_FLAGS, "-c", unit, "-o", f"unit{k}.o"]
                for k, unit in enumerate(UNITS)
            ]
            steps.append(["-O3", *LIBRARY_FLAGS, "-pthread", "-I", str(python_include()), "-c", f"{NATIVE}.c", "-o", "native.o"])
            _run_compiler([compiler() + step for step in steps], folder)
            objects = [f"unit{k}.o" for k in range(len(UNITS))] + ["native.o"]
            _run_compiler([compiler() + ["-shared", "-pthread", *objects, "-o", target, "-lm"]], folder)
            return {target: (Path(folder) / target).read_bytes()}


def _run_compiler(commands: list, folder: str) -> None:
    """Run the compiler commands in parallel in ``folder``; refuse with the first error line of a failure."""
    try:
        running = [subprocess.Popen(c, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
    except OSError as exc:
        raise MissingDependencyError(f"--target c: cannot run the C compiler {commands[0][0]!r}: {exc.strerror or exc}") from None
    results = [(process, *process.communicate()) for process in running]
    for process, out, err in results:
        if process.returncode != 0:
            text = (err or out or "").splitlines()
            lines = [line for line in text if "error" in line] or text
            raise OutputError(f"--target c: the C compiler failed ({shlex.join(compiler())}): {brief(lines[0] if lines else 'no output', 200)}")


def c_context(model: object, prefix: str, names: dict) -> dict:
    """Template variables of the C files."""
    params = list(model.params.items())
    return {
        "prefix": prefix,
        "macro": prefix.upper(),
        "renamed": sorted(names.items()),
        "c_params": [{"name": name, "c": names.get(name, name), "default": None if value is None else repr(float(value))} for name, value in params],
        "required": [name for name, value in params if value is None],
        "c_state": [names.get(s.name, s.name) for s in model.state],
        "c_inputs": [names.get(s.name, s.name) for s in model.inputs],
        "marker": C_HEADER_MARK,
    }


def function_spec(function: functions.Function, model: object, prefix: str, names: dict, code: CFunction) -> dict:
    """What the C templates need about one generated function."""
    n, m = model.n, model.m
    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        outputs.append(
            {"name": name, "pointer": "out" if len(function.outputs) == 1 else name, "shape": dims, "size": math.prod(dims), "shape_text": repr(dims)}
        )
    symbols = {
        "x": [s.name for s in model.state],
        "u": [s.name for s in model.inputs],
        "qddot": [f"_qddot{k}" for k in range(n)],
        "p": list(model.params),
    }
    pointers = arguments + ["p"] + [o["pointer"] for o in outputs]

    def bound(lines: list, extra: tuple = (), source: str = "{argument}[{k}]") -> dict:
        """A part's argument binding: ``const double`` locals for the names it uses, ``(void)`` for unused pointers."""
        used = set(_IDENTIFIER.findall("\n".join(lines)))
        bindings, taken = [], set()
        for argument in arguments + ["p"]:
            for k, symbol in enumerate(symbols[argument]):
                c = names.get(symbol, symbol)
                if c in used:
                    bindings.append(f"const double {c} = {source.format(argument=argument, k=k)};")
                    taken.add(argument)
        unused = [a for a in pointers + list(extra) if a not in taken and a not in used]
        return {"lines": lines, "bindings": bindings, "unused": unused, "uses_params": "p" in taken}

    parts = [
        {**bound(part.lines, ("w",)), "fails": part.fails} for part in code.parts
    ] if len(code.parts) > 1 else []
    main = bound(code.lines) if not parts else {"lines": [], "bindings": [], "unused": [], "uses_params": any(q["uses_params"] for q in parts)}
    lanes = lane_kernel(code, prefix) if function.solve else None
    if lanes is not None:
        lanes["bindings"] = bound(lanes["lines"], source="_lane_{argument}[{k}][i]")["bindings"]
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
    return {
        "name": function.name,
        "summary": function.summary,
        "arguments": arguments,
        "sizes": [functions.sizes((a.size,), n, m)[0] for a in function.arguments],
        "outputs": outputs,
        "solve": function.solve,
        "scalar": function.outputs[0][1] == (),
        "bindings": main["bindings"],
        "unused": [a for a in main["unused"] if a != "p"] if not parts else [],
        "uses_params": main["uses_params"],
        "body": main["lines"],
        "parts": parts,
        "lanes": lanes,
        "workspace": code.workspace,
        "pointers": pointers,
        "doc": c_string(doc),
    }


def _argument_doc(function: functions.Function, model: object) -> str:
    """The arguments and results of a compiled function, for its docstring (the Python target's conventions)."""
    n, m = model.n, model.m
    lines = []
    for argument in function.arguments:
        size = functions.sizes((argument.size,), n, m)[0]
        what = {"x": f"state [{', '.join(s.name for s in model.state)}]", "u": f"input [{', '.join(s.name for s in model.inputs)}]"}
        lines.append(f"{argument.name}: shape ({size},) or (..., {size}), the {what.get(argument.name, 'accelerations')}; leading axes are a batch.")
    for name, shape in function.outputs:
        dims = functions.sizes(shape, n, m)
        lines.append(f"Returns {name}: " + ("a float, or an array of shape (...) for a batch." if not dims else f"shape {dims}, or (...,) + {dims} for a batch."))
    if model.params:
        lines.append("Parameters are keyword arguments (numbers, or arrays broadcast against the batch).")
    return "\n".join(lines)


def c_string(text: str) -> str:
    """``text`` as a C string literal (ASCII; one source line per text line)."""
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\", "\\\\").replace('"', '\\"')
    parts = escaped.split("\n")
    return "\n".join(f'"{part}\\n"' if k < len(parts) - 1 else f'"{part}"' for k, part in enumerate(parts))
