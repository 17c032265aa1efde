"""The pytest11 entry point of the installed package (pyproject.toml).

pytest loads this module in every session of an environment where
caliber_pytest is installed, so it does nothing but say, in pytest's header,
which caliber_pytest this is and how its plugins are loaded: each with
``-p caliber_pytest.<name>``, in the order ``caliber plan --backend NAME``
prints. Loading the plugins themselves here would put them into every pytest
session, where they refuse to work without the environment caliber's worker
sets (CALIBER_*), so they are never loaded from here."""

import caliber_pytest


def pytest_report_header(config):
    """One header line: the version and where the plugins come from."""
    return (f"caliber_pytest {caliber_pytest.__version__}: caliber's plugins load with -p caliber_pytest.<name>, "
            f"in the order `caliber plan --backend NAME` prints")
