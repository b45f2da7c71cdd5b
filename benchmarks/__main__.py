"""Entry point: ``python -m benchmarks [--quick] [--out FILE]``."""

from .run import main

raise SystemExit(main())
