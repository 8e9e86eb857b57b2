#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU acceptance figures for one node, measured with torch.

Measures per GPU: bf16 and fp16 GEMM TFLOP/s, device memory copy bandwidth and a fused AdamW
step; on the first GPU an AMP training step (torch.amp autocast + GradScaler) fed by a DataLoader
with workers, pinned memory, persistent workers and prefetch; with more than one GPU an NCCL
all-reduce, one process per GPU, with algorithm and bus bandwidth per message size.

It only measures: thresholds and the pass/fail verdict are the role's (the
``aistack.gpu_node.gpu_validation`` module), so figures stay comparable across policies.

Standalone: ``python validate_gpu.py --json out.json`` with the environment's own interpreter.
Without a usable GPU it writes ``status: skipped`` with the reason (not a pass).

``--env`` gives variables set before anything is measured, in every process started here; the role
passes the ones that keep NVLink multicast (NVLS) off, as the ``aistack.gpu_node.gpu_validation``
module returns them (``multicast_off_env``), and the all-reduce figures record them:
``--env '{"NAME": "value", ...}'``.
"""

from __future__ import absolute_import, division, print_function

import argparse
import ctypes
import datetime
import json
import math
import os
import socket
import sys
import tempfile
import time

SCHEMA_VERSION = 1


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--json", dest="json_path", required=True, help="write the figures here (JSON)")
    parser.add_argument("--gemm-size", type=int, default=8192, help="square GEMM size (default 8192)")
    parser.add_argument("--gemm-iters", type=int, default=50)
    parser.add_argument("--copy-mib", type=int, default=1024, help="buffer size for the copy bandwidth, MiB")
    parser.add_argument("--copy-iters", type=int, default=50)
    parser.add_argument("--adamw-params", type=int, default=200, help="number of 1M-element fp32 parameters")
    parser.add_argument("--adamw-iters", type=int, default=20)
    parser.add_argument("--amp-steps", type=int, default=40, help="training steps per epoch (two epochs run)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--num-workers", type=int, default=4)
    parser.add_argument("--pin-memory", type=_bool, default=True)
    parser.add_argument("--persistent-workers", type=_bool, default=True)
    parser.add_argument("--prefetch-factor", type=int, default=4)
    parser.add_argument("--allreduce-sizes", default="1048576,16777216,268435456",
                        help="comma-separated message sizes in bytes")
    parser.add_argument("--allreduce-iters", type=int, default=20)
    parser.add_argument("--allreduce-min-gpus", type=int, default=2,
                        help="run the all-reduce when at least this many GPUs are visible (1 smoke-tests it on one GPU)")
    parser.add_argument("--env", type=_environment, default={},
                        help='variables set in every process started here, a JSON object: {"NAME": "value"}')
    return parser.parse_args(argv)


def _bool(text):
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError("expected true or false, got %r" % text)


def _environment(text):
    try:
        variables = json.loads(text)
    except ValueError:
        variables = None
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise argparse.ArgumentTypeError("expected a JSON object of variable names to strings, got %r" % text)
    return variables


def _elapsed_ms(torch, device, work, iters, warmup):
    """Mean milliseconds of ``work()`` on ``device``, timed with CUDA events after a warm-up."""
    with torch.cuda.device(device):
        for _warmup in range(warmup):
            work()
        torch.cuda.synchronize(device)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _iteration in range(iters):
            work()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / iters


def gemm_tflops(torch, device, dtype, size, iters):
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    out = torch.empty(size, size, device=device, dtype=dtype)
    ms = _elapsed_ms(torch, device, lambda: torch.matmul(a, b, out=out), iters, warmup=5)
    return 2.0 * size ** 3 / (ms / 1e3) / 1e12


def copy_gbps(torch, device, mib, iters):
    """Device-to-device copy bandwidth in GB/s, counting the bytes read and the bytes written."""
    nbytes = mib * 1024 * 1024
    src = torch.empty(nbytes, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    ms = _elapsed_ms(torch, device, lambda: dst.copy_(src), iters, warmup=5)
    return 2.0 * nbytes / (ms / 1e3) / 1e9


def fused_adamw_ms(torch, device, nparams, iters):
    params = [torch.nn.Parameter(torch.randn(1 << 20, device=device)) for _param in range(nparams)]
    for param in params:
        param.grad = torch.randn_like(param)
    optimizer = torch.optim.AdamW(params, lr=1e-3, fused=True)
    return _elapsed_ms(torch, device, optimizer.step, iters, warmup=3)


# cuDeviceGetAttribute's attribute numbers (CUdevice_attribute in cuda.h, stable since CUDA 2.x).
_CU_ATTRIBUTES = {"sm_clock_max_mhz": 13, "memory_clock_max_mhz": 36, "memory_bus_width_bits": 37}


def device_properties(torch, index):
    """What the GPU reports of itself, for judging a GPU the role's catalogue does not know.

    SM count, memory and UUID from torch; peak SM and memory clocks and the memory bus width from the
    driver API (libcuda), which torch does not expose on every version. A value that cannot be read is None.
    """
    props = torch.cuda.get_device_properties(index)
    found = {"sm_count": props.multi_processor_count, "memory_total_mib": props.total_memory // (1 << 20),
             "uuid": "GPU-%s" % props.uuid if getattr(props, "uuid", None) else None}
    found.update(dict.fromkeys(_CU_ATTRIBUTES))
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        device = ctypes.c_int()
        if libcuda.cuInit(0) != 0 or libcuda.cuDeviceGet(ctypes.byref(device), index) != 0:
            return found
        for key, attribute in _CU_ATTRIBUTES.items():
            value = ctypes.c_int()
            if libcuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, device) == 0:
                # Clocks come in kHz.
                found[key] = value.value // 1000 if key.endswith("_mhz") else value.value
    except OSError:
        pass
    return found


class RegressionData(object):
    """Samples of a fixed linear map, built on the CPU in the workers (as real input pipelines are).

    Holds only tensors, so that it pickles for any worker start method.
    """

    def __init__(self, length, features):
        import torch

        self.length = length
        self.weight = torch.randn(features, features, generator=torch.Generator().manual_seed(0)) / features ** 0.5

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        import torch

        x = torch.randn(self.weight.shape[0], generator=torch.Generator().manual_seed(index))
        return x, x @ self.weight


def amp_training_step(torch, device, args):
    """Two epochs of an AMP training loop; figures from the second (persistent workers warm)."""
    features = 512
    dataset = RegressionData(args.amp_steps * args.batch_size, features)
    loader_options = {"batch_size": args.batch_size, "shuffle": True, "num_workers": args.num_workers,
                      "pin_memory": args.pin_memory}
    if args.num_workers > 0:
        loader_options.update(persistent_workers=args.persistent_workers, prefetch_factor=args.prefetch_factor)
    loader = torch.utils.data.DataLoader(dataset, **loader_options)
    model = torch.nn.Sequential(torch.nn.Linear(features, 2048), torch.nn.GELU(),
                                torch.nn.Linear(2048, features)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler("cuda")
    losses = []
    seconds = 0.0
    for epoch in range(2):
        torch.cuda.synchronize(device)
        started = time.perf_counter()
        for inputs, targets in loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.detach())
        torch.cuda.synchronize(device)
        if epoch == 1:
            seconds = time.perf_counter() - started
    values = [float(v) for v in losses]
    finite = all(math.isfinite(v) for v in values)
    return {
        "device": device.index,
        "steps": len(values),
        "samples_per_s": args.amp_steps * args.batch_size / seconds,
        "loss_first": values[0],
        "loss_last": values[-1],
        "loss_finite": finite,
        "loss_decreased": finite and values[-1] < values[0],
        "grad_scale": float(scaler.get_scale()),
        "dataloader": {"num_workers": args.num_workers, "pin_memory": args.pin_memory,
                       "persistent_workers": args.persistent_workers if args.num_workers > 0 else False,
                       "prefetch_factor": args.prefetch_factor if args.num_workers > 0 else None,
                       "batch_size": args.batch_size},
    }


def _allreduce_worker(rank, world_size, port, sizes, iters, out_path, env):
    import torch
    import torch.distributed as dist

    os.environ.update(env)
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    device = torch.device("cuda", rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", rank=rank, world_size=world_size, device_id=device)
    try:
        probe = torch.full((1024,), float(rank + 1), device=device)
        dist.all_reduce(probe)
        correct = bool(torch.all(probe == world_size * (world_size + 1) / 2.0).item())
        figures = []
        for nbytes in sizes:
            tensor = torch.ones(nbytes // 4, dtype=torch.float32, device=device)
            ms = _elapsed_ms(torch, device, lambda: dist.all_reduce(tensor), iters, warmup=5)
            # The slowest rank sets the pace, as in nccl-tests.
            slowest = torch.tensor([ms], device=device)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            ms = float(slowest.item())
            algbw = nbytes / (ms / 1e3) / 1e9
            figures.append({"bytes": nbytes, "time_ms": ms, "algbw_gbps": algbw,
                            "busbw_gbps": algbw * 2.0 * (world_size - 1) / world_size})
        if rank == 0:
            with open(out_path, "w") as handle:
                json.dump({"correct": correct, "sizes": figures}, handle)
    finally:
        dist.destroy_process_group()


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _nccl_version(torch):
    version = torch.cuda.nccl.version()  # a tuple in current torch, an int in older ones
    return ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)


def nccl_allreduce(torch, world_size, args):
    import torch.multiprocessing as mp

    os.environ.update(args.env)
    sizes = [int(s) for s in args.allreduce_sizes.split(",") if s.strip()]
    handle, out_path = tempfile.mkstemp(prefix="aistack-allreduce-", suffix=".json")
    os.close(handle)
    try:
        mp.spawn(_allreduce_worker, args=(world_size, _free_port(), sizes, args.allreduce_iters, out_path, args.env),
                 nprocs=world_size, join=True)
        with open(out_path) as result:
            figures = json.load(result)
    finally:
        os.unlink(out_path)
    figures.update(status="measured", world_size=world_size, backend="nccl",
                   nccl_version=_nccl_version(torch),
                   env=dict(args.env))
    return figures


def measure(args):
    result = {
        "schema": SCHEMA_VERSION,
        "host": socket.gethostname(),
        "time": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "python": sys.version.split()[0],
    }
    try:
        import torch
    except ImportError as exc:
        result.update(status="error", reason="torch is not importable by %s: %s" % (sys.executable, exc))
        return result
    result.update(torch=torch.__version__, cuda=torch.version.cuda)
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        result.update(status="skipped", reason="no GPU")
        return result

    try:
        result.update(measure_gpus(torch, args))
    except Exception as exc:  # pylint: disable=broad-except  # any failure is the node's verdict, recorded
        result.update(status="error", reason="measuring failed: %s: %s" % (type(exc).__name__, exc))
    return result


def measure_gpus(torch, args):
    result = {}
    started = time.perf_counter()
    torch.backends.cuda.matmul.allow_tf32 = False
    gpus = []
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        gpu = {
            "index": index,
            "name": torch.cuda.get_device_name(index),
            "compute_capability": "%d.%d" % torch.cuda.get_device_capability(index),
            "gemm_bf16_tflops": gemm_tflops(torch, device, torch.bfloat16, args.gemm_size, args.gemm_iters),
            "gemm_fp16_tflops": gemm_tflops(torch, device, torch.float16, args.gemm_size, args.gemm_iters),
            "copy_gbps": copy_gbps(torch, device, args.copy_mib, args.copy_iters),
            "fused_adamw_ms": fused_adamw_ms(torch, device, args.adamw_params, args.adamw_iters),
        }
        gpu.update(device_properties(torch, index))
        gpus.append(gpu)
        torch.cuda.empty_cache()
    result["gpus"] = gpus
    result["amp"] = amp_training_step(torch, torch.device("cuda", 0), args)
    if len(gpus) >= max(args.allreduce_min_gpus, 1):
        result["allreduce"] = nccl_allreduce(torch, len(gpus), args)
    else:
        result["allreduce"] = {"status": "skipped", "reason": "%d GPU on the node" % len(gpus)}
    result["parameters"] = {"gemm_size": args.gemm_size, "copy_mib": args.copy_mib,
                            "adamw_params_millions": args.adamw_params}
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["status"] = "measured"
    return result


def summary(result):
    """A few lines for people; the JSON is the record."""
    reason = " (%s)" % result["reason"] if result.get("reason") else ""
    lines = ["GPU validation on %s: %s%s" % (result.get("host"), result["status"], reason)]
    for gpu in result.get("gpus", []):
        lines.append("  GPU %(index)d %(name)s: bf16 %(gemm_bf16_tflops).0f TFLOP/s, fp16 %(gemm_fp16_tflops).0f TFLOP/s, "
                     "copy %(copy_gbps).0f GB/s, fused AdamW %(fused_adamw_ms).2f ms" % gpu)
    if "amp" in result:
        lines.append("  AMP step: %(samples_per_s).0f samples/s, loss %(loss_first).4f -> %(loss_last).4f" % result["amp"])
    allreduce = result.get("allreduce", {})
    if allreduce.get("status") == "measured":
        for size in allreduce["sizes"]:
            lines.append("  all-reduce %d ranks, %d B: algbw %.1f GB/s, busbw %.1f GB/s"
                         % (allreduce["world_size"], size["bytes"], size["algbw_gbps"], size["busbw_gbps"]))
    elif allreduce:
        lines.append("  all-reduce: skipped (%s)" % allreduce.get("reason"))
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    os.environ.update(args.env)
    result = measure(args)
    with open(args.json_path, "w") as handle:
        json.dump(result, handle, indent=2, sort_keys=True)
        handle.write("\n")
    print(summary(result))
    return 1 if result["status"] == "error" else 0


if __name__ == "__main__":
    sys.exit(main())
