"""caliber's in-process side: pytest plugins and the worker session.

Each plugin is loaded with ``-p caliber_pytest.<name>`` in the order
``caliber plan --backend NAME`` prints. The modules whose names start with an
underscore hold the logic that needs neither torch nor triton, so it can be
tested on a machine without a GPU (tests/python).
"""
