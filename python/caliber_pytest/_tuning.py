"""Whether the autotuner is benchmarking right now.

ir_meta needs it to count tuning launches apart, compat to leave the
autotuner's own do_bench calls alone. Both share one wrapper of
triton.runtime.autotuner.Autotuner._bench, installed while either holds it."""

import functools

# Process-wide by design: one wrapper of the process's Autotuner class, shared
# by the plugins of whichever request holds it (reference counted), and the
# depth of the _bench calls running now. Nothing here belongs to a request.
_users = 0
_original = None
_depth = 0


def active():
    """True while some Autotuner._bench call is running."""
    return _depth > 0


def acquire():
    """Install the wrapper (first user) or count one more user."""
    global _users, _original
    from triton.runtime.autotuner import Autotuner

    if _users == 0:
        _original = Autotuner._bench

        @functools.wraps(_original)
        def _bench(self, *args, **kwargs):
            global _depth
            _depth += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                _depth -= 1

        Autotuner._bench = _bench
    _users += 1


def release():
    """Drop one user; the last one puts Triton's own _bench back."""
    global _users, _original
    if _users == 0:
        return
    _users -= 1
    if _users == 0:
        from triton.runtime.autotuner import Autotuner

        Autotuner._bench = _original
        _original = None
