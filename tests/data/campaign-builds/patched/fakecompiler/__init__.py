"""A stand-in for the compiler under test in the runner's CPU tests: the
patched copy of tests/data/campaign-cpu/compiler/ (stock), whose make_ttgir
no longer runs RemoveLayoutConversions a 2nd and a 3rd time, as
scripts/device/two_builds.sh patches a copy of the installed Triton."""

# The RemoveLayoutConversions runs of make_ttgir this build keeps.
REMOVE_LAYOUT_CONVERSIONS_RUNS = (1,)
