"""Run compiled IrGL programs from Python: graphs, generators, references, API."""

from .graphs import COOGraph, CSRGraph, GraphFormatError, clean, load_graph, write_gr

__all__ = [
    "COOGraph",
    "CSRGraph",
    "GraphFormatError",
    "clean",
    "load_graph",
    "write_gr",
]
