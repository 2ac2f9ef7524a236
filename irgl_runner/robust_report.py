"""The robustness benchmark's reports: its section of ``RESULTS.md`` and
``robust.json``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .robust_cells import (
    DEFAULT_ROBUST_REPS,
    DEFAULT_SOURCE_SEED,
    DEFAULT_SOURCES,
    MAX_SOURCE_REPS,
    SPREAD_LIMIT,
    SPREAD_NOISE_MS,
    RobustCell,
    SourceRun,
    cell_names,
    explain_spread,
    unexplained_cells,
)

# ------------------------------------------------------------------- report


def _ms(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:.3f}" if value < 1000 else f"{value:.0f}"


def correct_mark(cell: RobustCell) -> str:
    """A cell's "correct?" column: yes, skipped, timeout or what failed."""
    if cell.status == "passed":
        return "yes"
    if cell.status == "skipped":
        return "unchecked"
    if cell.timed_out:
        return "timeout"
    head, _, detail = cell.status.partition(":")
    return ("**NO**" if head == "failed" else "**error**") + (
        f": {detail.strip()}" if detail.strip() else ""
    )


def _over(cell: RobustCell) -> str:
    if cell.sources is None:
        return f"{len(cell.times_ms)} runs" if cell.times_ms else ""
    roles = [s.role for s in cell.sources]
    special = [r for r in ("hub", "leaf", "isolated") if r in roles]
    return (
        f"{len(roles)} sources ({', '.join(special)}, {roles.count('random')} random)"
    )


def _cell_text(text: object, limit: int = 400) -> str:
    s = " ".join(str(text).split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return s.replace("|", "\\|")


def robust_table(cells: Sequence[RobustCell]) -> str:
    """The markdown table: one line per app and graph."""
    cols = ["app", "graph", "nodes", "edges", "over", "min ms", "median ms"]
    cols += ["max ms", "max/min", "correct?", "spread (source-based apps)"]
    right = {"nodes", "edges", "min ms", "median ms", "max ms", "max/min"}
    lines = [
        "| " + " | ".join(cols) + " |",
        "|" + "|".join("---:" if c in right else "---" for c in cols) + "|",
    ]
    for c in cells:
        s = c.stats()
        spread = explain_spread(c)
        ratio = f"{s[2] / s[0]:.2f}" if s and s[0] > 0 else ""
        row = [
            c.app,
            c.graph,
            "" if c.nodes is None else f"{c.nodes:,}",
            "" if c.edges is None else f"{c.edges:,}",
            _over(c),
            _ms(s[0]) if s else "",
            _ms(s[1]) if s else "",
            _ms(s[2]) if s else "",
            ratio,
            correct_mark(c),
            spread.reason if spread is not None and spread.flagged else "",
        ]
        lines.append("| " + " | ".join(_cell_text(x) for x in row) + " |")
    return "\n".join(lines) + "\n"


def _source_runs(meta: Mapping[str, Any], reps: int) -> str:
    """How many timed runs a source had, as the section says it."""
    total = meta.get("short_runs_total_ms")
    if not total:
        return f"{reps} timed runs"
    return (
        f"at least {reps} timed runs, more for a short one (until they add up "
        f"to {total:g} ms, at most {meta.get('max_source_reps', MAX_SOURCE_REPS)})"
    )


def _source_warmups(cells: Sequence[RobustCell]) -> str:
    """How the section says the sources were measured: in turns, each timed
    run after a warm-up of its source (robust.json's `in_turns`), or in
    blocks with a warm-up before each source (`warmups`), or, earlier, one
    warm-up per graph."""
    runs = [r for c in cells for r in c.sources or ()]
    turns = [r for r in runs if r.in_turns]
    if runs and len(turns) == len(runs):
        return _turns(turns)
    if turns:
        return (
            _turns(turns)
            + " where robust.json says `in_turns`; else "
            + _block_warmups([r for r in runs if not r.in_turns])
        )
    return _block_warmups(runs)


def _turns(runs: Sequence[SourceRun]) -> str:
    """The sources measured in turns, with or without warm-ups."""
    text = "the graph's sources measured in turns, one timed run of each a turn"
    if all(r.warmups for r in runs):
        return text + ", each right after a warm-up run of the same source"
    if not any(r.warmups for r in runs):
        return text + ", no warm-up runs"
    return text + ", most right after a warm-up run of the same source"


def _block_warmups(runs: Sequence[SourceRun]) -> str:
    """The warm-ups of sources measured in blocks."""
    each = [r for r in runs if r.warmups]
    if runs and len(each) == len(runs):
        return "one warm-up before each source"
    if each:
        return (
            "one warm-up before each source where robust.json gives the source "
            "`warmups`, else one per graph"
        )
    return "one warm-up per graph"


def render_robust_section(
    cells: Sequence[RobustCell],
    meta: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The ``RESULTS.md`` section (its heading names the GPU and the date)."""
    meta = dict(meta or {})
    gpus = sorted({c.gpu for c in cells if c.gpu})
    generated = str(meta.get("generated") or "")
    title = "## Robustness: every app on every graph family, BFS and SSSP from "
    title += f"{meta.get('sources', DEFAULT_SOURCES)} sources per graph"
    title += f" — {', '.join(gpus) or 'no GPU result yet'}"
    title += f", {generated[:10]}" if generated else ""
    out = [title]
    head = f"Generated {generated}" if generated else "Generated"
    if meta.get("command"):
        head += f" by `{meta['command']}`"
    if meta.get("commit"):
        head += f" at commit {meta['commit']}"
    out.append(head + ".")
    reps = meta.get("reps", DEFAULT_ROBUST_REPS)
    runs = [r for c in cells for r in c.sources or ()]
    counts = (  # what a run has where it was counted, and its description
        (
            "edge_visits",
            "the edges it visited where they were counted (the interpreter's "
            "count; on the GPU, for SSSP, the edges its threads read (an "
            "unrolled loop's copy past a range's end reads its last edge again) in "
            "one more, untimed run of a build with `-DIRGL_COUNT_EDGES`)",
        ),
        (
            "steps",
            "the synchronization steps it took (kernel launches, grid barriers "
            "and the rounds block 0 took alone, counted in that untimed run of "
            "the `-DIRGL_COUNT_EDGES` build: each costs a round trip through "
            "the GPU's memory whatever the work)",
        ),
        (
            "atomics",
            "the program's atomic read-modify-writes it issued (counted in that "
            "run too: SSSP's improving minimums and stamp exchanges, BFS's "
            "level exchanges; the runtime's worklist atomics not included)",
        ),
        (
            "span",
            "its span (counted in that run too: for every step, the most edges "
            "one thread read, summed over the steps; a step lasts as long as "
            "its longest such chain, as when one block reads a hub's edges)",
        ),
    )
    counted = "".join(
        f", {text}"
        for name, text in counts
        if any(getattr(r, name) is not None for r in runs)
    )
    several = max((len(r.counted or ()) for r in runs), default=0)
    if several > 1:
        counted += (
            f"; where each source was counted in {several} untimed runs, a "
            "count that varies between them (which thread reads a hub's edges) "
            "is a range, the slower source's most against the other's least"
        )
    out.append(
        f"BFS and SSSP: per graph {meta.get('sources', DEFAULT_SOURCES)} sources "
        "(the hub of highest degree, a leaf and an isolated node where the graph "
        "has them, the rest uniformly random; seed "
        f"{meta.get('source_seed', DEFAULT_SOURCE_SEED)} mixed with the graph), "
        f"each the median of {_source_runs(meta, reps)} "
        f"({_source_warmups(cells)}), each "
        "checked against the CPU reference; min/median/max over the sources. "
        f"Other apps: min/median/max of {reps} timed runs after one warm-up. "
        "Host call to device synchronization. Reached edges = stored edges "
        "whose source node the search reached; levels = BFS depth + 1; SSSP's "
        "depth = its farthest finite distance (its distance windows follow it). A "
        f"source-based cell whose slowest source takes more than {SPREAD_LIMIT:g}× "
        "its fastest is described in the last column: time, reached edges and "
        "levels of the slowest over the fastest. It is explained by the work "
        f"unless some source takes more than {SPREAD_LIMIT:g}× (and "
        f"{SPREAD_NOISE_MS * 1000:g} µs) longer than another source does, "
        "times the largest ratio of any measure of the first's work to the "
        "other's: its reached edges, its levels, (SSSP) its depth and (BFS) its "
        "top-down edges and bottom-up reads (replayed on the CPU from the "
        "program's own decisions: the reads the interpreter counts in `bfs` and "
        "`bfs_bottom_up`; on the two-hop path the reached edges)"
        f"{counted}: then it is **unexplained**, with the pair furthest above "
        "what its work accounts for. The column also gives, where it exceeds "
        f"{SPREAD_LIMIT:g}×, how far apart one source's own timed runs were "
        "(among the sources of at least half the slowest median): the same "
        "work run again. "
        "Per-source times, reached edges, levels, depths, replayed reads, "
        "counted edge visits, steps, atomics and spans are in `robust.json`."
    )
    planned = meta.get("planned")
    if planned is not None and len(cells) < planned:
        out.append(f"**In progress: {len(cells)} of {planned} cells done.**")
    wrong = [c for c in cells if not c.correct and not c.timed_out]
    if wrong:
        out.append(
            f"**{len(wrong)} of {len(cells)} cells are wrong or missing:** "
            + cell_names(wrong)
            + "."
        )
    late = [c for c in cells if c.timed_out]
    if late:
        out.append(
            f"{len(late)} cells ran past the time limit: " + cell_names(late) + "."
        )
    odd = unexplained_cells(cells)
    if odd:
        out.append(
            f"**{len(odd)} cells have a spread the work does not explain:** "
            + cell_names(odd)
            + "."
        )
    text = "\n\n".join(out) + "\n\n" + robust_table(cells)
    for note in notes:
        text += f"\n{note}\n"
    return text


def write_robust_json(
    path: Path, cells: Sequence[RobustCell], meta: Mapping[str, Any]
) -> None:
    """``robust.json``: the meta data and every cell with its sources."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    doc = {"meta": dict(meta), "cells": [c.to_json() for c in cells]}
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, path)


def read_robust_json(path: Path) -> tuple[list[RobustCell], dict[str, Any]]:
    """The cells and meta data of a ``robust.json``."""
    doc = json.loads(Path(path).read_text())
    return [RobustCell.from_json(c) for c in doc["cells"]], dict(doc["meta"])
