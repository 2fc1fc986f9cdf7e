"""The ``ethos-u`` custom operator of a Vela-compiled model, as TFLM's Ethos-U build
allocates for it (``kernels/ethos_u/ethosu.cc``). The operator hands a command stream to
the NPU; micro-runtime sizes it exactly but does not emulate the NPU, so invoking it is
refused.

Vela replaces every operator it places on the NPU by one ``ethos-u`` operator whose
inputs are, in order: the command stream (a constant uint8 tensor), the weights and
biases Vela packed (constant, base address 0 of the NPU), the scratch tensor (the NPU's
working memory, base address 1), the fast-scratch tensor (base address 2; in Vela's
Shared_Sram memory mode the scratch tensor itself again), then the operator's inputs;
its outputs are the operator's outputs. Vela plans the scratch tensors and the
operator's inputs and outputs itself (the model's ``OfflineMemoryAllocation``
metadata, with offsets inside the scratch tensor), so TFLM places them at those
offsets.

What TFLM allocates for the operator itself:

* Init: a persistent OpData (``ethos_u.OpData``: command-stream bytes and the two
  scratch-buffer indices, 3 x int, 12 bytes);
* Prepare: two scratch buffers, one ``uint64_t`` and one ``size_t`` per base address
  (inputs + outputs), and a temporary TfLiteTensor of the command stream (input 0),
  released at once.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Optional

from ..base import Kernel, register_variant


@dataclass
class OpData:
    """TFLM's OpData of the ethos-u kernel."""

    cms_data_size: int = 0
    base_addr_idx: int = -1
    base_addr_size_idx: int = -1


#: the command stream's driver-header tags Vela writes (its ``driver_actions``): a
#: "COP1" four-character code, then a Config tag followed by the NPU's CONFIG word
_COP1 = b"COP1"
_DA_CONFIG = 0x01
_PRODUCTS = {0: 55, 1: 65, 2: 85}


def command_stream_npu(cms: bytes) -> Optional[str]:
    """The NPU a Vela command stream was compiled for, from its driver header:
    ``"ethos-u55-<macs>"``, ``"ethos-u65-<macs>"`` or ``"ethos-u85-<macs>"`` (MACs per
    cycle), or None when the
    header is not one Vela's COP1 format describes this way."""
    if len(cms) < 12 or cms[:4] != _COP1 or cms[4] != _DA_CONFIG:
        return None
    config = struct.unpack_from("<I", cms, 8)[0]
    log2_macs = config & 0xF              # CONFIG.macs_per_cc
    product = (config >> 28) & 0xF        # CONFIG.product: 0, 1, 2 = Ethos-U55, -U65, -U85
    if product not in _PRODUCTS:
        return None
    return f"ethos-u{_PRODUCTS[product]}-{1 << log2_macs}"


@register_variant("ethos-u")
class EthosU(Kernel):
    custom_name = "ethos-u"
    #: the NPU reads and writes raw bytes; the operator's tensors may be of any type
    supported_types = ("*",)

    def init(self, ctx, node):
        ctx.allocate_persistent(ctx.sizeof("ethos_u.OpData"))
        return OpData()

    def prepare(self, ctx, node):
        if len(node.inputs) == 0:
            raise ctx.error("needs at least one input (the command stream)")
        if not node.custom_options:
            raise ctx.error("has no custom options (Vela writes the co-processor type there)")
        data = node.user_data
        base_addresses = len(node.inputs) + len(node.outputs)
        data.base_addr_idx = ctx.request_scratch(base_addresses * 8)
        data.base_addr_size_idx = ctx.request_scratch(base_addresses * ctx.sizeof("size_t"))
        cms = ctx.required_input(node, 0, "the command stream")
        data.cms_data_size = int(cms.nbytes)
        ctx.release(cms)

    def invoke(self, ctx, node):
        if ctx.npu_stub:
            return None
        npu = None
        cms = ctx.eval_tensor(node.inputs[0])
        if cms is not None and cms.data is not None:
            npu = command_stream_npu(bytes(memoryview(cms.data).cast("B")[:12]))
        built_for = f" (its command stream was compiled for {npu})" if npu else ""
        raise ctx.error(
            "runs on the Ethos-U NPU, which micro-runtime does not emulate: the arena "
            f"figures of this model are exact, invoking it is not available{built_for}")
