"""irgl-opt's rough edges (issue 27, item 7): a malformed `-p`/`-t`, an input
that is a directory, a closed output pipe, verifier errors in large modules,
operands defined in their op's own region, a missing region, and `--help`."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import OWN_REGION_OPERAND

from irgl_dialect.syntax import source_span
from irgl_interpreter import ProgramError, parse_program
from irgl_tools.opt_main import EXIT_BROKEN_PIPE
from irgl_tools.universe import IRGL_UNIVERSE

REPO = Path(__file__).resolve().parents[2]
IRGL_OPT = [sys.executable, str(REPO / "tools" / "irgl-opt")]
BFS = str(REPO / "examples" / "bfs.mlir")


def run_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the checkout's irgl-opt."""
    return subprocess.run(
        [*IRGL_OPT, *args], input=stdin, capture_output=True, text=True, timeout=120
    )


def assert_clean_failure(proc: subprocess.CompletedProcess[str]) -> None:
    """A non-zero exit with a diagnostic, no traceback, no internal error."""
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr
    # `irgl-opt: error: ...`, or a location (`file:line:col`) first.
    assert re.match(r"irgl-opt: error: |\S+:\d+:\d+", proc.stderr), proc.stderr


# --------------------------------------------------------------------------
# 1. A malformed -p (or -t)
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "column", "reason"),
    [
        ("lower-irgl{block_size=128", 26, "expected either a space or `}`"),
        (
            "lower-irgl{include_dirs=/tmp}",
            25,
            'must be quoted, e.g. include_dirs="/tmp"',
        ),
        ("lower-irgl{block_size=}", 23, "Unknown argument value"),
        ("lower-irgl,,cse", 12, "Expected pass name here"),
    ],
)
def test_malformed_pipeline_is_one_diagnostic(
    spec: str, column: int, reason: str
) -> None:
    proc = run_opt("-p", spec, BFS)
    assert_clean_failure(proc)
    lines = proc.stderr.rstrip("\n").split("\n")
    assert lines[0].startswith(f"irgl-opt: error: malformed -p at column {column}: ")
    assert reason in lines[0]
    # The pipeline string, then a caret under the column.
    assert lines[1] == f"  {spec}"
    assert lines[2] == "  " + " " * (column - 1) + "^"
    assert len(lines) == 3


def test_malformed_pipeline_column_ignores_lower_irgl() -> None:
    """`--lower-irgl` prepends `lower-irgl,` to `-p`; the column is the user's."""
    proc = run_opt("--lower-irgl", "-p", "cse,,", BFS)
    assert_clean_failure(proc)
    assert "malformed -p at column 5: Expected pass name here" in proc.stderr


def test_malformed_target_is_one_diagnostic() -> None:
    proc = run_opt("-t", "cuda{", BFS)
    assert_clean_failure(proc)
    assert proc.stderr.startswith("irgl-opt: error: malformed -t at column 6: ")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-pass", "-p: unknown pass 'no-such-pass'"),
        ("lower-irgl{block_size=abc}", "bad options for pass 'lower-irgl'"),
        ("lower-irgl{no_such_option=1}", "bad options for pass 'lower-irgl'"),
    ],
)
def test_unknown_pass_or_option_names_the_pass(spec: str, message: str) -> None:
    proc = run_opt("-p", spec, BFS)
    assert_clean_failure(proc)
    assert message in proc.stderr


def test_quoted_include_dir_is_accepted(tmp_path: Path) -> None:
    proc = run_opt("-p", f'lower-irgl{{include_dirs="{tmp_path}"}}', BFS)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------
# 2. A directory as input or output; a closed output pipe
# --------------------------------------------------------------------------


def test_directory_input_is_a_clear_error(tmp_path: Path) -> None:
    proc = run_opt(str(tmp_path))
    assert_clean_failure(proc)
    assert proc.stderr == f"irgl-opt: error: Is a directory: '{tmp_path}'\n"


def test_directory_output_is_a_clear_error(tmp_path: Path) -> None:
    proc = run_opt("-o", str(tmp_path), BFS)
    assert_clean_failure(proc)
    assert "Is a directory" in proc.stderr


def test_closed_output_pipe_ends_quietly(tmp_path: Path) -> None:
    """`irgl-opt --split-input-file many.mlir | head -1`: no message, the
    SIGPIPE exit code. Each chunk is written on its own, so the writes go on
    after the reader has gone (a single large write may fit the pipe)."""
    chunk = Path(BFS).read_text()
    big = tmp_path / "many.mlir"
    big.write_text("\n// -----\n".join([chunk] * 200))
    proc = subprocess.Popen(
        [*IRGL_OPT, "--split-input-file", str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert first.startswith(b"builtin.module")
    assert stderr == ""
    assert code == EXIT_BROKEN_PIPE


# --------------------------------------------------------------------------
# 3. Verifier errors at the op's source location, not the whole module
# --------------------------------------------------------------------------


def test_verifier_error_in_large_module_is_short_and_located(tmp_path: Path) -> None:
    filler = "\n".join(
        f"irgl.kernel @k{i}(%g: !irgl.graph) {{\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "  }\n"
        "}"
        for i in range(200)
    )
    bad = (
        "irgl.kernel @bad(%g: !irgl.graph) {\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "    %item = irgl.wl.pop %n\n"
        "  }\n"
        "}\n"
    )
    program = tmp_path / "large.mlir"
    program.write_text(filler + "\n" + bad)
    line = filler.count("\n") + 1 + 3
    proc = run_opt(str(program))
    assert_clean_failure(proc)
    lines = proc.stderr.rstrip("\n").split("\n")
    assert lines[0].startswith(f"{program}:{line}:5: error: 'irgl.wl.pop' pops only")
    assert lines[1] == "    %item = irgl.wl.pop %n"
    assert lines[2] == "    " + "^" * len("%item = irgl.wl.pop %n")
    assert len(lines) == 3  # not the module in generic form
    assert '"irgl.kernel"' not in proc.stderr


def test_verifier_error_lines_count_from_the_file_with_split_input(
    tmp_path: Path,
) -> None:
    chunk = (
        "irgl.kernel @k(%g: !irgl.graph) {\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "    %item = irgl.wl.pop %n\n"
        "  }\n"
        "}\n"
    )
    program = tmp_path / "split.mlir"
    program.write_text(chunk + "// -----\n" + chunk)
    proc = run_opt("--split-input-file", "--verify-diagnostics", str(program))
    assert proc.returncode == 0
    assert f"{program}:3:5: error: 'irgl.wl.pop'" in proc.stdout
    assert f"{program}:9:5: error: 'irgl.wl.pop'" in proc.stdout


def test_error_after_lowering_points_at_the_source_op(tmp_path: Path) -> None:
    """An op that a pass leaves in place keeps its source location: the
    emitter's error names the line of the input."""
    program = tmp_path / "dim.mlir"
    program.write_text(
        "builtin.module attributes {gpu.container_module} {\n"
        '  "gpu.module"() <{sym_name = "m"}> ({\n'
        '    "gpu.func"() <{function_type = (memref<?xi32>) -> (), kernel}> ({\n'
        "    ^bb0(%a: memref<?xi32>):\n"
        "      %c0 = arith.constant 0 : index\n"
        "      %n = memref.dim %a, %c0 : memref<?xi32>\n"
        '      "gpu.return"() : () -> ()\n'
        '    }) {sym_name = "k"} : () -> ()\n'
        "  }) : () -> ()\n"
        "}\n"
    )
    proc = run_opt("-t", "cuda", str(program))
    assert_clean_failure(proc)
    assert proc.stderr.startswith(f"{program}:6:7: error: CUDA emitter:")
    assert "%n = memref.dim %a, %c0 : memref<?xi32>" in proc.stderr


# --------------------------------------------------------------------------
# 4. An operand defined inside its op's own region
# --------------------------------------------------------------------------


def test_operand_defined_in_own_region_is_a_located_dominance_error() -> None:
    proc = run_opt(stdin=OWN_REGION_OPERAND)
    assert_clean_failure(proc)
    assert "Forward declared" not in proc.stderr
    assert proc.stderr.startswith("stdin:8:35\n")
    assert (
        "'irgl.iterate' uses %n, which is defined only inside the op's own region"
        in (proc.stderr)
    )
    assert "(rule: values are defined before their uses)" in proc.stderr


def test_scf_if_condition_defined_in_its_body_is_located() -> None:
    program = (
        "irgl.kernel @k(%g: !irgl.graph) {\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "    scf.if %c {\n"
        "      %c = arith.constant true\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    proc = run_opt(stdin=program)
    assert_clean_failure(proc)
    assert proc.stderr.startswith("stdin:3:12\n")
    assert "'scf.if' uses %c" in proc.stderr


def test_interpreter_reports_own_region_operand_as_program_error() -> None:
    with pytest.raises(ProgramError) as raised:
        parse_program(OWN_REGION_OPERAND, "own.mlir")
    message = str(raised.value)
    assert message.startswith("own.mlir:8:35")
    assert "rule: values are defined before their uses" in message


def test_undefined_value_is_reported_at_its_use() -> None:
    program = (
        "irgl.kernel @k(%g: !irgl.graph) {\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "    irgl.wl.push %m\n"
        "  }\n"
        "}\n"
    )
    proc = run_opt(stdin=program)
    assert_clean_failure(proc)
    assert proc.stderr.startswith("stdin:3:18\n")
    assert "%m is used but never defined" in proc.stderr


# --------------------------------------------------------------------------
# 5. A missing region is reported at the op, not the next line
# --------------------------------------------------------------------------


def test_missing_region_points_at_the_op_line() -> None:
    program = OWN_REGION_OPERAND.replace("%lvl = %n", "%lvl = %c1")
    head = program[: program.index(" {\n    %n = arith.addi")]
    program = head + "  // no body\n\n  %z = arith.constant 2 : i32\n}\n"
    line = head.count("\n") + 1
    proc = run_opt(stdin=program)
    assert_clean_failure(proc)
    op_line = head.split("\n")[-1]
    assert proc.stderr.startswith(f"stdin:{line}:{len(op_line) + 1}\n")
    assert "expected the op's region `{ ... }` after this" in proc.stderr


def test_missing_kernel_body_points_at_the_kernel_line() -> None:
    proc = run_opt(stdin="irgl.kernel @k(%g: !irgl.graph)\n\n\nirgl.kernel @j() {\n}\n")
    assert_clean_failure(proc)
    assert proc.stderr.startswith("stdin:1:32\n")


# --------------------------------------------------------------------------
# 6. --help lists the irgl passes and their options
# --------------------------------------------------------------------------


def test_help_lists_every_irgl_pass_and_option() -> None:
    proc = run_opt("--help")
    assert proc.returncode == 0
    epilog = proc.stdout[proc.stdout.index("irgl passes") :]
    for name, factory in IRGL_UNIVERSE.all_passes.items():
        assert f"\n  {name}" in epilog, name
        for field in dataclasses.fields(factory()):
            assert f"      {field.name}: " in epilog, (name, field.name)
    assert "irgl target -t 'cuda{option=value}'" in epilog
    assert "block_size: int = 256" in epilog


def test_a_remembered_parse_is_a_fresh_module_with_its_locations() -> None:
    """`parse_remembered` (the interpreter's, the runner's and irgl-opt's
    parse): parsing the same text again gives a new module that prints the
    same, whose ops keep where they were written, which a change to an
    earlier result does not reach; a program that fails to verify fails at
    its line every time."""
    text = Path(BFS).read_text()
    first = parse_program(text, BFS)
    again = parse_program(text, BFS)
    assert again is not first
    assert str(again) == str(first)
    pairs = list(zip(first.walk(), again.walk(), strict=True))
    assert all(a is not b for a, b in pairs)
    # (the implicit module and terminators have no text of their own)
    assert all(source_span(a) == source_span(b) for a, b in pairs)
    assert source_span(pairs[1][1]) is not None
    assert sum(source_span(b) is not None for _, b in pairs) > len(pairs) // 2
    kernel = first.body.block.first_op
    assert kernel is not None
    kernel.detach()
    assert str(parse_program(text, BFS)) == str(again)

    bad = (
        "irgl.kernel @k(%g: !irgl.graph) {\n"
        "  irgl.forall %n in nodes(%g) {\n"
        "    %item = irgl.wl.pop %n\n"
        "  }\n"
        "}\n"
    )
    for _ in range(2):
        with pytest.raises(
            ProgramError, match=r"^bad\.mlir:3:5: error: 'irgl\.wl\.pop'"
        ):
            parse_program(bad, "bad.mlir")
