"""Correctness tests of the CPU test corpus (a package, so test file basenames may repeat)."""
