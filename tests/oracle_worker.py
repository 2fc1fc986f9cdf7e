"""Subprocess side of the TFLM oracle: runs tflite_micro requests read from stdin.

Protocol: 4-byte little-endian length + pickle, both ways. The process's own stdout and
stderr never carry protocol data (TFLM prints to them); the C++ stderr of
print_allocations() is captured through a temporary file.
"""
import os
import pickle
import struct
import sys
import tempfile


def _read(stream):
    head = stream.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack("<I", head)
    return pickle.loads(stream.read(n))


def _write(stream, obj):
    data = pickle.dumps(obj, protocol=4)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def _capture_fd2(fn):
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def handle(req):
    import numpy as np
    import tflite_micro
    rt = tflite_micro.runtime
    config = (rt.InterpreterConfig.kPreserveAllTensors if req.get("preserve")
              else rt.InterpreterConfig.kAllocationRecording)
    try:
        it = rt.Interpreter.from_bytes(req["model"], arena_size=req["arena_size"],
                                       intrepreter_config=config)
    except Exception as e:  # allocation failure
        return {"ok": False, "stage": "allocate", "error": str(e)}
    result = {"ok": True, "outputs": [], "tensors": {}, "lines": None, "invokes": []}
    if req.get("bench"):
        import time
        for i, x in enumerate(req.get("inputs", [])):
            it.set_input(x, i)
        for _ in range(req["bench"]["warmup"]):
            it.invoke()
        times = []
        for _ in range(req["bench"]["runs"]):
            t0 = time.perf_counter()
            it.invoke()
            times.append(time.perf_counter() - t0)
        result["timings"] = times
        return result
    runs = req.get("runs") or [req.get("inputs", [])]
    try:
        for k, inputs in enumerate(runs):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            it.invoke()
            outs = []
            i = 0
            while True:
                try:
                    outs.append(np.array(it.get_output(i)))
                except Exception:
                    break
                i += 1
                if i > 64:
                    break
            result["invokes"].append(outs)
            if req.get("reset_between"):
                it.reset()
    except Exception as e:
        return {"ok": False, "stage": "invoke", "error": str(e)}
    result["outputs"] = result["invokes"][-1] if result["invokes"] else []
    if req.get("tensors"):
        for t in req["tensors"]:
            try:
                result["tensors"][t] = it.GetTensor(t, 0)
            except Exception as e:
                result["tensors"][t] = None
    if req.get("details"):
        result["input_details"] = []
        result["output_details"] = []
        for kind in ("input", "output"):
            i = 0
            while True:
                try:
                    d = getattr(it, f"get_{kind}_details")(i)
                except Exception:
                    break
                result[f"{kind}_details"].append(d)
                i += 1
    if not req.get("preserve"):
        text = _capture_fd2(it.print_allocations)
        result["lines"] = [l for l in text.splitlines() if l.startswith("[RecordingMicroAllocator]")]
    return result


def main():
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # TFLM's own prints must not reach the protocol stream
    proto_in = sys.stdin.buffer
    while True:
        req = _read(proto_in)
        if req is None:
            return
        _write(proto_out, handle(req))


if __name__ == "__main__":
    main()
