"""Quantities as schedulers write them (fairalloc/io/quantities.py) and amounts shown in units.

Kubernetes' own table of examples (k8s.io/apimachinery/pkg/api/resource/quantity_test.go,
``TestQuantityParse``) gives the expected values below; hypothesis checks that every amount
survives ``format_kube`` and ``parse_kube`` exactly, and YARN strings written in each syntax.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairalloc.core.units import readable
from fairalloc.io.quantities import Percent, QuantityError, format_kube, parse_kube, parse_yarn_resources

# (text, value) pairs of Kubernetes' TestQuantityParse (decimal, binary, exponent forms)
KUBERNETES_EXAMPLES = [
    ("0", "0"),
    ("0n", "0"),
    ("0Ki", "0"),
    ("1", "1"),
    ("1.", "1"),
    (".5", "0.5"),
    ("1m", "0.001"),
    ("100m", "0.1"),
    ("1000m", "1"),
    ("1500m", "1.5"),
    ("1n", "0.000000001"),
    ("1u", "0.000001"),
    ("1k", "1000"),
    ("1M", "1000000"),
    ("1G", "1000000000"),
    ("1T", "1000000000000"),
    ("1P", "1000000000000000"),
    ("1E", "1000000000000000000"),
    ("1Ki", "1024"),
    ("8Ki", "8192"),
    ("7Mi", "7340032"),
    ("6Gi", "6442450944"),
    ("5Ti", "5497558138880"),
    ("4Pi", "4503599627370496"),
    ("3Ei", "3458764513820540928"),
    ("1e3", "1000"),
    ("1E6", "1000000"),
    ("1e-3", "0.001"),
    ("1.5Gi", "1610612736"),
    ("+5", "5"),
    ("4G", "4000000000"),
    ("4Gi", "4294967296"),
]


@pytest.mark.parametrize(("text", "value"), KUBERNETES_EXAMPLES)
def test_kubernetes_examples(text, value):
    assert parse_kube(text, "q") == Decimal(value)


@pytest.mark.parametrize(
    "text", ["", "1.5x", "Gi", "1 Gi", "1_000", "NaN", "Infinity", "1Gi5", "0x10", "--1", "1ki", "1e"]
)
def test_not_quantities_are_one_line_errors(text):
    with pytest.raises(QuantityError) as err:
        parse_kube(text, "spec.nominalQuota")
    assert str(err.value).startswith("spec.nominalQuota: ") and "\n" not in str(err.value)


def test_negative_only_when_allowed_and_yaml_numbers_as_written():
    with pytest.raises(QuantityError, match="negative"):
        parse_kube("-1", "q")
    assert parse_kube("-1", "q", negative=True) == -1
    assert parse_kube(0.1, "q") == Decimal("0.1") and parse_kube(3, "q") == 3
    with pytest.raises(QuantityError):
        parse_kube(True, "q")


nanos = st.integers(0, 10**24).map(lambda k: Decimal(k).scaleb(-9))


@given(amount=nanos, binary=st.booleans())
def test_every_amount_round_trips_through_format_and_parse(amount, binary):
    text = format_kube(amount, binary=binary)
    assert parse_kube(text, "q") == amount
    assert len(text) <= len(format(amount.normalize(), "f")) + 2  # the shortest form, not a longer one


@given(k=st.integers(1, 10**6), power=st.integers(0, 6))
def test_binary_amounts_take_binary_suffixes(k, power):
    amount = Decimal(k * 1024**power)
    text = format_kube(amount, binary=True)
    assert parse_kube(text, "q") == amount
    assert power == 0 or text.endswith("i") or k % 1000 == 0 or amount % 1024 == 0


# -- YARN --------------------------------------------------------------------------------------


def test_the_three_yarn_syntaxes():
    assert parse_yarn_resources("1024 mb, 2 vcores", "x") == {"memory-mb": 1024, "vcores": 2}
    assert parse_yarn_resources("2 vcores, 1024 mb", "x") == {"memory-mb": 1024, "vcores": 2}
    assert parse_yarn_resources("memory-mb=4096, vcores=1, yarn.io/gpu=2", "x") == {
        "memory-mb": 4096,
        "vcores": 1,
        "yarn.io/gpu": 2,
    }
    assert parse_yarn_resources("memory-mb=4Gi,vcores=2", "x")["memory-mb"] == 4096
    assert parse_yarn_resources("50.0%", "x") == {"memory-mb": Percent(Decimal(50)), "vcores": Percent(Decimal(50))}
    assert parse_yarn_resources("50% memory, 25% cpu", "x") == {
        "memory-mb": Percent(Decimal(50)),
        "vcores": Percent(Decimal(25)),
    }
    assert parse_yarn_resources("memory-mb=50%, vcores=25%", "x")["vcores"] == Percent(Decimal(25))
    assert str(Percent(Decimal("50.0"))) == "50%"


@pytest.mark.parametrize("text", ["1024 mb", "mb", "memory-mb=lots", "vcores=1,vcores=2", "memory-mb=4Xi", ""])
def test_bad_yarn_strings_name_the_field(text):
    with pytest.raises(QuantityError) as err:
        parse_yarn_resources(text, "queue root.a: minResources")
    assert str(err.value).startswith("queue root.a: minResources: ")


@given(memory=st.integers(0, 10**7), vcores=st.integers(0, 10**4), syntax=st.sampled_from(["old", "new"]))
def test_yarn_strings_round_trip(memory, vcores, syntax):
    text = f"{memory} mb, {vcores} vcores" if syntax == "old" else f"vcores={vcores}, memory-mb={memory}"
    assert parse_yarn_resources(text, "x") == {"memory-mb": memory, "vcores": vcores}


# -- readable units ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "unit", "shown"),
    [
        (68719476736, "bytes", "64 GiB"),
        (78643200000, "bytes", "73.24 GiB"),
        (2500, "millicores", "2.5 cores"),
        (1, "cores", "1 core"),
        (4096, "MiB", "4 GiB"),
        (4096, "MB", "4.096 GB"),
        (300, "count", "300"),
        (0.5, None, "0.5"),
        (0, "bytes", "0 bytes"),
    ],
)
def test_readable(amount, unit, shown):
    assert readable(amount, unit) == shown
