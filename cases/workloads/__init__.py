"""Bundled job workloads (``fairalloc simulate WORKLOAD --case CASE``), installed as
``fairalloc.case_library.workloads``."""
