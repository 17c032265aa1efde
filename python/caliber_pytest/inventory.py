"""Read a corpus's pytest files statically for `caliber inventory`
(docs/formats.md, "Inventory from a corpus tree").

    python3 -m caliber_pytest.inventory CORPUS RESULT.json FILE...

Each FILE (a path relative to CORPUS, as `caliber inventory` lists them) is
parsed with Python's own `ast`; nothing of the corpus is imported or run.
What pytest would collect from it is read off the tree: the tests, their op
marks and what their parametrizations say about dtype. Module-level names
bound to literals are evaluated by walking their expressions here (lists,
tuples, `+`, comprehensions, `pytest.param(..., marks=...)`,
`getattr(pytest.mark, NAME, None)`, names imported from other files of the
corpus); whatever needs the file to run is unknown, and where an unknown
value may carry op marks, a warning names the file and line.

RESULT.json, written when every FILE was read or one was refused:

    {"files": [{"tests": [{"id": "TestX::test_y", "line": 12, "marks": ["add"], "param_marks": ["sub"],
                           "dtype": "none" | "any" | "literal", "dtypes": ["float16"]}],
                "warnings": [{"line": 30, "message": "..."}]}, ...]}
    {"error": {"file": INDEX, "line": N or null, "message": "..."}}

"marks" are set on the def, its classes or the module; "param_marks" only
on some of its parametrized cases (pytest.param(..., marks=...)). "files"
runs parallel to FILE...; "error" names the first file refused (its
index among FILE...) and stops the reading. Exit status 0 when RESULT.json
was written, 2 for a bad command line.
"""

import ast
import io
import json
import os
import sys
import tokenize
import warnings

# torch dtypes by canonical name, and the aliases torch also accepts.
DTYPES = frozenset((
    "bfloat16", "bool", "complex128", "complex32", "complex64", "float16", "float32",
    "float4_e2m1fn_x2", "float64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "int16", "int32", "int64", "int8", "qint32", "qint8",
    "quint2x4", "quint4x2", "quint8", "uint16", "uint32", "uint64", "uint8"))
DTYPE_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "chalf": "complex32",
                 "cfloat": "complex64", "cdouble": "complex128", "short": "int16", "int": "int32",
                 "long": "int64"}

# pytest's own marks: never an operator.
PYTEST_MARKS = frozenset(("parametrize", "skipif", "skip", "xfail", "usefixtures", "filterwarnings",
                          "timeout"))

# Methods that change a list in place: after a call of one at module level,
# the list reads as one unknown, under every name it is bound to.
LIST_MUTATORS = frozenset(("append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"))

# Bounds that keep hostile input from exhausting the stack, memory or time:
# deeper expressions, larger lists and more work than this read as unknown.
MAX_DEPTH = 100
MAX_ITEMS = 100_000
MAX_STEPS = 2_000_000

# Statements whose blocks may run or not, or more than once (match and
# except* where this Python has them), and what a message calls them.
_NONE = type("_NONE", (), {})
CONDITIONAL = {ast.If: "if", ast.For: "for loop", ast.AsyncFor: "for loop", ast.While: "while loop",
               ast.Try: "try", getattr(ast, "TryStar", _NONE): "try", getattr(ast, "Match", _NONE): "match"}
# Patterns of a match that bind a name (`case [x, *rest]`, `case {**rest}`).
MATCH_NAMES = (getattr(ast, "MatchAs", _NONE), getattr(ast, "MatchStar", _NONE))
MATCH_REST = getattr(ast, "MatchMapping", _NONE)


class Refused(Exception):
    """A file pytest could not collect either: line (or None) and message."""

    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


# ---------------------------------------------------------------------------
# Values. Literals are plain Python values (str, int, float, bool, None,
# bytes, tuple, list); the rest are these.

class Unknown:
    """A value that needs the file to run: why says what (where: the file
    that says it, when not the one read), marky whether it may hold op marks."""
    __slots__ = ("why", "marky", "where")

    def __init__(self, why, marky=False, where=None):
        self.why = why
        self.marky = marky
        self.where = where

    def marking(self, marky):
        """The same unknown, marky as well when marky is."""
        return Unknown(self.why, self.marky or marky, self.where)


class Ref:
    """An object from outside the corpus named by its dotted path: a module
    (torch), one of its attributes (torch.float16, torch.nn.functional.gelu)."""
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path


class Mark:
    """pytest.mark.NAME."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class MarkCall:
    """pytest.mark.NAME(...): args a tuple, kwargs a dict, either an Unknown
    when a * or ** argument is not known."""
    __slots__ = ("name", "args", "kwargs")

    def __init__(self, name, args, kwargs):
        self.name = name
        self.args = args
        self.kwargs = kwargs


class Param:
    """pytest.param(*values, marks=...): values a tuple or an Unknown, marks
    a tuple of values or an Unknown."""
    __slots__ = ("values", "marks", "line")

    def __init__(self, values, marks, line):
        self.values = values
        self.marks = marks
        self.line = line


class Function:
    """A def of the corpus (or a lambda): calling it needs running it; marky
    when its code mentions marks."""
    __slots__ = ("marky",)

    def __init__(self, marky):
        self.marky = marky


class Builtin:
    """pytest.mark, pytest.param or the builtin getattr: what attributes and
    calls of them give is read here."""
    __slots__ = ()


MARK, PARAM, GETATTR = Builtin(), Builtin(), Builtin()


def _ref(path):
    """The value of the outside name path, pytest's mark and param resolved."""
    if path == "pytest.mark":
        return MARK
    if path == "pytest.param":
        return PARAM
    return Ref(path)


def _marky(v, depth=0):
    """Whether value v is or holds a mark that may be an op (or an unknown
    that may): pytest's own marks are not."""
    if isinstance(v, Unknown):
        return v.marky
    if isinstance(v, Mark):
        return is_op_mark(v.name)
    if isinstance(v, MarkCall):
        return v.name == "parametrize" and (_marky(v.args, depth + 1) or _marky(v.kwargs, depth + 1))
    if isinstance(v, Param):
        return _marky(v.marks, depth + 1) or _marky(v.values, depth + 1)
    if isinstance(v, Function):
        return v.marky
    if depth >= MAX_DEPTH:
        return False
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, (list, tuple)):
        return any(_marky(x, depth + 1) for x in v)
    return False


def _mark_generator(node):
    """Whether node names pytest's mark generator: `pytest.mark`, `mark`."""
    return (isinstance(node, ast.Attribute) and node.attr == "mark") or \
        (isinstance(node, ast.Name) and node.id == "mark")


def _own_marks_only(node):
    """Whether node is pytest's own marks only (pytest.mark.skipif(...), a
    list of such, None): what a `marks=` holding it sets is never an op."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_own_marks_only(e) for e in node.elts)
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Constant):
        return node.value is None
    return isinstance(node, ast.Attribute) and _mark_generator(node.value) and node.attr in PYTEST_MARKS


def _mentions_marks(node, cache):
    """Whether the expression or statement node may set an op mark: it names
    a mark other than pytest's own (pytest.mark.abs), uses the mark generator
    otherwise (getattr(pytest.mark, name)), or passes `marks=` something that
    is not pytest's own marks. Walked without recursion."""
    key = id(node)
    if key in cache:
        return cache[key]
    found, stack = False, [node]
    while stack and not found:
        n = stack.pop()
        if isinstance(n, ast.keyword) and n.arg == "marks":
            found = not _own_marks_only(n.value)
        elif isinstance(n, ast.Attribute) and _mark_generator(n.value):
            found = n.attr not in PYTEST_MARKS
        elif _mark_generator(n):
            found = True
        else:
            stack.extend(ast.iter_child_nodes(n))
    cache[key] = found
    return found


def _dotted(node):
    """"a.b.c" for a dotted name node, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# ---------------------------------------------------------------------------
# Scopes

class Scope:
    """Names bound in a module, class body or comprehension. parent is the
    scope names fall back to; a class scope is skipped by the scopes nested in
    it, as in Python."""

    def __init__(self, module, parent=None, is_class=False, names=None, lines=None):
        self.module = module
        self.parent = parent
        self.is_class = is_class
        self.names = {} if names is None else names
        self.lines = {} if lines is None else lines     # name: line it was last bound on

    def bind(self, name, value, line):
        """Bind name; at module level, a name some function declares global
        stays unknown, for calling that function may change it."""
        if self.parent is None and not self.is_class and name in self.module.globals:
            value = self.module.unknown(f"`{name}` is declared global by a function at line "
                                        f"{self.module.globals[name]}, which may change it")
        self.names[name] = value
        self.lines[name] = line

    def lookup(self, name):
        """The value of name here: this scope, the ones around it, the module's fallback."""
        s = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return self.module.fallback(name)

    def enclosing(self):
        """The scope a nested class body or comprehension sees."""
        return self.parent if self.is_class else self


# ---------------------------------------------------------------------------
# Marks and dtypes of a def, a class or a module

class Attrs:
    """Op marks in order of appearance: those set on the def, its classes or
    the module (marks), those only some parametrized cases carry through
    pytest.param (param_marks); and what parametrizations say about dtype:
    none (no parameter named dtype), any (values not known), or literal (the
    union of the torch dtypes listed)."""

    def __init__(self):
        self.marks = []
        self.param_marks = []
        self.dtype = "none"
        self.dtypes = set()

    def add_mark(self, name):
        """An op mark on the def, a class or the module, kept once."""
        if name not in self.marks:
            self.marks.append(name)

    def add_param_mark(self, name):
        """An op mark some parametrized cases carry, kept once."""
        if name not in self.param_marks:
            self.param_marks.append(name)

    def add_dtypes(self, kind, names=()):
        """What one parametrization says: not known wins, listed ones add up."""
        if kind == "none":
            return
        if kind == "any" or self.dtype == "any":
            self.dtype = "any"
            self.dtypes = set()
            return
        self.dtype = "literal"
        self.dtypes.update(names)

    def merge(self, other):
        """Add other's marks and dtypes: a test gets those of its classes and module."""
        for m in other.marks:
            self.add_mark(m)
        for m in other.param_marks:
            self.add_param_mark(m)
        self.add_dtypes(other.dtype, other.dtypes)


def is_op_mark(name):
    """An op is a mark named by an ASCII identifier (it becomes a CSV field and
    a -m selector) that is not one of pytest's own."""
    return isinstance(name, str) and name.isascii() and name.isidentifier() and name not in PYTEST_MARKS


def dtype_name(v):
    """The canonical torch dtype value v names (torch.half gives float16), or None."""
    if not isinstance(v, Ref) or not v.path.startswith("torch.") or v.path.count(".") != 1:
        return None
    name = v.path[len("torch."):]
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPES else None


def _argnames(names):
    """(names, tuples) of a parametrize's argnames as pytest reads them: a
    string splits on commas and, holding one name, takes values as they are;
    a list or tuple of strings takes tuples. None when not known."""
    if isinstance(names, str):
        out = [n.strip() for n in names.split(",") if n.strip()]
        return out, len(out) != 1
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return list(names), True
    return None


def _entry_value(entry, pos, count, tuples):
    """Value number pos of one parametrize entry, or None when not known."""
    if isinstance(entry, Param):
        if not isinstance(entry.values, tuple) or len(entry.values) != count:
            return None
        return entry.values[pos]
    if not tuples:
        return entry
    if isinstance(entry, (list, tuple)) and len(entry) == count:
        return entry[pos]
    return None


# ---------------------------------------------------------------------------
# Modules

def _line_of(data, pos):
    """Line number of byte pos: LF, CRLF and a lone CR end a line, as in Python."""
    return data.count(b"\n", 0, pos) + data.count(b"\r", 0, pos) - data.count(b"\r\n", 0, pos) + 1


def decode_source(data):
    """The text of a Python file's bytes: UTF-8 (whatever a coding line says),
    a BOM dropped, no NUL byte, line breaks made "\n" as Python reads them.
    Refused at the line of the first bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
        bad = -1
    except UnicodeDecodeError as e:
        bad = e.start
    if nul >= 0 and (bad < 0 or nul < bad):
        raise Refused(_line_of(data, nul), "a NUL byte (Python source cannot hold one)")
    if bad >= 0:
        raise Refused(_line_of(data, bad), f"not UTF-8 (byte 0x{data[bad]:02x})")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def shorten(text):
    """Code as a message shows it: its first line, blanks at the end dropped,
    at most 60 bytes, "..." where cut."""
    cut = "\n" in text
    text = text.split("\n")[0].rstrip(" \t")
    raw = text.encode("utf-8")
    if len(raw) > 60:
        text = raw[:60].decode("utf-8", "ignore")
        cut = True
    return text + ("..." if cut else "")


def dangling_decorator(text):
    """(line, message, culprit) for the first run of decorators that no def
    or class follows (culprit: the line that follows instead, None at the end
    of the file), or None; read with the tokenizer, so that the message says
    more than Python's "invalid syntax"."""
    lines = text.split("\n")
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)
    pending = None          # (first token, last token) of the first decorator waiting
    logical = []

    def refusal(culprit):
        """The answer for the pending decorators, culprit the line after them."""
        (sl, sc), (el, ec) = pending[0].start, pending[1].end
        code = lines[sl - 1][sc:ec] if sl == el else lines[sl - 1][sc:] + "\n"
        what = f"line {culprit} is not one" if culprit else "the file ends"
        return sl, f"decorator {shorten(code)} is not followed by a def or class ({what})", culprit

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in skip:
                continue
            if tok.type not in (tokenize.NEWLINE, tokenize.ENDMARKER):
                logical.append(tok)
                continue
            if logical:
                first = logical[0]
                if first.type == tokenize.OP and first.string == "@":
                    pending = pending or (first, logical[-1])
                elif first.string in ("def", "class") or (
                        first.string == "async" and len(logical) > 1 and logical[1].string == "def"):
                    pending = None
                elif pending is not None:
                    return refusal(first.start[0])
            logical = []
            if tok.type == tokenize.ENDMARKER and pending is not None:
                return refusal(None)
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _deep_line(text):
    """The first line by which text nests too deeply for Python's parser: the
    shortest prefix of lines whose parse runs out of stack."""
    lines = text.split("\n")
    lo, hi = 1, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            ast.parse("\n".join(lines[:mid]))
            deep = False
        except (RecursionError, MemoryError):
            deep = True
        except (SyntaxError, ValueError):
            deep = False
        if deep:
            hi = mid
        else:
            lo = mid + 1
    return lo


def parse_source(data):
    """(text, tree) of a Python file's bytes; Refused with a line otherwise:
    Python's own message, or, for a decorator no def or class follows, one
    that names it."""
    text = decode_source(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # SyntaxWarning, DeprecationWarning: not ours to report
            return text, ast.parse(text)
    except SyntaxError as e:
        if e.msg == "invalid syntax":
            found = dangling_decorator(text)
            if found and (found[2] is None or found[2] <= (e.lineno or 0)):
                raise Refused(found[0], found[1]) from None
        line = min(max(e.lineno or 1, 1), text.count("\n") + 1)
        raise Refused(line, e.msg) from None
    except (RecursionError, MemoryError):
        raise Refused(_deep_line(text), "nested too deeply for Python's parser") from None


class TestDef:
    """A test pytest would collect: node id, line, own marks, classes."""

    def __init__(self, node_id, line, own, classes):
        self.id = node_id
        self.line = line
        self.own = own
        self.classes = classes      # innermost first

    def attrs(self, module_marks):
        """Its marks and dtypes: its own, then each class's (innermost first), then the module's."""
        a = Attrs()
        a.merge(self.own)
        for c in self.classes:
            a.merge(c.deco)
            a.merge(c.pmark)
        a.merge(module_marks)
        return a


class ClassDef:
    """A class pytest collects (Test*, at module level or in such a class)."""

    def __init__(self, name, deco, outer):
        self.name = name
        self.deco = deco
        self.pmark = Attrs()
        self.outer = outer

    def chain(self):
        """This class and those around it, innermost first."""
        out, c = [], self
        while c is not None:
            out.append(c)
            c = c.outer
        return out


class Module:
    """One file of the corpus read statically: its names as they stand once
    it is imported, the tests pytest would collect, warnings."""

    def __init__(self, corpus, rel):
        self.corpus = corpus
        self.rel = rel
        self.error = None           # Refused: the file cannot be read at all
        self.duplicate = None       # Refused: a test defined twice (refused only as a test file)
        self.loading = False
        self.text = ""
        self.scope = Scope(self)
        self.stars = []             # what `from X import *` statements name
        self.tests = []
        self.seen = {}              # node id: line
        self.globals = {}           # names functions declare global: line of the first such statement
        self.warnings = []
        self.marks = Attrs()        # of its pytestmark
        self.steps = 0
        self.conditional_depth = 0
        self.cache = {}

    # -- reading ------------------------------------------------------------

    def load(self):
        """Read and walk the file once."""
        self.loading = True
        try:
            with open(os.path.join(self.corpus.root, self.rel), "rb") as f:
                data = f.read()
            self.text, tree = parse_source(data)
            for node in ast.walk(tree):
                if isinstance(node, ast.Global):
                    for name in node.names:
                        self.globals.setdefault(name, node.lineno)
            self.block(tree.body, self.scope, None)
            self.apply_pytestmark(self.scope, self.marks)
        except Refused as e:
            self.error = e
        except OSError as e:
            self.error = Refused(None, f"cannot read: {e.strerror}")
        finally:
            self.loading = False

    def unknown(self, why, marky=False):
        """An Unknown this file says."""
        return Unknown(why, marky, self.rel)

    def reason(self, u):
        """Why u is unknown, naming the file that says so when it is another."""
        return u.why if u.where in (None, self.rel) else f"{u.why} in {u.where}"

    def warn(self, line, message):
        """A warning at line of this file, once."""
        w = {"line": line, "message": message}
        if w not in self.warnings:
            self.warnings.append(w)

    def own(self, name):
        """A module-level name, also one a `from X import *` brings; None when unbound."""
        if name in self.scope.names:
            return self.scope.names[name]
        for src in self.stars:
            v = self.corpus.attribute(src, name)
            if not isinstance(v, Unknown):
                return v
        if self.stars:
            return self.unknown(f"`{name}` may come from a `from ... import *`")
        return None

    def fallback(self, name):
        """A name the code uses and the module does not bind: pytest's and
        torch's used without an import, the builtin getattr, else unknown."""
        v = self.own(name)
        if v is not None:
            return v
        if name in ("pytest", "torch"):
            return Ref(name)
        if name == "getattr":
            return GETATTR
        return self.unknown(f"`{name}` is not bound in the module")

    # -- statements ---------------------------------------------------------

    def block(self, stmts, scope, cls):
        """Statements in order (see statement)."""
        for st in stmts:
            self.statement(st, scope, cls)

    def statement(self, st, scope, cls):
        """One statement: bindings into scope; defs and classes pytest collects
        (cls: the collected class whose body this is, None at module level)."""
        line = st.lineno
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if st.name.startswith("test"):
                self.add_test(st, scope, cls)
            scope.bind(st.name, Function(_mentions_marks(st, self.cache)), line)
        elif isinstance(st, ast.ClassDef):
            self.class_def(st, scope, cls)
        elif isinstance(st, ast.Assign):
            self.mutations(st.value, scope)
            value = self.value(st.value, scope)
            for target in st.targets:
                self.bind(target, value, scope, line)
        elif isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.mutations(st.value, scope)
                self.bind(st.target, self.value(st.value, scope), scope, line)
        elif isinstance(st, ast.AugAssign):
            self.mutations(st.value, scope)
            self.augmented(st, scope)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            self.imports(st, scope)
        elif isinstance(st, ast.Delete):
            for target in st.targets:
                if isinstance(target, ast.Name):
                    scope.bind(target.id, self.unknown(f"`{target.id}` is deleted at line {line}"), line)
                else:
                    self.changed(target.value, scope, f"has an item deleted at line {line}")
        elif isinstance(st, (ast.With, ast.AsyncWith)):
            for item in st.items:
                self.mutations(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, self.unknown(f"bound by the with at line {line}"), scope, line)
            self.block(st.body, scope, cls)
        elif type(st) in CONDITIONAL:
            self.conditional(st, scope, cls)
        else:
            for child in ast.iter_child_nodes(st):
                if isinstance(child, ast.expr):
                    self.mutations(child, scope)

    def conditional(self, st, scope, cls):
        """A statement whose blocks may run or not, or run again: each block
        is read in order, starting with every name the statement binds unknown;
        after it those names stay unknown. Tests defined in it are collected."""
        kind = CONDITIONAL[type(st)]
        bound = _bound_names(st)
        forget = {n: self.unknown(f"`{n}` is bound inside the {kind} at line {st.lineno}") for n in bound}
        lines = {n: st.lineno for n in bound}
        marky = set()
        for part in ("test", "iter", "subject"):
            node = getattr(st, part, None)
            if node is not None:
                self.mutations(node, scope)
        blocks = [st.body, getattr(st, "orelse", [])]
        blocks += [h.body for h in getattr(st, "handlers", [])]
        blocks += [c.body for c in getattr(st, "cases", [])]
        self.conditional_depth += 1
        for body in blocks:
            if body:
                inner = Scope(self, scope.parent, scope.is_class, {**scope.names, **forget},
                              {**scope.lines, **lines})
                self.block(body, inner, cls)
                marky.update(n for n in bound if _marky(inner.names.get(n)))
        self.conditional_depth -= 1
        forget.update({n: forget[n].marking(True) for n in marky})
        scope.names.update(forget)
        scope.lines.update(lines)
        if getattr(st, "finalbody", None):
            self.block(st.finalbody, scope, cls)

    def bind(self, target, value, scope, line):
        """Assign value to target: a name, or names unpacked from a known
        sequence; assigning to an item or attribute changes what holds it."""
        if isinstance(target, ast.Name):
            scope.bind(target.id, value, line)
        elif isinstance(target, (ast.Tuple, ast.List)):
            names = {}
            self.unpack(target, value, names, line)
            for n, v in names.items():
                scope.bind(n, v, line)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value, scope, line)
        else:
            self.changed(target.value, scope, f"has an item or attribute assigned at line {line}")

    def augmented(self, st, scope):
        """x += y: a list is extended in place (every name bound to it sees
        that), anything else rebound to the result."""
        if not isinstance(st.target, ast.Name):
            self.changed(st.target.value, scope, f"has an item or attribute assigned at line {st.lineno}")
            return
        node = ast.copy_location(ast.BinOp(left=ast.Name(id=st.target.id, ctx=ast.Load()), op=st.op,
                                           right=st.value), st)
        old = scope.lookup(st.target.id)
        new = self.value(node, scope)
        if isinstance(old, list) and isinstance(st.op, ast.Add):
            if isinstance(new, list) and not self.conditional_depth:
                old[:] = new
            else:
                self.poison(old, f"`{st.target.id}` is extended at line {st.lineno}")
            scope.bind(st.target.id, old, st.lineno)
        else:
            scope.bind(st.target.id, new, st.lineno)

    def unpack(self, target, value, names, line):
        """Bind the names of a tuple or list target (as in `for a, b in ...`)
        into names, each unknown when value is not a sequence of that length."""
        elts = target.elts
        stars = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        if isinstance(value, (list, tuple)) and not stars and len(value) == len(elts):
            parts = list(value)
        elif isinstance(value, (list, tuple)) and len(stars) == 1 and len(value) >= len(elts) - 1:
            s, tail = stars[0], len(elts) - stars[0] - 1
            parts = list(value[:s]) + [list(value[s:len(value) - tail])] + list(value[len(value) - tail:])
        else:
            base = value if isinstance(value, Unknown) else self.unknown(f"a value that does not unpack (line {line})")
            parts = [base.marking(_marky(value))] * len(elts)
        for e, v in zip(elts, parts):
            e = e.value if isinstance(e, ast.Starred) else e
            if isinstance(e, ast.Name):
                names[e.id] = v
            elif isinstance(e, (ast.Tuple, ast.List)):
                self.unpack(e, v, names, line)

    def poison(self, lst, why):
        """A list changed in ways not followed: from now on it holds one
        unknown, wherever it is bound (aliases, other modules, tuples)."""
        lst[:] = [self.unknown(why, _marky(lst))]

    def changed(self, node, scope, what):
        """The list node evaluates to (x in x[0] = ...) is changed in place."""
        v = self.value(node, scope)
        if isinstance(v, list):
            self.poison(v, f"`{_dotted(node) or 'a list'}` {what}")

    def mutations(self, expr, scope):
        """Calls in expr of a method that changes a list (x.append(...)):
        that list is changed. Nested defs and lambdas are not looked into."""
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in LIST_MUTATORS:
                self.changed(node.func.value, scope, f"is changed by .{node.func.attr}() at line {node.lineno}")
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                scope.bind(node.target.id, self.unknown(f"`{node.target.id}` is bound by := at line {node.lineno}"),
                           node.lineno)
            stack.extend(ast.iter_child_nodes(node))

    def imports(self, st, scope):
        """Names bound by import statements: modules and names of the corpus
        read from their files, anything else a Ref to the outside object."""
        if isinstance(st, ast.Import):
            for alias in st.names:
                if alias.asname:
                    scope.bind(alias.asname, self.corpus.import_module(self, alias.name, 0), st.lineno)
                else:
                    top = alias.name.split(".")[0]
                    scope.bind(top, self.corpus.import_module(self, top, 0), st.lineno)
            return
        module = self.corpus.import_module(self, st.module or "", st.level)
        for alias in st.names:
            if alias.name == "*":
                self.stars.append(module)
            else:
                scope.bind(alias.asname or alias.name, self.corpus.attribute(module, alias.name), st.lineno)

    # -- tests and classes --------------------------------------------------

    def add_test(self, st, scope, cls):
        """A def named test*: its decorators read now, with the names bound so far."""
        own = Attrs()
        for d in st.decorator_list:
            self.apply_decorator(d, scope, own)
        chain = cls.chain() if cls else []
        node_id = "::".join([c.name for c in reversed(chain)] + [st.name])
        if node_id in self.seen:
            if self.duplicate is None:
                self.duplicate = Refused(st.lineno, f"test '{node_id}' is defined twice, at lines "
                                                    f"{self.seen[node_id]} and {st.lineno}")
            return
        self.seen[node_id] = st.lineno
        self.tests.append(TestDef(node_id, st.lineno, own, chain))

    def class_def(self, st, scope, cls):
        """A class: pytest collects Test* classes at module level or in such
        a class; their body is read in a scope of its own."""
        scope.bind(st.name, self.unknown(f"`{st.name}` is a class"), st.lineno)
        if not st.name.startswith("Test"):
            return
        deco = Attrs()
        for d in st.decorator_list:
            self.apply_decorator(d, scope, deco)
        c = ClassDef(st.name, deco, cls)
        body = Scope(self, scope.enclosing(), is_class=True)
        self.block(st.body, body, c)
        self.apply_pytestmark(body, c.pmark)

    # -- marks --------------------------------------------------------------

    def apply_decorator(self, node, scope, attrs):
        """What a decorator of a test or class adds to attrs; a warning when
        it may set marks that cannot be read (an unknown, a helper of the file
        whose code mentions marks)."""
        v = self.value(node, scope)
        if isinstance(v, (Mark, MarkCall)):
            self.apply_mark(v, attrs, node.lineno)
        elif _marky(v) or _mentions_marks(node, self.cache):
            text = shorten("@" + (ast.get_source_segment(self.text, node) or "?"))
            self.warn(node.lineno, f"decorator {text} cannot be read without running the file "
                                   f"({self.why_not_read(v)}); the marks it may set are left out")

    def why_not_read(self, v):
        """Why value v, where a mark is expected, says no more about marks."""
        if isinstance(v, Unknown):
            return self.reason(v)
        if isinstance(v, Ref):
            return f"`{v.path}` comes from outside the corpus"
        if isinstance(v, Function):
            return "a function of the corpus, which only running can apply"
        return "a value that is not a mark"

    def apply_pytestmark(self, scope, attrs):
        """The pytestmark of a module or class body as it stands at its end: a
        mark, or a list or tuple of them."""
        v = scope.names.get("pytestmark")
        line = scope.lines.get("pytestmark")
        if v is None:
            return
        if isinstance(v, Unknown):
            if v.marky:
                self.warn(line, f"pytestmark cannot be read without running the file ({self.reason(v)}); "
                                f"the marks it may set are left out")
            return
        for m in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(m, (Mark, MarkCall)):
                self.apply_mark(m, attrs, line)
            elif _marky(m) or isinstance(m, Ref):
                self.warn(line, f"an entry of pytestmark cannot be read without running the file "
                                f"({self.why_not_read(m)}); left out")

    def apply_mark(self, v, attrs, line):
        """What one mark adds: an op mark, or the dtypes and marks of a parametrize."""
        if isinstance(v, Mark):
            if is_op_mark(v.name):
                attrs.add_mark(v.name)
        elif isinstance(v, MarkCall) and v.name == "parametrize":
            self.parametrize(v, attrs, line)

    def parametrize(self, call, attrs, line):
        """The marks of its pytest.param entries, and its dtypes."""
        args = call.args if isinstance(call.args, tuple) else None
        kwargs = call.kwargs if isinstance(call.kwargs, dict) else None
        if args is None or kwargs is None:
            bad = call.args if args is None else call.kwargs
            if bad.marky:
                self.warn(line, f"the arguments of @pytest.mark.parametrize cannot be read without running "
                                f"the file ({self.reason(bad)}); the marks they may set are left out")
            attrs.add_dtypes("any")
            return
        names = args[0] if len(args) > 0 else kwargs.get("argnames")
        values = args[1] if len(args) > 1 else kwargs.get("argvalues")
        if isinstance(values, Unknown):
            if values.marky:
                self.warn(line, f"the values of @pytest.mark.parametrize cannot be read without running "
                                f"the file ({self.reason(values)}); the marks they may set are left out")
        elif isinstance(values, (list, tuple)):
            for entry in values:
                self.entry_marks(entry, attrs, line)
        attrs.add_dtypes(*self.dtypes_of(names, values))

    def entry_marks(self, entry, attrs, line):
        """The op marks of one parametrize entry: those of a pytest.param;
        a warning for an entry or marks= that may hold marks not read."""
        if isinstance(entry, Unknown):
            if entry.marky:
                self.warn(line, f"a value of @pytest.mark.parametrize cannot be read without running the "
                                f"file ({self.reason(entry)}); the marks it may set are left out")
            return
        if not isinstance(entry, Param):
            return
        marks = entry.marks
        if isinstance(marks, Unknown):
            if marks.marky:
                self.warn(entry.line, f"marks= of pytest.param cannot be read without running the file "
                                      f"({self.reason(marks)}); left out")
            return
        for m in marks:
            if isinstance(m, Mark):
                if is_op_mark(m.name):
                    attrs.add_param_mark(m.name)
            elif not isinstance(m, MarkCall) and m is not None:
                self.warn(entry.line, f"a mark of pytest.param cannot be read without running the file "
                                      f"({self.why_not_read(m)}); left out")

    def dtypes_of(self, names, values):
        """(kind, dtypes) of one parametrize: none when no argument is named
        dtype, literal when every value of it is a torch dtype, else any."""
        parsed = _argnames(names)
        if parsed is None:
            return "any", ()
        names, tuples = parsed
        if "dtype" not in names:
            return "none", ()
        if not isinstance(values, (list, tuple)):
            return "any", ()
        pos, out = names.index("dtype"), set()
        for entry in values:
            d = dtype_name(_entry_value(entry, pos, len(names), tuples))
            if d is None:
                return "any", ()
            out.add(d)
        return "literal", out

    # -- expressions --------------------------------------------------------

    def value(self, node, scope, depth=0):
        """The value of expression node, evaluated statically: literals, names,
        attributes, + of sequences and strings, comprehensions, subscripts,
        pytest.param, pytest.mark.NAME(...), getattr; else an Unknown, which
        may hold op marks when the expression mentions them."""
        v = self.evaluate(node, scope, depth)
        if isinstance(v, Unknown) and not v.marky and _mentions_marks(node, self.cache):
            return v.marking(True)
        return v

    def evaluate(self, node, scope, depth):
        """value() before the mention of marks is looked at; within the bounds of depth and steps."""
        self.steps += 1
        if depth > MAX_DEPTH:
            return self.unknown(f"nested more than {MAX_DEPTH} deep (line {node.lineno})")
        if self.steps > MAX_STEPS:
            return self.unknown("too much to evaluate statically")
        d = depth + 1
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return scope.lookup(node.id)
        if isinstance(node, ast.Attribute):
            return self.corpus.attribute(self.value(node.value, scope, d), node.attr)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = self.elements(node.elts, scope, d)
            if isinstance(items, Unknown):
                return items
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.BinOp):
            return self.binop(node, scope, d)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            items = self.comprehension(node, scope, d)
            return items if isinstance(node, ast.ListComp) or isinstance(items, Unknown) else tuple(items)
        if isinstance(node, ast.Call):
            return self.call(node, scope, d)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, scope, d)
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, scope, d)
        if isinstance(node, ast.Lambda):
            return Function(_mentions_marks(node.body, self.cache))
        if isinstance(node, ast.IfExp):
            test = self.truth(self.value(node.test, scope, d))
            if test is not None:
                return self.value(node.body if test else node.orelse, scope, d)
            return self.unknown(f"a conditional expression at line {node.lineno}")
        what = {ast.Dict: "a dict", ast.Set: "a set", ast.DictComp: "a dict comprehension",
                ast.SetComp: "a set comprehension", ast.Compare: "a comparison", ast.BoolOp: "and/or",
                ast.UnaryOp: "a unary operator", ast.Await: "await", ast.Yield: "yield",
                ast.NamedExpr: ":=", ast.Starred: "a starred expression"}.get(type(node), "an expression")
        return self.unknown(f"{what} at line {node.lineno}")

    def elements(self, elts, scope, depth):
        """The items of a list or tuple display, *known sequences spliced in."""
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.value(e.value, scope, depth)
                if not isinstance(v, (list, tuple, str)):
                    return v if isinstance(v, Unknown) else self.unknown(f"a starred value at line {e.lineno}")
                out.extend(v)
            else:
                out.append(self.value(e, scope, depth))
            if len(out) > MAX_ITEMS:
                return self.unknown(f"more than {MAX_ITEMS} items (line {e.lineno})", _marky(out))
        return out

    def binop(self, node, scope, depth):
        """left + right of two lists, tuples or strings; any other operator is unknown."""
        left = self.value(node.left, scope, depth)
        right = self.value(node.right, scope, depth)
        for v in (left, right):
            if isinstance(v, Unknown):
                return v.marking(_marky(left) or _marky(right))
        if isinstance(node.op, ast.Add):
            for kind in (list, tuple, str):
                if isinstance(left, kind) and isinstance(right, kind):
                    if len(left) + len(right) > MAX_ITEMS:
                        return self.unknown(f"more than {MAX_ITEMS} items (line {node.lineno})",
                                       _marky(left) or _marky(right))
                    return left + right
        return self.unknown(f"the operator {type(node.op).__name__} at line {node.lineno}",
                       _marky(left) or _marky(right))

    def truth(self, v):
        """Whether a known value is true; None when that needs running."""
        if v is None or isinstance(v, (bool, int, float, str, bytes, list, tuple)):
            return bool(v)
        return None

    def condition(self, node, scope, depth):
        """Truth of a comprehension's condition: literal comparisons (==, !=,
        in, not in), not, and, or; None when not known."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            t = self.condition(node.operand, scope, depth + 1)
            return None if t is None else not t
        if isinstance(node, ast.BoolOp):
            known = [self.condition(v, scope, depth + 1) for v in node.values]
            if isinstance(node.op, ast.And):
                return False if False in known else (None if None in known else True)
            return True if True in known else (None if None in known else False)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self.value(node.left, scope, depth)
            right = self.value(node.comparators[0], scope, depth)
            plain = (str, int, float, bool, bytes, list, tuple, type(None))
            if not isinstance(left, plain) or not isinstance(right, plain) or _opaque(left) or _opaque(right):
                return None
            op = node.ops[0]
            try:
                if isinstance(op, ast.Eq):
                    return left == right
                if isinstance(op, ast.NotEq):
                    return left != right
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (list, tuple, str)):
                    return (left in right) == isinstance(op, ast.In)
            except TypeError:
                return None
            return None
        return self.truth(self.value(node, scope, depth))

    def comprehension(self, node, scope, depth):
        """[elt for targets in a known sequence if known conditions ...]: the
        first sequence is read in the enclosing scope, the rest and elt in the
        comprehension's own, as in Python."""
        out = []
        marky = _mentions_marks(node, self.cache)

        def run(k, inner):
            """Run generators k... with names inner; an Unknown when that stops."""
            if k == len(node.generators):
                out.append(self.value(node.elt, inner, depth))
                if len(out) > MAX_ITEMS:
                    return self.unknown(f"more than {MAX_ITEMS} items (line {node.lineno})", marky)
                return None
            g = node.generators[k]
            seq = self.value(g.iter, scope if k == 0 else inner, depth)
            if not isinstance(seq, (list, tuple, str)):
                base = seq if isinstance(seq, Unknown) else self.unknown(f"an iterable at line {g.iter.lineno}")
                return base.marking(marky or _marky(seq))
            for item in seq:
                names = dict(inner.names)
                if isinstance(g.target, ast.Name):
                    names[g.target.id] = item
                elif isinstance(g.target, (ast.Tuple, ast.List)):
                    self.unpack(g.target, item, names, g.iter.lineno)
                else:
                    return self.unknown(f"a comprehension target at line {g.target.lineno}", marky)
                sub = Scope(self, inner.parent, False, names)
                keep = True
                for cond in g.ifs:
                    t = self.condition(cond, sub, depth)
                    if t is None:
                        return self.unknown(f"the condition at line {cond.lineno} needs running", marky)
                    if not t:
                        keep = False
                        break
                stop = run(k + 1, sub) if keep else None
                if stop is None and self.steps > MAX_STEPS:
                    stop = self.unknown("too much to evaluate statically", marky)
                if stop is not None:
                    return stop
            return None

        stop = run(0, Scope(self, scope.enclosing(), False, {}))
        return out if stop is None else stop

    def call(self, node, scope, depth):
        """pytest.param(...), pytest.mark.NAME(...), getattr(obj, name[, default]); other calls are unknown."""
        func = self.value(node.func, scope, depth)
        if func is PARAM:
            return self.param(node, scope, depth)
        args = self.elements(node.args, scope, depth)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs = self.unknown(f"a ** argument at line {node.lineno}", _mentions_marks(kw.value, self.cache))
                break
            kwargs[kw.arg] = self.value(kw.value, scope, depth)
        if isinstance(func, Mark):
            return MarkCall(func.name, args if isinstance(args, Unknown) else tuple(args), kwargs)
        if func is GETATTR and isinstance(args, list) and 2 <= len(args) <= 3 and not kwargs:
            obj, name = args[0], args[1]
            if isinstance(name, str):
                v = self.corpus.attribute(obj, name)
                if isinstance(v, Unknown) and len(args) == 3 and not isinstance(obj, Unknown):
                    return args[2]
                return v
            base = name if isinstance(name, Unknown) else \
                self.unknown(f"getattr with a name that is not a string at line {node.lineno}")
            return base.marking(obj is MARK or _marky(name))
        marky = _mentions_marks(node, self.cache) or _marky(func) or _marky(args) or \
            (isinstance(kwargs, dict) and _marky(list(kwargs.values())))
        what = _dotted(node.func)
        return self.unknown(f"a call to {what + '()' if what else 'a function'} at line {node.lineno}", marky)

    def param(self, node, scope, depth):
        """pytest.param(*values, marks=..., id=...)."""
        values = self.elements(node.args, scope, depth)
        if not isinstance(values, Unknown):
            values = tuple(values)
        marks = ()
        for kw in node.keywords:
            if kw.arg is None:
                marks = self.unknown(f"a ** argument at line {node.lineno}", True)
            elif kw.arg == "marks":
                m = self.value(kw.value, scope, depth)
                if isinstance(m, Unknown):
                    marks = m
                elif m is None:
                    marks = ()
                else:
                    marks = tuple(m) if isinstance(m, (list, tuple)) else (m,)
        return Param(values, marks, node.lineno)

    def subscript(self, node, scope, depth):
        """seq[i] and seq[a:b:c] of a known list, tuple or string, with int indices."""
        v = self.value(node.value, scope, depth)
        if isinstance(node.slice, ast.Slice):
            parts = [None if p is None else self.value(p, scope, depth)
                     for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            index = slice(*parts) if all(p is None or type(p) is int for p in parts) else None
        else:
            index = self.value(node.slice, scope, depth)
            index = index if type(index) is int else None
        if isinstance(v, (list, tuple, str)) and index is not None:
            try:
                return v[index]
            except (IndexError, ValueError):
                pass
        base = v if isinstance(v, Unknown) else self.unknown(f"a subscript at line {node.lineno}")
        return base.marking(_marky(v))

    def fstring(self, node, scope, depth):
        """An f-string whose fields are known strings or numbers, without
        conversion or format spec."""
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(part.value)
                continue
            v = self.value(part.value, scope, depth) if isinstance(part, ast.FormattedValue) else None
            if part.conversion != -1 or part.format_spec is not None or type(v) not in (str, int):
                base = v if isinstance(v, Unknown) else self.unknown(f"an f-string at line {node.lineno}")
                return base.marking(_marky(v))
            out.append(str(v))
        return "".join(out)


def _opaque(v, depth=0):
    """Whether a literal holds something other than literals (so == cannot be decided)."""
    if isinstance(v, (list, tuple)):
        return depth >= MAX_DEPTH or any(_opaque(x, depth + 1) for x in v)
    return not (v is None or isinstance(v, (str, int, float, bool, bytes)))


def _bound_names(st):
    """Names a compound statement binds anywhere in its blocks (nested defs
    and classes by their name only), in order of appearance. Lists it
    changes in place are made unknown where that happens (Module.changed)."""
    out = []
    stack = [st]
    while stack:
        node = stack.pop()
        names = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not st:
            names.append(node.name)
            children = list(node.decorator_list)
        elif isinstance(node, ast.Lambda):
            continue
        else:
            children = list(ast.iter_child_nodes(node))
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.append(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names += [a.asname or a.name.split(".")[0] for a in node.names if a.name != "*"]
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.append(node.name)
            elif isinstance(node, MATCH_NAMES) and node.name:
                names.append(node.name)
            elif isinstance(node, MATCH_REST) and node.rest:
                names.append(node.rest)
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                children = [g.iter for g in node.generators]
        out += [n for n in names if n and n not in out]
        stack.extend(reversed(children))
    return out


# ---------------------------------------------------------------------------
# The corpus

class Corpus:
    """The files of the corpus tree read so far, by path relative to it."""

    def __init__(self, root):
        self.root = root
        self.real = os.path.realpath(root)
        self.modules = {}

    def module(self, rel):
        """The module of file rel, read on first use."""
        m = self.modules.get(rel)
        if m is None:
            m = self.modules[rel] = Module(self, rel)
            m.load()
        return m

    def find(self, base, dotted):
        """rel of the file of module `dotted` under folder base (relative to
        the corpus, "" for itself): base/a/b.py or base/a/b/__init__.py, a
        regular file inside the corpus; None when there is none."""
        parts = [p for p in base.split("/") if p] + (dotted.split(".") if dotted else [])
        for rel in (["/".join(parts) + ".py"] if parts else []) + ["/".join(parts + ["__init__.py"])]:
            path = os.path.join(self.root, rel)
            real = os.path.realpath(path)
            if os.path.isfile(path) and real.startswith(self.real + os.sep):
                return rel
        return None

    def search_path(self, importer):
        """Folders an absolute import is looked up in, as pytest's default
        import mode sets sys.path: the first folder above the importer's
        package (the folder holding no __init__.py), then the corpus itself."""
        d = os.path.dirname(importer.rel)
        while d and os.path.isfile(os.path.join(self.root, d, "__init__.py")):
            d = os.path.dirname(d)
        return [d, ""] if d else [""]

    def import_module(self, importer, dotted, level):
        """The value an import binds for module dotted (level dots before it)."""
        if level:
            base = os.path.dirname(importer.rel)
            for _ in range(level - 1):
                if not base:
                    return Unknown(f"`{'.' * level}{dotted}` reaches above the corpus", where=importer.rel)
                base = os.path.dirname(base)
            rel = self.find(base, dotted)
            if rel is None:
                return Unknown(f"`{'.' * level}{dotted}` is not a file of the corpus", where=importer.rel)
            return self.module_value(rel)
        if dotted.split(".")[0] not in ("pytest", "torch"):
            for base in self.search_path(importer):
                rel = self.find(base, dotted)
                if rel is not None:
                    return self.module_value(rel)
        return _ref(dotted)

    def module_value(self, rel):
        """The module of file rel as an import binds it: unknown while it is being read or when it cannot be."""
        m = self.modules.get(rel)
        if m is not None and m.loading:
            return Unknown(f"`{rel}` is imported while it is being read (an import cycle)")
        m = self.module(rel)
        if m.error is not None:
            where = f"line {m.error.line}: " if m.error.line else ""
            return Unknown(f"`{rel}` cannot be read ({where}{m.error.message})")
        return m

    def attribute(self, obj, name):
        """obj.name: a module's binding or submodule, an outside object's
        attribute, pytest.mark.NAME."""
        if obj is MARK:
            return Mark(name)
        if isinstance(obj, Mark):
            return Unknown(f"`{name}` is not an attribute of a mark")
        if isinstance(obj, Ref):
            return _ref(f"{obj.path}.{name}")
        if isinstance(obj, Module):
            v = obj.own(name)
            if v is not None:
                return v
            if os.path.basename(obj.rel) == "__init__.py":
                rel = self.find(os.path.dirname(obj.rel), name)
                if rel is not None:
                    return self.module_value(rel)
            return Unknown(f"`{name}` is not bound in `{obj.rel}`")
        if isinstance(obj, Unknown):
            return obj
        return Unknown(f"the attribute `{name}` of a value that is not a module")


def read_file(corpus, rel):
    """The result entry of one test file; Refused when it cannot be read."""
    m = corpus.module(rel)
    if m.error is not None:
        raise m.error
    if m.duplicate is not None:
        raise m.duplicate
    tests = []
    for t in m.tests:
        a = t.attrs(m.marks)
        tests.append({"id": t.id, "line": t.line, "marks": a.marks,
                      "param_marks": [p for p in a.param_marks if p not in a.marks], "dtype": a.dtype,
                      "dtypes": sorted(a.dtypes)})
    return {"tests": tests, "warnings": m.warnings}


def read_corpus(root, files):
    """The RESULT.json object for files (relative to root)."""
    corpus = Corpus(root)
    out = []
    for i, rel in enumerate(files):
        try:
            out.append(read_file(corpus, rel))
        except Refused as e:
            return {"error": {"file": i, "line": e.line, "message": e.message}}
    return {"files": out}


def main(argv):
    """python3 -m caliber_pytest.inventory CORPUS RESULT.json FILE..."""
    if len(argv) < 2:
        print("usage: python3 -m caliber_pytest.inventory CORPUS RESULT.json FILE...", file=sys.stderr)
        return 2
    root, result, files = argv[0], argv[1], argv[2:]
    with open(result, "w", encoding="ascii") as f:
        json.dump(read_corpus(root, files), f, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
