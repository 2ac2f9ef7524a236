"""irgl-bench scaling without GPUs: the table, the output comparison, and a
refusal that writes nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irgl_runner import scaling
from irgl_runner.bench_cli import main


def _row(gpus: int, ms: float, **extra: object) -> dict[str, object]:
    row = {"app": "bfs", "graph": "rmat:22", "gpus": gpus, "median_ms": ms}
    row.update(policy="none" if gpus == 1 else "oec", correct=True, **extra)
    return row


def test_table_has_speedups_and_traffic() -> None:
    rows = [
        _row(1, 10.0),
        _row(2, 5.0, rounds=8, bytes_per_call=2_000_000, bytes_per_round=250_000),
        _row(4, 4.0, comm_ms=1.5),
        {"app": "bfs", "graph": "rmat:22", "gpus": 4, "policy": "cvc"}
        | {"correct": False, "error": "rank 1 died"},
    ]
    text = scaling.markdown(rows, "NVIDIA H200", "2026-11-26", "abc123")
    assert "NVIDIA H200, 2026-11-26" in text
    lines = [line for line in text.splitlines() if line.startswith("| bfs")]
    assert len(lines) == 4
    assert "| 2.00× |" in lines[1] and "| 2.00 | 250.0 |" in lines[1]
    assert "| 2.50× |" in lines[2] and "| 1.500 |" in lines[2]
    assert "error: rank 1 died" in lines[3]


def test_same_output(tmp_path: Path) -> None:
    def save(name: str, values: np.ndarray) -> Path:
        path = tmp_path / name
        with open(path, "wb") as f:
            np.save(f, values)
        return path

    ints = save("a.npy", np.arange(5, dtype=np.int32))
    assert scaling.same_output(ints, save("b.npy", np.arange(5, dtype=np.int32)))
    changed = np.arange(5, dtype=np.int32)
    changed[3] = 7
    assert not scaling.same_output(ints, save("c.npy", changed))
    ranks = np.array([0.5, 0.25, 0.25])
    near = save("d.npy", ranks)
    assert scaling.same_output(save("e.npy", ranks + 1e-5), near)
    assert not scaling.same_output(save("f.npy", ranks + 1e-2), near)


def test_refuses_without_enough_gpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("irgl_runner.distributed.gpu_count", lambda: 0)
    out, results = tmp_path / "scaling.json", tmp_path / "RESULTS.md"
    code = main(["scaling", "--json", str(out), "--results", str(results)])
    assert code == 2
    assert "scaling needs 4 GPUs here, found 0" in capsys.readouterr().err
    assert not out.exists() and not results.exists()
