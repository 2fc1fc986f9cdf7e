"""The drop-in promise (docs/python-api.md): a script written for the tflite-micro package runs
unchanged after swapping its import for ``import micro_runtime as runtime``, with the
same stdout and the same stderr bytes (print_allocations' CR LF lines, TFLM's log line
for an out-of-range output)."""
import re

import pytest

from tests.helpers import docs_text, model_path, readme_block, run_python

pytestmark = pytest.mark.oracle

PACKAGE_IMPORT = re.compile(r"^from tflite_micro import runtime\b.*$", re.M)


def swapped(script: str) -> str:
    assert len(PACKAGE_IMPORT.findall(script)) == 1, "the drop-in script imports the package once"
    return PACKAGE_IMPORT.sub("import micro_runtime as runtime", script)


def test_readme_shows_the_package_real_import():
    script = readme_block("dropin")
    assert "from tflite_micro import runtime" in script and "runtime.Interpreter" in script
    assert "from tflite_micro.runtime import" not in docs_text()   # that import does not exist


@pytest.mark.parametrize("name", ["hello_world_int8", "person_detect", "kws_ref_model"])
def test_package_script_runs_unchanged_after_the_swap(name):
    script = readme_block("dropin")
    theirs = run_python(script, model_path(name), ours=False)
    assert theirs.returncode == 0, theirs.stderr.decode()
    ours = run_python(swapped(script), model_path(name), ours=True)
    assert ours.returncode == 0, ours.stderr.decode()
    assert ours.stdout == theirs.stdout
    assert ours.stderr == theirs.stderr
    assert b"\r\n" in ours.stderr and b"no output 5" in ours.stdout
