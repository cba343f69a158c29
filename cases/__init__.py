"""The bundled case library: YAML cases, installed as ``fairalloc.case_library``."""
