"""A stand-in for the compiler under test in the runner's CPU tests.

It stands for stock Triton 3.6, whose make_ttgir runs RemoveLayoutConversions
three times. tests/data/campaign-builds/patched/ is a copy of it without the
2nd and 3rd runs (the demo change applied to the source); the test worker
tests/workers/builds.py compiles what the copy on its PYTHONPATH says."""

# The RemoveLayoutConversions runs of make_ttgir this build keeps.
REMOVE_LAYOUT_CONVERSIONS_RUNS = (1, 2, 3)
