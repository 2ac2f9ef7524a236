"""The test suite's own GPU spreading (conftest's ``$IRGL_TEST_GPUS``)."""

from __future__ import annotations

import pytest
from conftest import worker_gpu


@pytest.mark.parametrize(
    ("worker", "gpus", "expected"),
    [
        ("gw0", "0,1,2,3", "0"),
        ("gw5", "0,1,2,3", "1"),
        ("gw2", " 2 , 3 ", "2"),
        ("gw1", "3", "3"),
        ("gw1", None, None),  # no list: every GPU stays visible
        ("gw1", "", None),
        (None, "0,1", None),  # not an xdist worker
        ("master", "0,1", None),
        ("gwx", "0,1", None),
    ],
)
def test_worker_gpu(worker: str | None, gpus: str | None, expected: str | None) -> None:
    assert worker_gpu(worker, gpus) == expected
