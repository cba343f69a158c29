"""The YAML reader of fairalloc.io.cases at commit 67d95780b050f820062e6e4721ec000a5f9a1f0b, kept as the
oracle for the fast one (tests/test_fast_reading.py): PyYAML's Python composer over libyaml's parser,
checking depth and size while composing, then aliases' expansions and duplicate keys over the nodes.
The functions are verbatim; only the imports are gathered here."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from fairalloc.core import limits
from fairalloc.core.errors import CaseError, excerpt, field_path, one_line


class _Refused(yaml.MarkedYAMLError):
    """A document fairalloc will not read (too deep, too many nodes, a number too long)."""


_CParser = getattr(getattr(yaml, "_yaml", None), "CParser", None)


# a base chosen at run time (libyaml's parser when PyYAML was built with it) is beyond a static checker
class _LibyamlLoader(Composer, _CParser or object, SafeConstructor, Resolver):  # type: ignore[misc]
    """libyaml's parser (C, twice as fast on a large case) under PyYAML's own composer: the composer
    stays Python so that :class:`CaseLoader` checks depth and size while the document is built
    (libyaml's composer recurses in C, where a deep document would overflow the stack)."""

    def __init__(self, stream):
        _CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)


class CaseLoader(_LibyamlLoader if _CParser is not None else yaml.SafeLoader):  # type: ignore[misc]  # as above
    """PyYAML's safe loader (no tag builds a Python object), reading numbers as YAML 1.2 does
    (``1e-9`` and ``1E+3`` are floats, not text), refusing integers of more than
    :data:`~fairalloc.core.limits.MAX_EXACT_DIGITS` digits and documents nested deeper than
    :data:`~fairalloc.core.limits.MAX_YAML_DEPTH` or of more than :data:`~fairalloc.core.limits.MAX_YAML_NODES`
    nodes while they are composed (before any recursion or object can blow up).  Case, workload and
    trace files are all read with it (:func:`read_yaml_file`).
    """

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = self._nodes = 0
        #: aliases composed: without any, the counts above are the expanded ones already
        self.aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
        self._depth += 1
        self._nodes += 1
        try:
            # both classes named: libyaml's check_event compares classes exactly, not by isinstance
            if self._depth > limits.MAX_YAML_DEPTH and self.check_event(
                yaml.SequenceStartEvent, yaml.MappingStartEvent
            ):
                raise _Refused(
                    problem=f"nested deeper than {limits.MAX_YAML_DEPTH} levels "
                    f"(fairalloc reads at most {limits.MAX_YAML_DEPTH})",
                    problem_mark=self.peek_event().start_mark,
                )
            if self._nodes > limits.MAX_YAML_NODES:
                raise _Refused(
                    problem=f"more than {limits.MAX_YAML_NODES:,} YAML nodes "
                    f"(fairalloc reads at most {limits.MAX_YAML_NODES:,} per file)",
                    problem_mark=self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):
        digits = len(node.value.replace("_", "").lstrip("+-"))
        if digits > limits.MAX_EXACT_DIGITS:  # Python refuses int() of 4300+ digits; far less is useful
            raise _Refused(
                problem=f"a number of {digits:,} digits (fairalloc reads at most {limits.MAX_EXACT_DIGITS})",
                problem_mark=node.start_mark,
            )
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):
        """A float as written: one whose digits are not all zero but that float64 reads as 0
        (``1e-400``), or a finite one it reads as infinite (``1e400``), is refused here, where the
        line is known; afterwards it would be a silent 0 or an infinity."""
        value = super().construct_yaml_float(node)
        written = node.value.lower()
        mantissa = re.split("e", written)[0]
        vanished = value == 0 and re.search("[1-9]", mantissa)
        if vanished or (math.isinf(value) and "inf" not in written):
            raise _Refused(
                problem=f"the number {node.value[: limits.MAX_EXCERPT]} is beyond what a float holds "
                f"(it would read as {value})",
                problem_mark=node.start_mark,
            )
        return value


CaseLoader.add_constructor("tag:yaml.org,2002:int", CaseLoader.construct_yaml_int)
CaseLoader.add_constructor("tag:yaml.org,2002:float", CaseLoader.construct_yaml_float)
# YAML 1.2 floats: PyYAML (YAML 1.1) reads 1e-9 and 1.5e3 as text; the 1.1 forms stay as they are
CaseLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return node.value
    return []


def _line(node) -> str:
    return f"line {node.start_mark.line + 1}: " if node.start_mark is not None else ""


def _refuse_expansions(root, where: str) -> None:
    """Count the nodes and levels of the document with its aliases expanded, without expanding
    them: one pass over the composed graph, memoized per node (so a "billion laughs" document of a
    few hundred bytes is refused in microseconds), iterative (no recursion however deep)."""
    size: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, levels) once expanded
    entered: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            entered.discard(key)
            sizes = [size[id(c)] for c in _children(node)]
            nodes = 1 + sum(n for n, _ in sizes)
            levels = (not isinstance(node, yaml.ScalarNode)) + max((d for _, d in sizes), default=0)
            if nodes > limits.MAX_YAML_NODES:
                raise CaseError(
                    f"{where}: {_line(node)}expands to more than {limits.MAX_YAML_NODES:,} YAML "
                    f"nodes through its aliases (fairalloc reads at most "
                    f"{limits.MAX_YAML_NODES:,} per file)"
                )
            if levels > limits.MAX_YAML_DEPTH:
                raise CaseError(
                    f"{where}: {_line(node)}nested deeper than {limits.MAX_YAML_DEPTH} levels "
                    f"once its aliases are expanded (fairalloc reads at most {limits.MAX_YAML_DEPTH})"
                )
            size[key] = (nodes, levels)
            continue
        if key in size:
            continue
        if key in entered:
            raise CaseError(
                f"{where}: {_line(node)}an alias refers to a node that contains it "
                f"(a recursive structure; fairalloc files are plain data)"
            )
        entered.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)


def _key(loader, key_node):
    """What a key names: its text, or for a number the number's text (``0x1`` and ``1`` are both '1')."""
    if not isinstance(key_node, yaml.ScalarNode):
        return "?"
    if key_node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        value = loader.construct_object(key_node)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return key_node.value


def _refuse_duplicate_keys(root, where: str, loader) -> None:
    """PyYAML keeps the last of two equal keys silently; a case with two users 'A' is an error."""
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, tuple[str | int, ...]]] = [(root, ())]  # iterative: no recursion however deep
    while stack:
        node, path = stack.pop()
        if id(node) in seen_nodes:  # aliases may share (or nest) nodes
            continue
        seen_nodes.add(id(node))
        below: list[tuple[yaml.Node, tuple[str | int, ...]]] = []
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key_node, value_node in node.value:
                key = _key(loader, key_node)
                line = key_node.start_mark.line + 1
                if key in lines:
                    raise CaseError(
                        f"{field_path(path + (key,))}: duplicate key (lines {lines[key]} and {line} of {where})"
                    )
                lines[key] = line
                below.append((value_node, path + (key,)))
        elif isinstance(node, yaml.SequenceNode):
            below = [(item, path + (k,)) for k, item in enumerate(node.value)]
        stack.extend(reversed(below))  # document order


def _construct(loader, node, where: str) -> Any:
    if loader.aliases:
        _refuse_expansions(node, where)
    _refuse_duplicate_keys(node, where, loader)
    return loader.construct_document(node)


def _read_yaml(text: str, where: str) -> Any:
    """Parse with :class:`CaseLoader` (PyYAML's *safe* loader), refusing duplicate keys, documents
    too deep or too large once their aliases are expanded, and recursive aliases; every problem is
    one :class:`CaseError` naming ``where`` (and the line)."""
    return _read_yaml_documents(text, where, single=True)


def read_yaml_documents(text: str, where: str) -> list[Any]:
    """Every document of a multi-document YAML text (``---`` between them; empty ones left out),
    read as safely as a case file (:func:`_read_yaml`)."""
    return [d for d in _read_yaml_documents(text, where, single=False) if d is not None]


def _read_yaml_documents(text: str, where: str, single: bool) -> Any:
    loader = None
    try:
        loader = CaseLoader(text)
        if single:
            node = loader.get_single_node()
            return None if node is None else _construct(loader, node, where)
        documents = []
        while loader.check_node():
            documents.append(_construct(loader, loader.get_node(), where))
        return documents
    except _Refused as exc:
        mark = exc.problem_mark  # always set where fairalloc raises it
        line = f"line {mark.line + 1}: " if mark else ""
        raise CaseError(f"{where}: {line}{exc.problem}") from None
    except yaml.reader.ReaderError as exc:  # a control character (NUL, ...) in the text
        row = text.count("\n", 0, exc.position) + 1
        column = exc.position - text.rfind("\n", 0, exc.position)
        raise CaseError(
            f"{where}: not valid YAML: character #x{exc.character:04x} is not allowed "
            f"(a binary file?) at line {row}, column {column}"
        ) from None
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark
        line = f"line {mark.line + 1}: " if mark else ""
        tag = re.search(r"for the tag '([^']*)'", exc.problem or "")
        if tag:
            raise CaseError(
                f"{where}: {line}tag {excerpt(tag.group(1))} is refused; fairalloc files are plain "
                f"data (tags that build Python objects are refused)"
            ) from None
        raise CaseError(f"{where}: {line}{one_line(exc.problem, 200)}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CaseError(f"{where}: not valid YAML: {one_line(problem, 200)}{line}") from None
    except RecursionError:  # not expected (depth is bounded): still one line
        raise CaseError(f"{where}: nested too deeply for fairalloc to read") from None
    finally:
        if loader is not None:
            loader.dispose()
