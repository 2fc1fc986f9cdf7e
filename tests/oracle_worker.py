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
    """One request; with ``log`` the C++ side's messages (TFLM's MicroPrintf, on stderr)
    come back as ``log``."""
    if req.get("log"):
        result = {}

        def run():
            result.update(_handle(req))
        text = _capture_fd2(run)
        result["log"] = text
        return result
    return _handle(req)


def _handle(req):
    import numpy as np
    import tflite_micro
    rt = tflite_micro.runtime
    config = (rt.InterpreterConfig.kPreserveAllTensors if req.get("preserve")
              else rt.InterpreterConfig.kAllocationRecording)
    try:
        it = rt.Interpreter.from_bytes(
            req["model"], arena_size=req["arena_size"], intrepreter_config=config,
            alt_decompression_memory_size=req.get("alt_decompression_memory_size", 0))
    except Exception as e:  # allocation failure
        return {"ok": False, "stage": "allocate", "error": str(e)}
    result = {"ok": True, "outputs": [], "tensors": {}, "lines": None, "invokes": [],
              "statuses": []}
    if req.get("loop"):
        # the per-sample loop a user writes: reset, set_input, invoke, get_output
        import time
        samples = req["inputs"]
        count = samples[0].shape[0] if samples else 0
        n_out = req["loop"]["outputs"]
        outputs = [[None] * count for _ in range(n_out)]
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(count):
            it.reset()
            for k, x in enumerate(samples):
                it.set_input(x[i], k)
            it.invoke()
            for j in range(n_out):
                outputs[j][i] = it.get_output(j)
        result["timings"] = [time.perf_counter() - t0, time.process_time() - c0]
        if req["loop"].get("keep"):
            result["outputs"] = [np.stack(o) if o else np.zeros(0) for o in outputs]
        return result
    if req.get("bench"):
        import time
        for i, x in enumerate(req.get("inputs", [])):
            it.set_input(x, i)
        for _ in range(req["bench"]["warmup"]):
            it.invoke()
        times, cpu = [], []
        for _ in range(req["bench"]["runs"]):
            t0, c0 = time.perf_counter(), time.process_time()
            it.invoke()
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        result["timings"] = times
        result["cpu_timings"] = cpu
        return result
    runs = req.get("runs") or [req.get("inputs", [])]
    try:
        for k, inputs in enumerate(runs):
            for i, x in enumerate(inputs):
                it.set_input(x, i)
            result["statuses"].append(it.invoke())
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
    if not req.get("preserve") and req.get("lines", True):
        text = _capture_fd2(it.print_allocations)
        result["lines"] = [l for l in text.splitlines() if l.startswith("[RecordingMicroAllocator]")]
    return result


def _serve_batch(items, out):
    """Answer each request of a batch on ``out``, in order. The requests run in a forked
    child, so a model that makes TFLM end the process costs a fork, not a fresh worker:
    that request is answered ``crashed`` and a new child serves the rest."""
    import numpy  # noqa: F401  (imported once, here, not in every child)
    import tflite_micro  # noqa: F401
    done = 0
    while done < len(items):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                with os.fdopen(write_fd, "wb") as pipe:
                    for item in items[done:]:
                        _write(pipe, handle(item))
            finally:
                os._exit(0)
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            while done < len(items):
                try:
                    reply = _read(pipe)
                except Exception:      # a reply cut short by the child's end
                    reply = None
                if reply is None:
                    break
                _write(out, reply)
                done += 1
        _, status = os.waitpid(pid, 0)
        if done < len(items):
            _write(out, {"ok": False, "crashed": True, "stage": "crash",
                         "error": f"TFLM ended the process (wait status {status})"})
            done += 1


def main():
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # TFLM's own prints must not reach the protocol stream
    proto_in = sys.stdin.buffer
    while True:
        req = _read(proto_in)
        if req is None:
            return
        if "batch" in req:
            # many requests in one message; one reply each, written as soon as it is ready
            _serve_batch(req["batch"], proto_out)
            continue
        _write(proto_out, handle(req))


if __name__ == "__main__":
    main()
