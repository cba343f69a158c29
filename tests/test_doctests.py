"""Run the examples in every docstring of fairalloc and fairalloc.models (imported by name once,
so the registry sees each built-in mechanism a single time)."""

import doctest
import importlib
import pkgutil

import pytest

import fairalloc
import fairalloc.models

MODULES = sorted(
    {
        name
        for pkg in (fairalloc, fairalloc.models)
        for _, name, _ in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
    }
    | {"fairalloc"}
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_examples_exist():
    attempted = sum(doctest.testmod(importlib.import_module(n)).attempted for n in MODULES)
    assert attempted >= 10
