"""``irgl-bench scaling``: the distributable apps on 1, 2, 4, ... GPUs of this
node, written to ``benchmarks/scaling.json`` and a table in RESULTS.md.

Every cell runs in its own processes: the 1-GPU baseline is the app's
distributable program (:attr:`~irgl_runner.apps.AppSpec.distributed_mlir`)
built for one GPU without ``irgl-distribute`` (the single-GPU lowering, in a
subprocess: ``python -m irgl_runner.scaling --one-gpu``); N GPUs run the same
program lowered with ``lower-irgl{distribute=POLICY}`` through
:func:`irgl_runner.distributed.launch` (one process per GPU, NCCL). A row per
app x graph x gpus x policy: median time, correctness (the app's CPU check),
rank 0's bytes sent, rounds, bytes per round and time in communication per
call, the GPU model; ``exceeds_one_gpu`` where the 1-GPU run ran out of
memory (the graph does not fit one card). Speed-up is against the 1-GPU row
of the same app and graph in the same invocation. ``--merge`` keeps rows of
other runs; an app and graph has rows of one GPU model only (another graph
may come from another machine: the table then names each row's model).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from irgl_runner.errors import IrglError, UsageError
from irgl_runner.partition import POLICIES
from irgl_runner.report import current_commit, update_markdown, write_output

BEGIN_MARKER = "<!-- irgl-bench scaling: begin -->"
END_MARKER = "<!-- irgl-bench scaling: end -->"

DEFAULT_APPS = ("bfs", "sssp", "cc", "pr_pull")
DEFAULT_GRAPHS = ("rmat:22", "grid:2048x2048")
#: what a row takes from a run's JSON record besides time and correctness
RECORD_KEYS = (
    "checked",
    "gpu",
    "nodes",
    "edges",
    "bytes_per_call",
    "bytes_per_round",
    "rounds",
    "comm_ms",
    "gpu_mem_used_bytes",
    "gpu_mem_total_bytes",
    "rank0_host_s",
)


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def one_gpu(
    app_name: str,
    graph: str,
    reps: int,
    source: int | None,
    output: str | None = None,
    check: bool = True,
) -> dict[str, Any]:
    """The 1-GPU baseline of one cell (runs in this process); its primary
    output written to ``output``."""
    from irgl_runner.api import Program
    from irgl_runner.apps import execute, load_app
    from irgl_runner.build import build, target_for
    from irgl_runner.graph_args import default_cache_dir, default_source, resolve_graph

    app = load_app(app_name)
    if app.distributed_mlir is not None:
        app = replace(app, mlir=app.distributed_mlir)
    g, spec = resolve_graph(
        graph, app.symmetrize, app.weighted, default_cache_dir(None)
    )
    src = source if source is not None else default_source(g, spec)
    program = Program(build(app.mlir, target=target_for(g.num_nodes, g.num_edges)))
    ctx = execute(app, program, g, src, reps=reps, warmup=1)
    used, total = program.device_memory()
    problem = None if app.check is None or not check else app.check(ctx)
    if output is not None and app.primary_output is not None:
        write_output(output, ctx.outputs[app.primary_output])
    return {
        "median_ms": round(statistics.median(ctx.times_ms), 6),
        "times_ms": [round(t, 6) for t in ctx.times_ms],
        "correct": problem is None,
        "checked": check and app.check is not None,
        "problem": problem,
        "nodes": g.num_nodes,
        "edges": g.num_edges,
        "gpu": program.device_name(),
        "gpu_mem_used_bytes": used,
        "gpu_mem_total_bytes": total,
    }


def _run(argv: list[str], timeout: float) -> tuple[int, str, str]:
    env = dict(os.environ)
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=env
        )
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:.0f} s"
    return done.returncode, done.stdout, done.stderr


#: A policy of --policies with folded master blocks (``oec+fold``).
FOLD_SUFFIX = "+fold"


def split_policy(policy: str) -> tuple[str, bool]:
    """``oec`` -> ("oec", False); ``oec+fold`` -> ("oec", True): the
    partitioning policy and whether its master blocks are folded
    (irgl_runner.partition_fold)."""
    if policy.endswith(FOLD_SUFFIX):
        return policy[: -len(FOLD_SUFFIX)], True
    return policy, False


def _cell(
    app: str,
    graph: str,
    n: int,
    policy: str,
    opts: argparse.Namespace,
    out: Path,
    check_here: bool = False,
) -> dict[str, Any]:
    """One row: ``n`` GPUs (1: the single-GPU baseline, checked against the
    CPU reference) in fresh processes; the primary output goes to ``out``.
    ``check_here``: N GPUs check against the CPU reference themselves (there
    is no 1-GPU output: the graph exceeds one GPU); their row's `checked`."""
    row: dict[str, Any] = {"app": app, "graph": graph, "gpus": n, "policy": policy}
    if n == 1:
        argv = ["-m", "irgl_runner.scaling", "--one-gpu", app, graph]
        argv += [] if opts.check else ["--no-check"]
    else:
        base, folded = split_policy(policy)
        argv = ["-m", "irgl_runner.distributed", app, "--graph", graph]
        argv += ["--gpus", str(n), "--policy", base]
        argv += ["--fold"] if folded else []
        argv += [] if check_here else ["--no-check"]
        argv += ["--rank-partitions"] if getattr(opts, "rank_partitions", False) else []
    argv += ["--reps", str(opts.reps), "--output", str(out)]
    started = time.perf_counter()
    code, stdout, err = _run([sys.executable, *argv], opts.timeout)
    # the cell's wall time: the runs, and the reading, partitioning and
    # set-up around them (rank0_host_s says which)
    row["wall_s"] = round(time.perf_counter() - started, 1)
    record = _last_json(stdout)
    if record is None:
        last = (err.strip().splitlines() or [f"exit {code}"])[-1]
        row.update(correct=False, error=last[:300])
        row["exceeds_one_gpu"] = n == 1 and "out of memory" in err
        return row
    row["median_ms"] = record["median_ms"]
    row["correct"] = record.get("correct", record.get("check") != "failed")
    if check_here:
        row["checked"] = record.get("check") == "passed"
    row["exceeds_one_gpu"] = False
    for key in RECORD_KEYS:
        if key in record:
            row[key] = record[key]
    return row


def same_output(got: Path, want: Path) -> bool:
    """Whether N GPUs gave the 1-GPU output: equal integers; floats (PageRank,
    summed in another order) within 1e-3 of the largest value."""
    a, b = np.load(got), np.load(want)
    if a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return bool(np.allclose(a, b, rtol=0.0, atol=1e-3 * scale + 1e-12))


def measure(
    apps: Sequence[str],
    graphs: Sequence[str],
    gpus: Sequence[int],
    policies: Sequence[str],
    opts: argparse.Namespace,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    weak: bool = False,
    done: Mapping[tuple[str, str, int, str], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every cell, in order (each also given to `on_row` as it ends); a
    failed cell is a row with its error. A run on several GPUs is correct
    when its output is the 1-GPU run's, or, where the 1-GPU run ran out of
    memory or failed, when it passes the CPU check (not checked with
    ``--no-check``).
    ``weak``: ``graphs[i]`` runs on ``gpus[i]`` GPUs only (weak scaling; the
    N-GPU runs are checked against the CPU reference). ``done``: the earlier
    rows of cells (app, graph, GPUs, policy) not to run again (``--resume``);
    without a 1-GPU output the N-GPU runs are checked against the CPU
    reference (and marked as exceeding one GPU where the earlier 1-GPU row
    ran out of memory)."""
    rows: list[dict[str, Any]] = []
    series = (
        [list(zip(graphs, gpus, strict=True))]
        if weak
        else [[(graph, n) for n in gpus] for graph in graphs]
    )
    with tempfile.TemporaryDirectory(prefix="irgl-scaling-") as tmp:
        for cells in series:
            for app in apps:
                base = Path(tmp) / f"{app}.1.npy"
                exceeds = False  # the 1-GPU run ran out of memory
                no_base = weak  # no 1-GPU output of the same graph to compare with
                for graph, n in cells:
                    for policy in ("none",) if n == 1 else policies:
                        earlier = (
                            None if done is None else done.get((app, graph, n, policy))
                        )
                        if earlier is not None:
                            no_base = no_base or n == 1
                            if n == 1 and not weak:
                                exceeds = bool(earlier.get("exceeds_one_gpu"))
                            continue
                        out = base if n == 1 else Path(tmp) / f"{app}.{n}.{policy}.npy"
                        row = _cell(
                            app,
                            graph,
                            n,
                            policy,
                            opts,
                            out,
                            no_base and opts.check and n > 1,
                        )
                        if n == 1 and not weak:
                            exceeds = bool(row.get("exceeds_one_gpu"))
                            # a 1-GPU run that failed left nothing to compare
                            no_base = no_base or exceeds or not base.exists()
                        elif n > 1 and "median_ms" in row:
                            row["exceeds_one_gpu"] = exceeds
                            if not no_base:
                                row["correct"] = (
                                    base.exists()
                                    and out.exists()
                                    and same_output(out, base)
                                )
                            elif "checked" not in row:
                                row["checked"] = False  # --no-check, no 1-GPU output
                        print(json.dumps(row), flush=True)
                        rows.append(row)
                        if on_row is not None:
                            on_row(row)
                base.unlink(missing_ok=True)
    return rows


def _speedup(rows: list[dict[str, Any]], row: dict[str, Any]) -> str:
    """The 1-GPU row's time over this row's (same app and graph)."""
    base = [
        r
        for r in rows
        if (r["app"], r["graph"], r["gpus"]) == (row["app"], row["graph"], 1)
        and "median_ms" in r
    ]
    if not base or "median_ms" not in row:
        return ""
    return f"{base[0]['median_ms'] / row['median_ms']:.2f}×"


def _cells(rows: list[dict[str, Any]], r: dict[str, Any]) -> list[str]:
    """One table row's cells."""
    head = [r["app"], r["graph"], str(r["gpus"]), r["policy"]]
    if "median_ms" not in r:
        error = r.get("error", "")
        if r.get("exceeds_one_gpu"):
            why = "exceeds one GPU" + (f" ({error})" if error else "")
        else:  # (a runtime error's text already starts with "error:")
            why = error if error.startswith("error:") else "error: " + error
        return [*head, "—", "", why, "", "", "", "", ""]
    mb = f"{r['bytes_per_call'] / 1e6:.2f}" if "bytes_per_call" in r else ""
    kb = f"{r['bytes_per_round'] / 1e3:.1f}" if "bytes_per_round" in r else ""
    comm = f"{r['comm_ms']:.3f}" if "comm_ms" in r else ""
    if not r["correct"]:
        ok = "NO"
    elif r.get("checked") is False:
        ok = "not checked"  # --no-check: no CPU reference run
    else:
        ok = "yes"
    gb = f"{r['gpu_mem_used_bytes'] / 1e9:.1f}" if "gpu_mem_used_bytes" in r else ""
    return [
        *head,
        f"{r['median_ms']:.3f}",
        _speedup(rows, r),
        ok,
        str(r.get("rounds", "")),
        mb,
        kb,
        comm,
        gb,
    ]


def _graph_key(graph: str) -> tuple[Any, ...]:
    """Generator specs in natural order (rmat:22 before rmat:24 before
    rmat:26), files by name."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"[:x@]", graph))


def table_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows by graph, then app (in order of first appearance), then GPU
    count; rows of one cell keep their order (the policies)."""
    apps: dict[str, int] = {}
    for r in rows:
        apps.setdefault(r["app"], len(apps))
    return sorted(
        rows, key=lambda r: (_graph_key(r["graph"]), apps[r["app"]], int(r["gpus"]))
    )


def markdown(rows: list[dict[str, Any]], gpu: str, date: str, commit: str) -> str:
    """The RESULTS.md section of a scaling run; a commit column where the
    rows were measured at several commits (a row without one is from
    `commit`)."""
    commits = list(dict.fromkeys(str(r.get("commit", commit)) for r in rows))
    several = len(commits) > 1
    machines = len({gpu_model(r["gpu"]) for r in rows if r.get("gpu")}) > 1
    named = f"commits {', '.join(commits)}" if several else f"commit {commit}"
    lines = [
        f"## Several GPUs: strong scaling — {gpu}, {date} ({named})",
        "",
        "Generated by `irgl-bench scaling`; rows in `benchmarks/scaling.json`.",
        "One process per GPU over NCCL (NVLink); 1 GPU is the same program",
        "lowered without `irgl-distribute`. Speed-up against that row; bytes,",
        "rounds and communication time are rank 0's per call (median), the",
        "communication time being its NCCL stream's time from the round's",
        "kernels to the data in place. Correct: the 1-GPU output equals the",
        "CPU reference, N GPUs give the 1-GPU output (PageRank within its",
        "tolerance; where one GPU ran out of memory, the CPU reference).",
        "GB/GPU: the most device memory a GPU had in use after the runs",
        "(graph or partition, exchange buffers, the runtime's pooled scratch).",
        "",
        "| app | graph | GPUs | policy | median ms | speed-up | correct | rounds"
        " | MB sent | KB/round | comm ms | GB/GPU |"
        + (" GPU model |" if machines else "")
        + (" commit |" if several else ""),
        "| --- | --- | ---: | --- | ---: | ---: | --- |"
        + " ---: |" * 5
        + (" --- |" if machines else "")
        + (" --- |" if several else ""),
    ]
    for r in table_order(rows):
        cells = _cells(rows, r)
        cells += [gpu_model(str(r.get("gpu", "")))] if machines else []
        cells += [str(r.get("commit", commit))] if several else []
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def weak_markdown(rows: list[dict[str, Any]], series: list[list[Any]]) -> str:
    """The weak-scaling table of a series of (graph, GPUs) cells, e.g.
    RMAT-24 on 1, RMAT-25 on 2, RMAT-26 on 4 (the work per GPU about
    constant): time and efficiency (the 1-GPU cell's time over the cell's;
    1.00 is ideal) per app and policy; '' without a series."""
    if not series:
        return ""
    cells = [(str(g), int(n)) for g, n in series]
    by_key = {(r["app"], r["graph"], int(r["gpus"]), r["policy"]): r for r in rows}
    in_series = [r for r in rows if (r["graph"], int(r["gpus"])) in cells]
    apps = list(dict.fromkeys(r["app"] for r in in_series))
    head = " | ".join(f"{g} on {n}" for g, n in cells)
    lines = [
        "",
        "### Weak scaling",
        "",
        "The graph grows with the GPU count (about the same work per GPU);",
        "each cell: median ms, and efficiency = the 1-GPU cell's time over it",
        "(1.00 ideal); whether each run was checked: the table above.",
        "",
        f"| app | policy | {head} |",
        "| --- | --- |" + " ---: |" * len(cells),
    ]
    for app in apps:
        first = by_key.get((app, cells[0][0], 1, "none"))
        t1 = first.get("median_ms") if first else None
        policies = dict.fromkeys(  # those of this app's multi-GPU cells
            r["policy"] for r in in_series if r["app"] == app and r["gpus"] > 1
        )
        for policy in policies:
            out = []
            for graph, n in cells:
                r = by_key.get((app, graph, n, "none" if n == 1 else policy))
                if r is None or "median_ms" not in r:
                    out.append("—")
                    continue
                eff = f" ({t1 / r['median_ms']:.2f})" if t1 else ""
                out.append(f"{r['median_ms']:.3f}{eff}")
            lines.append(f"| {app} | {policy} | " + " | ".join(out) + " |")
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``irgl-bench scaling``'s options."""
    p.add_argument(
        "--apps",
        default=",".join(DEFAULT_APPS),
        help="comma-separated distributable apps (default %(default)s)",
    )
    p.add_argument(
        "--graphs",
        default=",".join(DEFAULT_GRAPHS),
        help="comma-separated graph files or generator specs (default %(default)s)",
    )
    p.add_argument("--gpus", default="1,2,4", help="GPU counts, e.g. 1,2,4")
    p.add_argument(
        "--weak",
        default=None,
        help="weak scaling: a graph per GPU count of --gpus (the first for 1 "
        "GPU), e.g. rmat:24,rmat:25,rmat:26 with --gpus 1,2,4; replaces --graphs",
    )
    p.add_argument(
        "--policies",
        default="oec,cvc",
        help="partitioning policies for N > 1 GPUs: oec (outgoing edge-cut), "
        "cvc (Cartesian vertex-cut), either with +fold (folded master blocks: "
        "rank r masters id blocks r and 2N-1-r of 2N) (default %(default)s)",
    )
    p.add_argument(
        "--reps", type=int, default=5, help="timed runs per cell after one warm-up"
    )
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep the earlier JSON's rows that this run does not redo, and "
        "the rows a cut-short earlier run left in <json>.partial (split a "
        "long scaling run over several calls)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="--merge, and skip the cells the earlier rows (or a cut-short "
        "run's) already hold correct, and a 1-GPU cell that ran out of memory; "
        "without a 1-GPU output in this run the N-GPU runs are checked against "
        "the CPU reference",
    )
    p.add_argument(
        "--no-check",
        dest="check",
        action="store_false",
        help="skip the 1-GPU run's CPU reference check (several GPUs are "
        "always compared with the 1-GPU output)",
    )
    p.add_argument(
        "--rank-partitions",
        action="store_true",
        help="N-GPU runs: each rank reads only its own partition (the "
        "launcher partitions the graph and checks the result)",
    )
    p.add_argument(
        "--json", default="benchmarks/scaling.json", help="rows written here"
    )
    p.add_argument(
        "--results",
        default="benchmarks/RESULTS.md",
        help="table written here ('' : none)",
    )


def _key(row: dict[str, Any]) -> tuple[str, str, int, str]:
    return (row["app"], row["graph"], int(row["gpus"]), row["policy"])


def merged(earlier: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` with the rows of an earlier scaling.json that they do not
    redo (same app, graph, GPU count and policy), earlier ones first;
    UsageError where an app and graph would have rows of two GPU models
    (its speed-ups would compare machines). Other graphs may come from
    other machines (e.g. one too large for one GPU of the usual kind)."""
    defaults = {"commit": earlier["commit"]} if "commit" in earlier else {}
    old = [{**defaults, **r} for r in earlier.get("rows", [])]
    models: dict[tuple[str, str], str] = {}
    for r in rows:
        if r.get("gpu"):
            models.setdefault((r["app"], r["graph"]), gpu_model(r["gpu"]))
    for r in old:
        model = models.get((r.get("app", ""), r.get("graph", "")))
        if model is not None and r.get("gpu") and gpu_model(r["gpu"]) != model:
            raise UsageError(
                f"--merge: the earlier rows of {r['app']} on {r['graph']} are from "
                f"{gpu_model(r['gpu'])}, this run from {model}: speed-ups across "
                "machines would mislead"
            )
    redone = {_key(r) for r in rows}
    return [r for r in old if _key(r) not in redone] + rows


def gpu_model(text: str) -> str:
    """The GPU model of a row's ``gpu`` (``"2 x NVIDIA H200 (NCCL, oec)"``
    -> ``"NVIDIA H200"``)."""
    match = re.fullmatch(r"(?:\d+ x )?(.*?)(?: \(NCCL.*\))?", text.strip())
    return match.group(1) if match else text


def models_of(rows: list[dict[str, Any]]) -> str:
    """The GPU models of the rows, in order, joined by '; '."""
    found = [gpu_model(r["gpu"]) for r in rows if r.get("gpu")]
    return "; ".join(dict.fromkeys(found)) or "unknown GPU"


def earlier_rows(out: Path, partial: Path) -> dict[str, Any]:
    """What ``--merge`` keeps: the rows of ``out`` (an earlier scaling.json)
    with the rows a cut-short run left in ``partial`` (one JSON row a line)
    in place of those they redo; ``{}`` when there is neither."""
    earlier: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    left = []
    if partial.exists():
        for line in partial.read_text().splitlines():
            try:
                left.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # the line a killed run was writing
    left = [r for r in left if isinstance(r, dict) and "app" in r and "gpus" in r]
    if not left:
        return earlier
    return {**earlier, "rows": merged(earlier, left)}


def run(args: argparse.Namespace) -> int:
    """``irgl-bench scaling``: measure (each row also appended to
    ``<json>.partial`` as it ends, so a run cut short keeps what it
    measured), then write the JSON and the table; with ``--merge`` the
    earlier JSON's other rows are kept."""
    from irgl_runner.distributed import gpu_count

    counts = [int(x) for x in args.gpus.split(",") if x]
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if split_policy(p)[0] not in POLICIES]
    if unknown:
        raise UsageError(
            f"--policies: unknown {', '.join(unknown)} (known: oec, cvc, "
            "each optionally +fold)"
        )
    weak = [g for g in (args.weak or "").split(",") if g]
    if weak and (len(weak) != len(counts) or counts[0] != 1):
        raise UsageError(
            f"--weak names a graph per GPU count of --gpus, the first for 1 GPU: "
            f"got {len(weak)} graph(s) for --gpus {args.gpus}"
        )
    have = gpu_count()
    if have < max(counts):
        need = max(counts)
        print(f"error: scaling needs {need} GPUs here, found {have}", file=sys.stderr)
        return 2
    if 1 not in counts:
        counts.insert(0, 1)  # the baseline every speed-up and output is against
    out = Path(args.json)
    earlier: dict[str, Any] = {}
    partial = out.with_name(out.name + ".partial")
    if args.merge or args.resume:
        earlier = earlier_rows(out, partial)
    partial.write_text("")
    finished = {
        _key(r): r
        for r in earlier.get("rows", [])
        if args.resume
        and (
            (r.get("correct") and "median_ms" in r)
            or (r.get("gpus") == 1 and r.get("exceeds_one_gpu"))  # the same again
        )
    }

    commit = current_commit()

    def keep(row: dict[str, Any]) -> None:
        row.setdefault("commit", commit)
        with partial.open("a") as f:
            f.write(json.dumps(row) + "\n")

    rows = measure(
        [a for a in args.apps.split(",") if a],
        weak or [g for g in args.graphs.split(",") if g],
        counts,
        policies,
        args,
        keep,
        weak=bool(weak),
        done=finished or None,
    )
    # the exit status is this run's (resumed cells included), not that of
    # rows an earlier run left for --merge to keep
    failed = [r for r in [*rows, *finished.values()] if not r.get("correct")]
    rows = merged(earlier, rows)
    gpu = models_of(rows)
    date = datetime.date.today().isoformat()
    series = (
        [[g, n] for g, n in zip(weak, counts, strict=True)]
        if weak
        else earlier.get("weak")
    )
    payload = {"gpu": gpu, "date": date, "commit": commit, "rows": rows}
    if series:
        payload["weak"] = series
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=1) + "\n")
    os.replace(tmp, out)
    partial.unlink(missing_ok=True)
    if args.results:
        text = markdown(rows, gpu, date, commit) + weak_markdown(rows, series or [])
        update_markdown(args.results, text, BEGIN_MARKER, END_MARKER)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m irgl_runner.scaling``: ``--one-gpu APP GRAPH`` prints one
    baseline record; otherwise the whole scaling run."""
    p = argparse.ArgumentParser(prog="python -m irgl_runner.scaling")
    p.add_argument("--one-gpu", nargs=2, metavar=("APP", "GRAPH"), default=None)
    p.add_argument("--source", type=int, default=None)
    p.add_argument("--output", default=None, help=argparse.SUPPRESS)
    add_arguments(p)
    args = p.parse_args(argv)
    if args.one_gpu:
        try:
            record = one_gpu(
                args.one_gpu[0],
                args.one_gpu[1],
                args.reps,
                args.source,
                args.output,
                args.check,
            )
        except IrglError as e:  # e.g. out of memory: the row says so
            print(f"error: {e}", file=sys.stderr)
            return 2 if isinstance(e, UsageError) else 1
        print(json.dumps(record), flush=True)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
