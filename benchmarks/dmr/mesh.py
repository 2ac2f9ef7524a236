"""Triangle meshes for DMR: generation, the device layout, and the checker.

A :class:`Mesh` has ``points`` (n, 2) float64, counter-clockwise
``triangles`` (m, 3) int32 and ``neighbours`` (m, 3) int32, where
``neighbours[t, i]`` is the triangle across the edge ``(triangles[t, i],
triangles[t, (i + 1) % 3])``, or -1 on the domain boundary.

The device layout (see ``dmr.mlir``) flattens it into ``xy`` (2 * point
capacity, f64), ``tri`` and ``nbr`` (3 * triangle capacity, i32), ``flags``
(triangle capacity, i32; bit 0 = deleted, slots not in use are deleted) and
``meta`` (:data:`META_SIZE` i32 counters, slots named in :data:`META`).

Boundary policy (Ruppert/Chew style): a bad triangle whose insertion point
(its off-center, see ``dmr_mesh.cuh``) lies outside the domain, or encroaches
a domain-boundary edge of its cavity (lies in the edge's diametral circle),
gets that boundary edge split at its midpoint instead. The domain is an
axis-parallel rectangle (the unit square, or the thin rectangle of
:func:`thin_points`), so midpoints stay exactly on the boundary. No bad
triangle is allowed to remain: :func:`check_refined` accepts none (boundary
or not), and no given-up triangle either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

MIN_ANGLE = 30.0
"""A triangle is bad if its smallest angle (degrees) is below this."""

ANGLE_TOL = 1e-6
"""Degrees of slack for rounding differences between the device and numpy."""

META = {
    "ntri": 0,
    "npts": 1,
    "tcap": 2,
    "pcap": 3,
    "overflow": 4,
    "nbad": 5,
    "gave_up": 6,
    "inserted": 7,
    "split": 8,
    "postponed": 9,
    "initial_bad": 10,
}
META_SIZE = 16
DELETED = 1


@dataclass
class Mesh:
    """A 2-D triangle mesh (see the module docstring for the conventions)."""

    points: np.ndarray
    triangles: np.ndarray
    neighbours: np.ndarray

    @property
    def num_points(self) -> int:
        return int(self.points.shape[0])

    @property
    def num_triangles(self) -> int:
        return int(self.triangles.shape[0])


# ----------------------------------------------------------------- generation


def random_points(num_points: int, seed: int = 0) -> np.ndarray:
    """The 4 corners of the unit square and ``num_points - 4`` uniform points."""
    if num_points < 4:
        raise ValueError(f"a DMR mesh needs at least 4 points, got {num_points}")
    rng = np.random.default_rng(seed)
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    inner = rng.uniform(0.0, 1.0, size=(num_points - 4, 2))
    inner = inner[(inner > 0.0).all(axis=1) & (inner < 1.0).all(axis=1)]
    return np.concatenate([corners, inner])


def delaunay_mesh(points: np.ndarray) -> Mesh:
    """The Delaunay triangulation of ``points`` (scipy/qhull), counter-clockwise,
    with points that qhull left out removed."""
    from scipy.spatial import Delaunay

    dt = Delaunay(np.asarray(points, dtype=np.float64))
    tris = dt.simplices.astype(np.int64)
    # neighbours[t, j] is opposite vertex j; ours is across edge (j, j + 1)
    nbrs = dt.neighbors[:, [2, 0, 1]].astype(np.int64)
    p = dt.points
    flip = _area2(p, tris) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    # (a, b, c) -> (a, c, b): edges (a,c), (c,b), (b,a) were (c,a), (b,c), (a,b)
    nbrs[flip] = nbrs[flip][:, [2, 1, 0]]
    used = np.zeros(len(p), dtype=bool)
    used[tris.ravel()] = True
    remap = np.cumsum(used) - 1
    return Mesh(
        p[used].copy(),
        remap[tris].astype(np.int32),
        nbrs.astype(np.int32),
    )


def random_mesh(num_points: int, seed: int = 0) -> Mesh:
    """Delaunay mesh of :func:`random_points` (about 2 triangles per point)."""
    return delaunay_mesh(random_points(num_points, seed))


THIN_HEIGHT = 0.01
"""The height of the ``thin`` domain, the rectangle [0, 1] x [0, THIN_HEIGHT]."""

CLUSTER_RADIUS = 1e-5
"""The radius of the point clusters of the ``cluster`` meshes."""

CLUSTER_POINTS = 16
"""The points of a cluster of the ``cluster`` meshes."""


def thin_points(num_points: int, seed: int = 0) -> np.ndarray:
    """The 4 corners of the thin rectangle [0, 1] x [0, :data:`THIN_HEIGHT`]
    and ``num_points - 4`` uniform points inside: every side is one input
    edge, so the long sides are bordered by needles of a fraction of a
    degree, and the sides must be split many times."""
    if num_points < 4:
        raise ValueError(f"a DMR mesh needs at least 4 points, got {num_points}")
    rng = np.random.default_rng(seed)
    h = THIN_HEIGHT
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, h], [0.0, h]])
    inner = rng.uniform((0.0, 0.0), (1.0, h), size=(num_points - 4, 2))
    inner = inner[(inner > 0.0).all(axis=1) & (inner < (1.0, h)).all(axis=1)]
    return np.concatenate([corners, inner])


def cluster_points(num_points: int, seed: int = 0) -> np.ndarray:
    """The unit square's corners and ``num_points - 4`` points: uniform but
    for 10% of them (at most :data:`CLUSTER_POINTS` x 64) in clusters of
    :data:`CLUSTER_POINTS` within :data:`CLUSTER_RADIUS` of a centre (at
    least 0.1 from the boundary). The triangles from two points of a cluster
    to a point outside it have angles far below a degree, and refinement
    has to grade the mesh from the clusters' spacing to the rest's. (Much
    denser clusters would reach the limits of the double-precision geometry.)"""
    if num_points < 4:
        raise ValueError(f"a DMR mesh needs at least 4 points, got {num_points}")
    rng = np.random.default_rng(seed)
    rest = num_points - 4
    clustered = min(rest // 10, 64 * CLUSTER_POINTS)
    clusters = max(1, clustered // CLUSTER_POINTS)
    centres = rng.uniform(0.1, 0.9, size=(clusters, 2))
    which = np.arange(clustered) % clusters
    angle = rng.uniform(0.0, 2.0 * np.pi, size=clustered)
    radius = CLUSTER_RADIUS * np.sqrt(rng.uniform(0.0, 1.0, size=clustered))
    tight = centres[which] + radius[:, None] * np.stack(
        [np.cos(angle), np.sin(angle)], axis=1
    )
    spread = rng.uniform(0.0, 1.0, size=(rest - clustered, 2))
    inner = np.concatenate([spread, tight])
    inner = inner[(inner > 0.0).all(axis=1) & (inner < 1.0).all(axis=1)]
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    return np.concatenate([corners, inner])


MESH_KINDS = {
    "random": random_points,
    "thin": thin_points,
    "cluster": cluster_points,
}
"""The input meshes by name: the Delaunay triangulation of these points."""

SPEC_FORMS = "KIND[:N][@SEED] with KIND one of " + ", ".join(MESH_KINDS)
"""The mesh spec forms, for messages."""


@dataclass(frozen=True)
class MeshSpec:
    """An input mesh by name: ``KIND:N@SEED`` (:func:`parse_spec`)."""

    kind: str
    points: int
    seed: int

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.points}@{self.seed}"


def parse_spec(text: str, points: int | None = None, seed: int = 0) -> MeshSpec:
    """Parse ``KIND[:N][@SEED]``; ``points`` and ``seed`` stand in for a
    missing N or SEED. Raises ``ValueError`` with the forms on bad input."""
    match = re.fullmatch(r"([a-z]+)(?::(\d+))?(?:@(\d+))?", text.strip())
    if match is None or match[1] not in MESH_KINDS:
        raise ValueError(f"bad mesh spec {text!r}; forms: {SPEC_FORMS}")
    if match[2] is None and points is None:
        raise ValueError(
            f"mesh spec {text!r} names no point count; forms: {SPEC_FORMS}"
        )
    n = int(match[2]) if match[2] is not None else int(points or 0)
    if n < 4:
        raise ValueError(f"mesh spec {text!r}: a DMR mesh needs at least 4 points")
    return MeshSpec(match[1], n, int(match[3]) if match[3] is not None else seed)


def make_mesh(spec: MeshSpec | str) -> Mesh:
    """The input mesh a spec names (see :data:`MESH_KINDS`)."""
    if isinstance(spec, str):
        spec = parse_spec(spec)
    return delaunay_mesh(MESH_KINDS[spec.kind](spec.points, spec.seed))


# -------------------------------------------------------------- device layout


def capacities(mesh: Mesh, growth: float) -> tuple[int, int]:
    """(triangle, point) capacities for refining ``mesh``: ``growth`` times its
    triangles and half that times its points, plus room for small meshes.

    Triangle slots are never reused: refining random points to 30 degrees
    takes about 12 slots and 5 points per initial triangle and point.
    """
    return (
        int(growth * mesh.num_triangles) + 4096,
        int(growth / 2 * mesh.num_points) + 2048,
    )


def to_device_layout(mesh: Mesh, tcap: int, pcap: int) -> dict[str, np.ndarray]:
    """The initial contents of the device arrays xy, tri, nbr, flags, meta."""
    m, n = mesh.num_triangles, mesh.num_points
    if m > tcap or n > pcap:
        raise ValueError(f"mesh ({m} triangles, {n} points) exceeds the capacity")
    xy = np.zeros(2 * pcap, dtype=np.float64)
    xy[: 2 * n] = mesh.points.ravel()
    tri = np.zeros(3 * tcap, dtype=np.int32)
    tri[: 3 * m] = mesh.triangles.ravel()
    nbr = np.full(3 * tcap, -1, dtype=np.int32)
    nbr[: 3 * m] = mesh.neighbours.ravel()
    flags = np.full(tcap, DELETED, dtype=np.int32)
    flags[:m] = 0
    meta = np.zeros(META_SIZE, dtype=np.int32)
    meta[[META["ntri"], META["npts"], META["tcap"], META["pcap"]]] = m, n, tcap, pcap
    return {"xy": xy, "tri": tri, "nbr": nbr, "flags": flags, "meta": meta}


@dataclass
class Refined:
    """A refined mesh read back from the device layout."""

    mesh: Mesh
    """Live triangles only, renumbered; a neighbour that is deleted becomes -2."""
    stats: dict[str, int]
    """The ``meta`` counters by name."""


def from_device_layout(
    xy: np.ndarray,
    tri: np.ndarray,
    nbr: np.ndarray,
    flags: np.ndarray,
    meta: np.ndarray,
) -> Refined:
    """Compact the device arrays into a :class:`Refined` mesh."""
    stats = {name: int(meta[slot]) for name, slot in META.items()}
    m = min(stats["ntri"], stats["tcap"])
    n = min(stats["npts"], stats["pcap"])
    alive = (np.asarray(flags[:m]) & DELETED) == 0
    new_id = np.full(m + 1, -2, dtype=np.int64)  # index m: -1 stays -1 below
    new_id[:m][alive] = np.arange(int(alive.sum()))
    new_id[m] = -1
    old_nbr = np.asarray(nbr[: 3 * m], dtype=np.int64).reshape(m, 3)[alive]
    bad_ref = (old_nbr < -1) | (old_nbr >= m)
    mapped = new_id[np.where(old_nbr < 0, m, np.minimum(old_nbr, m - 1))]
    mapped[bad_ref] = -2
    mesh = Mesh(
        np.asarray(xy[: 2 * n], dtype=np.float64).reshape(n, 2).copy(),
        np.asarray(tri[: 3 * m], dtype=np.int32).reshape(m, 3)[alive].copy(),
        mapped.astype(np.int32),
    )
    return Refined(mesh, stats)


# ---------------------------------------------------------------- geometry


def _area2(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Twice the signed area of every triangle."""
    a, b, c = (points[tris[:, i]] for i in range(3))
    return (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (
        c[:, 0] - a[:, 0]
    )


def min_angles(mesh: Mesh) -> np.ndarray:
    """The smallest angle of every triangle, in degrees."""
    p, t = mesh.points, mesh.triangles
    if len(t) == 0:
        return np.zeros(0)
    sq = np.stack(
        [((p[t[:, (i + 1) % 3]] - p[t[:, i]]) ** 2).sum(axis=1) for i in range(3)],
        axis=1,
    )
    sq.sort(axis=1)
    a2, b2, c2 = sq[:, 0], sq[:, 1], sq[:, 2]
    denom = 2.0 * np.sqrt(b2 * c2)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos = np.where(denom > 0, (b2 + c2 - a2) / denom, 1.0)
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def bad_triangles(
    mesh: Mesh, min_angle: float = MIN_ANGLE, tol: float = 0.0
) -> np.ndarray:
    """Indices of the triangles whose smallest angle is below ``min_angle - tol``."""
    return np.flatnonzero(min_angles(mesh) < min_angle - tol)


def hull_edges(mesh: Mesh) -> np.ndarray:
    """The boundary edges (k, 2) of a mesh, as (a, b) with the mesh on the left."""
    t, i = np.nonzero(mesh.neighbours == -1)
    return np.stack(
        [mesh.triangles[t, i], mesh.triangles[t, (i + 1) % 3]], axis=1
    ).astype(np.int64)


def delaunay_violations(mesh: Mesh, rel_tol: float = 1e-9) -> int:
    """Interior edges (counted once) whose opposite vertex lies strictly
    inside the other triangle's circumcircle (0 for a Delaunay mesh)."""
    t, i = np.nonzero(mesh.neighbours >= 0)
    n = mesh.neighbours[t, i]
    t, i, n = t[t < n], i[t < n], n[t < n]
    p = mesh.points
    tri = mesh.triangles
    # vertex of n not on the shared edge
    shared = np.stack([tri[t, i], tri[t, (i + 1) % 3]], axis=1)
    nt = tri[n]
    opp_mask = (nt != shared[:, :1]) & (nt != shared[:, 1:])
    ok = opp_mask.sum(axis=1) == 1
    t, n, nt, opp_mask = t[ok], n[ok], nt[ok], opp_mask[ok]
    q = p[nt[opp_mask]]
    a, b, c = (p[tri[t, k]] - q for k in range(3))
    la, lb, lc = ((v**2).sum(axis=1) for v in (a, b, c))
    det = (
        la * (b[:, 0] * c[:, 1] - c[:, 0] * b[:, 1])
        + lb * (c[:, 0] * a[:, 1] - a[:, 0] * c[:, 1])
        + lc * (a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1])
    )
    scale = np.maximum(la, np.maximum(lb, lc)) ** 2
    return int((det > rel_tol * scale).sum())


def summary(before: Mesh, after: Refined) -> dict[str, float | int]:
    """What a refinement did: the input's and the result's triangles and
    smallest angle (degrees), the result's points, and the counters of bad
    triangles at the start, points inserted and boundary edges split."""
    return {
        "initial_triangles": before.num_triangles,
        "initial_min_angle": float(min_angles(before).min()),
        "triangles": after.mesh.num_triangles,
        "points": after.mesh.num_points,
        "min_angle": float(min_angles(after.mesh).min()),
        "initial_bad": after.stats["initial_bad"],
        "inserted": after.stats["inserted"],
        "split": after.stats["split"],
    }


# ------------------------------------------------------------------ checker


def check_refined(
    before: Mesh,
    after: Refined,
    min_angle: float = MIN_ANGLE,
    area_rtol: float = 1e-9,
    delaunay: bool = False,
) -> str | None:
    """``None`` if ``after`` is a valid, refined triangulation of ``before``'s
    domain, else what is wrong.

    Checks: no overflow or given-up triangle; the structure (ids in range,
    no dangling neighbour); positive orientation; mutual neighbour links on
    shared edges; each directed edge used once and every boundary edge without
    a twin; the total area equals ``before``'s (its convex hull); every
    boundary edge lies on a boundary edge of ``before`` and together they
    cover each exactly; every original point is kept and every point is used;
    Euler's formula for a disk; no bad triangle (no boundary exceptions).
    With ``delaunay``, also that the mesh is Delaunay (refinement keeps it so,
    but the task does not require it; see :func:`delaunay_violations`).
    """
    problems = _check(before, after, min_angle, area_rtol)
    if delaunay and not problems:
        violations = delaunay_violations(after.mesh)
        if violations:
            problems.append(f"{violations} edge(s) not locally Delaunay")
    return "; ".join(problems) if problems else None


def _check(
    before: Mesh, after: Refined, min_angle: float, area_rtol: float
) -> list[str]:
    stats, mesh = after.stats, after.mesh
    if stats.get("overflow"):
        return ["mesh capacity overflow"]
    problems = []
    if stats.get("gave_up"):
        problems.append(f"{stats['gave_up']} bad triangle(s) given up")
    p, tri, nbr = mesh.points, mesh.triangles.astype(np.int64), mesh.neighbours
    m, n = mesh.num_triangles, mesh.num_points
    if m == 0:
        return [*problems, "no triangles"]
    if tri.min() < 0 or tri.max() >= n:
        return [*problems, "triangle vertex out of range"]
    invalid = int(((nbr < -1) | (nbr >= m)).sum())
    if invalid:
        return [*problems, f"{invalid} link(s) to deleted or invalid triangles"]

    area2 = _area2(p, tri)
    if (area2 <= 0).any():
        problems.append(f"{int((area2 <= 0).sum())} triangle(s) not counter-clockwise")

    problems += _check_links(tri, nbr)

    hull_area = _polygon_area2(before) / 2
    area = area2.sum() / 2
    if not np.isclose(area, hull_area, rtol=area_rtol, atol=0):
        problems.append(f"area {area!r} != input hull area {hull_area!r}")

    problems += _check_boundary(before, mesh)

    if n < before.num_points or not np.array_equal(
        p[: before.num_points], before.points
    ):
        problems.append("input points changed or missing")
    used = np.zeros(n, dtype=bool)
    used[tri.ravel()] = True
    if not used.all():
        problems.append(f"{int((~used).sum())} point(s) not in any triangle")
    lo, hi = (
        np.minimum(tri, np.roll(tri, -1, axis=1)),
        np.maximum(tri, np.roll(tri, -1, axis=1)),
    )
    num_edges = _count_distinct((lo * n + hi).ravel())
    if int(used.sum()) - num_edges + m != 1:
        problems.append("Euler characteristic is not that of a disk")

    bad = bad_triangles(mesh, min_angle, ANGLE_TOL)
    if len(bad):
        worst = float(min_angles(mesh)[bad].min())
        problems.append(
            f"{len(bad)} bad triangle(s) remain (smallest angle {worst:.4f} deg)"
        )
    return problems


def _check_links(tri: np.ndarray, nbr: np.ndarray) -> list[str]:
    """Neighbour links are mutual and across the same edge; edges are manifold."""
    m = len(tri)
    a, b = tri, np.roll(tri, -1, axis=1)
    key = a * (tri.max() + 1) + b  # directed edge (a, b)
    flat = key.ravel()
    order = np.argsort(flat)
    ordered = flat[order]
    if (ordered[1:] == ordered[:-1]).any():
        return ["a directed edge is used by two triangles (overlap or flip)"]
    twin_key = (b * (tri.max() + 1) + a).ravel()
    pos = np.minimum(np.searchsorted(ordered, twin_key), len(flat) - 1)
    has_twin = ordered[pos] == twin_key
    twin_tri = np.where(has_twin, order[pos] // 3, -1)
    links = nbr.ravel()
    problems = []
    wrong = links != twin_tri
    if wrong.any():
        problems.append(
            f"{int(wrong.sum())} neighbour link(s) do not match the shared edges"
        )
    if (links >= 0).any():
        back = nbr[links[links >= 0]]
        src = np.repeat(np.arange(m), 3).reshape(m, 3).ravel()[links >= 0]
        if not (back == src[:, None]).any(axis=1).all():
            problems.append("neighbour links are not mutual")
    return problems


def _count_distinct(values: np.ndarray) -> int:
    """Number of distinct values (by sorting)."""
    ordered = np.sort(values)
    return int((ordered[1:] != ordered[:-1]).sum()) + min(len(ordered), 1)


def _polygon_area2(mesh: Mesh) -> float:
    """Twice the area enclosed by the boundary edges of ``mesh``."""
    e = hull_edges(mesh)
    a, b = mesh.points[e[:, 0]], mesh.points[e[:, 1]]
    return float((a[:, 0] * b[:, 1] - b[:, 0] * a[:, 1]).sum())


def _check_boundary(before: Mesh, after: Mesh, rtol: float = 1e-9) -> list[str]:
    """Every boundary edge of ``after`` lies on one of ``before``, and those on
    each edge (a, b) of ``before`` form a chain of vertices from a to b."""
    old = hull_edges(before)
    new = hull_edges(after)
    oa, ob = before.points[old[:, 0]], before.points[old[:, 1]]
    na, nb = after.points[new[:, 0]], after.points[new[:, 1]]
    d = (ob - oa)[None, :, :]
    length2 = (d**2).sum(axis=2)
    scale = float(np.abs(before.points).max()) or 1.0
    # for every (new, old) pair: position along and distance from the old edge
    ra, rb = na[:, None, :] - oa[None], nb[:, None, :] - oa[None]
    ta, tb = (ra * d).sum(axis=2) / length2, (rb * d).sum(axis=2) / length2
    dist = np.maximum(
        np.abs(ra[..., 0] * d[..., 1] - ra[..., 1] * d[..., 0]),
        np.abs(rb[..., 0] * d[..., 1] - rb[..., 1] * d[..., 0]),
    ) / np.sqrt(length2)
    on = (
        (dist <= rtol * scale)
        & (np.minimum(ta, tb) >= -rtol)
        & (np.maximum(ta, tb) <= 1 + rtol)
        & (tb > ta)
    )
    hits = on.sum(axis=1)
    if (hits != 1).any():
        k = int(np.flatnonzero(hits != 1)[0])
        return [f"boundary edge {tuple(new[k])} is not on the input boundary"]
    owner = on.argmax(axis=1)
    for j, (a, b) in enumerate(old):
        mine = np.flatnonzero(owner == j)
        chain = new[mine[np.argsort(ta[mine, j])]]
        if (
            len(chain) == 0
            or chain[0, 0] != a
            or chain[-1, 1] != b
            or (chain[1:, 0] != chain[:-1, 1]).any()
        ):
            return [f"the boundary edges do not cover input edge ({a}, {b}) exactly"]
    return []
