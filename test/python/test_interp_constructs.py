"""Unit tests of the interpreter, one group per construct family: kernels
and orchestration, loops and the worklist, synchronization, the graph
accessors, the C escape hatch, schedules and diagnostics."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from irgl_interpreter import (
    Graph,
    InterpretationFailure,
    ProgramError,
    Schedule,
    load_program,
    parse_program,
    run_host,
)
from irgl_interpreter.state import Order

A32 = "memref<?xi32>"


def run(text: str, *args: object, schedule: str = "sequential", **kw: Any):
    return run_host(parse_program(text), "main", list(args), schedule, **kw)


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int32)


def star(n: int) -> Graph:
    """Node 0 points at 1..n-1; node 1 also at 2 (weight 7)."""
    dst = [*range(1, n), 2]
    row = [0, n - 1, n] + [n] * (n - 2)
    return Graph(n, row, dst, [1] * (n - 1) + [7])


# --------------------------------------------------------------------------
# kernels and orchestration
# --------------------------------------------------------------------------

REDUCE = """
irgl.kernel @k(%n: index, %t: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    %b = arith.cmpi ult, %i, %t : index
    irgl.reduce_and_return %b
  }
}
irgl.kernel host @main(%n: index, %t: index, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %any = irgl.invoke any @k(%n, %t) : (index, index)
  %all = irgl.invoke all @k(%n, %t) : (index, index)
  %a = arith.extui %any : i1 to i32
  %l = arith.extui %all : i1 to i32
  memref.store %a, %out[%c0] : memref<?xi32>
  memref.store %l, %out[%c1] : memref<?xi32>
}
"""


@pytest.mark.parametrize(
    ("n", "t", "expected"),
    [(4, 0, [0, 0]), (4, 2, [1, 0]), (4, 4, [1, 1]), (0, 0, [0, 1])],
)
def test_invoke_any_all(n: int, t: int, expected: list[int]) -> None:
    out = ints(9, 9)
    run(REDUCE, n, t, out)
    assert out.tolist() == expected


ITERATE_WL = """
irgl.kernel @step(%g: !irgl.graph, %seen: memref<?xi32>, %lvl: i32) {
  %zero = arith.constant 0 : i32
  irgl.forall %s in worklist {
    %n = irgl.wl.pop %s
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      %v = memref.load %seen[%d] : memref<?xi32>
      %new = arith.cmpi eq, %v, %zero : i32
      scf.if %new {
        memref.store %lvl, %seen[%d] : memref<?xi32>
        irgl.wl.push %d
      }
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %seen: memref<?xi32>, %src: index) -> i32 {
  %c1 = arith.constant 1 : i32
  %last = irgl.iterate @step(%g, %seen, %l = %c1)
      : (!irgl.graph, memref<?xi32>, i32) initial [%src] {
    %next = arith.addi %l, %c1 : i32
    irgl.yield %next : i32
  }
  irgl.return %last : i32
}
"""


def test_iterate_over_worklist_with_carried_value() -> None:
    seen = ints(0, 0, 0, 0, 0)
    result = run(ITERATE_WL, star(5), seen, 0)
    # level 1: 1..4 reached from 0; level 2: only node 1's edge to 2 (seen)
    assert seen.tolist() == [0, 1, 1, 1, 1]
    assert result.values == (3,)  # invoked with 1 and 2, yielded 3
    assert result.stats.invocations == 2
    assert (result.stats.pushes, result.stats.atomics) == (4, 0)  # 1..4 pushed


ATOMIC_MIN = """
irgl.kernel @lower(%a: memref<?xi32>, %n: index) {
  %z = arith.constant 0 : index
  %three = arith.constant 3 : i32
  irgl.forall %i in range(%z, %n) {
    %old = "memref.atomic_rmw"(%three, %a, %i) <{kind = 7 : i64}>
        : (i32, memref<?xi32>, index) -> i32
  }
}
irgl.kernel host @main(%a: memref<?xi32>, %n: index) {
  irgl.invoke @lower(%a, %n) : (memref<?xi32>, index)
}
"""


def test_stats_count_atomics_and_the_ones_that_change() -> None:
    """Every memref.atomic_rmw counts; those that change their element count
    apart (an atomic min of 3 changes 5 and 9, not 1 and 3)."""
    a = ints(5, 1, 9, 3)
    result = run(ATOMIC_MIN, a, 4)
    assert a.tolist() == [3, 1, 3, 3]
    assert (result.stats.atomics, result.stats.atomic_changes) == (4, 2)


COUNTDOWN = """
irgl.kernel @dec(%c: memref<?xi32>, %x: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %i in range(%c0, %c1) {
    %v = memref.load %c[%c0] : memref<?xi32>
    %w = arith.subi %v, %one : i32
    memref.store %w, %c[%c0] : memref<?xi32>
    %more = arith.cmpi sgt, %w, %zero : i32
    irgl.reduce_and_return %more
  }
}
irgl.kernel host @main(%c: memref<?xi32>, %cap: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = irgl.iterate TERM @dec(%c, %n = %c0) : (memref<?xi32>, index) EXTRA {
    %m = arith.addi %n, %c1 : index
    %below = arith.cmpi ult, %m, %cap : index
    irgl.yield %m : index YIELD_EXTRA
  }
  irgl.return %k : index
}
"""


def _countdown(term: str, extra: str, start: int, cap: int) -> tuple[int, int]:
    text = COUNTDOWN.replace("TERM", term)
    yield_extra = "extra %below : i1" if extra else ""
    text = text.replace("YIELD_EXTRA", yield_extra)
    text = text.replace("EXTRA", f"extra {extra}" if extra else "")
    counter = ints(start)
    result = run(text, counter, cap)
    return result.values[0], int(counter[0])


@pytest.mark.parametrize(
    ("term", "extra", "start", "cap", "invocations"),
    [
        ("while any", "", 3, 0, 3),  # until the counter reaches 0
        ("until all", "", 3, 0, 1),  # the first result (2 > 0) is all-true
        ("while any", "and", 5, 2, 2),  # the extra condition stops it early
        ("while any", "or", 2, 4, 4),  # or keeps it going up to the cap
    ],
)
def test_iterate_termination_forms(
    term: str, extra: str, start: int, cap: int, invocations: int
) -> None:
    count, counter = _countdown(term, extra, start, cap)
    assert count == invocations
    assert counter == start - invocations


PIPES = """
// @seed pushes 0..n-1; @a keeps the even items; @b and @c record what they pop
irgl.kernel @seed(%n: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %i in range(%c0, %n) {
    irgl.wl.push %i
  }
}
irgl.kernel @a(%n: index) {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  irgl.forall %s in worklist {
    %x = irgl.wl.pop %s
    %r = arith.remui %x, %c2 : index
    %even = arith.cmpi eq, %r, %c0 : index
    scf.if %even {
      irgl.wl.push %x
    }
  }
}
irgl.kernel @rec(%log: memref<?xi32>, %mark: i32) {
  irgl.forall %s in worklist {
    %x = irgl.wl.pop %s
    memref.store %mark, %log[%x] : memref<?xi32>
  }
}
irgl.kernel host @main(%n: index, %log: memref<?xi32>, %flag: i1) {
  %b = arith.constant 1 : i32
  %c = arith.constant 2 : i32
  irgl.pipe once {
    irgl.invoke @seed(%n) : (index)
    irgl.invoke @a(%n) : (index)
    scf.if %flag {
      irgl.invoke @rec(%log, %b) : (memref<?xi32>, i32)
    } else {
      irgl.invoke @rec(%log, %c) : (memref<?xi32>, i32)
    }
  }
}
"""


@pytest.mark.parametrize(("flag", "mark"), [(True, 1), (False, 2)])
def test_pipe_once_with_dynamic_piping(flag: bool, mark: int) -> None:
    log = np.zeros(6, dtype=np.int32)
    run(PIPES, 6, log, flag)
    assert log.tolist() == [mark, 0, mark, 0, mark, 0]


LOOPING_PIPE = """
// each item x > 0 is pushed again as x - 1: the looping Pipe runs until empty
irgl.kernel @down(%count: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1 : i32
  irgl.forall %s in worklist {
    %x = irgl.wl.pop %s
    %old = "memref.atomic_rmw"(%one, %count, %c0) <{kind = 1 : i64}>
        : (i32, memref<?xi32>, index) -> i32
    %pos = arith.cmpi ugt, %x, %c0 : index
    scf.if %pos {
      %y = arith.subi %x, %c1 : index
      irgl.wl.push %y
    }
  }
}
irgl.kernel host @main(%items: memref<?xi64>, %k: index, %count: memref<?xi32>) {
  irgl.pipe once initial %items[%k] : memref<?xi64> {
    irgl.pipe {
      irgl.invoke @down(%count) : (memref<?xi32>)
    }
  }
}
"""


def test_nested_looping_pipe_with_array_initializer() -> None:
    count = ints(0)
    items = np.array([2, 0, 3, 9], dtype=np.int64)
    result = run(LOOPING_PIPE, items, 3, count)
    assert count[0] == (2 + 1) + (0 + 1) + (3 + 1)  # every item down to 0
    assert result.stats.invocations == 4  # items 3, 2, 1, 0 deep


OVERFLOW = """
irgl.kernel @fan(%g: !irgl.graph) {
  irgl.forall %s in worklist {
    %n = irgl.wl.pop %s
    irgl.forall %e in edges(%g, %n) {
      %d = irgl.graph.edge_dst %g[%e]
      irgl.wl.push %d
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %cap: index) {
  %c0 = arith.constant 0 : index
  irgl.pipe once initial [%c0] capacity %cap {
    irgl.invoke @fan(%g) : (!irgl.graph)
  }
}
"""


def test_worklist_capacity() -> None:
    run(OVERFLOW, star(5), 4)
    with pytest.raises(InterpretationFailure, match="worklist overflow.*capacity 3"):
        run(OVERFLOW, star(5), 3)


RETRY = """
// Items are retried (or respawned) once, then pushed: the kernel is
// re-invoked on the retried items, and `out` keeps what both launches pushed.
irgl.kernel @k(%tries: memref<?xi32>, %log: memref<?xi32>) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  irgl.forall %s in worklist {
    %x = irgl.wl.pop %s
    %t = memref.load %tries[%x] : memref<?xi32>
    %t1 = arith.addi %t, %one : i32
    memref.store %t1, %tries[%x] : memref<?xi32>
    %first = arith.cmpi eq, %t, %zero : i32
    scf.if %first {
      RETRY %x
    } else {
      irgl.wl.push %x
    }
  }
}
irgl.kernel @rec(%log: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %s in worklist {
    %x = irgl.wl.pop %s
    %v = memref.load %log[%x] : memref<?xi32>
    %w = arith.addi %v, %one : i32
    memref.store %w, %log[%x] : memref<?xi32>
  }
}
irgl.kernel host @main(%tries: memref<?xi32>, %log: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  irgl.pipe once initial [%c0, %c2] {
    irgl.invoke @k(%tries, %log) : (memref<?xi32>, memref<?xi32>)
    irgl.invoke @rec(%log) : (memref<?xi32>)
  }
}
"""


@pytest.mark.parametrize(
    ("retry", "tries", "log", "launches"),
    [
        ("irgl.retry", [2, 0, 2], [1, 0, 1], 3),
        ("irgl.respawn", [2, 0, 2], [1, 0, 1], 3),
        # merged retries go to `out`: no re-launch, popped by @rec directly
        ("irgl.retry merge", [1, 0, 1], [1, 0, 1], 2),
    ],
)
def test_retry_respawn_and_merge(
    retry: str, tries: list[int], log: list[int], launches: int
) -> None:
    op, _, merge = retry.partition(" ")
    text = RETRY.replace("RETRY %x", f"{op} %x {merge}")
    t, lg = ints(0, 0, 0), ints(0, 0, 0)
    result = run(text, t, lg)
    assert t.tolist() == tries
    assert lg.tolist() == log
    assert result.stats.invocations == launches


# --------------------------------------------------------------------------
# loops and schedules
# --------------------------------------------------------------------------

ORDER = """
irgl.kernel @k(%order: memref<?xi32>, %next: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  irgl.forall %i in range(%c0, %n) {
    %pos = "memref.atomic_rmw"(%one, %next, %c0) <{kind = 1 : i64}>
        : (i32, memref<?xi32>, index) -> i32
    memref.store %pos, %order[%i] : memref<?xi32>
  }
}
irgl.kernel host @main(%order: memref<?xi32>, %next: memref<?xi32>, %n: index) {
  irgl.invoke @k(%order, %next, %n) : (memref<?xi32>, memref<?xi32>, index)
}
"""


def _order(schedule: str, n: int = 8) -> list[int]:
    order = np.zeros(n, dtype=np.int32)
    run(ORDER, order, ints(0), n, schedule=schedule)
    return order.tolist()


def test_forall_schedules() -> None:
    assert _order("sequential") == list(range(8))
    assert _order("reversed") == list(range(7, -1, -1))
    shuffled = _order("random:4")
    assert sorted(shuffled) == list(range(8))
    assert shuffled not in (list(range(8)), list(range(7, -1, -1)))
    assert _order("random:4") == shuffled, "a seed gives one order"
    assert _order("random:5") != shuffled


def test_schedule_parsing() -> None:
    assert Schedule.parse("random:12,fail=0.25") == Schedule(Order.RANDOM, 12, 0.25)
    assert str(Schedule.parse("reversed")) == "reversed"
    for bad, why in [
        ("random", "needs a seed"),
        ("sideways", "unknown schedule"),
        ("sequential:3", "only random takes a seed"),
        ("random:1,fail=1.5", r"\[0, 1\)"),
        ("random:1,speed=2", "unknown option"),
    ]:
        with pytest.raises(ValueError, match=why):
            Schedule.parse(bad)


FOR_AND_GRAPH = """
irgl.kernel host @main(%g: !irgl.graph, %out: memref<?xi32>) {
  irgl.invoke @walk(%g, %out) : (!irgl.graph, memref<?xi32>)
}
irgl.kernel @walk(%g: !irgl.graph, %out: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nn = irgl.graph.num_nodes %g
  %ne = irgl.graph.num_edges %g
  %nn32 = arith.index_cast %nn : index to i32
  %ne32 = arith.index_cast %ne : index to i32
  memref.store %nn32, %out[%c0] : memref<?xi32>
  memref.store %ne32, %out[%c1] : memref<?xi32>
  irgl.for %n in nodes(%g) {
    %d = irgl.graph.degree %g[%n]
    %first = irgl.graph.first_edge %g[%n]
    %last = irgl.graph.last_edge %g[%n]
    %span = arith.subi %last, %first : index
    %same = arith.cmpi eq, %span, %d : index
    scf.if %same {
      irgl.for %e in edges(%g, %n) {
        %w = irgl.graph.edge_weight %g[%e] : i32
        %dst = irgl.graph.edge_dst %g[%e]
        %slot = arith.addi %dst, %c1 : index
        %slot2 = arith.addi %slot, %c1 : index
        %v = memref.load %out[%slot2] : memref<?xi32>
        %s = arith.addi %v, %w : i32
        memref.store %s, %out[%slot2] : memref<?xi32>
      }
    }
  }
}
"""


def test_graph_accessors_and_for() -> None:
    out = np.zeros(2 + 5, dtype=np.int32)
    result = run(FOR_AND_GRAPH, star(5), out)
    # nodes, edges, then the summed weights of the edges into each node
    assert out.tolist() == [5, 5, 0, 1, 1 + 7, 1, 1]
    assert result.stats.edge_visits == 5


def test_graph_node_out_of_range() -> None:
    text = """
    irgl.kernel host @main(%g: !irgl.graph, %n: index) {
      irgl.invoke @k(%g, %n) : (!irgl.graph, index)
    }
    irgl.kernel @k(%g: !irgl.graph, %n: index) {
      %d = irgl.graph.degree %g[%n]
    }
    """
    with pytest.raises(InterpretationFailure, match="node 7 out of range.*5 nodes"):
        run(text, star(5), 7)


# --------------------------------------------------------------------------
# synchronization
# --------------------------------------------------------------------------

ATOMIC = """
irgl.kernel @k(%locks: memref<?xi32>, %sum: memref<?xi32>, %fails: memref<?xi32>,
               %n: index) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  irgl.forall %i in range(%c0, %n) {
    irgl.atomic %locks[%c0] : memref<?xi32> {
      %v = memref.load %sum[%c0] : memref<?xi32>
      %w = arith.addi %v, %one : i32
      memref.store %w, %sum[%c0] : memref<?xi32>
      INNER
    }
  }
}
irgl.kernel host @main(%locks: memref<?xi32>, %sum: memref<?xi32>,
                       %fails: memref<?xi32>, %n: index) {
  irgl.invoke @k(%locks, %sum, %fails, %n)
      : (memref<?xi32>, memref<?xi32>, memref<?xi32>, index)
}
"""

TRY_OTHER = """
      %c1 = arith.constant 1 : index
      irgl.atomic %locks[%c1] : memref<?xi32> {
      } else {
        %f = memref.load %fails[%c0] : memref<?xi32>
        %g = arith.addi %f, %one : i32
        memref.store %g, %fails[%c0] : memref<?xi32>
      }
"""


def _atomic(inner: str, schedule: str = "sequential", n: int = 20):
    locks, total, fails = ints(0, 0), ints(0), ints(0)
    run(ATOMIC.replace("INNER", inner), locks, total, fails, n, schedule=schedule)
    return locks.tolist(), int(total[0]), int(fails[0])


def test_blocking_atomic() -> None:
    assert _atomic("") == ([0, 0], 20, 0)  # every lock released again


def test_atomic_else_and_seeded_failures() -> None:
    assert _atomic(TRY_OTHER) == ([0, 0], 20, 0)  # lock 1 is free: no else
    _, total, fails = _atomic(TRY_OTHER, "random:1,fail=0.5")
    assert total == 20 and 0 < fails < 20
    assert _atomic(TRY_OTHER, "random:1,fail=0.5")[2] == fails, "seeded"


def test_nested_atomic_on_a_held_lock() -> None:
    held_else = TRY_OTHER.replace("%c1 = arith.constant 1", "%c1 = arith.constant 0")
    assert _atomic(held_else) == ([0, 0], 20, 20)  # non-blocking: else runs
    deadlock = "irgl.atomic %locks[%c0] : memref<?xi32> { }"
    with pytest.raises(InterpretationFailure, match=r"deadlock \(iteration 0\)"):
        _atomic(deadlock)


BARRIER = """
// Every iteration writes a[i], meets the others at the barrier, then reads
// its neighbour's value: without the barrier, sequential order reads zeros.
irgl.kernel @k(%a: memref<?xi32>, %b: memref<?xi32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  irgl.forall %i in range(%c0, %n) {
    %i32 = arith.index_cast %i : index to i32
    %v = arith.addi %i32, %i32 : i32
    memref.store %v, %a[%i] : memref<?xi32>
    BARRIER
    %j = arith.addi %i, %c1 : index
    %k = arith.remui %j, %n : index
    %w = memref.load %a[%k] : memref<?xi32>
    memref.store %w, %b[%i] : memref<?xi32>
  }
}
irgl.kernel host @main(%a: memref<?xi32>, %b: memref<?xi32>, %n: index) {
  irgl.invoke @k(%a, %b, %n) : (memref<?xi32>, memref<?xi32>, index)
}
"""


@pytest.mark.parametrize("barrier", ["irgl.sync_running_threads", "irgl.local_barrier"])
@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:9"])
def test_barrier_every_iteration_meets(barrier: str, schedule: str) -> None:
    a, b = np.zeros(6, dtype=np.int32), np.zeros(6, dtype=np.int32)
    run(BARRIER.replace("BARRIER", barrier), a, b, 6, schedule=schedule)
    assert b.tolist() == [2, 4, 6, 8, 10, 0]


def test_without_barrier_the_schedule_shows() -> None:
    a, b = np.zeros(6, dtype=np.int32), np.zeros(6, dtype=np.int32)
    run(BARRIER.replace("BARRIER", ""), a, b, 6, schedule="sequential")
    assert b.tolist() == [0, 0, 0, 0, 0, 0]  # each read before its neighbour wrote


def test_barrier_not_reached_by_every_iteration() -> None:
    # The verifier rejects a barrier under scf.if; the interpreter, given
    # such IR unverified, names the iteration that met the barrier there.
    from xdsl.parser import Parser

    from irgl_interpreter.interpreter import context
    from irgl_interpreter.interpreter import run_host as run_module

    text = BARRIER.replace(
        "BARRIER",
        "%odd = arith.cmpi ugt, %i, %c1 : index\n"
        "    scf.if %odd {\n      irgl.sync_running_threads\n    }",
    )
    with pytest.raises(ProgramError, match="directly in the outermost ForAll"):
        parse_program(text)
    module = Parser(context(), text).parse_module()
    a, b = np.zeros(4, dtype=np.int32), np.zeros(4, dtype=np.int32)
    with pytest.raises(
        InterpretationFailure,
        match=r"iteration 2 reached 'irgl.sync_running_threads' nested",
    ):
        run_module(module, "main", [a, b, 4])


EXCLUSIVE = """
// Iterations 2k and 2k+1 both lock cells 2k and 2k+1 (array form:
// items[0:2], iterator form: items[0 to 2 step 1]); winners mark the cells.
irgl.kernel @k(%claims: memref<?xi32>, %owner: memref<?xi32>, %lost: memref<?xi32>,
               %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i32
  irgl.forall %i in range(%c0, %n) {
    %set = memref.alloca() : memref<2xindex>
    %half = arith.shrui %i, %c1 : index
    %first = arith.shli %half, %c1 : index
    %second = arith.addi %first, %c1 : index
    memref.store %first, %set[%c0] : memref<2xindex>
    memref.store %second, %set[%c1] : memref<2xindex>
    %i1 = arith.addi %i, %c1 : index
    %me = arith.index_cast %i1 : index to i32
    irgl.exclusive %claims FORM : memref<?xi32>, memref<2xindex> {
      memref.store %me, %owner[%first] : memref<?xi32>
      memref.store %me, %owner[%second] : memref<?xi32>
    } else {
      memref.store %one, %lost[%i] : memref<?xi32>
    }
  }
}
irgl.kernel host @main(%claims: memref<?xi32>, %owner: memref<?xi32>,
                       %lost: memref<?xi32>, %n: index) {
  irgl.invoke @k(%claims, %owner, %lost, %n)
      : (memref<?xi32>, memref<?xi32>, memref<?xi32>, index)
}
"""

FORMS = {
    "array": "array(%set[%c2])",
    "iterator": "iterator(%set[%c0 to %c2 step %c1])",
}


def _exclusive(form: str, schedule: str) -> tuple[list[int], list[int], list[int]]:
    text = EXCLUSIVE.replace("FORM", FORMS[form])
    claims, owner, lost = (np.zeros(6, dtype=np.int32) for _ in range(3))
    run(text, claims, owner, lost, 6, schedule=schedule)
    return owner.tolist(), lost.tolist(), claims.tolist()


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("schedule", ["sequential", "reversed", "random:2"])
def test_exclusive_priority_decides(form: str, schedule: str) -> None:
    owner, lost, claims = _exclusive(form, schedule)
    # of each pair the higher priority (iteration + 1) wins, whatever the order
    assert lost == [1, 0, 1, 0, 1, 0]
    assert owner == [2, 2, 4, 4, 6, 6]
    assert claims == [2, 2, 4, 4, 6, 6]  # the claim array as the GPU leaves it


@pytest.mark.parametrize("form", sorted(FORMS))
def test_exclusive_seeded_failures_run_else(form: str) -> None:
    owner, lost, _ = _exclusive(form, "random:6,fail=0.6")
    assert lost[5] == 0 and owner[4:] == [6, 6], "the top priority always wins"
    assert sum(lost) > 3, "some winners failed on purpose"
    for k in range(3):  # winners never share a cell
        assert lost[2 * k] + lost[2 * k + 1] >= 1
    assert _exclusive(form, "random:6,fail=0.6")[1] == lost, "seeded"


# --------------------------------------------------------------------------
# the C escape hatch
# --------------------------------------------------------------------------

CTEXT = """
irgl.cblock "#define TWICE(x) (2 * (x))"
irgl.kernel host @main(%a: memref<?xi32>, %x: i32) {
  %c0 = arith.constant 0 : index
  %y = irgl.cexpr "TWICE($0)" (%x : i32) : i32
  memref.store %y, %a[%c0] : memref<?xi32>
  irgl.cblock "$0[1] = 5;" (%a : memref<?xi32>)
  %z = arith.constant 9 : i32
  %old = irgl.cexpr "atomicCAS(&$0[$1], $2, $3)"
      (%a, %c0, %y, %z : memref<?xi32>, index, i32, i32) : i32
}
"""


def test_c_text_without_implementation_is_an_error() -> None:
    with pytest.raises(
        InterpretationFailure,
        match=r"in kernel @main: 'irgl.cexpr' with C text 'TWICE\(\$0\)' cannot be "
        "interpreted: no Python implementation",
    ):
        run(CTEXT, ints(0, 0), 4)


def test_c_text_with_registered_implementation() -> None:
    def store_five(a: np.ndarray) -> None:
        a[1] = 5

    a = ints(0, 0)
    impls = {"TWICE($0)": lambda x: 2 * x, "$0[1] = 5;": store_five}
    run(CTEXT, a, 4, c_impls=impls)
    assert a.tolist() == [9, 5]  # TWICE(4) = 8, then atomicCAS 8 -> 9


def test_failing_c_implementation_names_the_text() -> None:
    def broken(x: int) -> int:
        raise ZeroDivisionError("boom")

    with pytest.raises(InterpretationFailure, match=r"TWICE\(\$0\)' failed: Zero"):
        run(CTEXT, ints(0, 0), 4, c_impls={"TWICE($0)": broken})


# --------------------------------------------------------------------------
# diagnostics and the Python API
# --------------------------------------------------------------------------

BAD = """
irgl.kernel host @main(%n: index) {
  irgl.wl.push %n
}
"""


def test_bad_program_gets_irgl_opts_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(BAD)
    with pytest.raises(ProgramError) as caught:
        parse_program(BAD, str(path))
    message = str(caught.value)
    assert "plain kernel" in message
    assert message.startswith(f"{path}:3:3: error: ")  # the op's line
    opt = shutil.which("irgl-opt")
    if opt is None:
        pytest.skip("irgl-opt is not installed")
    proc = subprocess.run([opt, str(path)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.strip() == message.strip()


def test_unfinished_and_empty_programs() -> None:
    """An input that ends inside a region says so at its end; one of only
    comments is an empty module (as irgl-opt and mlir-opt read it)."""
    with pytest.raises(ProgramError) as caught:
        parse_program("irgl.kernel host @main(%n: index) {\n", "cut.mlir")
    message = str(caught.value)
    assert message.startswith("cut.mlir:2:1")
    assert "unexpected end of input" in message and "'}' may be missing" in message
    assert not list(parse_program("// nothing here\n", "empty.mlir").ops)


def test_api_argument_errors() -> None:
    module = parse_program(REDUCE)
    with pytest.raises(InterpretationFailure, match="takes 3 argument"):
        run_host(module, "main", [1, 2])
    with pytest.raises(InterpretationFailure, match="expected a int32 array"):
        run_host(module, "main", [1, 2, np.zeros(2)])
    with pytest.raises(InterpretationFailure, match="no host kernel @nope"):
        run_host(module, "nope", [])
    with pytest.raises(InterpretationFailure, match="@k is a plain kernel"):
        run_host(module, "k", [])


def test_out_of_bounds_store_names_the_op() -> None:
    text = """
    irgl.kernel host @main(%a: memref<?xi32>, %i: index) {
      %z = arith.constant 1 : i32
      memref.store %z, %a[%i] : memref<?xi32>
    }
    """
    with pytest.raises(
        InterpretationFailure, match=r"index 3 out of bounds.*\n  at: memref.store"
    ):
        run(text, ints(0, 0, 0), 3)


DEVICE = """
irgl.kernel device @twice(%x: i32) -> i32 {
  %y = arith.addi %x, %x : i32
  irgl.return %y : i32
}
irgl.kernel host @main(%a: memref<?xi32>, %x: i32) {
  %c0 = arith.constant 0 : index
  %y = irgl.cexpr "twice($0)" (%x : i32) : i32
  memref.store %y, %a[%c0] : memref<?xi32>
}
"""


def test_c_text_calling_a_device_kernel() -> None:
    a = ints(0)
    run(DEVICE, a, 21)
    assert a[0] == 42
    # a registered implementation of the same text takes precedence
    run(DEVICE, a, 21, c_impls={"twice($0)": lambda x: -x})
    assert a[0] == -21


# --------------------------------------------------------------------------
# the shipped examples
# --------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("schedule", ["sequential", "random:4"])
def test_example_bfs(schedule: str) -> None:
    from irgl_runner.generators import generate
    from irgl_runner.reference import bfs_levels

    graph = generate("random:60:150")
    level = np.zeros(graph.num_nodes, dtype=np.int32)
    run_host(load_program(EXAMPLES / "bfs.mlir"), "main", [graph, level, 3], schedule)
    assert np.array_equal(level, bfs_levels(graph, 3))


@pytest.mark.parametrize(
    ("hubs_only", "expected"), [(True, [1, 0, 0, 0, 0]), (False, [0, 1, 1, 1, 1])]
)
def test_example_dynamic_pipe(hubs_only: bool, expected: list[int]) -> None:
    label = ints(0, 0, 0, 0, 0)
    module = load_program(EXAMPLES / "dynamic_pipe.mlir")
    run_host(module, "main", [star(5), label, 2, hubs_only])
    assert label.tolist() == expected


def test_example_boruvka_round() -> None:
    from irgl_runner.generators import generate

    graph = generate("random:40:100")
    n, m = graph.num_nodes, graph.num_edges
    comps = np.zeros(n, dtype=np.int64)
    minwt, minedge = np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int64)
    in_mst = np.zeros(m, dtype=np.int32)
    module = load_program(EXAMPLES / "boruvka.mlir")
    run_host(module, "main", [graph, comps, minwt, minedge, in_mst], "random:2")
    assert graph.weights is not None
    for node in range(n):
        lo, hi = int(graph.row_start[node]), int(graph.row_start[node + 1])
        if lo == hi:
            continue
        # the lightest edge out of every node (its own component) is marked
        assert minwt[node] == graph.weights[lo:hi].min()
        assert in_mst[minedge[node]] == 1 and lo <= minedge[node] < hi


def test_negative_index_is_out_of_bounds() -> None:
    text = """
    irgl.kernel host @main(%a: memref<?xi32>, %i: index) {
      %v = memref.load %a[%i] : memref<?xi32>
    }
    """
    with pytest.raises(InterpretationFailure, match="index -1 out of bounds"):
        run(text, ints(1, 2), -1)


def test_functions_work_on_a_plain_xdsl_interpreter() -> None:
    """The interpreter functions are ordinary xDSL `InterpreterFunctions`."""
    from xdsl.interpreter import Interpreter

    from irgl_interpreter import register_irgl_implementations
    from irgl_interpreter.interpreter import find_host_kernel
    from irgl_runner.generators import generate
    from irgl_runner.reference import bfs_levels

    graph = generate("random:30:60")
    module = load_program(EXAMPLES / "bfs.mlir")
    interpreter = Interpreter(module, index_bitwidth=64)
    register_irgl_implementations(interpreter)
    level = np.zeros(graph.num_nodes, dtype=np.int32)
    body = find_host_kernel(module, "main").body
    interpreter.run_ssacfg_region(body, (Graph.from_csr(graph), level, 0))
    assert np.array_equal(level, bfs_levels(graph, 0))


def test_failure_names_kernel_and_iteration() -> None:
    text = """
    irgl.kernel @k(%a: memref<?xi32>, %n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = arith.constant 7 : i32
      irgl.forall %i in range(%c0, %n) {
        %j = arith.addi %i, %c1 : index
        memref.store %z, %a[%j] : memref<?xi32>
      }
    }
    irgl.kernel host @main(%a: memref<?xi32>, %n: index) {
      irgl.invoke @k(%a, %n) : (memref<?xi32>, index)
    }
    """
    with pytest.raises(
        InterpretationFailure,
        match=r"error in kernel @k, iteration 2: index 3 out of bounds",
    ):
        run(text, ints(0, 0, 0), 3)


def test_python_errors_in_op_functions_become_diagnostics() -> None:
    text = """
    irgl.kernel host @main(%a: i32, %b: i32) -> i32 {
      %q = arith.divsi %a, %b : i32
      irgl.return %q : i32
    }
    """
    assert run(text, 7, 2).values == (3,)
    assert run(text, -7, 2).values == (-3,)  # C truncates toward zero
    with pytest.raises(InterpretationFailure, match=r"division by zero\n  at: %q"):
        run(text, 7, 0)
    floor = text.replace("arith.divsi", "arith.floordivsi")
    assert run(floor, -7, 2).values == (-4,)
    with pytest.raises(InterpretationFailure, match="'arith.floordivsi' failed"):
        run(floor, 7, 0)


def test_default_capacity_is_the_runtimes() -> None:
    # star(5): max(5 nodes, 5 edges) + 1 = 6 items per worklist; node 0's
    # 4 edges pushed once fit, pushed twice overflow
    text = OVERFLOW.replace(" capacity %cap", "")
    run(text, star(5), 0)
    twice = text.replace(
        "irgl.wl.push %d\n", "irgl.wl.push %d\n      irgl.wl.push %d\n"
    )
    with pytest.raises(InterpretationFailure, match="overflow.*capacity 6"):
        run(twice, star(5), 0)
