"""Classical explicit methods, kept as references beside the structure-preserving ones."""
