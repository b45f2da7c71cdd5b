"""The commands' help pages grouped by what the user has in hand, and their renamed options.

A command made with ``cls=SectionedCommand`` shows its options in sections: ``sections`` maps each option (its
first long name) to the title of its section, in the order the sections appear, and within a section the options
in the mapping's order; an option not in the mapping lands in :data:`OTHER`, last (the tests require every option
in a section: a new option is one line of the mapping, in :mod:`sls.cli.sections`). ``renamed`` maps an old
spelling to the option's name: the old one keeps working, with one ``warning:`` line on stderr saying the new name.

    @click.command("generate", cls=SectionedCommand, sections=GENERATE_SECTIONS, renamed={"--x": "--state"})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

__all__ = ["OTHER", "SectionedCommand", "option_name", "split_list"]

#: The section of an option the mapping does not place.
OTHER = "Other options"


def option_name(param: click.Parameter) -> str:
    """The first long name of an option (``--out`` of ``-o, --out``), else its first name."""
    names = [*param.opts, *param.secondary_opts]
    return next((name for name in names if name.startswith("--")), names[0] if names else param.name or "")


def split_list(text: str) -> list[str]:
    """A list option's entries: separated by commas, spaces or both (``"a,b c"`` -> ``["a", "b", "c"]``)."""
    return text.replace(",", " ").split()


class SectionedCommand(click.Command):
    """A :class:`click.Command` whose ``--help`` lists its options by section, and which takes renamed options
    under their old spelling (see the module's docstring)."""

    def __init__(
        self,
        *args: Any,
        sections: Mapping[str, str] | None = None,
        renamed: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = dict(sections or {})
        self.renamed = dict(renamed or {})

    def titles(self) -> list[str]:
        """The section titles in the order they appear (first mention in the mapping), :data:`OTHER` last."""
        return [*dict.fromkeys(self.sections.values()), OTHER]

    def section(self, param: click.Parameter) -> str:
        """The title of the section ``param`` is listed in."""
        return self.sections.get(option_name(param), OTHER)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records: dict[str, list[tuple[str, str]]] = {}
        order = {name: k for k, name in enumerate(self.sections)}
        options = [p for p in self.get_params(ctx) if isinstance(p, click.Option)]
        for param in sorted(options, key=lambda p: order.get(option_name(p), len(order))):
            record = param.get_help_record(ctx)
            if record is not None:
                records.setdefault(self.section(param), []).append(record)
        for title in self.titles():
            if records.get(title):
                with formatter.section(title):
                    formatter.write_dl(records[title])
        if self.renamed:
            with formatter.section("Renamed (the old name still works, with a warning)"):
                formatter.write_dl([(old, f"now {new}") for old, new in self.renamed.items()])

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self.renaming(args))

    def renaming(self, args: Sequence[str]) -> list[str]:
        """``args`` with every renamed option under its new name (``--x q`` and ``--x=q`` alike; nothing after
        ``--``), one ``warning:`` line on stderr per old name used."""
        result: list[str] = []
        warned: set[str] = set()
        for k, arg in enumerate(args):
            if arg == "--":
                return [*result, *args[k:]]
            name, equals, value = arg.partition("=")
            new = self.renamed.get(name)
            if new is not None:
                if name not in warned:
                    click.echo(f"warning: {name} is now {new} (the old name still works, for now)", err=True)
                    warned.add(name)
                arg = new + equals + value
            result.append(arg)
        return result
