"""The parts of :mod:`omcm_core.config`, by role: reading files, structuring sections, a project's rules."""
