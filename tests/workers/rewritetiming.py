"""Test worker: see cellplay.py."""
import sys

from cellplay import main

sys.exit(main("rewritetiming"))
