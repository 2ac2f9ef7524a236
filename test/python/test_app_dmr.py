"""DMR (benchmarks/dmr): the program lowers and its CUDA compiles with nvcc;
the mesh generator, device layout and checker work (the checker flags a
hand-made bad triangle and corrupted meshes); the C geometry of dmr.mlir
refines meshes correctly on the CPU, one triangle at a time and in simulated
GPU rounds of Exclusive; and, on a GPU, the compiled program refines meshes
of a few thousand triangles so that the checker passes."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import has_gpu, nvcc_path

from irgl_runner.apps import RunContext, execute, load_app
from irgl_runner.graphs import CSRGraph

ROOT = Path(__file__).resolve().parents[2]


def _import_app() -> ModuleType:
    """benchmarks/dmr/app.py as a module (for its helpers besides APP)."""
    name = "irgl_bench_dmr_app"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, ROOT / "benchmarks" / "dmr" / "app.py"
        )
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


dmr = _import_app()
APP = dmr.APP
mesh = dmr.mesh
cpu = dmr._sibling("cpu")


def _points_graph(n: int) -> CSRGraph:
    """A graph of n isolated nodes: DMR takes its node count as the points."""
    return CSRGraph(n, np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64))


def _needs_cxx() -> None:
    if cpu.compiler() is None:
        pytest.skip("no C++ compiler")


@functools.cache
def _refined(points: int, seed: int, threads: int = 1):
    """(input mesh, refined mesh) from the CPU driver."""
    inp = dmr.make_input(points, seed)
    cpu.refine(inp.arrays, threads=threads)
    return inp.mesh, mesh.from_device_layout(**inp.arrays)


# --------------------------------------------------------------- compilation


def test_dmr_lowers_and_compiles_with_nvcc(tmp_path) -> None:
    from irgl_runner.api import emit_cuda

    text = emit_cuda(APP.mlir)
    # the whole Pipe is one control kernel (co-resident grid), refine a
    # device body in it; the counters are reported after it
    start = text.index("static int32_t irgl_host_main(double* xy")
    host = text[start : text.index("\n}\n", start)]
    assert host.count("irgl::launch_cooperative(main_control") == 1
    assert "irgl::launch(" not in host
    assert "refine_device(" in text
    assert "irgl_claim_write" in text and "irgl_grid_sync" in text
    hosted = emit_cuda(APP.mlir, "lower-irgl{outline=false}")
    assert "irgl::launch_cooperative(refine" in hosted  # Exclusive => co-resident
    nvcc = nvcc_path()
    if nvcc is None:
        pytest.skip("nvcc not found")
    source = tmp_path / "dmr.cu"
    source.write_text(text)
    cmd = [nvcc, "-arch=sm_90", "-std=c++17", "-c", str(source), "-o", "dmr.o"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------ mesh generator


def test_random_mesh_is_a_delaunay_triangulation_of_the_square() -> None:
    m = mesh.random_mesh(1500, seed=4)
    assert m.num_points == 1500 and m.num_triangles == 2 * 1500 - 4 - 2
    assert (mesh._area2(m.points, m.triangles) > 0).all()
    assert mesh._check_links(m.triangles.astype(np.int64), m.neighbours) == []
    assert mesh._polygon_area2(m) == pytest.approx(2.0)
    assert len(mesh.hull_edges(m)) == 4  # the sides of the unit square
    assert mesh.delaunay_violations(m) == 0
    assert np.array_equal(m.points, mesh.random_mesh(1500, seed=4).points)
    assert not np.array_equal(m.points, mesh.random_mesh(1500, seed=5).points)


@pytest.mark.parametrize(
    ("text", "points", "seed", "expected"),
    [
        ("random:5000@3", None, 0, ("random", 5000, 3)),
        ("thin:700", None, 4, ("thin", 700, 4)),
        ("cluster@9", 1200, 0, ("cluster", 1200, 9)),
        ("random", 64, 2, ("random", 64, 2)),
    ],
)
def test_mesh_spec(text: str, points: int | None, seed: int, expected: tuple) -> None:
    spec = mesh.parse_spec(text, points, seed)
    assert (spec.kind, spec.points, spec.seed) == expected
    assert mesh.parse_spec(spec.name) == spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("square:100", "bad mesh spec"),
        ("random:100:3", "bad mesh spec"),
        ("thin", "names no point count"),
        ("cluster:3", "at least 4 points"),
    ],
)
def test_mesh_spec_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        mesh.parse_spec(text)
    assert "forms:" in str(info.value) or "4 points" in str(info.value)


@pytest.mark.parametrize("kind", ["thin", "cluster"])
def test_small_angle_meshes(kind: str) -> None:
    """The ``thin`` and ``cluster`` inputs: valid Delaunay triangulations of
    their domain whose smallest angle is far below a degree."""
    m = mesh.make_mesh(f"{kind}:3000@1")
    assert m.num_points == 3000
    assert (mesh._area2(m.points, m.triangles) > 0).all()
    assert mesh._check_links(m.triangles.astype(np.int64), m.neighbours) == []
    assert mesh.delaunay_violations(m) == 0
    assert len(mesh.hull_edges(m)) == 4  # the 4 sides of the rectangle
    height = mesh.THIN_HEIGHT if kind == "thin" else 1.0
    assert mesh._polygon_area2(m) == pytest.approx(2.0 * height)
    assert mesh.min_angles(m).min() < 0.01
    if kind == "cluster":  # 10% of the points in clusters of radius 1e-5
        tight = m.points[-((3000 - 4) // 10) :]
        d = np.linalg.norm(m.points[:, None, :] - tight[None, :, :], axis=2)
        assert ((d > 0) & (d < 2 * mesh.CLUSTER_RADIUS)).sum(axis=0).min() >= 1
    other = mesh.make_mesh(f"{kind}:3000@2")
    assert not np.array_equal(m.points, other.points)


def test_unrefined_mesh_fails_only_for_bad_triangles() -> None:
    inp = dmr.make_input(800, seed=1)
    unrefined = mesh.from_device_layout(**inp.arrays)
    bad = len(mesh.bad_triangles(inp.mesh))
    assert bad > 0
    assert mesh.check_refined(inp.mesh, unrefined) == (
        f"{bad} bad triangle(s) remain (smallest angle "
        f"{mesh.min_angles(inp.mesh).min():.4f} deg)"
    )


def test_device_layout_round_trip() -> None:
    m = mesh.random_mesh(300, seed=2)
    tcap, pcap = mesh.capacities(m, 20.0)
    arrays = mesh.to_device_layout(m, tcap, pcap)
    assert len(arrays["tri"]) == 3 * tcap and len(arrays["xy"]) == 2 * pcap
    assert (arrays["flags"][m.num_triangles :] == mesh.DELETED).all()
    back = mesh.from_device_layout(**arrays)
    assert back.stats["ntri"] == m.num_triangles and back.stats["tcap"] == tcap
    for field in ("points", "triangles", "neighbours"):
        assert np.array_equal(getattr(back.mesh, field), getattr(m, field))
    with pytest.raises(ValueError, match="capacity"):
        mesh.to_device_layout(m, m.num_triangles - 1, pcap)


# ------------------------------------------------------------------ checker


def _hand_mesh() -> mesh.Mesh:
    """The unit square fanned around (0.5, 0.25): only triangle 0, (0, 1, 4),
    is bad (26.57 degrees at points 0 and 1)."""
    points = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.25]], dtype=float)
    tris = np.array([[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]], dtype=np.int32)
    nbrs = np.array([[-1, 1, 3], [-1, 2, 0], [-1, 3, 1], [-1, 0, 2]], dtype=np.int32)
    return mesh.Mesh(points, tris, nbrs)


def _stats(m: mesh.Mesh, **extra: int) -> dict[str, int]:
    stats = {name: 0 for name in mesh.META}
    stats.update(ntri=m.num_triangles, npts=m.num_points, **extra)
    return stats


def test_checker_flags_the_hand_made_bad_triangle() -> None:
    m = _hand_mesh()
    assert list(mesh.bad_triangles(m)) == [0]
    assert mesh.min_angles(m)[0] == pytest.approx(np.degrees(np.arctan(0.5)))
    problem = mesh.check_refined(m, mesh.Refined(m, _stats(m)))
    assert problem == "1 bad triangle(s) remain (smallest angle 26.5651 deg)"
    assert mesh.check_refined(m, mesh.Refined(m, _stats(m)), min_angle=26.0) is None


def test_delaunay_violations_of_the_two_diagonals() -> None:
    """The quad (0,0), (1,0), (1.2,1.2), (0,1): diagonal 1-3 is Delaunay, 0-2 not."""
    points = np.array([[0, 0], [1, 0], [1.2, 1.2], [0, 1]], dtype=float)
    good = mesh.Mesh(
        points,
        np.array([[0, 1, 3], [1, 2, 3]], dtype=np.int32),
        np.array([[-1, 1, -1], [-1, -1, 0]], dtype=np.int32),
    )
    flipped = mesh.Mesh(
        points,
        np.array([[0, 1, 2], [0, 2, 3]], dtype=np.int32),
        np.array([[-1, -1, 1], [0, -1, -1]], dtype=np.int32),
    )
    assert mesh.delaunay_violations(good) == 0
    assert mesh.delaunay_violations(flipped) == 1
    loose = {"min_angle": 10.0, "delaunay": True}
    assert mesh.check_refined(good, mesh.Refined(good, _stats(good)), **loose) is None
    problem = mesh.check_refined(good, mesh.Refined(flipped, _stats(flipped)), **loose)
    assert problem == "1 edge(s) not locally Delaunay"


def test_cpu_refines_the_hand_made_mesh() -> None:
    _needs_cxx()
    m = _hand_mesh()
    arrays = mesh.to_device_layout(m, *mesh.capacities(m, 20.0))
    assert cpu.refine(arrays) == 0
    out = mesh.from_device_layout(**arrays)
    assert mesh.check_refined(m, out) is None
    assert out.stats["initial_bad"] == 1 and out.stats["split"] >= 1


def _corrupt(refined: mesh.Refined, change: Callable[[mesh.Mesh], None]):
    m = refined.mesh
    copy = mesh.Mesh(m.points.copy(), m.triangles.copy(), m.neighbours.copy())
    change(copy)
    return mesh.Refined(copy, dict(refined.stats))


def _flip(m: mesh.Mesh) -> None:
    m.triangles[7] = m.triangles[7][[0, 2, 1]]
    m.neighbours[7] = m.neighbours[7][[2, 1, 0]]


def _relink(m: mesh.Mesh) -> None:
    t, i = np.argwhere(m.neighbours >= 0)[0]
    m.neighbours[t, i] = (m.neighbours[t, i] + 1) % m.num_triangles


def _drop_boundary_triangle(m: mesh.Mesh) -> None:
    """Remove a boundary triangle and unlink it: still consistent, but a hole."""
    t = int(np.argwhere(m.neighbours == -1)[0, 0])
    keep = np.arange(m.num_triangles) != t
    new_id = np.cumsum(keep) - 1
    nbr = m.neighbours[keep]
    nbr = np.where(nbr == t, -1, np.where(nbr >= 0, new_id[np.maximum(nbr, 0)], -1))
    m.triangles, m.neighbours = m.triangles[keep], nbr.astype(np.int32)


def _move_boundary_vertex(m: mesh.Mesh) -> None:
    """Push a vertex of a boundary edge (not a corner) into the domain."""
    edges = mesh.hull_edges(m)
    v = int(edges[:, 0][edges[:, 0] >= 4][0])
    m.points[v] += (m.points[v] - 0.5) * -1e-3


def _move_input_point(m: mesh.Mesh) -> None:
    m.points[100] += 1e-12


CORRUPTIONS = {
    "flipped": (_flip, "not counter-clockwise"),
    "relinked": (_relink, "neighbour link(s) do not match"),
    "hole": (_drop_boundary_triangle, "area"),
    "boundary moved": (_move_boundary_vertex, "not on the input boundary"),
    "input point moved": (_move_input_point, "input points changed"),
}


def test_checker_accepts_a_refined_mesh() -> None:
    _needs_cxx()
    before, after = _refined(1000, 3)
    assert mesh.check_refined(before, after, delaunay=True) is None


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_checker_flags_corrupted_meshes(name: str) -> None:
    _needs_cxx()
    before, after = _refined(1000, 3)
    change, expected = CORRUPTIONS[name]
    problem = mesh.check_refined(before, _corrupt(after, change))
    assert problem is not None and expected in problem, problem


def test_checker_flags_deleted_neighbours_and_counters() -> None:
    _needs_cxx()
    inp = dmr.make_input(1000, 3)
    cpu.refine(inp.arrays)
    before = inp.mesh
    arrays = {k: v.copy() for k, v in inp.arrays.items()}
    live = np.flatnonzero((arrays["flags"][: arrays["meta"][0]] & 1) == 0)
    arrays["flags"][live[5]] |= mesh.DELETED
    problem = mesh.check_refined(before, mesh.from_device_layout(**arrays))
    assert problem is not None and "link(s) to deleted or invalid" in problem
    for counter, expected in (("overflow", "overflow"), ("gave_up", "given up")):
        arrays = {k: v.copy() for k, v in inp.arrays.items()}
        arrays["meta"][mesh.META[counter]] = 1
        problem = mesh.check_refined(before, mesh.from_device_layout(**arrays))
        assert problem is not None and expected in problem


# ----------------------------------------------------------- CPU refinement


@pytest.mark.parametrize(
    ("points", "seed", "threads"),
    [(1500, 0, 1), (1500, 0, 256), (4000, 1, 4096), (4000, 2, 100_000)],
)
def test_cpu_refinement_passes_the_checker(
    points: int, seed: int, threads: int
) -> None:
    _needs_cxx()
    before, after = _refined(points, seed, threads)
    assert mesh.check_refined(before, after, delaunay=True) is None
    assert after.stats["initial_bad"] > 0
    assert after.stats["inserted"] > 0 and after.stats["split"] > 0
    assert after.stats["postponed"] == 0 and after.stats["gave_up"] == 0


@pytest.mark.parametrize(
    ("spec", "threads"),
    [
        ("thin:2000@0", 1),
        ("thin:5000@2", 4096),
        ("cluster:3000@3", 1),
        ("cluster:5000@2", cpu.GPU_THREADS),
    ],
)
def test_cpu_refines_small_angle_meshes(spec: str, threads: int) -> None:
    """Meshes with initial angles far below a degree refine to a valid,
    Delaunay triangulation of the same domain with no angle below 30
    degrees, one triangle at a time and in simulated GPU launches."""
    _needs_cxx()
    parsed = mesh.parse_spec(spec)
    inp = dmr.make_input(parsed.points, parsed.seed, kind=parsed.kind)
    assert cpu.refine(inp.arrays, threads=threads) == 0
    after = mesh.from_device_layout(**inp.arrays)
    assert mesh.check_refined(inp.mesh, after, delaunay=True) is None
    report = mesh.summary(inp.mesh, after)
    assert report["initial_min_angle"] < 0.01
    assert report["min_angle"] >= mesh.MIN_ANGLE - mesh.ANGLE_TOL
    assert report["triangles"] > 4 * report["initial_triangles"]
    assert report["split"] > 0 and report["inserted"] > 0


@pytest.mark.parametrize(
    ("spec", "schedule"), [("thin:24@0", "random:2"), ("cluster:40@1", "sequential")]
)
def test_interpreter_refines_small_angle_meshes(spec: str, schedule: str) -> None:
    """The program itself (dmr.mlir on the CPU interpreter) on the meshes
    with angles far below a degree."""
    from irgl_interpreter.apps import run_app

    _needs_cxx()
    app = dataclasses.replace(APP, params={**APP.params, "mesh": spec})
    run = run_app(app, _points_graph(4), schedule)
    assert run.problem is None, run.problem
    assert run.ctx.result == 0
    report = mesh.summary(run.ctx.input.mesh, dmr.read_back(run.ctx))
    assert report["initial_min_angle"] < 1.0
    assert report["min_angle"] >= mesh.MIN_ANGLE - mesh.ANGLE_TOL
    assert report["split"] > 0


def test_simulated_rounds_account_for_every_item() -> None:
    """The round log of the simulated GPU launches: every item of a round is
    a winner with a cavity, a winner without work or a loser; a launch over
    more items than threads takes several rounds; the losers are retried."""
    _needs_cxx()
    inp = dmr.make_input(4000, seed=5)
    threads = 1024
    bad, log = cpu.simulate(inp.arrays, threads)
    assert bad == 0
    assert mesh.check_refined(inp.mesh, mesh.from_device_layout(**inp.arrays)) is None
    launch, items, fixed, noop, lost = log.T
    assert log.shape[1] == len(cpu.LOG_COLUMNS)
    assert (items == fixed + noop + lost).all() and (items <= threads).all()
    assert (np.diff(launch) >= 0).all() and launch[0] == 0
    initial = inp.arrays["meta"][mesh.META["initial_bad"]]
    assert items[launch == 0].sum() == initial
    assert (launch == 0).sum() == -(-initial // threads) > 1
    assert (
        fixed.sum()
        == inp.arrays["meta"][mesh.META["inserted"]]
        + inp.arrays["meta"][mesh.META["split"]]
    )
    assert lost.sum() > 0 and lost[-1] == 0
    # every loser comes back with the next launch
    per_launch = np.bincount(launch, weights=items)
    per_lost = np.bincount(launch, weights=lost)
    assert (per_launch[1:] >= per_lost[:-1]).all()
    with pytest.raises(ValueError, match="order"):
        cpu.simulate(inp.arrays, threads, order="lifo")


def test_scatter_is_a_permutation() -> None:
    """dmr_scatter (the order @identify_bad_triangles visits triangles in)
    is a bijection of [0, n) that moves neighbours apart."""
    from irgl_interpreter import dmr as interp_dmr

    _needs_cxx()
    lib, _ = interp_dmr._library(APP.mlir)
    for n in (1, 2, 3, 10, 97, 1000, 4096):
        image = [lib.irgl_interp_scatter(i, n) for i in range(n)]
        assert sorted(image) == list(range(n)), n
    gaps = np.abs(np.diff([lib.irgl_interp_scatter(i, 1000) for i in range(1000)]))
    assert gaps.min() > 100


def test_cpu_refinement_reports_overflow_without_writing_past_capacity() -> None:
    _needs_cxx()
    m = mesh.random_mesh(2000, seed=6)
    tcap, pcap = m.num_triangles + 500, m.num_points + 500
    # arrays twice as large as the capacities in meta: the rest must stay as is
    arrays = mesh.to_device_layout(m, 2 * tcap, 2 * pcap)
    arrays["meta"][mesh.META["tcap"]], arrays["meta"][mesh.META["pcap"]] = tcap, pcap
    cpu.refine(arrays, threads=64)
    out = mesh.from_device_layout(**arrays)
    assert out.stats["overflow"] == 1
    assert mesh.check_refined(m, out) == "mesh capacity overflow"
    assert (arrays["tri"][3 * tcap :] == 0).all()
    assert (arrays["nbr"][3 * tcap :] == -1).all()
    assert (arrays["flags"][tcap:] == mesh.DELETED).all()
    assert (arrays["xy"][2 * pcap :] == 0).all()


# ------------------------------------------------------------- the AppSpec


class _CpuProgram:
    """A ``ProgramLike`` whose @main is the CPU driver (host arrays)."""

    last_result: object = None

    class _Array:
        def __init__(self, n: int, dtype) -> None:
            self.values = np.zeros(n, dtype=dtype)

        def from_numpy(self, values: np.ndarray):
            self.values[:] = values
            return self

        def to_numpy(self) -> np.ndarray:
            return self.values.copy()

    def upload_graph(self, graph):
        return None

    def alloc(self, n: int, dtype):
        return self._Array(n, dtype)

    def time_call(self, host_fn, *args) -> float:
        assert host_fn == "main"
        *arrays, wlcap = args
        names = ("xy", "tri", "nbr", "flags", "meta", "claims")
        tcap = len(arrays[3].values)  # flags: one per triangle slot
        assert wlcap == 2 * tcap and len(args) == 7
        assert len(arrays[5].values) == 3 * tcap  # claims: one per edge slot
        host = {n: a.values for n, a in zip(names, arrays, strict=True)}
        self.last_result = cpu.refine(host, threads=512)
        return 1.0


def test_load_input_takes_the_mesh_spec() -> None:
    from irgl_runner.errors import UsageError

    params = {**APP.params, "mesh": "thin@4"}
    ctx = RunContext(dataclasses.replace(APP, params=params), _points_graph(900))
    inp = APP.load_input(ctx)
    assert inp.mesh.num_points == 900
    assert inp.mesh.points[:, 1].max() == mesh.THIN_HEIGHT
    assert np.array_equal(inp.mesh.points, mesh.thin_points(900, 4))
    ctx.app.params["mesh"] = "cluster:1000@1"
    assert APP.load_input(ctx).mesh.num_points == 1000
    ctx.app.params["mesh"] = "hexagon:10"
    with pytest.raises(UsageError, match="dmr: bad mesh spec 'hexagon:10'"):
        APP.load_input(ctx)


def test_cpu_cli_reports_the_refinement(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    _needs_cxx()
    assert cpu.main(["thin:1500@2", "--threads", "512", "--rounds"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["check"] == "passed" and record["mesh"] == "thin:1500@2"
    assert record["min_angle"] >= 30.0 - mesh.ANGLE_TOL
    assert record["triangles"] > record["initial_triangles"]
    assert record["rounds"] == len(record["round_log"]) >= record["launches"] > 1
    assert record["items"] == record["fixed"] + record["noop"] + record["lost"]
    assert cpu.main(["thin:x"]) == 2
    assert "bad mesh spec 'thin:x'" in capsys.readouterr().err


def test_load_app_finds_dmr() -> None:
    app = load_app("dmr")
    assert app.name == "dmr" and app.mlir == APP.mlir and app.load_input is not None
    assert not app.uses_source


def test_app_runs_through_execute_and_checks() -> None:
    _needs_cxx()
    app = dataclasses.replace(APP, params={**APP.params, "seed": 3})
    ctx: RunContext = execute(app, _CpuProgram(), _points_graph(1200), reps=2)
    assert ctx.input.mesh.num_points == 1200
    assert ctx.result == 0 and len(ctx.times_ms) == 2
    assert set(ctx.outputs) == {"xy", "tri", "nbr", "flags", "meta"}
    assert app.check(ctx) is None
    ctx.outputs["meta"][mesh.META["gave_up"]] = 2
    assert "given up" in app.check(ctx)


# --------------------------------------------------------------------- GPU


@functools.cache
def _program(pipeline: str = "lower-irgl"):
    from irgl_runner.api import Program, build

    return Program(build(APP.mlir, pipeline))


GPU_MESHES = [
    "random:1500@0",
    "random:5000@1",
    "random:20000@2",
    "random:100000@3",
    "random:250000@4",
    "thin:20000@5",
    "thin:100000@6",
    "cluster:20000@7",
    "cluster:100000@8",
]
"""Meshes the GPU tests refine: several sizes and seeds, and the thin and
clustered meshes whose initial angles are far below a degree."""


#: Meshes also refined with other pipelines: Exclusive's hashed priorities,
#: the host loop (no outlining), a control kernel of 256-thread blocks that
#: leaves the registers to the compiler.
VARIANT_MESHES = [
    "random:20000@2",
    "random:100000@3",
    "thin:20000@5",
    "cluster:20000@7",
]
VARIANTS = [
    "lower-irgl{hashed_priority=true sized_priority=false}",
    "lower-irgl{outline=false}",
    "lower-irgl{control_block=256 control_resident=256}",
    "lower-irgl{retry_merged=false}",
]


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("spec", "pipeline"),
    [(spec, "lower-irgl") for spec in GPU_MESHES]
    + [(spec, variant) for variant in VARIANTS for spec in VARIANT_MESHES],
)
def test_gpu_refinement_passes_the_checker(spec: str, pipeline: str) -> None:
    assert has_gpu()
    parsed = mesh.parse_spec(spec)
    app = dataclasses.replace(APP, params={**APP.params, "mesh": spec})
    program = _program(pipeline)
    ctx = execute(app, program, _points_graph(parsed.points), reps=1, warmup=1)
    refined = dmr.read_back(ctx)
    assert refined.stats["initial_bad"] > 0 and refined.stats["inserted"] > 0
    assert app.check(ctx) is None, refined.stats
    assert ctx.result == 0
    report = mesh.summary(ctx.input.mesh, refined)
    assert report["min_angle"] >= mesh.MIN_ANGLE - mesh.ANGLE_TOL, report
    assert report["triangles"] > 2 * report["initial_triangles"], report
    print(f"DMR on the GPU, {spec}: {report}")
    violations = mesh.delaunay_violations(refined.mesh)
    if violations:  # refinement keeps the mesh Delaunay, but it is not required
        warnings.warn(
            f"DMR on the GPU: {violations} edge(s) not Delaunay", stacklevel=1
        )


@pytest.mark.gpu
def test_gpu_refinement_fails_on_overflow() -> None:
    from irgl_runner.api import IrglRuntimeError

    assert has_gpu()
    # room for the input mesh, far too little for its refinement
    app = dataclasses.replace(APP, params={**APP.params, "growth": 2.5})
    with pytest.raises(IrglRuntimeError, match="capacity exceeded"):
        execute(app, _program(), _points_graph(20000), reps=1, warmup=0)
