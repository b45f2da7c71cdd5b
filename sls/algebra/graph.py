"""An expression graph with symbolic differentiation, for models too large to expand.

sympy expressions are trees: differentiating ``T`` of a 10-link arm entry by
entry repeats the same work on the same subtrees thousands of times and writes
every matrix entry out as one flat expression. This module keeps a model as a
*graph* instead: every distinct subexpression is one node (hash-consed, so
``sin(q1 + q2)`` exists once however often it is used), and derivatives are
new nodes built from existing ones by the chain rule — forward mode (a
directional derivative of many outputs) and reverse mode (the gradient of one
output) — exactly the way automatic differentiation tools build derivative
graphs. The cost of a derivative is then proportional to the size of the
graph, not to the size of the expanded expressions.

Nodes are integers, children before parents (:mod:`sls.algebra.graph_nodes` lists the node kinds).
:class:`Graph` is made of three parts, one module each:

* :mod:`sls.algebra.graph_nodes` — the node store: hash-consed construction with
  the usual folding, conversion from and to sympy, reachability, inspection
  (degree bounds, term estimates) and numeric evaluation;
* :mod:`sls.algebra.graph_calculus` — differentiation (forward and reverse mode, Jacobians);
* :mod:`sls.algebra.graph_passes` — restructuring passes that keep every value
  (shared partial sums, velocity sums collected by their rate-free parts).

:meth:`Graph.to_sympy` lowers a set of output nodes back to sympy: nodes used
more than once become numbered temporaries (straight-line definitions),
single-use nodes are inlined into their parent.
"""

from __future__ import annotations

from sls.algebra.graph_calculus import GraphCalculus
from sls.algebra.graph_nodes import Unsupported
from sls.algebra.graph_passes import GraphPasses

__all__ = ["Graph", "Unsupported"]


class Graph(GraphCalculus, GraphPasses):
    """A hash-consed expression DAG with differentiation and restructuring passes (see the module docstring).

    ``kind[i]``, ``args[i]`` (child ids) and ``payload[i]`` (the number, the
    symbol or the sympy function) describe node ``i``; ``deps[i]`` is a
    bitmask of the symbols node ``i`` depends on.
    """
