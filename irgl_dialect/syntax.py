"""Shared pieces of the custom syntax of irgl ops with regions."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Region
from xdsl.parser import Parser
from xdsl.printer import Printer

from irgl_dialect.kernels import add_implicit_yield


def parse_body(parser: Parser, args: Sequence[Parser.Argument] = ()) -> Region:
    """Parse a single-block body whose `irgl.yield` may be left implicit."""
    region = parser.parse_region(args)
    add_implicit_yield(region)
    return region


def print_body(printer: Printer, region: Region, *, terminator: bool = False) -> None:
    """Print a body, hiding its empty `irgl.yield` unless `terminator`."""
    printer.print_string(" ")
    printer.print_region(
        region,
        print_entry_block_args=False,
        print_empty_block=False,
        print_block_terminators=terminator,
    )
