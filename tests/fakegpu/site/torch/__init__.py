"""torch for the fake GPU: tensors that know their shape, dtype and device
but hold no values. Operations give tensors of the shape torch would give;
a kernel launch (the fake triton) marks the tensors it was given as written,
so an output left unwritten (the corpus fills outputs with NaN first) still
fails its comparison. Everything runs on the clock of torch.cuda
(_fake_cuda.FakeCuda)."""

import builtins
import math
import operator

from ._fake_cuda import FakeCuda

cuda = FakeCuda()
__version__ = "0.0+fakegpu"


class dtype:
    def __init__(self, name, is_floating_point, itemsize):
        self.name = name
        self.is_floating_point = is_floating_point
        self.itemsize = itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


float16 = half = dtype("float16", True, 2)
bfloat16 = dtype("bfloat16", True, 2)
float32 = float = dtype("float32", True, 4)
float64 = double = dtype("float64", True, 8)
int8 = dtype("int8", False, 1)
uint8 = dtype("uint8", False, 1)
int16 = short = dtype("int16", False, 2)
int32 = int = dtype("int32", False, 4)
int64 = long = dtype("int64", False, 8)
bool = dtype("bool", False, 1)
_default_float = float32


class device:
    def __init__(self, kind="cuda", index=0):
        self.type = kind
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        return str(getattr(other, "type", other)).split(":")[0] == self.type

    __hash__ = object.__hash__


class Size(tuple):
    def numel(self):
        return math.prod(self)


def _shape_of(args):
    """A shape given as (2, 3), [2, 3] or 2, 3."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _broadcast(*shapes):
    """numpy's broadcasting of shapes."""
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"shapes {shapes} cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _promote(a, b):
    """The result dtype of a binary op: the wider float, else the first."""
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if da is None or db is None:
        return da or db
    if da.is_floating_point != db.is_floating_point:
        return da if da.is_floating_point else db
    return da if da.itemsize >= db.itemsize else db


class Tensor:
    """A tensor's shape, dtype, device and, for autograd, the leaves it came from."""

    def __init__(self, shape, dtype=None, device="cuda", leaves=(), written=True):
        self.shape = Size(builtins.int(d) for d in shape)
        self.dtype = dtype or _default_float
        self.device = globals()["device"](str(device).split(":")[0])
        self.grad = None
        self.requires_grad = False
        self._leaves = set(leaves)
        self._written = written

    # -- what a tensor is
    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.dtype.itemsize

    def stride(self, dim=None):
        strides, acc = [], 1
        for d in reversed(self.shape):
            strides.insert(0, acc)
            acc *= d
        return tuple(strides) if dim is None else strides[dim]

    def is_contiguous(self):
        return True

    def data_ptr(self):
        return id(self)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"FakeTensor(shape={tuple(self.shape)}, dtype={self.dtype})"

    def __bool__(self):
        return True

    def item(self):
        return 0.0

    def tolist(self):
        return [0] * (self.shape[0] if self.shape else 1)

    # -- new tensors from this one
    def _like(self, shape=None, dtype=None):
        return Tensor(self.shape if shape is None else shape, dtype or self.dtype, self.device.type, self._leaves,
                      self._written)

    def to(self, *args, **kwargs):
        target = kwargs.get("dtype")
        for a in args:
            if isinstance(a, globals()["dtype"]):
                target = a
        return self._like(dtype=target)

    def float(self):
        return self._like(dtype=float32)

    def half(self):
        return self._like(dtype=float16)

    def bfloat16(self):
        return self._like(dtype=bfloat16)

    def double(self):
        return self._like(dtype=float64)

    def long(self):
        return self._like(dtype=int64)

    def int(self):
        return self._like(dtype=int32)

    def contiguous(self):
        return self

    def clone(self):
        return self._like()

    def detach(self):
        return Tensor(self.shape, self.dtype, self.device.type, (), self._written)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        return self

    def requires_grad_(self, flag=True):
        self.requires_grad = flag
        self._leaves = {self} if flag else set()
        return self

    def backward(self, gradient=None):
        for leaf in self._leaves:
            leaf.grad = Tensor(leaf.shape, leaf.dtype, leaf.device.type)

    def view(self, *shape):
        shape = list(_shape_of(shape))
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.numel() // known
        if math.prod(shape) != self.numel():
            raise RuntimeError(f"shape {tuple(shape)} is invalid for input of size {self.numel()}")
        return self._like(shape)

    reshape = view

    def flatten(self):
        return self._like((self.numel(), ))

    def t(self):
        return self.transpose(0, 1)

    def transpose(self, a, b):
        shape = list(self.shape)
        shape[a], shape[b] = shape[b], shape[a]
        return self._like(shape)

    def permute(self, *dims):
        return self._like([self.shape[d] for d in _shape_of(dims)])

    def unsqueeze(self, dim):
        shape = list(self.shape)
        shape.insert(dim if dim >= 0 else len(shape) + dim + 1, 1)
        return self._like(shape)

    def squeeze(self, dim=None):
        return self._like([d for i, d in enumerate(self.shape) if d != 1 or (dim is not None and i != dim)])

    def expand(self, *shape):
        return self._like(_shape_of(shape))

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index, )
        shape, axis = [], 0
        for ix in index:
            if ix is None:
                shape.append(1)
            elif ix is Ellipsis:
                rest = len(self.shape) - axis - (len(index) - index.index(Ellipsis) - 1)
                shape.extend(self.shape[axis:axis + rest])
                axis += rest
            elif isinstance(ix, slice):
                shape.append(len(range(*ix.indices(self.shape[axis]))))
                axis += 1
            elif isinstance(ix, Tensor):
                shape.extend(ix.shape)
                axis += 1
            else:
                axis += 1
        shape.extend(self.shape[axis:])
        return self._like(shape)

    def __setitem__(self, index, value):
        pass

    # -- in place
    def _fill(self, *args, **kwargs):
        self._written = True
        return self

    fill_ = zero_ = copy_ = normal_ = uniform_ = random_ = bernoulli_ = _fill

    def index_add_(self, dim, index, source, **kwargs):
        return self._fill()

    def scatter_add_(self, dim, index, src):
        return self._fill()

    def masked_fill(self, mask, value):
        return self._like()

    # -- reductions: (values, indices) where torch gives two
    def _reduce(self, dim=None, keepdim=False, dtype=None):
        if dim is None:
            return self._like((), dtype)
        dims = {d % len(self.shape) for d in (dim if isinstance(dim, (tuple, list)) else (dim, ))}
        shape = [1 if i in dims else d for i, d in enumerate(self.shape) if keepdim or i not in dims]
        return self._like(shape, dtype)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return self._reduce(dim, keepdim, dtype)

    def mean(self, dim=None, keepdim=False, dtype=None):
        return self._reduce(dim, keepdim, dtype)

    def var(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return self._reduce(dim, keepdim)

    std = var

    def prod(self, dim=None, keepdim=False):
        return self._reduce(dim, keepdim)

    def logsumexp(self, dim, keepdim=False):
        return self._reduce(dim, keepdim)

    def amax(self, dim=None, keepdim=False):
        return self._reduce(dim, keepdim)

    amin = amax

    def max(self, dim=None, keepdim=False):
        if dim is None or isinstance(dim, Tensor):
            return self._reduce() if dim is None else _binary(self, dim)
        return _Pair(self._reduce(dim, keepdim), self._reduce(dim, keepdim, int64))

    min = max

    def argmax(self, dim=None, keepdim=False):
        return self._reduce(dim, keepdim, int64)

    argmin = argmax

    def any(self, dim=None):
        return self._reduce(dim, dtype=bool)

    all = any

    def topk(self, k, dim=-1, largest=True, sorted=True):
        shape = list(self.shape)
        shape[dim] = k
        return _Pair(self._like(shape), self._like(shape, int64))

    def sort(self, dim=-1, descending=False):
        return _Pair(self._like(), self._like(dtype=int64))

    def cumsum(self, dim, dtype=None):
        return self._like(dtype=dtype)

    def softmax(self, dim, dtype=None):
        return self._like(dtype=dtype)

    log_softmax = softmax

    def gather(self, dim, index):
        return self._like(index.shape)

    def index_select(self, dim, index):
        shape = list(self.shape)
        shape[dim] = index.numel()
        return self._like(shape)

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __getattr__(self, name):
        # Any other elementwise method (exp, abs, sigmoid, ...): same shape.
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda *args, **kwargs: _binary(self, *args[:1]) if args and isinstance(args[0], Tensor) else self._like()


class _Pair(tuple):
    """What torch returns as (values, indices)."""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(operator.itemgetter(0))
    indices = property(operator.itemgetter(1))


def _binary(a, b, dtype=None):
    """An elementwise result of a and b (tensors or numbers)."""
    ta = a if isinstance(a, Tensor) else None
    tb = b if isinstance(b, Tensor) else None
    first = ta or tb
    shape = _broadcast(*(t.shape for t in (ta, tb) if t is not None))
    leaves = set().union(*(t._leaves for t in (ta, tb) if t is not None))
    written = builtins.all(t._written for t in (ta, tb) if t is not None)
    return Tensor(shape, dtype or _promote(ta, tb) or first.dtype, first.device.type, leaves, written)


def _operator(name, dtype=None, reflected=False):
    def op(self, other):
        return _binary(other, self, dtype) if reflected else _binary(self, other, dtype)
    op.__name__ = name
    return op


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"):
    setattr(Tensor, f"__{_name}__", _operator(_name))
    setattr(Tensor, f"__r{_name}__", _operator(_name, reflected=True))
    setattr(Tensor, f"__i{_name}__", _operator(_name))
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(Tensor, f"__{_name}__", _operator(_name, bool))
Tensor.__neg__ = Tensor.__pos__ = Tensor.__abs__ = Tensor.__invert__ = lambda self: self._like()
Tensor.__hash__ = object.__hash__


def matmul(a, b):
    """The product of a and b, of the shape a @ b has (batch dimensions broadcast)."""
    if a.shape[-1] != b.shape[-2 if b.dim() > 1 else -1]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape} and {b.shape})")
    if b.dim() == 1:
        shape = a.shape[:-1]
    elif a.dim() == 1:
        shape = b.shape[:-2] + b.shape[-1:]
    else:
        shape = _broadcast(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    return Tensor(shape, _promote(a, b), a.device.type, a._leaves | b._leaves, a._written and b._written)


mm = bmm = matmul


def _new(shape, dtype=None, device="cuda", written=True):
    return Tensor(_shape_of(shape) if isinstance(shape, (tuple, list)) else (shape, ), dtype, device,
                  written=written)


def empty(*shape, dtype=None, device="cuda", **kwargs):
    return _new(_shape_of(shape), dtype, device)


zeros = ones = randn = rand = empty


def full(shape, fill_value, dtype=None, device="cuda", **kwargs):
    # A full of NaN is the corpus' poison: it is not "written" until a kernel writes it.
    nan = isinstance(fill_value, builtins.float) and math.isnan(fill_value)
    return _new(shape, dtype, device, written=not nan)


def empty_like(t, dtype=None, **kwargs):
    return t._like(dtype=dtype)


zeros_like = ones_like = randn_like = rand_like = empty_like


def full_like(t, fill_value, dtype=None, **kwargs):
    return t._like(dtype=dtype)


def randint(low, high=None, size=None, dtype=None, device="cuda", **kwargs):
    return _new(size, dtype or int64, device)


def randperm(n, dtype=None, device="cuda", **kwargs):
    return _new((n, ), dtype or int64, device)


def arange(*args, dtype=None, device="cuda", **kwargs):
    return _new((len(range(*(builtins.int(a) for a in args))), ), dtype or int64, device)


def tensor(data, dtype=None, device="cuda", **kwargs):
    return _new((len(data), ) if isinstance(data, (list, tuple)) else (), dtype, device)


def manual_seed(seed):
    return None


def equal(a, b):
    return tuple(a.shape) == tuple(b.shape)


def allclose(a, b, *args, **kwargs):
    return tuple(a.shape) == tuple(b.shape)


def isnan(t):
    return t._like(dtype=bool)


def where(cond, a, b):
    return _binary(_binary(cond, a), b)


def maximum(a, b):
    return _binary(a, b)


minimum = maximum


def _functional(name):
    """torch.NAME(t, *args): the method of the same name."""
    def fn(t, *args, **kwargs):
        return getattr(t, name)(*args, **kwargs)
    fn.__name__ = name
    return fn


for _name in ("softmax", "log_softmax", "cumsum", "topk", "gather", "index_select", "sum", "mean", "var", "max",
              "min", "argmax", "argmin", "amax", "amin", "sort", "exp", "log", "sqrt", "rsqrt", "abs", "sigmoid",
              "tanh", "erf", "sin", "cos", "logsumexp", "t", "transpose", "permute", "flatten", "reshape",
              "clone", "any", "all", "prod", "std"):
    globals()[_name] = _functional(_name)


class _Autograd:
    """torch.autograd as FlagGems' backward benchmarks use it: grad() runs the
    backward kernel of each output on the stream its forward ran on (set by
    whatever made it, e.g. flag_gems.kernel_with_grad), as torch's engine does."""

    @staticmethod
    def grad(outputs, inputs, grad_outputs=None, retain_graph=None, **kwargs):
        for out in outputs:
            backward = getattr(out, "_backward", None)
            if backward is not None:
                cuda.run(backward[1], stream=backward[0])
        return tuple(Tensor(t.shape, t.dtype, t.device.type) for t in inputs)


autograd = _Autograd()


def __getattr__(name):
    raise AttributeError(f"the fake torch has no {name}")


from . import nn, profiler, testing  # noqa: E402  (after Tensor and cuda, which they use)
