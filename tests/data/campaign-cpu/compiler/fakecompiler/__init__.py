"""A stand-in for the compiler under test in the runner's CPU tests."""
