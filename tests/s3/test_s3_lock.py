"""The maintenance lock on S3 (a moto server on loopback): the exclusive create is a conditional PUT
(``If-None-Match: *``), so of two creators exactly one wins, and the loser sees the holder."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.s3


def test_create_exclusive_on_s3(moto_s3, s3_prefix):
    from icectl.io import FileIO

    io = FileIO(dict(moto_s3))
    path = f"{s3_prefix}/metadata/_icectl-maintain.lock"
    assert io.create_exclusive(path, b"first") is True
    assert io.create_exclusive(path, b"second") is False
    assert io.read(path) == b"first"


def test_one_of_many_gets_the_lock_on_s3(moto_s3, s3_prefix):
    from icectl.io import FileIO

    io = FileIO(dict(moto_s3))
    path = f"{s3_prefix}/metadata/_icectl-maintain.lock"
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda i: io.create_exclusive(path, str(i).encode()), range(8)))
    assert won.count(True) == 1
    assert io.read(path) == str(won.index(True)).encode()
