"""Board catalogue: boards people run TFLM on, with the memory a firmware can use.

Each :class:`Board` gives the MCU, its core and clock, on-chip RAM and the flash the
firmware is stored in (on-chip, or the board's QSPI flash the MCU executes from),
external RAM (PSRAM / SDRAM) where the board has it, the target profile that models
the TFLM build usually flashed on it (:mod:`micro_runtime.targets`), and where the
figures come from: the vendor document that defines them and the pages they were
checked against.

Sizes are bytes; "KB" in the sources is 1024 bytes, as the vendors use it for
memory. ``ram_bytes`` is all on-chip SRAM the application core can address; it is
often split in banks: ``largest_ram_block_bytes`` is the largest contiguous one
where the sources give the split (a tensor arena must fit in one block).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple

KB = 1024
MB = 1024 * 1024


@dataclass(frozen=True)
class Source:
    """A document a board's figures come from."""

    document: str
    url: Optional[str]               #: None: the document is named, its address was not checked
    revision: Optional[str] = None   #: the revision or version consulted, when stated


@dataclass(frozen=True)
class Board:
    """One development board (all sizes in bytes)."""

    id: str                       #: ``--board`` name (lower case)
    name: str
    mcu: str
    core: str                     #: the application core as the vendor names it
    clock_mhz: Optional[int]      #: maximum core clock, None when the platform has none
    ram_bytes: int                #: on-chip SRAM the application core can use
    flash_bytes: int              #: flash the firmware (code + model) is stored in
    target: str                   #: target profile (micro_runtime.targets) it maps to
    datasheet: Source             #: the vendor document defining the figures
    checked_against: Tuple[Source, ...]   #: pages the figures were checked against
    largest_ram_block_bytes: Optional[int] = None   #: largest contiguous SRAM block
    external_ram_bytes: int = 0   #: PSRAM / SDRAM on the board (0: none)
    notes: str = ""

    def as_dict(self) -> dict:
        d = asdict(self)
        d["checked_against"] = [asdict(s) for s in self.checked_against]
        return d


_ZEPHYR = "Zephyr Project documentation, board page"
_RIOT = "RIOT OS documentation, board page"

BOARDS: Tuple[Board, ...] = (
    Board(
        id="arduino-nano-33-ble-sense", name="Arduino Nano 33 BLE Sense", mcu="nRF52840",
        core="Cortex-M4F", clock_mhz=64, ram_bytes=256 * KB, flash_bytes=1 * MB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("nRF52840 Product Specification", "https://docs.nordicsemi.com/r/bundle/ps_nrf52840"),
        checked_against=(
            Source("nano33ble spec (nRF52840: Cortex-M4F 64 MHz, RAM 256 KB, flash 1 MB)",
                   "https://raw.githubusercontent.com/steward-fu/website/gh-pages/mcu/nano33ble_spec.htm"),
            Source("PlatformIO board page nrf52840_dk (64 MHz, 1 MB, 256 KB)",
                   "https://github.com/platformio/platformio-docs/blob/develop/boards/nordicnrf52/nrf52840_dk.rst"),
        ),
        notes="the Arduino TensorFlow Lite library builds TFLM with CMSIS-NN for this board"),
    Board(
        id="raspberry-pi-pico", name="Raspberry Pi Pico", mcu="RP2040",
        core="dual Cortex-M0+", clock_mhz=133, ram_bytes=264 * KB, flash_bytes=2 * MB,
        target="cortex-m0+cmsis-nn",
        datasheet=Source("RP2040 Datasheet", "https://datasheets.raspberrypi.com/rp2040/rp2040-datasheet.pdf"),
        checked_against=(
            Source("MicroPython documentation, rp2 general (133 MHz dual M0+, 264KB SRAM in six banks, no internal flash)",
                   "https://docs.micropython.org/en/latest/rp2/general.html"),
            Source("RIOT pull request adding the Pico (264KB SRAM, 2MB on-board flash)",
                   "https://lists.riot-os.org/pipermail/notifications/2021-January/225924.html"),
        ),
        notes="no on-chip flash: code executes in place from the board's 2 MB QSPI flash (W25Q16JV)"),
    Board(
        id="raspberry-pi-pico-2", name="Raspberry Pi Pico 2", mcu="RP2350",
        core="dual Cortex-M33 (or Hazard3 RISC-V)", clock_mhz=150, ram_bytes=520 * KB,
        flash_bytes=4 * MB, target="cortex-m33+cmsis-nn",
        datasheet=Source("RP2350 Datasheet", None),
        checked_against=(
            Source(f"{_ZEPHYR} rpi_pico2 (150MHz, 520KB SRAM, 4MB on-board flash)",
                   "https://docs.zephyrproject.org/4.1.0/boards/raspberrypi/rpi_pico2/doc/index.html", "Zephyr 4.1.0"),
            Source(f"{_RIOT} rpi-pico-2 (520 kB SRAM in 10 banks, Pico 2 has 4 MB flash)",
                   "https://doc.riot-os.org/group__boards__rpi__pico__2.html"),
        ),
        notes="the RISC-V cores are not modelled; the profile is the Cortex-M33 build"),
    Board(
        id="microbit-v2", name="BBC micro:bit v2", mcu="nRF52833",
        core="Cortex-M4F", clock_mhz=64, ram_bytes=128 * KB, flash_bytes=512 * KB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("BBC micro:bit v2 hardware description (Micro:bit Educational Foundation 2020)",
                         "https://tech.microbit.org/"),
        checked_against=(
            Source("BBC micro:bit v2 hardware description (nRF52833, Cortex-M4 with FPU, 512KB flash, 128KB RAM, 64MHz)",
                   "https://docslib.org/doc/12810940/bbc-micro-bit-v2-please-see-for-latest-updates"),
            Source("The Embedded Rust book, micro:bit v2 (QIAA variant: 512 kB flash, 128 kB RAM)",
                   "https://docs.rust-embedded.org/discovery/microbit/04-meet-your-hardware/microbit-v2.html"),
        )),
    Board(
        id="nucleo-l4r5zi", name="STM32 NUCLEO-L4R5ZI", mcu="STM32L4R5ZI",
        core="Cortex-M4F", clock_mhz=120, ram_bytes=640 * KB, flash_bytes=2 * MB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("UM2179 STM32 Nucleo-144 boards (MB1312) user manual",
                         "http://www.st.com/st-web-ui/static/active/en/resource/technical/document/user_manual/um2179-stm32-nucleo144-boards-mb1312-stmicroelectronics.pdf"),
        checked_against=(
            Source(f"{_RIOT} nucleo-l4r5zi (640KiB RAM, 2MiB flash, up to 120 MHz)",
                   "https://doc.riot-os.org/boards/nucleo-l4r5zi"),
        )),
    Board(
        id="nucleo-h7a3zi-q", name="STM32 NUCLEO-H7A3ZI-Q", mcu="STM32H7A3ZI",
        core="Cortex-M7", clock_mhz=280, ram_bytes=1312 * KB, largest_ram_block_bytes=1024 * KB,
        flash_bytes=2 * MB, target="cortex-m7+cmsis-nn",
        datasheet=Source("STM32H7A3xI/G datasheet", "https://www.st.com/resource/en/datasheet/stm32h7a3zi.pdf"),
        checked_against=(
            Source("Mbed OS TARGET_STM32H7 README, NUCLEO_H7A3ZI_Q (2 MB flash; RAM 1312 KB: DTCM 128, SRAM 1024, SRAM1 64, SRAM2 64, SRAM3 32; up to 280 MHz)",
                   "https://github.com/mbed-ce/mbed-os/blob/ea173498c9065755584e7bab44845a036150a5f9/targets/TARGET_STM/TARGET_STM32H7/README.md"),
            Source("STM32duino board table (H7A3ZITxQ: 2.0 MB flash, 1.4 MB RAM)",
                   "https://docs.simplefoc.com/stm32pinouts/STM32H/STM32H7xx/H7A3Z(G-I)TxQ_H7B3ZITxQ/pinout"),
        ),
        notes="ST quotes 1.4 MB of RAM including ITCM and backup SRAM; 1312 KB is the data RAM an application links against"),
    Board(
        id="stm32f746g-disco", name="STM32F746G-DISCO", mcu="STM32F746NG",
        core="Cortex-M7", clock_mhz=216, ram_bytes=320 * KB, flash_bytes=1 * MB,
        external_ram_bytes=8 * MB, target="cortex-m7+cmsis-nn",
        datasheet=Source("STM32F746NG product page and datasheet",
                         "http://www.st.com/content/st_com/en/products/microcontrollers/stm32-32-bit-arm-cortex-mcus/stm32f7-series/stm32f7x6/stm32f746ng.html"),
        checked_against=(
            Source("Linux kernel documentation, STM32F746 overview (216MHz, 1MB flash, 320KBytes RAM + 4KB backup SRAM)",
                   "https://docs.kernel.org/6.3/_sources/arm/stm32/stm32f746-overview.rst.txt", "Linux 6.3"),
            Source("MicroPython wiki, Board STM32F746 Discovery (SDRAM 16 MBytes, 8 MBytes accessible; QSPI flash 16 MBytes)",
                   "https://github.com/micropython/micropython/wiki/Board-STM32F746-Discovery"),
        ),
        notes="external SDRAM MT48LC4M32B2B5 (8 MB reachable on the board's 16-bit bus); 16 MB QSPI flash (N25Q128A) besides the on-chip 1 MB"),
    Board(
        id="sparkfun-edge", name="SparkFun Edge", mcu="Apollo3 Blue",
        core="Cortex-M4F", clock_mhz=48, ram_bytes=384 * KB, flash_bytes=1 * MB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("Ambiq Apollo3 Blue SoC datasheet", None),
        checked_against=(
            Source(f"{_ZEPHYR} apollo3_evb (up to 96 MHz, up to 1 MB flash, up to 384 KB RAM)",
                   "https://docs.zephyrproject.org/4.0.0/boards/ambiq/apollo3_evb/doc/index.html", "Zephyr 4.0.0"),
            Source("SparkFun Arduino_Apollo3 boards.txt (Edge: f_cpu 48000000, upload maximum 960000 bytes)",
                   "https://github.com/sparkfun/Arduino_Apollo3/pull/43/files"),
        ),
        notes="48 MHz as the board's Arduino core runs it (96 MHz burst mode); a bootloader takes part of the flash"),
    Board(
        id="teensy-4.1", name="Teensy 4.1", mcu="i.MX RT1062",
        core="Cortex-M7", clock_mhz=600, ram_bytes=1024 * KB, largest_ram_block_bytes=512 * KB,
        flash_bytes=8 * MB, target="cortex-m7+cmsis-nn",
        datasheet=Source("PJRC Teensy 4.1 technical information", "https://www.pjrc.com/store/teensy41.html"),
        checked_against=(
            Source("PJRC store page Teensy 4.1 (ARM Cortex-M7 at 600 MHz, 7936K flash for programs, 1024K RAM of which 512K tightly coupled, pads for PSRAM)",
                   "https://www.pjrc.com/store/teensy41.html"),
        ),
        notes="8 MB QSPI flash (7936 KB usable for programs); optional PSRAM chips on the bottom pads (an 8 MB PSRAM is sold as an accessory), not counted"),
    Board(
        id="portenta-h7", name="Arduino Portenta H7", mcu="STM32H747XI",
        core="Cortex-M7 (+ Cortex-M4)", clock_mhz=480, ram_bytes=1 * MB,
        largest_ram_block_bytes=512 * KB, flash_bytes=2 * MB, target="cortex-m7+cmsis-nn",
        datasheet=Source("Arduino Portenta H7 datasheet (ABX00042 / ABX00045 / ABX00046)",
                         "https://docs.arduino.cc/resources/datasheets/ABX00042-ABX00045-ABX00046-datasheet.pdf"),
        checked_against=(
            Source(f"{_ZEPHYR} arduino_portenta_h7 (2MBytes flash, 1MB RAM, 480 MHz)",
                   "https://docs.zephyrproject.org/4.1.0/boards/arduino/portenta_h7/doc/index.html", "Zephyr 4.1.0"),
            Source("Mbed OS TARGET_STM32H7 README, STM32H747 (RAM 1 MB: DTCM 128, SRAM 512, SRAM1 128, SRAM2 128, SRAM3 32, SRAM4 64 KB)",
                   "https://github.com/mbed-ce/mbed-os/blob/ea173498c9065755584e7bab44845a036150a5f9/targets/TARGET_STM/TARGET_STM32H7/README.md"),
        ),
        notes="the M4 core runs at 240 MHz; the board's SDRAM and QSPI flash are not counted"),
    Board(
        id="nrf5340-dk", name="Nordic nRF5340 DK", mcu="nRF5340",
        core="Cortex-M33F (application core)", clock_mhz=128, ram_bytes=512 * KB,
        flash_bytes=1 * MB, target="cortex-m33+cmsis-nn",
        datasheet=Source("nRF5340 Product Specification", None),
        checked_against=(
            Source(f"{_ZEPHYR} nrf5340dk (application core Cortex-M33F up to 128 MHz, network core 64 MHz)",
                   "https://docs.zephyrproject.org/boards/nordic/nrf5340dk/doc/index.html"),
            Source("Zephyr devicetree nrf5340_cpuapp_qkaa.dtsi (flash 1024K, sram 512K)",
                   "https://elixir.bootlin.com/zephyr/v2.4.0/source/dts/arm/nordic/nrf5340_cpuapp_qkaa.dtsi", "Zephyr 2.4.0"),
        ),
        notes="application core only; the network core has its own smaller memories"),
    Board(
        id="wio-terminal", name="Seeed Wio Terminal", mcu="ATSAMD51P19",
        core="Cortex-M4F", clock_mhz=120, ram_bytes=192 * KB, flash_bytes=512 * KB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("Microchip SAM D5x/E5x family datasheet", None),
        checked_against=(
            Source(f"{_ZEPHYR} wio_terminal (ATSAMD51P19 120 MHz, 512 KiB flash, 192 KiB RAM, 4 MiB external flash)",
                   "https://docs.zephyrproject.org/4.0.0/boards/seeed/wio_terminal/doc/index.html", "Zephyr 4.0.0"),
            Source("PlatformIO board page seeed_wio_terminal (120MHz, 496KB flash after the bootloader, 192KB RAM)",
                   "https://docs.platformio.org/en/latest/boards/atmelsam/seeed_wio_terminal.html"),
        ),
        notes="4 MB external QSPI flash not counted (not executed in place by the Arduino core)"),
    Board(
        id="esp32-s3-devkitc-1", name="ESP32-S3-DevKitC-1 (N8R8)", mcu="ESP32-S3 (ESP32-S3-WROOM-1-N8R8)",
        core="dual Xtensa LX7", clock_mhz=240, ram_bytes=512 * KB, flash_bytes=8 * MB,
        external_ram_bytes=8 * MB, target="esp32-s3",
        datasheet=Source("ESP32-S3-DevKitC-1 v1.1 user guide", "https://docs.espressif.com/projects/esp-idf/en/v5.2.2/esp32s3/hw-reference/esp32s3/user-guide-devkitc-1.html", "ESP-IDF v5.2.2"),
        checked_against=(
            Source("ESP-IDF user guide ESP32-S3-DevKitC-1 v1.1 (ESP32-S3-WROOM-1 modules; N8R8 = 8 MB flash, 8 MB octal PSRAM)",
                   "https://docs.espressif.com/projects/esp-idf/en/v5.3.1/esp32s3/hw-reference/esp32s3/user-guide-devkitc-1.html", "ESP-IDF v5.3.1"),
            Source("Waveshare ESP32-S3-DEV-KIT-N8R8 wiki (dual LX7 240MHz, 512 KB SRAM, 8MB PSRAM)",
                   "https://docs.waveshare.com/ESP32-S3-DEV-KIT-N8R8"),
        ),
        notes="the N8R8 variant; others carry N8 (no PSRAM) or N8R2 modules. Wi-Fi / Bluetooth stacks use part of the SRAM"),
    Board(
        id="esp32-c3-devkitm-1", name="ESP32-C3-DevKitM-1", mcu="ESP32-C3 (ESP32-C3-MINI-1, ESP32-C3FN4)",
        core="RISC-V (RV32IMC)", clock_mhz=160, ram_bytes=400 * KB, flash_bytes=4 * MB,
        target="esp32-c3",
        datasheet=Source("ESP32-C3-DevKitM-1 user guide", "https://docs.espressif.com/projects/esp-idf/en/release-v5.0/esp32c3/hw-reference/esp32c3/user-guide-devkitm-1.html", "ESP-IDF release v5.0"),
        checked_against=(
            Source("ESP-IDF user guide ESP32-C3-DevKitM-1 (ESP32-C3-MINI-1, ESP32-C3FN4 with 4 MB embedded flash)",
                   "https://docs.espressif.com/projects/esp-idf/en/v4.4/esp32c3/hw-reference/esp32c3/user-guide-devkitm-1.html", "ESP-IDF v4.4"),
            Source("ESP32 feature matrix (ESP32-C3: RISC-V 160MHz, 400KB SRAM incl. 16KB cache)",
                   "https://github.com/jschwefel/esp32-feature-matrix"),
        ),
        notes="16 KB of the 400 KB SRAM serve as flash cache"),
    Board(
        id="xiao-esp32s3", name="Seeed Studio XIAO ESP32S3", mcu="ESP32-S3",
        core="dual Xtensa LX7", clock_mhz=240, ram_bytes=512 * KB, flash_bytes=8 * MB,
        external_ram_bytes=8 * MB, target="esp32-s3",
        datasheet=Source("Seeed Studio XIAO ESP32S3 wiki", None),
        checked_against=(
            Source(f"{_RIOT} seeedstudio-xiao-esp32s3 (8 MByte flash, 8 MByte QSPI RAM)",
                   "https://doc.riot-os.org/boards/seeedstudio-xiao-esp32s3"),
            Source("TinyGo, Seeed Studio XIAO ESP32S3 (512KB SRAM, 8MB flash)",
                   "https://tinygo.org/docs/reference/microcontrollers/featured/xiao-esp32s3"),
        )),
    Board(
        id="alif-ensemble-e7-devkit", name="Alif Ensemble E7 DevKit", mcu="Ensemble E7 (AE722F80F55D5)",
        core="Cortex-M55 HP (+ M55 HE, 2x Ethos-U55)", clock_mhz=400, ram_bytes=13824 * KB,
        largest_ram_block_bytes=4 * MB, flash_bytes=5632 * KB, target="cortex-m55+cmsis-nn",
        datasheet=Source("Alif Ensemble E7 datasheet", "https://alifsemi.com/support/datasheets/view-all/"),
        checked_against=(
            Source("Alif Ensemble CMSIS DFP, AE722F80F55D5XX.h (MRAM 5.5 MB; SRAM0 4 MB, SRAM1 2.5 MB, SRAM2-9 7 MB more)",
                   "https://github.com/alifsemi/alif_ensemble-cmsis-dfp/blob/ea9cf1e977671c642094eccbfcb4f9d564dafa68/Device/common/include/AE722F80F55D5XX.h"),
            Source(f"{_ZEPHYR} ensemble_e8_dk (RTSS-HP Cortex-M55 up to 400 MHz, RTSS-HE up to 160 MHz)",
                   "https://docs.zephyrproject.org/latest/boards/alif/ensemble_e8_dk/doc/index.html"),
        ),
        notes="13.5 MB of SRAM over several banks (the HP core's TCM is 1.25 MB); code and model in 5.5 MB MRAM; the Ethos-U55 NPUs are not modelled"),
    Board(
        id="corstone-300", name="Arm Corstone-300 (MPS3 AN547 / FVP)", mcu="SSE-300",
        core="Cortex-M55 (+ Ethos-U55)", clock_mhz=None, ram_bytes=2560 * KB,
        largest_ram_block_bytes=2 * MB, flash_bytes=512 * KB, external_ram_bytes=32 * MB,
        target="cortex-m55+cmsis-nn",
        datasheet=Source("Arm AN547 Corstone SSE-300 with Cortex-M55 and Ethos-U55 Example Subsystem for MPS3", None),
        checked_against=(
            Source("CMSIS-NN Tests/UnitTest/Corstone-300/region_limits.h (ITCM 512 KB, DTCM 512 KB, ISRAM 2 MB, DDR4 32 MB)",
                   "https://github.com/ARM-software/CMSIS-NN/blob/4ab83cc3/Tests/UnitTest/Corstone-300/region_limits.h"),
            Source(f"{_ZEPHYR} mps3 (AN547 Cortex-M55, Corstone-300 FVP)",
                   "https://docs.zephyrproject.org/latest/boards/arm/mps3/doc/index.html"),
        ),
        notes="a simulated or FPGA platform: no fixed clock; code in the 512 KB ITCM, data in DTCM and the 2 MB ISRAM, DDR as CMSIS-NN's tests map it"),
    Board(
        id="xiao-nrf52840-sense", name="Seeed Studio XIAO nRF52840 Sense", mcu="nRF52840",
        core="Cortex-M4F", clock_mhz=64, ram_bytes=256 * KB, flash_bytes=1 * MB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("nRF52840 Product Specification", "https://docs.nordicsemi.com/r/bundle/ps_nrf52840"),
        checked_against=(
            Source(f"{_RIOT} seeedstudio-xiao-nrf52840-sense (nRF52840, LSM6DS3TR-C IMU, PDM microphone)",
                   "https://doc.riot-os.org/boards/seeedstudio-xiao-nrf52840-sense/"),
            Source("PlatformIO board page nrf52840_dk (nRF52840: 64MHz, 1MB flash, 256KB RAM)",
                   "https://github.com/platformio/platformio-docs/blob/develop/boards/nordicnrf52/nrf52840_dk.rst"),
        ),
        notes="the board's QSPI flash is not counted; a bootloader and, with BLE, a SoftDevice take part of the flash and RAM"),
    Board(
        id="esp-eye", name="Espressif ESP-EYE", mcu="ESP32 (ESP32-D0WDQ6)",
        core="dual Xtensa LX6", clock_mhz=240, ram_bytes=520 * KB, flash_bytes=4 * MB,
        external_ram_bytes=8 * MB, target="esp32",
        datasheet=Source("ESP-EYE Getting Started Guide (ESP-EYE V2.1)",
                         "https://github.com/espressif/esp-who/blob/master/docs/en/get-started/ESP-EYE_Getting_Started_Guide.md"),
        checked_against=(
            Source("ESP-WHO ESP-EYE Getting Started Guide (8 MB PSRAM, 4 MB flash)",
                   "https://github.com/espressif/esp-who/blob/master/docs/en/get-started/ESP-EYE_Getting_Started_Guide.md"),
            Source(f"{_ZEPHYR} ESP32 features (dual LX6 160 or 240MHz, 520KB SRAM)",
                   "https://docs.zephyrproject.org/latest/boards/espressif/common/soc-esp32-features.html"),
        )),
    Board(
        id="b-l475e-iot01a", name="STM32 B-L475E-IOT01A Discovery kit", mcu="STM32L475VG",
        core="Cortex-M4F", clock_mhz=80, ram_bytes=96 * KB, flash_bytes=1 * MB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("B-L475E-IOT01A Discovery kit for IoT node", "https://www.st.com/en/evaluation-tools/b-l475e-iot01a.html"),
        checked_against=(
            Source("PlatformIO board page disco_l475vg_iot01a (STM32L475VGT6, 80MHz, 1MB flash, 96KB RAM)",
                   "https://github.com/platformio/platformio-docs/blob/develop/boards/ststm32/disco_l475vg_iot01a.rst"),
            Source(f"{_ZEPHYR} disco_l475_iot1 (64-Mbit Quad-SPI flash)",
                   "https://docs.zephyrproject.org/4.0.0/boards/st/disco_l475_iot1/doc/index.html", "Zephyr 4.0.0"),
        ),
        notes="96 KB is SRAM1 as linkers map it; the chip's separate 32 KB SRAM2 and the board's 8 MB QSPI flash are not counted"),
    Board(
        id="seeeduino-xiao", name="Seeeduino XIAO (SAMD21)", mcu="ATSAMD21G18A",
        core="Cortex-M0+", clock_mhz=48, ram_bytes=32 * KB, flash_bytes=256 * KB,
        target="cortex-m0+cmsis-nn",
        datasheet=Source("Microchip SAM D21/DA1 family datasheet", None),
        checked_against=(
            Source(f"{_ZEPHYR} seeeduino_xiao (ATSAMD21G18A 48 MHz, 256 KiB flash, 32 KiB RAM)",
                   "https://docs.zephyrproject.org/3.0.0/boards/arm/seeeduino_xiao/doc/index.html", "Zephyr 3.0.0"),
        )),
    Board(
        id="nucleo-l452re", name="STM32 NUCLEO-L452RE", mcu="STM32L452RE",
        core="Cortex-M4F", clock_mhz=80, ram_bytes=160 * KB, flash_bytes=512 * KB,
        target="cortex-m4+cmsis-nn",
        datasheet=Source("UM1724 STM32 Nucleo-64 boards user manual", "http://www.st.com/resource/en/user_manual/dm00105823.pdf"),
        checked_against=(
            Source(f"{_RIOT} nucleo-l452re (160KiB RAM, 512KiB flash, up to 80MHz)",
                   "https://doc.riot-os.org/boards/nucleo-l452re"),
        )),
)

BOARDS_BY_ID: Dict[str, Board] = {b.id: b for b in BOARDS}

#: keys of one ``boards --json`` entry
BOARD_KEYS = ("id", "name", "mcu", "core", "clock_mhz", "ram_bytes", "largest_ram_block_bytes",
              "flash_bytes", "external_ram_bytes", "target", "target_available", "datasheet",
              "checked_against", "notes")


def _normalise(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def get_board(name: str) -> Board:
    """The board called ``name`` (its id; case, spaces, dashes and dots ignored)."""
    from .errors import InputError
    wanted = _normalise(str(name))
    for board in BOARDS:
        if _normalise(board.id) == wanted or _normalise(board.name) == wanted:
            return board
    raise InputError(f"unknown board {name!r}; known boards: {', '.join(BOARDS_BY_ID)} "
                     "(micro-runtime boards lists them)")


def target_available(board: Board) -> bool:
    """Whether this version has the board's target profile."""
    from .targets import TARGETS, canonical_target_name
    return canonical_target_name(board.target) in TARGETS


def board_record(board: Board) -> dict:
    """The ``boards --json`` entry of a board (keys: :data:`BOARD_KEYS`)."""
    d = board.as_dict()
    d["target_available"] = target_available(board)
    return {k: d[k] for k in BOARD_KEYS}


def boards_table() -> List[str]:
    """The text of ``micro-runtime boards``: one line per board."""
    def size(n: int) -> str:
        if n >= MB and n % (MB // 4) == 0:
            return f"{n / MB:g} MB"
        return f"{n // KB} KB"
    rows = [("board", "core", "MHz", "RAM", "flash", "ext. RAM", "target")]
    for b in BOARDS:
        target = b.target + ("" if target_available(b) else " (not in this version)")
        rows.append((b.id, b.core, str(b.clock_mhz or "-"), size(b.ram_bytes), size(b.flash_bytes),
                     size(b.external_ram_bytes) if b.external_ram_bytes else "-", target))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i in (0, 1, 6) else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
    return lines + [f"{len(BOARDS)} boards; sizes in KB / MB of 1024; micro-runtime boards --json "
                    "gives the sources of every figure"]
