"""The table-properties registry: Iceberg's defaults, each type's parser, and one policy for a bad
value (an InvalidMetadataError naming the property and the value, never a default or a clamp)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import ExitCode, InvalidMetadataError, UsageError
from icectl.spec import properties as P


def test_defaults_are_icebergs():
    # Iceberg's "Configuration: Table properties" page (and TableProperties.java).
    expected = {
        "commit.retry.num-retries": 4, "commit.retry.min-wait-ms": 100, "commit.retry.max-wait-ms": 60000,
        "commit.retry.total-timeout-ms": 1800000, "commit.manifest.target-size-bytes": 8388608,
        "history.expire.max-snapshot-age-ms": 432000000, "history.expire.min-snapshots-to-keep": 1,
        "history.expire.max-ref-age-ms": 2**63 - 1, "gc.enabled": True,
        "write.metadata.delete-after-commit.enabled": False, "write.metadata.previous-versions-max": 100,
        "write.metadata.compression-codec": "none", "write.target-file-size-bytes": 536870912,
        "write.parquet.compression-codec": "zstd", "write.parquet.row-group-size-bytes": 134217728,
        "write.metadata.metrics.default": "truncate(16)", "read.split.target-size": 134217728,
        "write.metadata.path": None, "write.data.path": None, "schema.name-mapping.default": None,
    }
    for name, default in expected.items():
        assert P.TABLE_PROPERTIES[name].default == default, name
        assert P.TABLE_PROPERTIES[name].read({}) == default, name
    for prop in P.TABLE_PROPERTIES.values():
        assert prop.meaning and prop.type_text and prop.default_text, prop.name
        assert prop.section in P.SECTIONS


def test_a_bad_value_names_the_property_and_the_value():
    for prop, raw in [(P.COMMIT_NUM_RETRIES, "abc"), (P.COMMIT_NUM_RETRIES, "-1"), (P.COMMIT_NUM_RETRIES, "4.0"),
                      (P.COMMIT_NUM_RETRIES, " 4"), (P.COMMIT_NUM_RETRIES, ""), (P.COMMIT_NUM_RETRIES, "2147483648"),
                      (P.MAX_SNAPSHOT_AGE_MS, "-5"), (P.MAX_SNAPSHOT_AGE_MS, "5d"), (P.MAX_SNAPSHOT_AGE_MS, "1_000"),
                      (P.MAX_REF_AGE_MS, str(2**63)), (P.MIN_SNAPSHOTS_TO_KEEP, "0"),
                      (P.TARGET_FILE_SIZE_BYTES, "0"), (P.TARGET_FILE_SIZE_BYTES, "512MB"),
                      (P.GC_ENABLED, "yes"), (P.GC_ENABLED, "0"), (P.GC_ENABLED, ""),
                      (P.PARQUET_COMPRESSION, "zip"), (P.METADATA_COMPRESSION, "zstd"),
                      (P.METRICS_DEFAULT, "truncate(0)"), (P.METRICS_DEFAULT, "truncate"), (P.METRICS_DEFAULT, "some")]:
        with pytest.raises(InvalidMetadataError) as e:
            prop.read({prop.name: raw, "other": "x"})
        assert f"table property {prop.name}={raw!r}" in e.value.message
        assert e.value.exit_code == ExitCode.INVALID_METADATA == 4
        assert prop.name in (e.value.hint or "")
        with pytest.raises(InvalidMetadataError):
            prop.read_if_set({prop.name: raw})


def test_good_values():
    assert P.COMMIT_NUM_RETRIES.read({"commit.retry.num-retries": "0"}) == 0
    assert P.COMMIT_NUM_RETRIES.read({"commit.retry.num-retries": "+7"}) == 7
    assert P.MAX_REF_AGE_MS.read({"history.expire.max-ref-age-ms": str(2**63 - 1)}) == 2**63 - 1
    assert P.METADATA_PREVIOUS_VERSIONS_MAX.read({"write.metadata.previous-versions-max": "0"}) == 0
    assert P.GC_ENABLED.read({"gc.enabled": "FALSE"}) is False
    assert P.GC_ENABLED.read({"gc.enabled": "True"}) is True
    assert P.PARQUET_COMPRESSION.read({"write.parquet.compression-codec": "SNAPPY"}) == "snappy"
    assert P.METADATA_COMPRESSION.read({"write.metadata.compression-codec": "GZIP"}) == "gzip"
    assert P.METRICS_DEFAULT.read({"write.metadata.metrics.default": "truncate(8)"}) == "truncate(8)"
    assert P.METADATA_PATH.read_if_set({}) is None
    assert P.METADATA_PATH.read_if_set({"write.metadata.path": "s3://b/m"}) == "s3://b/m"
    assert P.SPLIT_SIZE.read_if_set({}) is None


@given(st.integers(0, 2**63 - 1))
def test_a_long_round_trips(v):
    assert P.MAX_SNAPSHOT_AGE_MS.read({P.MAX_SNAPSHOT_AGE_MS.name: str(v)}) == v


@given(st.integers(-(2**70), 2**70))
def test_an_int_is_read_or_refused_never_clamped(v):
    props = {P.COMMIT_NUM_RETRIES.name: str(v)}
    if 0 <= v <= P.INT_MAX:
        assert P.COMMIT_NUM_RETRIES.read(props) == v
    else:
        with pytest.raises(InvalidMetadataError, match="out of range"):
            P.COMMIT_NUM_RETRIES.read(props)


def test_check_setting_is_a_usage_error_for_registered_names_only():
    P.check_setting("commit.retry.num-retries", "8")
    P.check_setting("my.engine.knob", "anything")
    with pytest.raises(UsageError, match=r"commit.retry.num-retries='abc'"):
        P.check_setting("commit.retry.num-retries", "abc")


def test_prefix_families():
    props = {"write.metadata.metrics.column.a": "full", "write.metadata.metrics.column.b.c": "none", "x": "1"}
    assert P.METRICS_COLUMN.suffixes(props) == {"a": "full", "b.c": "none"}
    assert P.MAINTAIN_POLICY.suffixes({"icectl.maintain.enabled": "false"}) == {"enabled": "false"}


def test_the_reference_lists_every_property():
    doc = P.properties_markdown()
    for prop in P.TABLE_PROPERTIES.values():
        assert f"| `{prop.name}` | {prop.type_text} | {prop.default_text} | {prop.meaning} |" in doc
    for fam in P.PROPERTY_PREFIXES:
        assert f"`{fam.prefix}{fam.suffix}`" in doc
