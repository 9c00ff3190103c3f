"""The fuzzer's own parts do what they say: its Avro container round-trips the base tables' files
byte for byte (so a mutant differs from the original only where the mutation put it), varints of
any size encode as the Avro spec says, and every mutation applies to every kind of file it is
meant for and changes it."""
from __future__ import annotations

import io
import random

import pytest

import fuzz_avro
import fuzz_harness
import fuzz_mutate


@pytest.mark.parametrize("n, encoded", [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (-64, b"\x7f"), (64, b"\x80\x01"),
                                        (2**62, b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")])
def test_zigzag_varints(n, encoded):
    assert fuzz_avro.encode_long(n) == encoded
    assert fuzz_avro.decode_long(encoded, 0) == (n, len(encoded))


def test_varints_beyond_64_bits_round_trip():
    for n in (2**63 - 1, -2**63, 2**64, 2**70, -2**70):
        assert fuzz_avro.decode_long(fuzz_avro.encode_long(n), 0)[0] == n


def test_container_round_trips_every_base_file(fuzz_bases):
    import fastavro

    for base in fuzz_bases.values():
        for path in base.manifest_lists + base.manifests:
            with open(path, "rb") as f:
                data = f.read()
            c = fuzz_avro.parse(data)
            again = c.to_bytes()
            assert list(fastavro.reader(io.BytesIO(again))) == list(fastavro.reader(io.BytesIO(data))), path
            assert sum(b.count for b in c.blocks) == len(list(fastavro.reader(io.BytesIO(data))))


def test_block_count_mutation_writes_the_count(fuzz_bases):
    path = fuzz_bases["v2"].manifests[0]
    with open(path, "rb") as f:
        c = fuzz_avro.parse(f.read())
    c.blocks[0].count_bytes = fuzz_avro.encode_long(2**62)
    raw = c.to_bytes()
    p = raw.index(c.sync) + 16
    assert fuzz_avro.decode_long(raw, p)[0] == 2**62


@pytest.mark.parametrize("kind", ["metadata", "manifest-list", "manifest"])
def test_every_mutation_applies(fuzz_bases, kind):
    base = fuzz_bases["demo-v3"]
    target = {"metadata": base.metadata, "manifest-list": base.manifest_lists[0], "manifest": base.manifests[0]}[kind]
    with open(target, "rb") as f:
        original = f.read()
    table = fuzz_mutate.json_mutations() if kind == "metadata" else fuzz_mutate.avro_mutations()
    for name in table:
        if kind == "manifest-list" and name == "avro.meta-deep":
            continue  # a manifest list has no Iceberg schema in its header
        for seed in range(3):
            m, data, detail, names = fuzz_mutate.mutate(random.Random(seed), original, target, kind, only=name)
            assert m == name and data != original and detail and names[0].endswith((".json", ".avro"))


def test_mutants_are_reproducible(fuzz_bases):
    base = fuzz_bases["v3"]
    a = [fuzz_harness.make_mutant(n, base, 7) for n in range(20)]
    b = [fuzz_harness.make_mutant(n, base, 7) for n in range(20)]
    assert [(m.target, m.mutation, m.detail, m.data) for m in a] == [(m.target, m.mutation, m.detail, m.data) for m in b]
    assert len({m.mutation for m in a}) > 5
