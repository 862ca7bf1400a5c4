"""Stubs for geomstats 2.8 (numpy backend, matrix point type): only the names liemech uses."""
