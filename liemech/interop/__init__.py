"""Conversions between liemech objects and other libraries' (one optional module per library)."""
