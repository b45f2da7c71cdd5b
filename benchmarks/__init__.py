"""Benchmarks of sls's generated code against peer tools: ``python -m benchmarks``.

Not part of the test suite. See ``python -m benchmarks --help`` and the
"Performance" section of the README.
"""
