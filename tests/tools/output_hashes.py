"""Hash every generated file of the bundled examples, the reference models, a graph-route chain and UR5 in
every target (not a test: a tool for refactorings that must keep the output byte-identical).

    python tests/tools/output_hashes.py OUT.json        # record
    python tests/tools/output_hashes.py OUT.json --check BEFORE.json

The C target's library is not built: ``CC`` is pointed at a stand-in that writes an empty file for ``-o``
(the C sources are what the templates and printers produce; the library is built from them).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("python", "c", "matlab", "casadi", "jax")


def models() -> list:
    from sls.cli.models import _load_named
    from sls.readers import example_names
    from sls.readers.nlink import nlink_pendulum

    result = [(f"example:{name}", lambda name=name: _load_named(name)) for name in example_names()]
    result.append(("example:nlink", lambda: nlink_pendulum(3)))
    for path in sorted((ROOT / "tests" / "reference").glob("*.toml")):
        result.append((f"reference:{path.stem}", lambda path=path: _load_named(str(path))))
    result.append(("nlink20", lambda: nlink_pendulum(20)))
    return result


def fake_compiler(folder: Path) -> str:
    script = folder / "fake-cc"
    script.write_text('#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ "$1" = -o ]; then : > "$2"; fi; shift; done\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def hashes(only: str | None = None) -> dict:
    from sls.errors import SlsError
    from sls.generate import generate

    result = {}
    with tempfile.TemporaryDirectory(prefix="sls-hashes-") as work:
        os.environ["CC"] = fake_compiler(Path(work))
        for label, load in models():
            if only and only not in label:
                continue
            for target in TARGETS:
                out = Path(work) / f"{label.replace(':', '_')}-{target}"
                try:
                    generate(load(), out, target=target)
                except SlsError as exc:
                    result[f"{label}/{target}"] = f"refused: {exc}"
                    continue
                for path in sorted(p for p in out.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                    key = f"{label}/{target}/{path.relative_to(out)}"
                    result[key] = hashlib.sha256(path.read_bytes()).hexdigest()
                print(label, target, flush=True, file=sys.stderr)
    return result


def main() -> None:
    out = Path(sys.argv[1])
    only = None
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
    result = hashes(only)
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    if "--check" in sys.argv:
        before = json.loads(Path(sys.argv[sys.argv.index("--check") + 1]).read_text())
        if only:
            before = {k: v for k, v in before.items() if only in k.split("/")[0]}
        files = [k for k, v in before.items() if not v.startswith("refused")]
        differ = sorted(k for k in set(before) | set(result) if before.get(k) != result.get(k))
        print(
            f"{len(files)} files before, {sum(not v.startswith('refused') for v in result.values())} after, "
            f"{len(differ)} differ"
        )
        for key in differ[:40]:
            print("  differs:", key)
        sys.exit(1 if differ else 0)
    print(f"{sum(not v.startswith('refused') for v in result.values())} files hashed")


if __name__ == "__main__":
    main()
