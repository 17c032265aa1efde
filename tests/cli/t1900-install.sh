#!/bin/sh
# caliber as a tool people install: `make install PREFIX= DESTDIR=` puts the
# binary in bin/ and its tree in share/caliber, and the installed binary,
# started from another folder, finds that tree from its own location (also
# when staged under DESTDIR and moved), or from CALIBER_HOME; the offline
# demo runs from it. python/ is a real package: its version is caliber's,
# and `pip install ./python` in a virtual environment gives pytest the
# pytest11 entry point (skipped where python3 cannot make a virtual
# environment: Debian's python3-venv, which scripts/deps.sh --ci installs).
. "$(dirname "$0")/lib.sh"

# The build flavour of the binary under test, so that make installs it and
# builds nothing else.
case $CALIBER in
*/build/sanitize/caliber) FLAVOUR=SANITIZE=1 ;;
*) FLAVOUR= ;;
esac
VERSION=$(sed -n 's/^VERSION := //p' "$CALIBER_ROOT/Makefile")
export FLAVOUR VERSION

# install_to MAKE-ARGS...: make install (or what the arguments ask) of the
# binary under test.
setup='
install_to() {
	make -s -C "$CALIBER_ROOT" --no-print-directory $FLAVOUR install "$@" >make.out 2>&1 || { cat make.out; return 1; }
}'
export setup

test_expect_success 'make install PREFIX=...: the binary, its tree, the docs; then caliber demo from another folder runs the offline demo' '
	eval "$setup" && install_to PREFIX="$PWD/p" &&
	test -x p/bin/caliber && cmp "$CALIBER" p/bin/caliber &&
	for f in backends/cuda.json python/caliber_pytest/session.py python/caliber_pytest/entry.py ops/inventory_main.csv \
		examples/demo-compiler examples/cpu/run.sh campaigns/demo-h200/manifest.in.json campaigns/demo-h200/runs/all/SHA256SUMS; do
		test -e "p/share/caliber/$f" || { echo "not installed: share/caliber/$f"; exit 1; }
	done &&
	test -f p/share/doc/caliber/README.md && test -f p/share/doc/caliber/docs/formats.md &&
	test -z "$(find p/share/caliber -name __pycache__)" &&
	mkdir elsewhere && cd elsewhere &&
	env -u CALIBER_HOME PYTHONPATH= ../p/bin/caliber demo >stdout 2>stderr &&
	head -1 stdout | grep -q "^caliber demo: offline (" &&
	grep -qx "  replaying the sealed H200 campaign shipped in campaigns/demo-h200/runs/all into $PWD/caliber-demo-2.*Z" stdout &&
	grep -q "^\$ caliber verify $(cd .. && pwd -P)/p/share/caliber/campaigns/demo-h200/runs/all$" stdout &&
	set -- caliber-demo-2*Z && test -f "$1/report.html" && test -f "$1/floor0/derived.json"
'

test_expect_success 'DESTDIR stages the tree; the staged binary, moved elsewhere with its tree, still finds it' '
	eval "$setup" && install_to DESTDIR="$PWD/stage" PREFIX=/opt/caliber &&
	test -x stage/opt/caliber/bin/caliber && test -f stage/opt/caliber/share/caliber/backends/cuda.json &&
	mv stage/opt/caliber moved && mkdir elsewhere && cd elsewhere &&
	env -u CALIBER_HOME ../moved/bin/caliber plan --backend cuda >plan &&
	grep -qx caliber_pytest.timing plan &&
	env -u CALIBER_HOME ../moved/bin/caliber verify ../moved/share/caliber/campaigns/demo-h200/runs/all >/dev/null
'

test_expect_success 'a binary away from any tree says so and names CALIBER_HOME; with CALIBER_HOME it works' '
	eval "$setup" && unset CALIBER_HOME && install_to PREFIX="$PWD/p" && mkdir lone && cp p/bin/caliber lone/caliber && cd lone &&
	printf "%s\n" "caliber: plan: backend '"'"'cuda'"'"': no file ./backends/cuda.json; no backend there; --backends DIR takes backends from another folder (caliber found no tree of its own above its binary: set CALIBER_HOME to it)" >want &&
	expect_refusal 1 want ./caliber plan --backend cuda &&
	CALIBER_HOME="$(cd .. && pwd)/p/share/caliber" ./caliber plan --backend cuda | grep -qx caliber_pytest.timing
'

test_expect_success 'make uninstall takes away what make install put there' '
	eval "$setup" && install_to PREFIX="$PWD/p" && mkdir -p p/bin/keep && touch p/bin/other &&
	make -s -C "$CALIBER_ROOT" --no-print-directory uninstall PREFIX="$PWD/p" >/dev/null &&
	test -e p/bin/other && test -d p/bin/keep &&
	test ! -e p/bin/caliber && test ! -e p/share/caliber && test ! -e p/share/doc/caliber
'

test_expect_success 'caliber_pytest carries caliber'"'"'s version: the Makefile, the package and pyproject.toml agree' '
	test -n "$VERSION" &&
	$CALIBER --version | grep -q "^caliber $VERSION (commit " &&
	PYTHONPATH="$CALIBER_ROOT/python" $PY -c "import caliber_pytest, sys; assert caliber_pytest.__version__ == sys.argv[1], caliber_pytest.__version__" "$VERSION" &&
	test "$(sed -n "s/^version = \"\(.*\)\"$/\1/p" "$CALIBER_ROOT/python/pyproject.toml")" = "$VERSION" &&
	grep -qx "caliber = \"caliber_pytest.entry\"" "$CALIBER_ROOT/python/pyproject.toml"
'

# pip install ./python needs a python3 that makes virtual environments
# (Debian's python3-venv) and setuptools (python3-setuptools) for the build
# without network (--no-build-isolation --no-deps).
if ! $PY -m venv --help >/dev/null 2>&1 || ! $PY -c "import ensurepip, setuptools" >/dev/null 2>&1; then
	test_skip "pip install ./python in a virtual environment registers the pytest11 entry point" \
		"$PY cannot make a virtual environment with pip and setuptools (scripts/deps.sh --ci installs python3-venv and python3-setuptools)"
	exit 0
fi

test_expect_success 'pip install ./python in a virtual environment registers the pytest11 entry point' '
	cp -R "$CALIBER_ROOT/python" src && rm -rf src/build src/*.egg-info &&
	$PY -m venv --system-site-packages venv &&
	venv/bin/python -m pip install -q --no-build-isolation --no-deps --no-index ./src >pip.out 2>&1 || { cat pip.out; exit 1; } &&
	mkdir t && cd t && printf "def test_a():\n    pass\n" >test_a.py &&
	../venv/bin/python -c "import importlib.metadata as m, sys; assert m.version(\"caliber-pytest\") == sys.argv[1]; assert [e.value for e in m.entry_points(group=\"pytest11\") if e.name == \"caliber\"] == [\"caliber_pytest.entry\"]" "$VERSION" &&
	../venv/bin/python -m pytest -p no:cacheprovider test_a.py >out &&
	grep -qx "caliber_pytest $VERSION: caliber.s plugins load with -p caliber_pytest.<name>, in the order \`caliber plan --backend NAME\` prints" out &&
	grep -q "^plugins: .*caliber-pytest-$VERSION" out && grep -q "1 passed" out &&
	../venv/bin/python -c "import caliber_pytest, os, sys; assert os.path.realpath(caliber_pytest.__file__).startswith(os.path.realpath(sys.prefix)), caliber_pytest.__file__"
'
