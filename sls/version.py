"""The version of sls (every generated header and design file carries it)."""

__version__ = "1.0.0"
