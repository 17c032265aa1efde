"""triton.language of the fake GPU. Kernel bodies never run on the fake GPU,
so this only has to make a corpus importable: tl.constexpr (parameters
annotated with it are the kernel's compile-time constants) and any other
name, as a placeholder."""


class constexpr:
    def __init__(self, value=None):
        self.value = value


class _Placeholder:
    """tl.float32, tl.math.erf, ...: nothing a kernel body could use for real."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, name):
        return _Placeholder(f"{self.name}.{name}")

    def __call__(self, *args, **kwargs):
        return _Placeholder(f"{self.name}()")

    def __repr__(self):
        return f"tl.{self.name}"


math = _Placeholder("math")


def __getattr__(name):
    return _Placeholder(name)
