"""What ``sls lqr`` and ``sls simulate`` print: poles, gains and labelled vectors laid out within :data:`WIDE`
columns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["WIDE"]


def _format_complex(value: complex) -> str:
    if abs(value.imag) < 1e-12 * max(1.0, abs(value)):
        return f"{value.real:.6g}"
    return f"{value.real:.6g} {'+' if value.imag >= 0 else '-'} {abs(value.imag):.6g}j"


def format_poles(poles: np.ndarray) -> list[str]:
    lines, skip = [], False
    for i, value in enumerate(poles):
        if skip:
            skip = False
            continue
        if (
            abs(value.imag) > 1e-12
            and i + 1 < len(poles)
            and abs(poles[i + 1] - np.conj(value)) < 1e-9 * max(1.0, abs(value))
        ):
            lines.append(f"{value.real:.6g} ± {abs(value.imag):.6g}j")
            skip = True
        else:
            lines.append(_format_complex(value))
    return lines


#: ``sls lqr`` prints K as a table up to this many characters wide, else a summary (gain norm per input).
WIDE = 120


def gain_table(state: Sequence[str], inputs: Sequence[str], K: np.ndarray) -> list[str]:
    """K as a table: a header of the state names, one row per input."""
    width = max(len(name) for name in inputs)
    lines = [f"  {'':<{width}}  " + " ".join(f"{name:>12}" for name in state)]
    for name, row in zip(inputs, K):
        lines.append(f"  {name:<{width}}  " + " ".join(f"{value:12.6g}" for value in row))
    return lines


def gain_summary(state: Sequence[str], inputs: Sequence[str], K: np.ndarray, save: str | None) -> list[str]:
    """K too wide for a table: its size, where it is saved, and per input the norm of its row and its largest entry."""
    where = f"the full K is saved in {save}" if save else "--save FILE writes the full K (JSON)"
    lines = [f"K (u = u_eq - K (x - x_eq)): {len(inputs)} x {len(state)}, too wide to print; {where}"]
    lines.append("gain per input (norm of its row of K; its largest entry):")
    width = max(len(name) for name in inputs)
    for name, row in zip(inputs, K):
        k = int(np.argmax(np.abs(row)))
        lines.append(f"  {name:<{width}}  |K| = {np.linalg.norm(row):<10.6g}  {state[k]}: {row[k] + 0.0:.6g}")
    return lines


def wrapped(items: Sequence[str], width: int = WIDE - 2) -> list[str]:
    """``items`` joined with ``, `` into lines of at most ``width`` characters (an item is never split; a line
    ends with the comma that follows its last item)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += " " + item
        else:
            lines.append(item)
        lines[-1] += ","
    if lines:
        lines[-1] = lines[-1][:-1]
    return lines


def labelled(names: Sequence[str], values: Iterable[float]) -> str:
    return ", ".join(f"{name}={value + 0.0:.6g}" for name, value in zip(names, values))


def equilibrium_lines(
    state: Sequence[str], x_eq: Iterable[float], inputs: Sequence[str], u_eq: Iterable[float]
) -> list[str]:
    """``equilibrium: x_eq = [...], u_eq = [...]`` on one line when it fits in :data:`WIDE` columns; else each
    vector on lines of its own, wrapped at :data:`WIDE` columns (an entry ``name=value`` never split)."""
    line = f"equilibrium: x_eq = [{labelled(state, x_eq)}], u_eq = [{labelled(inputs, u_eq)}]"
    if len(line) <= WIDE:
        return [line]
    lines = ["equilibrium:"]
    for label, names, values in (("x_eq", state, x_eq), ("u_eq", inputs, u_eq)):
        items = [f"{name}={value + 0.0:.6g}" for name, value in zip(names, values)]
        start = f"  {label} = ["
        rows = wrapped(items, WIDE - len(start) - 1) or [""]
        lines.append(start + rows[0])
        lines += [" " * len(start) + text for text in rows[1:]]
        lines[-1] += "]"
    return lines
