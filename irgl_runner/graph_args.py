"""Graph arguments of ``irgl-bench``: a graph file or a generator spec, with a
cache of generated graphs, and the default source node."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np

from .apps import default_benchmarks_dir
from .errors import UsageError
from .generators import SPEC_FORMS, GraphSpec, generate, parse_spec
from .graphs import CSRGraph, GraphFormatError, load_graph, read_gr, write_gr

__all__ = [
    "check_graph_arg",
    "default_cache_dir",
    "default_source",
    "file_key",
    "resolve_graph",
    "user_cache_dir",
]


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/irgl/graphs`` (``~/.cache/irgl/graphs`` without it)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "irgl" / "graphs"


def default_cache_dir(benchmarks_dir: str | Path | None = None) -> Path:
    """Where generated graphs are cached when ``--cache-dir`` is not given:
    ``$IRGL_GRAPH_CACHE`` if set, else ``.cache`` in the benchmarks directory
    the apps come from (``benchmarks_dir``, by default the checkout's
    ``benchmarks/``) when that directory is writable, else
    :func:`user_cache_dir` (e.g. an installed package's read-only folder)."""
    env = os.environ.get("IRGL_GRAPH_CACHE")
    if env:
        return Path(env)
    base = (
        Path(benchmarks_dir) if benchmarks_dir is not None else default_benchmarks_dir()
    )
    if base.is_dir() and os.access(base, os.W_OK | os.X_OK):
        return base / ".cache"
    return user_cache_dir()


def resolve_graph(
    text: str,
    symmetrize: bool = True,
    weighted: bool = True,
    cache_dir: Path | None = None,
) -> tuple[CSRGraph, GraphSpec | None]:
    """Load a graph file or build a generator spec (cached as ``.gr`` if ``cache_dir``).

    Returns the graph and the parsed spec (``None`` for files).
    """
    try:
        spec = parse_spec(text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec is None:
        loaded = load_graph(text, symmetrize=symmetrize, weighted=weighted)
        loaded.content_key = file_key(Path(text), symmetrize, weighted)
        return loaded, None
    graph: CSRGraph | None = None
    cached = (
        cache_dir / (spec.name.replace(":", "_").replace("@", "_seed") + ".gr")
        if cache_dir
        else None
    )
    if cached is not None and cached.is_file():
        try:
            graph = read_gr(cached)
        except GraphFormatError as e:
            print(
                f"irgl-bench: warning: regenerating corrupt cache file ({e})",
                file=sys.stderr,
            )
    if graph is None:
        graph = generate(spec)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            write_gr(cached, graph)
    if not weighted:
        graph.weights = None
    if cached is not None and cached.is_file():
        graph.content_key = file_key(cached, True, weighted)
    return graph, spec


def file_key(path: Path, symmetrize: bool, weighted: bool) -> str:
    """A key for the graph loaded from ``path`` with these options: the
    file's resolved path, size and modification time (a rewritten file gets
    another key)."""
    st = path.stat()
    text = f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}\0{symmetrize}\0{weighted}"
    return "f" + hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def default_source(graph: CSRGraph, spec: GraphSpec | None) -> int:
    """The highest-degree node for RMAT graphs (lowest id on ties), else 0."""
    if spec is not None and spec.kind == "rmat" and graph.num_nodes:
        return int(np.argmax(graph.degrees()))
    return 0


def check_graph_arg(text: str) -> None:
    """Raise :class:`UsageError` unless ``text`` is a valid spec or a file."""
    try:
        spec = parse_spec(text)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if spec is None and not Path(text).is_file():
        raise UsageError(
            f"graph {text!r} is neither a generator spec ({SPEC_FORMS}) "
            "nor an existing file"
        )
