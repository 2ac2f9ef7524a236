"""Mutation fuzzing of irgl-opt's front end, verifiers and lowering, in process.

Each program is an example or benchmark mutated with a seeded random
generator, either textually (lines deleted, duplicated or swapped, the file
cut off, values, types, numbers and keywords replaced) or structurally (on the
parsed IR: operands exchanged, ops moved, cloned or erased; printed in the
generic form). Every program must

- fail to parse with a located parse error, or
- fail to verify with a located diagnostic (the offending op underlined), or
- verify, and then lower with lower-irgl and print as CUDA, or fail there
  with a diagnostic;

never raise another exception type and never take longer than the
per-program limit. The CI run is bounded in time (300 programs, at most
34 s of CPU in two shards); `IRGL_FUZZ_COUNT=20000` runs that many programs
(and prints counts), `IRGL_FUZZ_SEED` picks another seed.
"""

from __future__ import annotations

import os
import random
import re
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError

from irgl_tools.opt_main import IrglOptMain, parse_located, verify_located

REPO = Path(__file__).resolve().parents[2]
CORPUS = sorted([*REPO.glob("examples/*.mlir"), *REPO.glob("benchmarks/*/*.mlir")])

#: Programs in the default (CI) run, and its time budget in seconds.
DEFAULT_COUNT = 300
DEFAULT_BUDGET_S = 34.0
#: No single program may take longer (parse, verify, lower, emit).
PER_PROGRAM_LIMIT_S = 20

TYPES = ["i1", "i32", "i64", "index", "f32", "memref<?xi32>", "!irgl.graph", "i8"]
NUMBERS = ["0", "-1", "1", "2147483648", "99999999999999999999", "3.5", "1e999"]
KEYWORDS = [
    "worklist",
    "nodes",
    "edges",
    "range",
    "host",
    "device",
    "any",
    "all",
    "while",
    "until",
    "initial",
    "capacity",
    "once",
    "else",
    "merge",
    "extra",
]
OPS = [
    "irgl.sync_running_threads",
    "irgl.local_barrier",
    "irgl.nop",
    "irgl.wl.push %c0",
    "irgl.retry %c0",
    'irgl.cblock "x\\\\y\\""',
    '"irgl.wl.pop"(%c0) : (index) -> index',
    '"irgl.forall"() ({ ^bb0(%q: index): }) : () -> ()',
]


class Timeout(Exception):
    """A program ran past PER_PROGRAM_LIMIT_S."""


@dataclass
class Tally:
    """Outcomes of a fuzz run."""

    counts: Counter[str] = field(default_factory=Counter[str])
    crashes: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def __str__(self) -> str:
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(self.counts.items()))
        return f"{sum(self.counts.values())} programs ({parts})"


# --------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return text.split("\n")


def mutate_text(text: str, rng: random.Random) -> str:
    """One textual mutation of `text`."""
    lines = _lines(text)
    choice = rng.randrange(10)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if choice == 0:
        del lines[i]
    elif choice == 1:
        lines.insert(i, lines[j])
    elif choice == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif choice == 3:
        return text[: rng.randrange(len(text) + 1)]
    elif choice == 4:
        names = re.findall(r"%[\w.$]+", text) or ["%x"]
        lines[i] = re.sub(r"%[\w.$]+", lambda _: rng.choice(names), lines[i], count=1)
    elif choice == 5:
        pattern = r"\b(i1|i32|i64|index|f32|!irgl\.graph)\b"
        lines[i] = re.sub(pattern, rng.choice(TYPES), lines[i], count=1)
    elif choice == 6:
        lines[i] = re.sub(r"\b\d+\b", rng.choice(NUMBERS), lines[i], count=1)
    elif choice == 7:
        words = r"\b(" + "|".join(KEYWORDS) + r")\b"
        lines[i] = re.sub(words, rng.choice(KEYWORDS), lines[i], count=1)
    elif choice == 8:
        lines.insert(i, "  " + rng.choice(OPS))
    else:
        k = rng.randrange(len(text) + 1)
        piece = rng.choice(['"', "\\", "{", "}", "(", ")", "%", "@", ":", "<"])
        return text[:k] + piece + text[k + rng.randrange(4) :]
    return "\n".join(lines)


def mutate_ir(module: ModuleOp, rng: random.Random) -> None:
    """One structural mutation of `module` (which may stop verifying)."""
    ops = [op for op in module.walk() if op is not module]
    if not ops:
        return
    op = rng.choice(ops)
    choice = rng.randrange(6)
    if choice == 4 and op.properties:
        # A required property missing (generic form), or one of another op.
        name = rng.choice(sorted(op.properties))
        donors = [o for o in ops if o.properties]
        donor = rng.choice(donors)
        if rng.random() < 0.5:
            del op.properties[name]
        else:
            op.properties[name] = rng.choice(list(donor.properties.values()))
    elif choice == 5 and op.regions:
        # Blocks lose or gain arguments; a region loses its terminator.
        block = rng.choice([b for r in op.regions for b in r.blocks] or [None])
        if block is not None and block.args and not block.args[-1].uses:
            block.erase_arg(block.args[-1])
        elif block is not None and block.last_op is not None:
            last = block.last_op
            if not any(r.uses for r in last.results):
                last.detach()
                last.erase(safe_erase=False)
    elif choice == 0 and op.operands:
        values = [v for other in ops for v in other.results]
        values += [
            a for other in ops for r in other.regions for b in r.blocks for a in b.args
        ]
        if values:
            k = rng.randrange(len(op.operands))
            op.operands = [
                rng.choice(values) if n == k else v for n, v in enumerate(op.operands)
            ]
    elif choice == 1:
        target = rng.choice(ops)
        if target is not op and not op.is_ancestor(target) and target.parent:
            op.detach()
            target.parent.insert_op_before(op, target)
    elif choice == 2:
        target = rng.choice(ops)
        if target.parent is not None:
            target.parent.insert_op_before(op.clone(), target)
    else:
        for result in op.results:
            if result.uses and ops[0].results:
                result.replace_all_uses_with(ops[0].results[0])
        if not any(r.uses for r in op.results):
            op.detach()
            op.erase(safe_erase=False)


def programs(seed: int) -> Iterator[tuple[str, str]]:
    """(name, text) of mutated programs, forever."""
    rng = random.Random(seed)
    sources = [(p.relative_to(REPO).as_posix(), p.read_text()) for p in CORPUS]
    main = _main()
    n = 0
    while True:
        name, text = rng.choice(sources)
        n += 1
        if rng.random() < 0.7:
            for _ in range(rng.randrange(1, 4)):
                text = mutate_text(text, rng)
            yield f"{name}#text{n}", text
            continue
        try:
            module = Parser(main.ctx, text, name).parse_module()
            for _ in range(rng.randrange(1, 3)):
                mutate_ir(module, rng)
            out = StringIO()
            Printer(stream=out, print_generic_format=True).print_op(module)
        except Exception:  # a mutation the IR cannot express: skip it
            continue
        yield f"{name}#ir{n}", out.getvalue()


# --------------------------------------------------------------------------
# Running one program
# --------------------------------------------------------------------------

_MAIN: list[IrglOptMain] = []


def _main() -> IrglOptMain:
    if not _MAIN:
        # the headers that programs of the corpus include (irgl.cinclude)
        dirs = ",".join(f'"{d}"' for d in sorted({p.parent for p in CORPUS}))
        pipeline = f"lower-irgl{{include_dirs={dirs}}}"
        _MAIN.append(IrglOptMain(args=["-p", pipeline, "-t", "cuda"]))
    return _MAIN[0]


def _located(error: DiagnosticException) -> bool:
    """A verifier diagnostic names its op: the printed module underlines it."""
    return any("^^^" in str(note) for note in getattr(error, "__notes__", ()))


def _on_alarm(signum: int, frame: object) -> None:
    raise Timeout()


def run_program(text: str) -> str:
    """The outcome of one program; raises on a crash or a hang."""
    main = _main()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(PER_PROGRAM_LIMIT_S)
    try:
        try:
            module = parse_located(Parser(main.ctx, text, "fuzz.mlir"))
        except ParseError as error:
            assert re.search(r"fuzz\.mlir:\d+:\d+", str(error)), str(error)
            return "parse error"
        try:
            verify_located(module)
        except DiagnosticException as error:
            assert _located(error), f"diagnostic without location: {error}"
            return "verifier diagnostic"
        try:
            main.apply_passes(module)
            main.output_resulting_program(module)
        except DiagnosticException as error:
            return (
                "lowering diagnostic (located)"
                if _located(error)
                else "lowering diagnostic"
            )
        return "lowered"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def fuzz(
    seed: int,
    count: int,
    budget_s: float | None,
    report: Callable[[str, str, BaseException], None] | None = None,
    shard: tuple[int, int] = (0, 1),
    at_least: int = 0,
) -> Tally:
    """Run up to `count` programs (or until `budget_s` runs out, but never
    fewer than the first `at_least`, so that a slow machine still runs
    those); of those, shard ``(k, of)`` runs the ones whose number is ``k``
    modulo ``of``."""
    tally = Tally()
    start = time.monotonic()
    k, of = shard
    for n, (name, text) in enumerate(programs(seed)):
        out_of_time = budget_s is not None and time.monotonic() - start > budget_s
        if n >= count or (out_of_time and n >= at_least):
            break
        if n % of != k:
            continue
        try:
            tally.counts[run_program(text)] += 1
        except Timeout as error:
            tally.counts["hang"] += 1
            tally.crashes.append((name, "hang"))
            if report:
                report(name, text, error)
        except Exception as error:  # noqa: BLE001 - a crash is what we look for
            tally.counts["crash"] += 1
            tally.crashes.append((name, f"{type(error).__name__}: {error}"[:300]))
            if report:
                report(name, text, error)
    return tally


def _save(directory: Path) -> Callable[[str, str, BaseException], None]:
    directory.mkdir(parents=True, exist_ok=True)

    def report(name: str, text: str, error: BaseException) -> None:
        safe = re.sub(r"[^\w.#-]", "_", name)
        (directory / f"{safe}.mlir").write_text(text)
        (directory / f"{safe}.txt").write_text(f"{type(error).__name__}: {error}\n")

    return report


#: The fuzz run in this many tests (each program in one of them), so that
#: pytest-xdist's workers share it.
SHARDS = 2


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM")
@pytest.mark.parametrize("shard", range(SHARDS))
def test_fuzz_programs_get_located_diagnostics(shard: int) -> None:
    count = int(os.environ.get("IRGL_FUZZ_COUNT", DEFAULT_COUNT))
    seed = int(os.environ.get("IRGL_FUZZ_SEED", "2026"))
    budget = None if "IRGL_FUZZ_COUNT" in os.environ else DEFAULT_BUDGET_S / SHARDS
    out = os.environ.get("IRGL_FUZZ_OUT")
    report = _save(Path(out)) if out else None
    floor = min(count, 50)  # programs run however slow the machine
    tally = fuzz(seed, count, budget, report, (shard, SHARDS), at_least=floor)
    print(f"\nfuzz (seed {seed}, shard {shard} of {SHARDS}): {tally}")
    assert sum(tally.counts.values()) >= floor // SHARDS  # each one classified
    assert not tally.crashes, "\n".join(f"{n}: {e}" for n, e in tally.crashes[:20])


def test_fuzz_mutations_are_seeded() -> None:
    """The same seed gives the same programs (failures can be replayed)."""
    first = [t for _, (_, t) in zip(range(20), programs(7), strict=False)]
    again = [t for _, (_, t) in zip(range(20), programs(7), strict=False)]
    assert first == again
    assert len(set(first)) > 10


def test_cut_off_string_with_escapes_does_not_hang() -> None:
    """A file cut off inside a C string with escapes: a parse error, fast."""
    text = 'irgl.cblock "' + 'printf(\\"%d\\\\n\\", x);' * 30
    start = time.monotonic()
    assert run_program(text) == "parse error"
    assert time.monotonic() - start < 5
