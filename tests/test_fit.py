"""`micro-runtime boards` and `micro-runtime fit`: the board catalogue, the fit report's
keys, exit status, and the predictions against the recorded firmware builds."""
import functools
import json
import os
import re

import pytest

from micro_runtime.boards import BOARD_KEYS, BOARDS, board_record, get_board, target_available
from micro_runtime.errors import InputError
from micro_runtime.targets import TARGETS, canonical_target_name
from micro_runtime.tools.cli import main
from micro_runtime.tools.fit import FIT_KEYS, FLASH_KEYS, RAM_KEYS, fit_report, model_operators
from tests.helpers import DATA, model_path

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "fit.md")
#: target profiles another part of the project adds (ESP-NN builds); boards mapped to
#: them are checked once the profile exists
PENDING_TARGETS = ("esp32", "esp32-s2", "esp32-s3", "esp32-c3", "esp32-c6", "esp32-h2", "esp32-p4")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ catalogue
def test_catalogue_has_at_least_twenty_boards_with_unique_ids():
    ids = [b.id for b in BOARDS]
    assert len(ids) >= 20 and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.-]*", i) for i in ids)


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.id)
def test_board_maps_to_an_existing_profile(board):
    name = canonical_target_name(board.target)
    if name not in TARGETS:
        if board.target in PENDING_TARGETS:
            pytest.skip(f"target profile {board.target} is not in this version yet")
        pytest.fail(f"{board.id} maps to unknown target {board.target}")
    assert target_available(board)
    core = TARGETS[name].core
    if core is not None and "Cortex" in board.core:
        # the profile's core is the board's (M0+ boards use the M0 profile, an alias)
        number = re.search(r"M(\d+)", board.core).group(1)
        assert core.replace("cortex-m", "") == number or (number, core) in (("0", "cortex-m0"),)


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: b.id)
def test_board_figures_are_consistent(board):
    assert isinstance(board.ram_bytes, int) and board.ram_bytes > 0
    assert isinstance(board.flash_bytes, int) and board.flash_bytes > 0
    assert board.clock_mhz is None or 1 <= board.clock_mhz <= 1000
    if board.largest_ram_block_bytes is not None:
        assert 0 < board.largest_ram_block_bytes <= board.ram_bytes
    assert board.external_ram_bytes >= 0
    assert board.datasheet.document
    assert board.checked_against, "every figure is checked against at least one page"
    for source in board.checked_against:
        assert source.document and source.url and source.url.startswith("http")


def test_board_lookup_ignores_case_and_separators():
    assert get_board("Arduino Nano 33 BLE Sense").id == "arduino-nano-33-ble-sense"
    assert get_board("TEENSY_4.1").id == "teensy-4.1"
    with pytest.raises(InputError, match="unknown board 'nano99'.*arduino-nano-33-ble-sense"):
        get_board("nano99")


def test_boards_json_keys_and_text(capsys):
    code, out, _ = run(capsys, "boards", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data) == len(BOARDS)
    for entry, board in zip(data, BOARDS):
        assert tuple(entry) == BOARD_KEYS
        assert entry == json.loads(json.dumps(board_record(board)))
    code, out, _ = run(capsys, "boards")
    assert code == 0
    for board in BOARDS:
        assert board.id in out


def test_json_keys_are_documented():
    text = open(DOCS).read()
    for key in set(BOARD_KEYS) | set(FIT_KEYS) | set(RAM_KEYS) | set(FLASH_KEYS):
        assert f"`{key}`" in text, f"docs/fit.md does not document the key {key}"


# ------------------------------------------------------------------ fit
def test_fit_json_keys_and_parts_add_up(capsys):
    code, out, _ = run(capsys, "fit", model_path("person_detect"), "--board", "arduino-nano-33-ble-sense",
                       "--json")
    rec = json.loads(out)
    assert tuple(rec) == FIT_KEYS
    assert tuple(rec["ram"]) == RAM_KEYS and tuple(rec["flash"]) == FLASH_KEYS
    assert rec["target"] == "cortex-m4+cmsis-nn" and rec["board"] == "arduino-nano-33-ble-sense"
    assert code == (0 if rec["fits"] else 1)
    ram, flash = rec["ram"], rec["flash"]
    parts = [ram[k] for k in ("arena_bytes", "interpreter_object_bytes", "op_resolver_bytes",
                              "tflm_static_bytes", "runtime_library_static_bytes", "stack_bytes")]
    assert ram["total_bytes"] == sum(p for p in parts if p is not None)
    assert ram["margin_bytes"] == ram["capacity_bytes"] - ram["total_bytes"] == 256 * 1024 - ram["total_bytes"]
    size = os.path.getsize(model_path("person_detect"))
    assert flash["model_file_bytes"] == size and flash["model_bytes"] == (size + 15) // 16 * 16
    assert flash["total_bytes"] == flash["model_bytes"] + (flash["tflm_code_bytes"] or 0) + (
        flash["runtime_library_bytes"] or 0)
    # the arena is `size` for the MicroInterpreter a firmware declares
    code, out, _ = run(capsys, "size", model_path("person_detect"), "--interpreter", "micro", "--json")
    assert ram["arena_bytes"] == json.loads(out)["arena_bytes"]
    assert ram["op_resolver_ops"] == len(model_operators(__import__("micro_runtime").load_model(
        model_path("person_detect")))) == 5


def test_model_that_does_not_fit_says_so_with_status_1(capsys, tmp_path):
    svg = tmp_path / "fit.svg"
    code, out, _ = run(capsys, "fit", model_path("person_detect"), "--board", "seeeduino-xiao",
                       "--svg", str(svg))
    assert code == 1
    assert "DOES NOT FIT" in out and "does NOT fit" in out
    assert "micro-runtime optimize" in out          # what to change
    assert "boards it fits:" in out
    picture = svg.read_text()
    assert picture.startswith("<svg") and "RAM" in picture and "Flash" in picture
    code, out, _ = run(capsys, "fit", model_path("person_detect"), "--target", "cortex-m4+cmsis-nn",
                       "--ram", "64K", "--flash", "1M", "--json")
    rec = json.loads(out)
    assert code == 1 and rec["fits"] is False and rec["ram"]["fits"] is False and rec["flash"]["fits"]
    assert rec["ram"]["margin_bytes"] < 0 and rec["board"] is None


def test_fit_bad_options_are_one_line_errors(capsys):
    code, _, err = run(capsys, "fit", model_path("person_detect"), "--board", "nano99")
    assert code == 1 and err.startswith("error: unknown board 'nano99'")
    code, _, err = run(capsys, "fit", model_path("person_detect"))
    assert code == 1 and "--board" in err and "--ram" in err
    code, _, err = run(capsys, "fit", model_path("person_detect"), "--ram", "0", "--flash", "1M")
    assert code == 1 and "--ram must be a positive number of bytes" in err
    with pytest.raises(SystemExit) as e:
        main(["fit", model_path("person_detect"), "--ram", "lots", "--flash", "1M"])
    assert e.value.code == 2


def test_board_whose_profile_is_missing_names_the_stand_in(capsys):
    board = next((b for b in BOARDS if not target_available(b)), None)
    if board is None:
        pytest.skip("every board's profile is present")
    code, _, err = run(capsys, "fit", model_path("hello_world_int8"), "--board", board.id)
    assert code == 1 and "--target mcu32" in err and board.target in err


# ------------------------------------------------------------------ predictions vs firmware
FIRMWARE = os.path.join(DATA, "reference", "tflm_fit_firmware.json")


def _firmware_rows():
    if not os.path.exists(FIRMWARE):
        return []
    from micro_runtime.fit_tables import load_table
    data = json.load(open(FIRMWARE))
    rows = []
    for build, entry in sorted(data["builds"].items()):
        if load_table(build) is None:
            continue
        for model, rec in sorted(entry["models"].items()):
            if "error" not in rec:
                rows.append((build, model, rec))
    return rows


FIRMWARE_ROWS = _firmware_rows()


@functools.lru_cache(maxsize=None)
def _node_keys(model: str) -> tuple:
    """model_node_keys of a recorded model (loaded once for every build)."""
    from micro_runtime.fit_tables import model_node_keys
    from micro_runtime.model import load_model
    return tuple(model_node_keys(load_model(os.path.join(DATA, model))))


def test_recorded_firmware_figures_say_how_they_were_made():
    data = json.load(open(FIRMWARE))
    assert "about" in data and "TFLM" in data["about"] and "gc-sections" in data["about"]
    for build, entry in data["builds"].items():
        assert entry["build_type"] in ("default", "release") and entry["about"]
        assert len(entry["models"]) >= 100, build


@pytest.mark.parametrize("build,model,rec", FIRMWARE_ROWS, ids=[f"{b}:{m}" for b, m, _ in FIRMWARE_ROWS])
def test_prediction_matches_the_linked_firmware(build, model, rec):
    """TFLM's flash within 2 % of the linked image, static RAM (MicroInterpreter,
    MicroMutableOpResolver<N>, TFLM .data/.bss) exact, stack within 5 % of the QEMU
    measurement, the arena exact for MicroInterpreter (it runs at the predicted size and
    fails one byte below)."""
    from micro_runtime.fit_tables import load_table
    pred = load_table(build).predict(rec["ops"], _node_keys(model))
    assert abs(pred.tflm_flash_bytes - rec["tflm_flash_bytes"]) <= 0.02 * rec["tflm_flash_bytes"]
    assert pred.interpreter_bytes == rec["interpreter_bytes"]
    assert pred.resolver_bytes == rec["resolver_bytes"]
    assert pred.tflm_static_ram_bytes == rec["tflm_static_ram_bytes"]
    if rec.get("stack_bytes") is not None and pred.stack_bytes is not None:
        assert abs(pred.stack_bytes - rec["stack_bytes"]) <= 0.05 * rec["stack_bytes"]
    if "arena_check" in rec:
        assert rec["arena_check"] == {"at_arena": "ok", "one_byte_less": "alloc_fail"}


def test_fit_check_benchmark_runs_on_the_recorded_figures_alone():
    """benchmarks/fit_check.py needs only the repository (tables + recorded figures) and
    meets its goals (exit status 0) for every recorded build."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, os.path.join("benchmarks", "fit_check.py")], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    builds = json.load(open(FIRMWARE))["builds"]
    for build in builds:
        assert f"== {build} " in proc.stdout
    assert "TFLM flash: max |error|" in proc.stdout and "exact for" in proc.stdout


def test_esp32_c3_board_gets_the_riscv_build_figures(capsys):
    """The ESP32-C3 board maps to the esp32-c3 profile, whose firmware build (esp-tflite-micro
    with ESP-NN, RV32) has tables: every part is predicted."""
    from micro_runtime.fit_tables import load_table
    if canonical_target_name("esp32-c3") not in TARGETS or load_table("esp32-c3") is None:
        pytest.skip("the esp32-c3 profile or its tables are not in this version")
    code, out, _ = run(capsys, "fit", model_path("person_detect"), "--board", "esp32-c3-devkitm-1", "--json")
    rec = json.loads(out)
    assert rec["target"] == "esp32-c3" and rec["build"]["name"] == "esp32-c3" and rec["complete"]
    assert rec["flash"]["tflm_code_bytes"] > 0 and rec["ram"]["stack_bytes"] > 0
    assert code == (0 if rec["fits"] else 1)


@pytest.mark.parametrize("target", ["esp32-s3", "esp32"])
def test_esp_target_without_a_build_says_what_is_not_predicted(capsys, target):
    if canonical_target_name(target) not in TARGETS:
        pytest.skip(f"target profile {target} is not in this version yet")
    from micro_runtime.fit_tables import load_table
    if load_table(target) is not None:
        pytest.skip(f"{target} has tables")
    code, out, _ = run(capsys, "fit", model_path("hello_world_int8"), "--target", target,
                       "--ram", "512K", "--flash", "4M")
    assert "not predicted" in out and f"no recorded TFLM firmware build for target {target}" in out
