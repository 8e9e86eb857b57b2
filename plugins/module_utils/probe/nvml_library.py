# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The driver's NVML library through ctypes, for a node whose Python has no nvidia-ml-py.

Only the calls the GPU facts need, under pynvml's names and return shapes, so that
``gpu_collection.collect_nvml`` takes either. One NVML session in the module's own process
replaces two ``nvidia-smi`` runs (the query and the banner), each of which starts a process and
opens the driver again. Struct layouts and buffer sizes are those of the NVML API reference
(nvml.h): ``nvmlMemory_t``, ``nvmlPciInfo_t``, NVML_DEVICE_NAME_V2_BUFFER_SIZE 96,
NVML_DEVICE_UUID_V2_BUFFER_SIZE 96, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80.
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

import ctypes

# The driver's userspace library, as the dynamic linker finds it (ldconfig's cache); the
# versioned name, since the unversioned one comes only with development packages.
LIBRARY = "libnvidia-ml.so.1"
NVML_SUCCESS = 0
TEXT_BUFFER = 96


class NvmlError(Exception):
    """An NVML call that did not return NVML_SUCCESS, with NVML's own words for the code."""


class Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class PciInfo(ctypes.Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", ctypes.c_uint), ("bus", ctypes.c_uint),
                ("device", ctypes.c_uint), ("pciDeviceId", ctypes.c_uint), ("pciSubSystemId", ctypes.c_uint),
                ("busId", ctypes.c_char * 32)]


class CtypesNvml(object):
    """pynvml's calls used by collect_nvml, on a loaded NVML library (a ctypes.CDLL or a test double)."""

    def __init__(self, library):
        self._library = library

    def _call(self, *names_and_args):
        """Calls the first of ``names`` the library has (a newer versioned entry point, then the older
        one) with ``args``; raises NvmlError unless it returned NVML_SUCCESS."""
        names, args = names_and_args[0], names_and_args[1:]
        for name in names:
            function = getattr(self._library, name, None)
            if function is not None:
                break
        else:
            raise NvmlError("the NVML library has none of %s" % ", ".join(names))
        code = function(*args)
        if code != NVML_SUCCESS:
            raise NvmlError(self._error_string(code))

    def _error_string(self, code):
        describe = getattr(self._library, "nvmlErrorString", None)
        if describe is None:
            return "NVML error %d" % code
        describe.restype = ctypes.c_char_p
        text = describe(code)
        return (text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)) or "NVML error %d" % code

    def _text(self, names, *args):
        buffer = ctypes.create_string_buffer(TEXT_BUFFER)
        self._call(names, *(args + (buffer, ctypes.c_uint(TEXT_BUFFER))))
        return buffer.value.decode("utf-8", "replace")

    def nvmlInit(self):
        self._call(("nvmlInit_v2", "nvmlInit"))

    def nvmlShutdown(self):
        self._call(("nvmlShutdown",))

    def nvmlSystemGetDriverVersion(self):
        return self._text(("nvmlSystemGetDriverVersion",))

    def nvmlSystemGetCudaDriverVersion_v2(self):
        version = ctypes.c_int()
        self._call(("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"), ctypes.byref(version))
        return version.value

    def nvmlDeviceGetCount(self):
        count = ctypes.c_uint()
        self._call(("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"), ctypes.byref(count))
        return count.value

    def nvmlDeviceGetHandleByIndex(self, index):
        # A pointer-sized handle, kept as c_void_p so that no call truncates it to a C int.
        handle = ctypes.c_void_p()
        self._call(("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"), ctypes.c_uint(index),
                   ctypes.byref(handle))
        return handle

    def nvmlDeviceGetName(self, handle):
        return self._text(("nvmlDeviceGetName",), handle)

    def nvmlDeviceGetUUID(self, handle):
        return self._text(("nvmlDeviceGetUUID",), handle)

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._call(("nvmlDeviceGetCudaComputeCapability",), handle, ctypes.byref(major), ctypes.byref(minor))
        return major.value, minor.value

    def nvmlDeviceGetMemoryInfo(self, handle):
        memory = Memory()
        self._call(("nvmlDeviceGetMemoryInfo",), handle, ctypes.byref(memory))
        return memory

    def nvmlDeviceGetPciInfo(self, handle):
        pci = PciInfo()
        self._call(("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"), handle, ctypes.byref(pci))
        return pci

    def nvmlDeviceGetPersistenceMode(self, handle):
        mode = ctypes.c_uint()
        self._call(("nvmlDeviceGetPersistenceMode",), handle, ctypes.byref(mode))
        return mode.value

    def nvmlDeviceGetMigMode(self, handle):
        current, pending = ctypes.c_uint(), ctypes.c_uint()
        self._call(("nvmlDeviceGetMigMode",), handle, ctypes.byref(current), ctypes.byref(pending))
        return current.value, pending.value


def load_nvml(load=ctypes.CDLL):
    """CtypesNvml over the driver's NVML library, or None where it does not load (no driver, a container
    without the driver's libraries)."""
    try:
        return CtypesNvml(load(LIBRARY))
    except OSError:
        return None
