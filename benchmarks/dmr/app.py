"""DMR benchmark: Delaunay mesh refinement until no angle is below 30 degrees.

Host function: ``@main(%xy, %tri, %nbr, %flags, %meta, %claims, %wlcap) -> i32``
over the flat mesh arrays of ``mesh.py`` (the result is the number of bad
triangles left). The input is not a graph: ``load_input`` builds the mesh
``params["mesh"]``, a mesh spec ``KIND[:N][@SEED]`` (``mesh.parse_spec``:
``random``, points uniform in the unit square; ``thin``, in a 100:1
rectangle; ``cluster``, with tight clusters, so initial angles far below a
degree), by default ``random``. N defaults to ``params["points"]`` if set,
else to the graph's node count (``irgl-bench run dmr --graph
random:250000:0`` gives about 500k triangles); SEED to ``params["seed"]``.
Capacities are ``params["growth"]`` times the initial triangles and half
that times the points. Checked by :func:`mesh.check_refined` (no bad
triangle left, valid triangulation of the same domain; Delaunay too if
``params["require_delaunay"]``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np

from irgl_runner.apps import AppSpec, ArraySpec, RunContext
from irgl_runner.errors import UsageError

HERE = Path(__file__).resolve().parent


def _sibling(name: str) -> ModuleType:
    """Import ``benchmarks/dmr/<name>.py`` (this directory is not a package)."""
    key = f"irgl_bench_dmr_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, HERE / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


mesh = _sibling("mesh")


class DmrInput(NamedTuple):
    """The input mesh and the initial device arrays (xy, tri, nbr, flags, meta)."""

    mesh: Any  # mesh.Mesh
    arrays: dict[str, np.ndarray]
    tcap: int
    pcap: int


def make_input(
    points: int, seed: int = 0, growth: float = 20.0, kind: str = "random"
) -> DmrInput:
    """The input mesh ``kind:points@seed`` (see ``mesh.MESH_KINDS``) and its
    device layout."""
    m = mesh.make_mesh(mesh.MeshSpec(kind, points, seed))
    tcap, pcap = mesh.capacities(m, growth)
    return DmrInput(m, mesh.to_device_layout(m, tcap, pcap), tcap, pcap)


def mesh_spec(ctx: RunContext) -> Any:  # mesh.MeshSpec
    """The mesh of this run (see the module docstring)."""
    points = ctx.params.get("points") or ctx.graph.num_nodes
    seed = int(ctx.params["seed"])
    try:
        return mesh.parse_spec(ctx.params.get("mesh") or "random", int(points), seed)
    except ValueError as e:
        raise UsageError(f"dmr: {e}") from None


def load_input(ctx: RunContext) -> DmrInput:
    """The mesh for this run (see the module docstring)."""
    spec = mesh_spec(ctx)
    return make_input(spec.points, spec.seed, float(ctx.params["growth"]), spec.kind)


def _array(name: str):
    return lambda ctx: ctx.input.arrays[name]


def read_back(ctx: RunContext):
    """The refined mesh (``mesh.Refined``) from the read-back arrays."""
    out = ctx.outputs
    return mesh.from_device_layout(
        out["xy"], out["tri"], out["nbr"], out["flags"], out["meta"]
    )


def check(ctx: RunContext) -> str | None:
    """No bad triangle left and a valid triangulation of the input's domain."""
    delaunay = bool(ctx.params.get("require_delaunay"))
    problem = mesh.check_refined(ctx.input.mesh, read_back(ctx), delaunay=delaunay)
    if problem is None and ctx.result not in (None, 0):
        problem = f"the program reports {ctx.result} bad triangle(s) left"
    return problem


def describe(ctx: RunContext) -> dict[str, Any]:
    """The refined mesh next to the time: triangles, points and smallest
    angle (degrees) before and after, bad triangles at the start, points
    inserted and boundary edges split (``mesh.summary``)."""
    return mesh.summary(ctx.input.mesh, read_back(ctx))


APP = AppSpec(
    name="dmr",
    mlir=HERE / "dmr.mlir",
    host_fn="main",
    outputs=[
        ArraySpec("xy", "float64", init=_array("xy"), length="init"),
        ArraySpec("tri", "int32", init=_array("tri"), length="init"),
        ArraySpec("nbr", "int32", init=_array("nbr"), length="init"),
        ArraySpec("flags", "int32", init=_array("flags"), length="init"),
        ArraySpec("meta", "int32", init=_array("meta"), length="init"),
        ArraySpec(
            "claims",
            "int32",
            # one claim cell per edge of a triangle slot (dmr_edge_id)
            init=lambda ctx: np.zeros(3 * ctx.input.tcap, dtype=np.int32),
            length="init",
            read_back=False,
        ),
    ],
    args=lambda ctx: [
        *(ctx.arrays[n] for n in ("xy", "tri", "nbr", "flags", "meta", "claims")),
        2 * ctx.input.tcap,
    ],
    check=check,
    describe=describe,
    symmetrize=False,
    weighted=False,
    uses_source=False,
    output_array="meta",
    params={
        "mesh": None,
        "points": None,
        "seed": 0,
        "growth": 20.0,
        "require_delaunay": False,
        "bench_graphs": ["random:500000:0"],
        "bench_graphs_quick": ["random:5000:0"],
    },
    load_input=load_input,
)
