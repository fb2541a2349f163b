"""Commands by name, each imported only when it is chosen: ``tts --help`` lists every command from
its table without importing one, and ``tts g2p ...`` imports the g2p command alone.

A command is declared by a function ``declare(parser)`` (named ``"module:function"``) that adds its
arguments and sets ``func``; a group of commands (``tts bench ...``) returns its own table.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence


@dataclass(frozen=True)
class Command:
    """``declare``: ``"module:function"``, called with the command's parser; ``help``: its line in the listing."""

    declare: str
    help: str


@dataclass(frozen=True)
class Group:
    """What a group's ``declare`` returns: the name its choice is stored under, and its commands."""

    dest: str
    commands: Mapping[str, Command]


def chosen(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """The first word of ``argv`` that is not an option (the command's name), and the words after it."""
    for i, word in enumerate(argv):
        if not word.startswith("-"):
            return word, list(argv[i + 1:])
    return None, []


def declaration(command: Command) -> Callable[[argparse.ArgumentParser], Group | None]:
    module, _, function = command.declare.partition(":")
    return getattr(importlib.import_module(module), function)


def add_commands(parser: argparse.ArgumentParser, group: Group, argv: Sequence[str]) -> None:
    """One sub-parser per command of ``group``; only the one ``argv`` chooses gets its arguments."""
    sub = parser.add_subparsers(dest=group.dest, required=True, parser_class=type(parser))
    name, rest = chosen(argv)
    for command_name, command in group.commands.items():
        p = sub.add_parser(command_name, help=command.help, description=command.help)
        if command_name == name:
            subgroup = declaration(command)(p)
            if subgroup is not None:
                add_commands(p, subgroup, rest)
