"""irgl-exclusive-footprint (on in lower-irgl, `exclusive_footprint`): which
Exclusives claim their body's footprint with modes, and the claims' runs.

Without a GPU: the footprints derived for colour and for a program whose
body writes its neighbours' counters, the reasons given where none is, and
the interpreter's result of that program. On the GPU: the counters are
exact (a plain load and store under the Exclusive: two winners sharing a
written element would lose counts), with elements inside the claim cells
and with elements beyond them (the rounds decided by the highest
contender), and colour's GPU runs (test_retry_backoff.py) cover the read
mode.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import irgl_opt, nvcc_path
from xdsl.context import Context

from irgl_dialect.sync import ExclusiveOp
from irgl_interpreter.interpreter import parse_program, run_host
from irgl_runner.generators import generate
from lowering.exclusive_footprint import (
    FOOTPRINT_ATTR,
    IrglExclusiveFootprint,
    derive_footprint,
)

ROOT = Path(__file__).resolve().parents[2]
BUMP = ROOT / "test" / "python" / "programs" / "exclusive_bump.mlir"
COLOR = ROOT / "benchmarks" / "color" / "color.mlir"


def _remarks(path: Path, pipeline: str = "lower-irgl{remarks=true}") -> str:
    proc = irgl_opt("-p", pipeline, str(path), "-o", "/dev/null")
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def test_color_claims_its_node_and_reads_its_neighbours() -> None:
    remarks = _remarks(COLOR)
    assert (
        "irgl.exclusive: claims its footprint: read the edges' destinations "
        "of %n, write %n" in remarks
    )


def test_bump_writes_its_neighbours() -> None:
    remarks = _remarks(BUMP)
    assert "write the edges' destinations of %n, write %mine" in remarks


def test_footprint_off_keeps_the_lock_set() -> None:
    proc = irgl_opt(
        "-p", "lower-irgl{exclusive_footprint=false}", "-t", "cuda", str(COLOR)
    )
    assert proc.returncode == 0, proc.stderr
    assert "claim_cells" not in proc.stdout
    proc = irgl_opt("-p", "lower-irgl{exclusive_locks=true remarks=true}", str(COLOR))
    assert proc.returncode == 0, proc.stderr
    assert "footprint" not in proc.stderr


def test_the_pass_adds_claim_cells() -> None:
    proc = irgl_opt("-p", "irgl-exclusive-footprint", str(COLOR))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    # the kernel's new parameter, the host's allocation of 2N + 2 cells, the
    # invocation passing them, the Exclusive's object and mark
    assert "%claim_cells: memref<?xi32>)" in text
    assert "%claim_cells = memref.alloc(%3) : memref<?xi32>" in text
    assert "memref.dealloc %claim_cells : memref<?xi32>" in text
    assert (
        "irgl.invoke @color(%g, %nbhd, %claims, %color, %stats, %claim_cells)" in text
    )
    assert "irgl.exclusive %claim_cells iterator(%nbhd[" in text
    assert "attributes {irgl.footprint}" in text


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            # the index is loaded from an array: no footprint
            """%k = memref.load %idx[%n] : memref<?xi32>
      %ki = arith.index_cast %k : i32 to index
      memref.store %one, %out[%ki] : memref<?xi32>""",
            "the index of its 'memref.store' is neither a value from outside it",
        ),
        (
            """memref.store %one, %out[%n] : memref<?xi32>""",
            "name no node's edges",
        ),
        (
            """irgl.cblock "out[0] = 1;" """,
            "its body holds C text",
        ),
    ],
)
def test_reasons_for_keeping_the_lock_set(body: str, why: str) -> None:
    params = "%g: !irgl.graph, %claims: memref<?xi32>, %idx: memref<?xi32>"
    types = "memref<?xi32>, memref<?xi32>"
    text = f"""
irgl.kernel @k({params}, %out: memref<?xi32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {{
    irgl.exclusive %claims iterator(%idx[%c0 to %c1 step %c1]) : {types} {{
      {body}
    }}
  }}
}}
"""
    module = parse_program(text)
    (op,) = [o for o in module.walk() if isinstance(o, ExclusiveOp)]
    found = derive_footprint(op)
    assert isinstance(found, str) and why in found, found


ALIAS = """
irgl.kernel @k(%g: !irgl.graph, %claims: memref<?xi32>, %idx: memref<?x{T}>,
               %out: memref<?xi32>) {{
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %n in nodes(%g) {{
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    irgl.exclusive %claims iterator(%out[%first to %last step %c1])
        : memref<?xi32>, memref<?xi32> {{
      %j = arith.addi %n, %c1 : index
      %x = memref.load %idx[%j] : memref<?x{T}>
      scf.for %e = %first to %last step %c1 {{
        %t = irgl.graph.edge_dst %g[%e]
        memref.store %one, %out[%t] : memref<?xi32>
      }}
    }}
  }}
}}
"""


@pytest.mark.parametrize(("element", "derived"), [("i32", False), ("i64", True)])
def test_reads_of_an_array_typed_like_a_written_one_are_claimed(
    element: str, derived: bool
) -> None:
    """%idx may be %out passed twice when both are memref<?xi32>: its read
    at an index the compiler cannot name keeps the lock set; typed i64 it
    cannot be %out, and its read needs no claim."""
    module = parse_program(ALIAS.format(T=element))
    (op,) = [o for o in module.walk() if isinstance(o, ExclusiveOp)]
    found = derive_footprint(op)
    if derived:
        assert not isinstance(found, str), found
        assert [e.writes for e in found.elements] == [True]
    else:
        assert isinstance(found, str) and "'memref.load'" in found, found


def test_large_winners_run_on_their_block() -> None:
    """A colour winner claiming at least `exclusive_block_claims` elements
    (1024 by default) has its block run the body; 0 leaves it to its warp."""
    default = irgl_opt("-p", "lower-irgl", "-t", "cuda", str(COLOR))
    assert default.returncode == 0, default.stderr
    assert "void irgl_block_alone(" in default.stdout
    assert "irgl_block_reduce_or_i64(" in default.stdout
    warps = "lower-irgl{exclusive_block_claims=0}"
    off = irgl_opt("-p", warps, "-t", "cuda", str(COLOR))
    assert off.returncode == 0, off.stderr
    assert "irgl_block_alone" not in off.stdout
    assert "void irgl_warp_alone" in off.stdout


@pytest.mark.parametrize(
    "pipeline",
    [
        "lower-irgl{exclusive_block_claims=-1}",
        "convert-irgl-exclusive{block_claims=-2}",
    ],
)
def test_block_claims_must_not_be_negative(pipeline: str) -> None:
    proc = irgl_opt("-p", pipeline, str(COLOR))
    assert proc.returncode != 0
    assert "block_claims must be at least 0, got -" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_kernel_iterated_keeps_its_lock_set() -> None:
    """An Iterate's operands are not only its kernel's arguments: the pass
    leaves a kernel it runs alone (the lock set is claimed as written)."""
    text = BUMP.read_text().replace(
        "irgl.pipe {\n      irgl.invoke @bump(",
        "irgl.pipe {\n      irgl.iterate @bump(",
    )
    text = text.replace(
        "memref<?xi32>, memref<?xi32>, index)\n    }",
        "memref<?xi32>, memref<?xi32>, index) {\n      }\n    }",
    )
    module = parse_program(text)
    IrglExclusiveFootprint().apply(Context(), module)
    (op,) = [o for o in module.walk() if isinstance(o, ExclusiveOp)]
    assert FOOTPRINT_ATTR not in op.attributes


def _expected(graph) -> np.ndarray:
    dst = np.asarray(graph.edge_dst, np.int64)
    return np.bincount(dst, minlength=graph.num_nodes).astype(np.int32)


@pytest.mark.parametrize("spread", [0, 1])
def test_bump_on_the_interpreter(spread: int) -> None:
    graph = generate("rmat:7")
    n = graph.num_nodes
    count = np.zeros(n, np.int32)
    own = np.zeros(2 * n, np.int32)
    run_host(parse_program(BUMP.read_text()), "main", [graph, count, own, spread])
    assert np.array_equal(count, _expected(graph))
    assert np.array_equal(own[spread * n : spread * n + n], np.ones(n, np.int32))


DRIVER = r"""
import json, sys
import numpy as np
from irgl_runner.api import Program, build
from irgl_runner.generators import generate

source, pipeline, spec, spread = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
program = Program(build(source, pipeline=pipeline))
graph = generate(spec)
n = graph.num_nodes
g = program.upload_graph(graph)
results = []
for _ in range(2):
    count = program.alloc(n, np.int32)
    own = program.alloc(2 * n, np.int32)
    program.call("main", g, count, own, spread)
    dst = np.asarray(graph.edge_dst, np.int64)
    want = np.bincount(dst, minlength=n).astype(np.int32)
    got = count.to_numpy()
    mine = own.to_numpy()[spread * n : spread * n + n]
    results.append({
        "counts_ok": bool(np.array_equal(got, want)),
        "lost": int((want - got).sum()),
        "own_ok": bool((mine == 1).all()),
    })
print(json.dumps(results))
"""


@pytest.mark.gpu
@pytest.mark.parametrize("spread", [0, 1])
@pytest.mark.parametrize(
    "pipeline",
    [
        "lower-irgl",
        "lower-irgl{outline=false}",
        "lower-irgl{retry_drain=false}",
        "lower-irgl{exclusive_footprint=false}",
    ],
)
def test_bump_counts_exactly_on_gpu(spread: int, pipeline: str) -> None:
    if nvcc_path() is None:
        pytest.skip("nvcc not found")
    spec = "rmat:12" if spread == 0 else "rmat:9"
    cmd = [sys.executable, "-c", DRIVER, str(BUMP), pipeline, spec, str(spread)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for run in json.loads(proc.stdout.strip().splitlines()[-1]):
        assert run == {"counts_ok": True, "lost": 0, "own_ok": True}
