"""Input and output of files: case files (schema, safe YAML, writing cases back) and, next, the
importers of real scheduler configurations.

Belongs here: anything that turns a file into an :class:`~fairalloc.core.instance.Instance` or
back.  Imports: ``fairalloc.core`` and ``fairalloc.models`` (to resolve mechanism names).
"""
