"""Attaching a function to one of Triton's runtime hooks and taking it off again.

Triton 3.6 holds each hook as a HookChain (add/remove); older releases, and
forks built from them, hold a single callable or None. For those the previous
value is chained by hand and put back on detach."""


def attach(runtime, name, fn):
    """Add fn to runtime.<name>; returns the token detach needs."""
    current = getattr(runtime, name)
    if hasattr(current, "add") and hasattr(current, "remove"):
        current.add(fn)
        return ("chain", current)
    previous = current

    def chained(*args, **kwargs):
        if previous is not None:
            previous(*args, **kwargs)
        fn(*args, **kwargs)

    setattr(runtime, name, chained)
    return ("single", previous)


def detach(runtime, name, fn, token):
    """Undo attach: remove fn from the chain, or put the previous callable back."""
    kind, value = token
    if kind == "chain":
        value.remove(fn)
    else:
        setattr(runtime, name, value)
