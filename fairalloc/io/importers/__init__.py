"""Importers of real scheduler configurations: one module per system, each with ``SYSTEM``,
``detect(documents)`` and ``convert(documents, notes)``; :mod:`.common` holds what they share.

Belongs here: turning a scheduler's own files (Kubernetes objects, XML, REST answers) into a queue
case.  Imports: ``fairalloc.core``, ``fairalloc.io``; never the analysis or the command line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from fairalloc.core.errors import CaseError, unknown
from fairalloc.io.cases import parse_case
from fairalloc.io.importers.common import Document, ImportFailed, Notes, default_name, finish, read_documents

#: the systems fairalloc imports, in the order detection prefers them on a tie (the scheduler-specific
#: objects before plain Kubernetes ones)
SYSTEMS = ("kueue", "volcano", "yunikorn", "yarn", "mesos", "kubernetes")


def importer(system: str) -> ModuleType:
    """The importer module of ``system`` (one of :data:`SYSTEMS`)."""
    if system not in SYSTEMS:
        raise ImportFailed(f"from: {unknown('system', system, SYSTEMS)}")
    return importlib.import_module(f"fairalloc.io.importers.{system}")


def detect(documents: list[Document]) -> str:
    """The system whose objects ``documents`` hold: the importer that recognises the most of them,
    scheduler-specific objects first (pods and nodes alone are plain Kubernetes)."""
    scores = {s: importer(s).detect(documents) for s in SYSTEMS}
    best = max(SYSTEMS, key=lambda s: (scores[s] > 0 and s != "kubernetes", scores[s]))
    if scores[best] == 0:
        files = ", ".join(dict.fromkeys(d.file for d in documents))
        raise ImportFailed(
            f"{files}: no Volcano, Kueue, YARN, YuniKorn, Mesos or Kubernetes objects recognised; "
            f"name the system with --from ({', '.join(SYSTEMS)})"
        )
    return best


def import_files(paths, *, system: str | None = None, capacity=None, name: str | None = None, live=None):
    """The case mapping of ``paths`` (a system's own files, ``-`` standard input) and of what
    ``live`` (a :class:`~fairalloc.io.importers.live.Live`: URLs, a Kubernetes cluster) reads, and
    the warnings found on the way."""
    case, _loaded, warnings = import_case(paths, system=system, capacity=capacity, name=name, live=live)
    return case, warnings


def import_case(paths, *, system: str | None = None, capacity=None, name: str | None = None, live=None, documents=None):
    """:func:`import_files`, and the case as the case loader reads it: the loaded case, which the
    import builds anyway to check that what it writes loads (:func:`~fairalloc.io.cases.parse_case`
    of an operator's 10,000 queues takes several times the parse of their XML), for a caller that
    goes on to use it rather than load the mapping a second time.  ``documents``: those of ``paths``
    when the caller has read them already (standard input can be read once)."""
    notes = Notes()
    documents = read_documents(paths) if documents is None else list(documents)
    if live is not None:
        from fairalloc.io.importers import live as reader  # urllib3 and kubernetes only when asked

        documents += reader.documents(live, system, notes)
    sources = [*paths, *(live.names if live is not None else [])]
    if not documents:
        raise ImportFailed(f"{', '.join(str(p) for p in sources)}: no documents to import")
    system = system or detect(documents)
    draft = importer(system).convert(documents, notes)
    stem = default_name(paths) if paths or live is None else live.names[0]
    case = finish(draft, name=name or stem, capacity=capacity, notes=notes)
    try:  # whatever fairalloc writes loads: checked before anyone writes it
        loaded = parse_case(case, case["name"])
    except CaseError as exc:
        raise ImportFailed(_not_loading(draft, str(exc))) from None
    return case, loaded, notes.warnings


def _not_loading(draft, message: str) -> str:
    """The loader's refusal of an imported case, led by where its first named queue or group was
    read (file: object) and naming where the others were: the user fixes the source, not the case."""
    named = sorted(
        (message.find(f"{table}.{q}."), q)
        for q in draft.read_at
        for table in ("users", "groups")
        if f"{table}.{q}." in message
    )
    if not named:
        return f"{', '.join(draft.files)}: the imported case does not load: {message}"
    first = draft.read_at[named[0][1]]
    others = "; ".join(f"{q} read at {draft.read_at[q]}" for _, q in named[1:])
    return f"{first}: the imported case does not load: {message}" + (f" ({others})" if others else "")


__all__ = ["SYSTEMS", "importer", "detect", "import_files", "import_case", "read_documents", "Notes", "ImportFailed"]
