"""A package, so test file basenames may repeat."""
