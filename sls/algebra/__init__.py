"""The symbolic toolkit every stage shares: the expression vocabulary and its safe parser
(:mod:`sls.algebra.expressions`), differentiation as sls takes it (:mod:`sls.algebra.calculus`) and the
hash-consed expression graph the derivation routes and the lowering work on (:mod:`sls.algebra.graph`: its
node store :mod:`sls.algebra.graph_nodes`, differentiation :mod:`sls.algebra.graph_calculus` and
restructuring passes :mod:`sls.algebra.graph_passes`)."""
