"""Block-size categories of kernels and the intersection rule for kernels
that share a control kernel (spec: "Compiling Kernel Invocations")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lowering.block_size import (
    BlockCategory,
    BlockConstraint,
    choose_block_size,
    constraint_of,
    control_block_size,
)

REPO = Path(__file__).resolve().parents[2]


def test_categories_from_annotations() -> None:
    assert constraint_of(None).category is BlockCategory.ELASTIC
    shrinkable = constraint_of((128, 2))
    assert shrinkable.category is BlockCategory.SHRINKABLE
    assert max(shrinkable.sizes()) == 128
    fixed = constraint_of(None, fixed=96)
    assert fixed.category is BlockCategory.FIXED
    assert fixed.sizes() == frozenset({96})


def test_sizes_are_whole_warps_up_to_1024() -> None:
    sizes = BlockConstraint(BlockCategory.ELASTIC).sizes()
    assert min(sizes) == 32 and max(sizes) == 1024
    assert all(s % 32 == 0 for s in sizes)


def test_choose_prefers_the_default_within_bounds() -> None:
    assert choose_block_size(None, 256) == 256
    assert choose_block_size((128,), 256) == 128
    assert choose_block_size((1024,), 256) == 256
    # a bound below one warp still gives a legal size
    assert choose_block_size((16,), 256) == 16


def test_control_kernel_takes_the_largest_common_size() -> None:
    elastic = BlockConstraint(BlockCategory.ELASTIC)
    shrink = BlockConstraint(BlockCategory.SHRINKABLE, 512)
    fixed = BlockConstraint(BlockCategory.FIXED, 384)
    assert control_block_size([elastic, shrink]) == 512
    assert control_block_size([elastic, shrink, fixed]) == 384
    assert (
        control_block_size([fixed, BlockConstraint(BlockCategory.FIXED, 128)]) is None
    )
    assert (
        control_block_size([BlockConstraint(BlockCategory.SHRINKABLE, 100), fixed])
        is None
    )


def test_control_block_preference_picks_within_the_intersection() -> None:
    elastic = BlockConstraint(BlockCategory.ELASTIC)
    shrink = BlockConstraint(BlockCategory.SHRINKABLE, 512)
    fixed = BlockConstraint(BlockCategory.FIXED, 384)
    assert control_block_size([elastic, shrink], 256) == 256
    assert control_block_size([elastic], 2048) == 1024
    # nothing admitted at or below the preference: the smallest admitted
    assert control_block_size([elastic, fixed], 256) == 384
    assert (
        control_block_size([fixed, BlockConstraint(BlockCategory.FIXED, 128)], 256)
        is None
    )


def test_launch_bounds_set_the_lowered_block_size(tmp_path: Path) -> None:
    source = tmp_path / "k.mlir"
    source.write_text(
        "irgl.kernel @k(%x: memref<?xi32>) launch_bounds(128) {\n}\n"
        "irgl.kernel @e(%x: memref<?xi32>) {\n}\n"
    )
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "irgl-opt"),
            str(source),
            "-p",
            "convert-irgl-kernels",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert 'sym_name = "k"' in out and "#irgl_rt.launch<block = 128" in out
    assert 'sym_name = "e"' in out and "#irgl_rt.launch<block = 256" in out


@pytest.mark.parametrize("value", [0, 16, 96, 2048])
def test_block_size_option_is_validated(value: int) -> None:
    from lowering.convert_irgl_kernels import ConvertIrglKernels
    from lowering.lower_irgl import LowerIrgl

    with pytest.raises(ValueError, match="lower-irgl: block_size must be a power"):
        LowerIrgl(block_size=value)
    with pytest.raises(ValueError, match="convert-irgl-kernels: block_size must"):
        ConvertIrglKernels(block_size=value)


def test_bad_block_size_is_a_clear_cli_error() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "irgl-opt"),
            str(REPO / "examples" / "bfs.mlir"),
            "-p",
            "lower-irgl{block_size=0}",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    assert "block_size must be a power of two from 32 to 1024, got 0" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("graph_name", ["rmat10", "grid", "path"])
@pytest.mark.parametrize("name", ["bfs", "sssp", "pr_pull", "cc"])
def test_app_passes_its_check_with_a_smaller_control_block(
    name: str, graph_name: str
) -> None:
    from conftest import assert_app_passes_its_check
    from test_apps_traversal import GRAPHS

    pipeline = "lower-irgl{control_block=256}"
    assert_app_passes_its_check(name, GRAPHS[graph_name](), pipeline)
