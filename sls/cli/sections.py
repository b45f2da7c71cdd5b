"""The sections of the commands' help pages (:class:`sls.cli.help.SectionedCommand`): per command, option -> the
title of its section; sections appear in the order of their first option, options in the table's order. A new
option is one line here (tests/cli/test_help.py fails for an option in no section)."""

from __future__ import annotations

#: Section titles several commands share.
RUN = "The run"
CLOSED_LOOP = "Closed loop"
PARAMETERS = "Parameters"
OUTPUT = "Output"
GENERAL = "General"

#: ``sls generate --help``'s sections: option -> the title of its section (sections in order of first mention).
ENERGIES = "A model in energies (inline flags)"
ANY_MODEL = "Any model (file, example or inline)"
ROBOT_FILE = "A robot file: URDF, xacro, MJCF"
BASE = "Floating base and contacts"
TARGETS = "Output and targets"
GENERATE_SECTIONS = {
    "--T": ENERGIES,
    "--V": ENERGIES,
    "--fric": ENERGIES,
    "--state": ENERGIES,
    "--input": ENERGIES,
    "--force": ENERGIES,
    "--constraint": ENERGIES,
    "--velocity-constraint": ENERGIES,
    "--kinematics": ENERGIES,
    "--param": ANY_MODEL,
    "--range": ANY_MODEL,
    "--n": ANY_MODEL,
    "--simplify": ANY_MODEL,
    "--frames": ROBOT_FILE,
    "--xacro-arg": ROBOT_FILE,
    "--package-path": ROBOT_FILE,
    "--no-actuators": ROBOT_FILE,
    "--srdf": ROBOT_FILE,
    "--inertial-params": ROBOT_FILE,
    "--floating-base": BASE,
    "--base-orientation": BASE,
    "--contacts": BASE,
    "--contact-at": BASE,
    "--stance": BASE,
    "--base-wrench": BASE,
    "--out": TARGETS,
    "--target": TARGETS,
    "--functions": TARGETS,
    "--name": TARGETS,
    "--verbose": GENERAL,
    "--quiet": GENERAL,
    "--help": GENERAL,
}


#: ``sls lqr --help``'s sections: option -> the title of its section (see :mod:`sls.cli.help`).
LQR_SECTIONS = {
    "--x-eq": "The equilibrium",
    "--u-eq": "The equilibrium",
    "--stance": "The equilibrium",
    "--Q": "The weights",
    "--R": "The weights",
    "--param": PARAMETERS,
    "--save": OUTPUT,
    "--help": GENERAL,
}

#: ``sls simulate --help``'s sections.
SIMULATE_SECTIONS = {
    "--x0": RUN,
    "--t-end": RUN,
    "--t-start": RUN,
    "--points": RUN,
    "--method": RUN,
    "--rtol": RUN,
    "--atol": RUN,
    "--project-x0": RUN,
    "--lqr-from": CLOSED_LOOP,
    "--allow-other-model": CLOSED_LOOP,
    "--param": PARAMETERS,
    "--plot": OUTPUT,
    "--csv": OUTPUT,
    "--quiet": GENERAL,
    "--help": GENERAL,
}


#: ``sls sweep --help``'s sections: option -> the title of its section (see :mod:`sls.cli.help`).
SWEEP_SECTIONS = {
    "--param-sets": "Parameter sets",
    "--x0": RUN,
    "--t-end": RUN,
    "--t-start": RUN,
    "--method": RUN,
    "--rtol": RUN,
    "--atol": RUN,
    "--lqr-from": CLOSED_LOOP,
    "--scheduler": "The cluster",
    "--workers": "The cluster",
    "--chunk-size": "The cluster",
    "--csv": OUTPUT,
    "--quiet": GENERAL,
    "--help": GENERAL,
}
