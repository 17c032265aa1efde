"""caliber's in-process side: pytest plugins and the worker session.

Each plugin is loaded with ``-p caliber_pytest.<name>`` in the order
``caliber plan --backend NAME`` prints. The modules whose names start with an
underscore hold the logic that needs neither torch nor triton, so it can be
tested on a machine without a GPU (tests/python).
"""

# caliber's version (the Makefile's VERSION; tests/cli/t1900-install.sh checks
# that they agree, and pyproject.toml carries the same).
__version__ = "0.1.0"
