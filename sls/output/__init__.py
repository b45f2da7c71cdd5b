"""The last stage: a rendered package written atomically into its folder (:mod:`sls.output.write`)."""
