#!/usr/bin/env python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start a Jupyter kernel by name the way a Jupyter server does (jupyter_client), run code in it,
and print one JSON line: where the spec was found, the kernel's interpreter, environment variables,
torch and CUDA device, and the env's state digest. Run by the env's own python (ipykernel brings
jupyter_client) with -c after env_proof.py."""

import argparse
import json
import sys

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import start_new_kernel

# plugins/module_utils/probe/env_proof.py, run ahead of this text (vars/main.yml).
from aistack_env_proof import env_state

CODE = r'''
import json, os, sys
report = {"executable": sys.executable, "env": dict((key, os.environ.get(key)) for key in %r),
          "torch": None, "cuda_available": False, "device": None}
try:
    import torch
except ImportError:
    pass
else:
    report["torch"] = torch.__version__
    report["cuda_available"] = torch.cuda.is_available()
    if report["cuda_available"]:
        report["device"] = torch.cuda.get_device_name(0)
print("AISTACK-KERNEL " + json.dumps(report))
'''


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--keys", default="")
    args = parser.parse_args()
    keys = [key for key in args.keys.split(",") if key]

    spec = KernelSpecManager().get_kernel_spec(args.name)
    manager, client = start_new_kernel(kernel_name=args.name, startup_timeout=args.timeout)
    output = []

    def collect(message):
        if message["msg_type"] == "stream":
            output.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            output.append("\n".join(message["content"]["traceback"]))

    try:
        reply = client.execute_interactive(CODE % (keys,), timeout=args.timeout, output_hook=collect)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    text = "".join(output)
    lines = [line for line in text.splitlines() if line.startswith("AISTACK-KERNEL ")]
    if reply["content"]["status"] != "ok" or not lines:
        sys.stderr.write("kernel %s did not run the check: %s\n" % (args.name, text))
        return 1
    report = json.loads(lines[-1][len("AISTACK-KERNEL "):])
    report["resource_dir"] = spec.resource_dir
    # The state this proof was made on, for the role to record with it.
    report["env_state"] = env_state()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
