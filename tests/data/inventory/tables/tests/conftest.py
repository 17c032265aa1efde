QUICK_MODE = False


def pytest_configure(config):
    global QUICK_MODE
    QUICK_MODE = config.getoption("--quick", default=False)
