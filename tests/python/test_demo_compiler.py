"""The demo compiler's gate, against a fake triton package: which
RemoveLayoutConversions runs make_ttgir adds for each switch setting, and that
sitecustomize installs the hook only once triton is imported."""

import os
import subprocess
import sys
import textwrap

import pytest

from repo_paths import DEMO_DIR

FAKE_TRITON = {
    "triton/__init__.py": "from . import knobs\n",
    "triton/knobs.py": """
        class runtime:
            add_stages_inspection_hook = None
    """,
    "triton/backends/__init__.py": "",
    "triton/backends/compiler.py": """
        import enum

        class Language(enum.Enum):
            TRITON = 0
            GLUON = 1
    """,
    "triton/_C/__init__.py": "",
    "triton/_C/libtriton.py": """
        import types

        def _rlc(pm):
            pm.append("rlc")

        passes = types.SimpleNamespace(ttgpuir=types.SimpleNamespace(add_remove_layout_conversions=_rlc))
    """,
}

# A backend whose make_ttgir adds three RLC runs between other passes, like Triton 3.6's.
PROBE = """
    import sys
    import triton
    from triton._C.libtriton import passes
    from triton.backends.compiler import Language

    class Backend:
        def make_ttgir(self, src, metadata, options, capability):
            pm, run = [], 0
            for name in ("coalesce", "rlc", "accelerate", "rlc", "late", "rlc", "cse"):
                if name != "rlc":
                    pm.append(name)
                    continue
                run += 1
                before = len(pm)
                passes.ttgpuir.add_remove_layout_conversions(pm)
                if len(pm) > before:
                    pm[-1] = f"rlc{run}"  # which of the three runs was added
            return pm

    hook = triton.knobs.runtime.add_stages_inspection_hook
    print("HOOK", getattr(hook, "__module__", None))
    stages = {"ttir": None, "ttgir": "stock"}
    hook(Backend(), stages, None, Language.TRITON, 90)
    print("PASSES", " ".join(stages["ttgir"](None, {})))
    print("RESTORED", passes.ttgpuir.add_remove_layout_conversions.__name__)
"""


@pytest.fixture
def fake_triton(tmp_path):
    for name, text in FAKE_TRITON.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _probe(fake_triton, env):
    full = {k: v for k, v in os.environ.items() if not k.startswith("CALIBER_DEMO_")}
    full.update(env, PYTHONPATH=f"{DEMO_DIR}:{fake_triton}")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(PROBE)], env=full, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


@pytest.mark.parametrize("env, rlc_runs", [
    ({}, "rlc1"),
    ({"CALIBER_DEMO_RLC_ENHANCE": "0", "CALIBER_DEMO_RLC_PHASE_MASK": "3"}, "rlc1"),
    ({"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "0"}, "rlc1"),
    ({"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "1"}, "rlc1 rlc2"),
    ({"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "2"}, "rlc1 rlc3"),
    ({"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "3"}, "rlc1 rlc2 rlc3"),
])
def test_gate(fake_triton, env, rlc_runs):
    out = _probe(fake_triton, env)
    assert out["HOOK"] == "caliber_demo_rlc"
    assert out["RESTORED"] == "_rlc"
    passes = out["PASSES"].split()
    assert [p for p in passes if p.startswith("rlc")] == rlc_runs.split()
    assert [p for p in passes if not p.startswith("rlc")] == ["coalesce", "accelerate", "late", "cse"]


def test_gate_keeps_the_position_of_each_run(fake_triton):
    out = _probe(fake_triton, {"CALIBER_DEMO_RLC_ENHANCE": "1", "CALIBER_DEMO_RLC_PHASE_MASK": "3"})
    assert out["PASSES"] == "coalesce rlc1 accelerate rlc2 late rlc3 cse"


def test_sitecustomize_does_not_import_triton(fake_triton):
    code = "import sys; print('triton' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=f"{DEMO_DIR}:{fake_triton}"),
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False"


def test_a_probe_for_triton_before_its_import_leaves_the_hook_installed(fake_triton):
    """Libraries ask importlib.util.find_spec("triton") whether Triton is there
    before (or instead of) importing it; the hook must still go in when triton
    is imported afterwards, and only then."""
    code = textwrap.dedent("""
        import importlib.util, sys
        assert importlib.util.find_spec("triton") is not None
        assert "triton" not in sys.modules
        import triton
        print(triton.knobs.runtime.add_stages_inspection_hook.__name__)
    """)
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=f"{DEMO_DIR}:{fake_triton}"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "stages_hook"
