"""The README's option table lists every option of every registered pass and
of the `cuda` target (so that it stays true)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cuda_emitter import get_cuda_target
from lowering.registry import PASS_FACTORIES

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
TABLE = README[README.index("## Pass and target options") :]
TABLE = TABLE[: TABLE.index("\n## ")]


def _row(name: str) -> str:
    for line in TABLE.splitlines():
        if line.startswith("|") and f"`{name}`" in line.split("|")[1]:
            return line
    raise AssertionError(f"no README row for {name}")


def test_every_pass_option_is_listed() -> None:
    for name, factory in PASS_FACTORIES.items():
        row = _row(name)
        for field in dataclasses.fields(factory()):
            assert f"`{field.name}`" in row, (name, field.name)


def test_every_target_option_is_listed() -> None:
    row = _row("cuda")
    for field in dataclasses.fields(get_cuda_target()):
        assert f"`{field.name}`" in row, field.name
