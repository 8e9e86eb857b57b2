# -*- coding: utf-8 -*-
# Copyright: (c) 2026, aistack.gpu_node contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

"""CUDA compatibility tables, one constant per section of the research data file.

Each constant mirrors the section of the research data file (its copy in the repository:
``tests/unit/fixtures/shared/reference/cuda_compat_data.yml``) with the same name (upper-cased);
the unit test ``test_cuda_tables.py`` compares them so they cannot drift.
Every entry keeps its ``status`` (primary, secondary, unconfirmed) and ``source``; the checks in
``cuda/checks.py`` never turn an ``unconfirmed`` entry into an error.

``GPU_GENERATIONS`` and ``DRIVER_BRANCHES_ADDED`` are the tables not in the data file: the first
names the architecture of a compute capability major/minor so the driver-branch and kernel-module
rules (which speak of "Volta", "Blackwell") can be applied to a measured compute capability; the
second holds driver branches the data file lacks, each with its own source (``DRIVER_BRANCHES``
stays equal to the data file).
"""

from __future__ import (absolute_import, division, print_function)
__metaclass__ = type

SRC_RELEASE_NOTES = (
    "CUDA 13.1 release notes, Table 3 'CUDA Toolkit and Corresponding Driver Versions' "
    "(https://docs.nvidia.com/cuda/archive/13.1.0/cuda-toolkit-release-notes/index.html)"
)
SRC_RELEASE_NOTES_SECONDARY = "secondary quotes of CUDA 13.2/13.3 release notes "
SRC_MINOR_COMPAT = (
    "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html + 13.1 release notes (13.x >=580, 12.x >=525 <580, 11.x "
    ">=450 <525; 11.x needs 450.80.02)"
)
SRC_MINOR_COMPAT_10X = (
    "minor-version-compatibility page, Table 2 'CUDA Toolkit 10.x Minimum Required Driver Versions' (no minor compat before CUDA 11)"
)
SRC_CUTLASS = "NVIDIA/cutlass README.md 'Hardware' table (copies "
SRC_CUDA_GPUS = "https://developer.nvidia.com/cuda-gpus (as quoted verbatim in ; LMCache/LMCache PR #3275)"
SRC_PYTORCH_RELEASE_MD = "pytorch/pytorch RELEASE.md 'Release Compatibility Matrix' (English-table copy "


META = {"schema_version": 1, "generated_by": "aistack.gpu_node research notes", "driver_version_compare": "integer-tuple"}

TOOLKIT_MIN_DRIVER_SOURCES = {
    "release_notes_table": SRC_RELEASE_NOTES,
    "release_notes_secondary": SRC_RELEASE_NOTES_SECONDARY,
    "minor_compat": SRC_MINOR_COMPAT,
    "minor_compat_10x": SRC_MINOR_COMPAT_10X,
}

MINOR_VERSION_COMPAT_FLOOR = {
    "13": {"min_driver": "580", "upper_range": None, "status": "primary", "source": SRC_MINOR_COMPAT},
    "12": {
        "min_driver": "525.60.13",
        "upper_range": "<580 (newer drivers still work via backward compatibility)",
        "status": "primary",
        "source": SRC_MINOR_COMPAT,
    },
    "11": {
        "min_driver": "450.80.02",
        "upper_range": "<525 (newer drivers still work via backward compatibility)",
        "status": "primary",
        "source": SRC_MINOR_COMPAT,
    },
    "10": {
        "min_driver": None,
        "note": "no minor-version compatibility; driver must be >= the exact toolkit row",
        "status": "primary",
        "source": SRC_MINOR_COMPAT_10X,
    },
}

TOOLKIT_MIN_DRIVER = {
    "13.5": {
        "label": "CUDA 13.5",
        "toolkit_driver": None,
        "minor_compat_min_driver": "580",
        "status": "unconfirmed",
        "note": "Linux driver unbundled since 13.4; exact minimum not seen",
        "source": "CUDA 13.5 release notes not read",
    },
    "13.4.2": {
        "label": "CUDA 13.4 Update 1",
        "toolkit_driver": None,
        "minor_compat_min_driver": "580",
        "status": "unconfirmed",
        "note": "driver unbundled",
        "source": "docs.nvidia.com/cuda/archive/13.4.2 (page head only)",
    },
    "13.4.1": {
        "label": "CUDA 13.4 (GA; 13.4.0 was a Developer Preview)",
        "toolkit_driver": None,
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "note": "N/A - Linux driver no longer bundled; R616 >=616.00 developer driver for new 13.4 features; cuda-compat-13-4 built from R615",
        "source": "; forward-compatibility page (cuda-compat-13-4 <- 615)",
    },
    "13.3.1": {
        "label": "CUDA 13.3 Update 1",
        "toolkit_driver": "610.43.02",
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "source": SRC_RELEASE_NOTES_SECONDARY,
    },
    "13.3.0": {
        "label": "CUDA 13.3 GA",
        "toolkit_driver": "610.43.02",
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "source": SRC_RELEASE_NOTES_SECONDARY,
    },
    "13.2.1": {
        "label": "CUDA 13.2 Update 1",
        "toolkit_driver": "595.58.03",
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "source": SRC_RELEASE_NOTES_SECONDARY,
    },
    "13.2.0": {
        "label": "CUDA 13.2 GA",
        "toolkit_driver": "595.45.04",
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "source": SRC_RELEASE_NOTES_SECONDARY,
    },
    "13.1.1": {
        "label": "CUDA 13.1 Update 1",
        "toolkit_driver": "590.48.01",
        "minor_compat_min_driver": "580",
        "status": "secondary",
        "source": SRC_RELEASE_NOTES_SECONDARY,
    },
    "13.1.0": {
        "label": "CUDA 13.1 GA",
        "toolkit_driver": "590.44.01",
        "minor_compat_min_driver": "580",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "13.0.2": {
        "label": "CUDA 13.0 Update 2",
        "toolkit_driver": "580.95.05",
        "minor_compat_min_driver": "580",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "13.0.1": {
        "label": "CUDA 13.0 Update 1",
        "toolkit_driver": "580.82.07",
        "minor_compat_min_driver": "580",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "13.0.0": {
        "label": "CUDA 13.0 GA",
        "toolkit_driver": "580.65.06",
        "minor_compat_min_driver": "580",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.9.1": {
        "label": "CUDA 12.9 Update 1",
        "toolkit_driver": "575.57.08",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.9.0": {
        "label": "CUDA 12.9 GA",
        "toolkit_driver": "575.51.03",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.8.1": {
        "label": "CUDA 12.8 Update 1",
        "toolkit_driver": "570.124.06",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.8.0": {
        "label": "CUDA 12.8 GA",
        "toolkit_driver": "570.26",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.6.3": {
        "label": "CUDA 12.6 Update 3",
        "toolkit_driver": "560.35.05",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.6.2": {
        "label": "CUDA 12.6 Update 2",
        "toolkit_driver": "560.35.03",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.6.1": {
        "label": "CUDA 12.6 Update 1",
        "toolkit_driver": "560.35.03",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.6.0": {
        "label": "CUDA 12.6 GA",
        "toolkit_driver": "560.28.03",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.5.1": {
        "label": "CUDA 12.5 Update 1",
        "toolkit_driver": "555.42.06",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.5.0": {
        "label": "CUDA 12.5 GA",
        "toolkit_driver": "555.42.02",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.4.1": {
        "label": "CUDA 12.4 Update 1",
        "toolkit_driver": "550.54.15",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.4.0": {
        "label": "CUDA 12.4 GA",
        "toolkit_driver": "550.54.14",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.3.1": {
        "label": "CUDA 12.3 Update 1",
        "toolkit_driver": "545.23.08",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.3.0": {
        "label": "CUDA 12.3 GA",
        "toolkit_driver": "545.23.06",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.2.2": {
        "label": "CUDA 12.2 Update 2",
        "toolkit_driver": "535.104.05",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.2.1": {
        "label": "CUDA 12.2 Update 1",
        "toolkit_driver": "535.86.09",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.2.0": {
        "label": "CUDA 12.2 GA",
        "toolkit_driver": "535.54.03",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.1.1": {
        "label": "CUDA 12.1 Update 1",
        "toolkit_driver": "530.30.02",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.1.0": {
        "label": "CUDA 12.1 GA",
        "toolkit_driver": "530.30.02",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.0.1": {
        "label": "CUDA 12.0 Update 1",
        "toolkit_driver": "525.85.12",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "12.0.0": {
        "label": "CUDA 12.0 GA",
        "toolkit_driver": "525.60.13",
        "minor_compat_min_driver": "525.60.13",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.8.0": {
        "label": "CUDA 11.8 GA",
        "toolkit_driver": "520.61.05",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.7.1": {
        "label": "CUDA 11.7 Update 1",
        "toolkit_driver": "515.48.07",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.7.0": {
        "label": "CUDA 11.7 GA",
        "toolkit_driver": "515.43.04",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.6.2": {
        "label": "CUDA 11.6 Update 2",
        "toolkit_driver": "510.47.03",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.6.1": {
        "label": "CUDA 11.6 Update 1",
        "toolkit_driver": "510.47.03",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.6.0": {
        "label": "CUDA 11.6 GA",
        "toolkit_driver": "510.39.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.5.2": {
        "label": "CUDA 11.5 Update 2",
        "toolkit_driver": "495.29.05",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.5.1": {
        "label": "CUDA 11.5 Update 1",
        "toolkit_driver": "495.29.05",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.5.0": {
        "label": "CUDA 11.5 GA",
        "toolkit_driver": "495.29.05",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.4.4": {
        "label": "CUDA 11.4 Update 4",
        "toolkit_driver": "470.82.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.4.3": {
        "label": "CUDA 11.4 Update 3",
        "toolkit_driver": "470.82.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.4.2": {
        "label": "CUDA 11.4 Update 2",
        "toolkit_driver": "470.57.02",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.4.1": {
        "label": "CUDA 11.4 Update 1",
        "toolkit_driver": "470.57.02",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.4.0": {
        "label": "CUDA 11.4.0 GA",
        "toolkit_driver": "470.42.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.3.1": {
        "label": "CUDA 11.3.1 Update 1",
        "toolkit_driver": "465.19.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.3.0": {
        "label": "CUDA 11.3.0 GA",
        "toolkit_driver": "465.19.01",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.2.2": {
        "label": "CUDA 11.2.2 Update 2",
        "toolkit_driver": "460.32.03",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.2.1": {
        "label": "CUDA 11.2.1 Update 1",
        "toolkit_driver": "460.32.03",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.2.0": {
        "label": "CUDA 11.2.0 GA",
        "toolkit_driver": "460.27.03",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.1.1": {
        "label": "CUDA 11.1.1 Update 1",
        "toolkit_driver": "455.32",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.1.0": {
        "label": "CUDA 11.1 GA",
        "toolkit_driver": "455.23",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.0.3": {
        "label": "CUDA 11.0.3 Update 1",
        "toolkit_driver": "450.51.06",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
        "note": "11.0 shipped with an older driver; minor compat across 11.x needs 450.80.02",
    },
    "11.0.2": {
        "label": "CUDA 11.0.2 GA",
        "toolkit_driver": "450.51.05",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "11.0.1": {
        "label": "CUDA 11.0.1 RC",
        "toolkit_driver": "450.36.06",
        "minor_compat_min_driver": "450.80.02",
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "10.2.89": {
        "label": "CUDA 10.2.89",
        "toolkit_driver": "440.33",
        "minor_compat_min_driver": None,
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "10.1.105": {
        "label": "CUDA 10.1 (10.1.105 general release, and updates)",
        "toolkit_driver": "418.39",
        "minor_compat_min_driver": None,
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
    "10.0.130": {
        "label": "CUDA 10.0.130",
        "toolkit_driver": "410.48",
        "minor_compat_min_driver": None,
        "status": "primary",
        "source": SRC_RELEASE_NOTES,
    },
}

FORWARD_COMPAT = {
    "source": "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html ()",
    "status": "primary",
    "eligible_hardware": ["NVIDIA Data Center GPUs", "Select NGC Server Ready SKUs of RTX cards", "Jetson boards"],
    "not_eligible": ["GeForce / consumer", "non-NGC-Server-Ready workstation RTX"],
    "package_name": "cuda-compat-<major>-<minor>",
    "install_dir": "/usr/local/cuda-<major>.<minor>/compat",
    "loader_config_required": True,
    "unsupported_targets": ["End-of-life driver branches", "New Feature Branches"],
    "error_codes": {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": 803, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE": 804},
    "matrix_columns": ["535", "570", "580", "590", "595", "610", "615"],
    "matrix": {
        "cuda-compat-13-4": ["C", "C", "C", "C", "C", "C", "N/A"],
        "cuda-compat-13-3": ["C", "C", "C", "C", "C", "N/A", "X"],
        "cuda-compat-13-2": ["C", "C", "C", "C", "N/A", "X", "X"],
        "cuda-compat-13-1": ["C", "C", "C", "N/A", "X", "X", "X"],
        "cuda-compat-13-0": ["C", "C", "N/A", "X", "X", "X", "X"],
        "cuda-compat-12-9": ["C", "C", "X", "X", "X", "X", "X"],
        "cuda-compat-12-8": ["C", "N/A", "X", "X", "X", "X", "X"],
        "cuda-compat-12-6": ["C", "X", "X", "X", "X", "X", "X"],
        "cuda-compat-12-5": ["C", "X", "X", "X", "X", "X", "X"],
        "cuda-compat-12-4": ["C", "X", "X", "X", "X", "X", "X"],
        "cuda-compat-12-3": ["C", "X", "X", "X", "X", "X", "X"],
        "cuda-compat-12-2": ["N/A", "X", "X", "X", "X", "X", "X"],
    },
}

DRIVER_BRANCHES = {
    "source": "https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html and .../620/...",
    "status": "primary",
    "R535": {"designation": "LTSB", "eol": "2026-06", "max_cuda_major_without_fc": 12},
    "R570": {"designation": "Production Branch", "eol": "2026-02", "max_cuda_major_without_fc": 12},
    "R580": {
        "designation": "LTSB",
        "eol": "2028-06",
        "note": "an older page said August 2028",
        "max_cuda_major_without_fc": 13,
        "last_branch_for": ["Maxwell", "Pascal", "Volta"],
        "last_branch_for_source": "secondary quotes of NVIDIA notice",
    },
    "R595": {"designation": "Production Branch", "eol": "2027-03", "max_cuda_major_without_fc": 13},
    "R610": {"designation": "New Feature Branch", "eol": "2026-08", "max_cuda_major_without_fc": 13},
    "R620": {"designation": "LTSB", "eol": "2029-09", "max_cuda_major_without_fc": 13},
    "R470": {"note": "last branch for Kepler", "source": "packages.debian.org nvidia-driver description", "status": "primary"},
    "blackwell_min_branch": {
        "value": "R570",
        "status": "unconfirmed",
        "source": "secondary (RTX 50 install reports); CUDA 12.8 = first toolkit with sm_100/sm_120",
    },
}

ARCH_SUPPORT = {
    "10": {
        "sm": ["30", "32", "35", "37", "50", "52", "53", "60", "61", "62", "70", "72", "75"],
        "notes": "sm_75 from 10.0",
        "status": "secondary",
        "source": "spack-packages CudaPackage table (repos/spack_repo/builtin/build_systems/cuda.py)",
    },
    "11": {
        "sm": ["35", "37", "50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "89", "90"],
        "added": {"80": "11.0", "86": "11.1", "87": "11.4", "89": "11.8", "90": "11.8"},
        "removed_vs_prev": ["30", "32"],
        "status": "secondary",
        "source": "spack-packages CudaPackage (sm_90 there says 12.0, but PyTorch cu118 wheels ship sm_90 -> 11.8)",
    },
    "12": {
        "sm": [
            "50", "52", "53", "60", "61", "62", "70", "72", "75", "80", "86", "87", "89", "90", "90a", "100", "100a", "100f", "101", "101a", "101f",
            "103", "103a", "103f", "120", "120a", "120f", "121", "121a", "121f",
        ],
        "added": {
            "90a": "12.0",
            "100": "12.8",
            "100a": "12.8",
            "101": "12.8",
            "101a": "12.8",
            "120": "12.8",
            "120a": "12.8",
            "100f": "12.9",
            "101f": "12.9",
            "103": "12.9",
            "103a": "12.9",
            "103f": "12.9",
            "120f": "12.9",
            "121": "12.9",
            "121a": "12.9",
            "121f": "12.9",
        },
        "removed_vs_prev": ["35", "37"],
        "deprecated": ["50", "52", "53", "60", "61", "62", "70", "72"],
        "status": "secondary",
        "source": "spack-packages CudaPackage; PyTorch build_cuda.sh comment 'sm_50-sm_60 ... deprecated in CUDA 12.8/9'",
    },
    "13": {
        "sm": [
            "75", "80", "86", "87", "88", "89", "90", "90a", "100", "100f", "100a", "103", "103f", "103a", "110", "110f", "110a", "120", "120f",
            "120a", "121", "121f", "121a",
        ],
        "removed_vs_prev": ["50", "52", "53", "60", "61", "62", "70", "72", "101", "101a", "101f"],
        "renamed": {"101": "110"},
        "default_arch": "sm_75",
        "sm_88_introduced_in": "unconfirmed",
        "status": "primary",
        "source": "nvcc manual 5.2/5.7.3.1 (13.x; mirror ; CUDA 13 release notes 2.5.2 'Deprecated Architectures'",
    },
}

GPU_COMPUTE_CAPABILITY_SOURCES = {"cutlass": SRC_CUTLASS, "cudagpus": SRC_CUDA_GPUS}

GPU_COMPUTE_CAPABILITY = {
    "Tesla K80": {"cc": "3.7", "status": "unconfirmed", "source": "general knowledge; not re-verified"},
    "Tesla M60": {"cc": "5.2", "status": "unconfirmed", "source": "general knowledge; not re-verified"},
    "Tesla P100": {"cc": "6.0", "status": "unconfirmed", "source": "general knowledge; not re-verified"},
    "Tesla P40": {"cc": "6.1", "status": "unconfirmed", "source": "general knowledge; not re-verified"},
    "Tesla P4": {"cc": "6.1", "status": "unconfirmed", "source": "general knowledge; not re-verified"},
    "Tesla V100": {"cc": "7.0", "status": "primary", "source": SRC_CUTLASS},
    "Tesla T4": {"cc": "7.5", "status": "primary", "source": SRC_CUTLASS},
    "A100": {"cc": "8.0", "status": "primary", "source": SRC_CUTLASS},
    "A30": {"cc": "8.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "A800": {"cc": "8.0", "status": "unconfirmed", "source": "not verified"},
    "A40": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "A10": {"cc": "8.6", "status": "primary", "source": SRC_CUTLASS},
    "A10G": {"cc": "8.6", "status": "unconfirmed", "source": "not verified (AWS SKU)"},
    "A16": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "A2": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "L4": {"cc": "8.9", "status": "primary", "source": SRC_CUDA_GPUS},
    "L40": {"cc": "8.9", "status": "primary", "source": SRC_CUTLASS},
    "L40S": {"cc": "8.9", "status": "primary", "source": SRC_CUDA_GPUS},
    "L20": {"cc": "8.9", "status": "unconfirmed", "source": "not verified"},
    "H100": {"cc": "9.0", "status": "primary", "source": SRC_CUTLASS},
    "H200": {"cc": "9.0", "status": "primary", "source": SRC_CUTLASS},
    "GH200": {"cc": "9.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "H800": {"cc": "9.0", "status": "unconfirmed", "source": "not verified"},
    "H20": {"cc": "9.0", "status": "unconfirmed", "source": "not verified"},
    "B200": {"cc": "10.0", "status": "primary", "source": SRC_CUTLASS},
    "GB200": {"cc": "10.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "B300": {"cc": "10.3", "status": "primary", "source": SRC_CUTLASS},
    "GB300": {"cc": "10.3", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX PRO 6000 Blackwell Server Edition": {"cc": "12.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "Quadro GV100": {"cc": "7.0", "status": "unconfirmed", "source": "not verified"},
    "Quadro RTX 8000": {"cc": "7.5", "status": "primary", "source": SRC_CUDA_GPUS},
    "Quadro RTX 6000": {"cc": "7.5", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX A6000": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX A5000": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX A4000": {"cc": "8.6", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX 6000 Ada": {"cc": "8.9", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX 5000 Ada": {"cc": "8.9", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX PRO 6000 Blackwell Workstation Edition": {"cc": "12.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "RTX PRO 5000 Blackwell": {"cc": "12.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "TITAN V": {"cc": "7.0", "status": "primary", "source": SRC_CUTLASS},
    "TITAN RTX": {"cc": "7.5", "status": "primary", "source": SRC_CUDA_GPUS},
    "GeForce GTX 10xx": {"cc": "6.1", "status": "secondary", "source": SRC_CUDA_GPUS},
    "GeForce GTX 16xx": {"cc": "7.5", "status": "primary", "source": SRC_CUDA_GPUS},
    "GeForce RTX 20xx": {"cc": "7.5", "status": "primary", "source": SRC_CUTLASS},
    "GeForce RTX 30xx": {"cc": "8.6", "status": "primary", "source": SRC_CUTLASS},
    "GeForce RTX 40xx": {"cc": "8.9", "status": "primary", "source": SRC_CUTLASS},
    "GeForce RTX 50xx": {"cc": "12.0", "status": "primary", "source": SRC_CUTLASS},
    "Jetson AGX Xavier": {"cc": "7.2", "status": "unconfirmed", "source": "not verified"},
    "Jetson AGX Orin": {"cc": "8.7", "status": "primary", "source": SRC_CUDA_GPUS},
    "Jetson Thor (T5000/T4000)": {"cc": "11.0", "status": "primary", "source": SRC_CUDA_GPUS},
    "DRIVE Thor": {"cc": "11.0", "status": "primary", "source": SRC_CUTLASS},
    "DGX Spark (GB10)": {"cc": "12.1", "status": "primary", "source": SRC_CUTLASS},
}

TORCH_DEVICE_REQUIREMENT = {
    "source": "torch/cuda/__init__.py DEVICE_REQUIREMENT (recent main ~2.10/2.11; copy ; referenced by pytorch/pytorch#182250)",
    "status": "primary",
    "rules": {
        "50": {"same_major_from": "5.0", "exclude": ["5.3"]},
        "52": {"same_major_from": "5.2", "exclude": ["5.3"]},
        "53": {"only": ["5.3"]},
        "60": {"same_major_from": "6.0", "exclude": ["6.2"]},
        "61": {"same_major_from": "6.1", "exclude": ["6.2"]},
        "62": {"only": ["6.2"]},
        "70": {"same_major_from": "7.0", "exclude": ["7.2"]},
        "72": {"only": ["7.2"]},
        "75": {"same_major_from": "7.5"},
        "80": {"same_major_from": "8.0", "exclude": ["8.7"]},
        "86": {"same_major_from": "8.6", "exclude": ["8.7"]},
        "87": {"only": ["8.7"]},
        "89": {"same_major_from": "8.9"},
        "90": {"same_major_from": "9.0"},
        "100": {"same_major_from": "10.0", "exclude": ["10.1"]},
        "101": {"only": ["10.1", "11.0"]},
        "103": {"same_major_from": "10.3"},
        "110": {"same_major_from": "11.0"},
        "120": {"same_major_from": "12.0"},
        "121": {"same_major_from": "12.1"},
    },
}

TORCH_WHEEL_VARIANTS_SOURCES = {"release_md": SRC_PYTORCH_RELEASE_MD}

TORCH_WHEEL_VARIANTS = {
    "2.4": {
        "variants": ["cu118", "cu121", "cu124"],
        "stable": ["cu118", "cu121"],
        "experimental": ["cu124"],
        "pypi_default": "cu121",
        "pypi_default_status": "unconfirmed",
        "cudnn": "9.1.0.70",
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.5": {
        "variants": ["cu118", "cu121", "cu124"],
        "stable": ["cu118", "cu121", "cu124"],
        "experimental": [],
        "pypi_default": "cu124",
        "pypi_default_source": "woct0rdho/triton-windows#43 (PyPI deps cuda-runtime-cu12 12.4.127)",
        "cudnn": "9.1.0.70",
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.6": {
        "variants": ["cu118", "cu124", "cu126"],
        "stable": ["cu118", "cu124"],
        "experimental": ["cu126"],
        "pypi_default": "cu124",
        "pypi_default_status": "unconfirmed",
        "cudnn": {"cu124": "9.1.0.70", "cu126": "9.5.1.17"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.7": {
        "variants": ["cu118", "cu126", "cu128"],
        "stable": ["cu118", "cu126"],
        "experimental": ["cu128"],
        "pypi_default": "cu126",
        "pypi_default_source": "apache/tvm#17905; googlecolab/colabtools#5296",
        "cudnn": {"cu118": "9.1.0.70", "cu126": "9.5.1.17", "cu128": "9.7.1.26"},
        "note": "2.7.x is the last release with cu118",
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.8": {
        "variants": ["cu126", "cu128", "cu129"],
        "stable": ["cu126", "cu128"],
        "experimental": ["cu129"],
        "pypi_default": "cu128",
        "pypi_default_source": "mmartial/ComfyUI-Nvidia-Docker#63",
        "cudnn": "9.10.2.21",
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.9": {
        "variants": ["cu126", "cu128", "cu130"],
        "stable": ["cu126", "cu128"],
        "experimental": ["cu130"],
        "pypi_default": "cu128",
        "pypi_default_source": "googlecolab/colabtools#5661",
        "cudnn": {"cu126": "9.10.2.21", "cu128": "9.10.2.21", "cu130": "9.13.0.50"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.10": {
        "variants": ["cu126", "cu128", "cu130"],
        "stable": ["cu126", "cu128"],
        "experimental": ["cu130"],
        "pypi_default": "cu128",
        "pypi_default_source": "googlecolab/colabtools#5801",
        "cudnn": {"cu126": "9.10.2.21", "cu128": "9.10.2.21", "cu130": "9.15.1.9"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.11": {
        "variants": ["cu126", "cu128", "cu130"],
        "stable": ["cu126", "cu128", "cu130"],
        "experimental": [],
        "pypi_default": "cu130",
        "pypi_default_source": "googlecolab/colabtools#5925; pytorch/pytorch#177975",
        "cudnn": {"cu126": "9.10.2.21", "cu128": "9.17.1.4", "cu130": "9.17.1.4"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.12": {
        "variants": ["cu126", "cu130", "cu132"],
        "stable": ["cu126", "cu130"],
        "experimental": ["cu132"],
        "pypi_default": "cu130",
        "pypi_default_source": "googlecolab/colabtools#5982 (cu128 removed)",
        "cudnn": {"cu126": "9.10.2.21", "cu130": "9.20.0.48", "cu132": "9.20.0.48"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.13": {
        "variants": ["cu126", "cu130", "cu132"],
        "stable": ["cu126", "cu130"],
        "experimental": ["cu132"],
        "pypi_default": "cu130",
        "pypi_default_source": "googlecolab/colabtools#6053 (also mentions cu129 builds - unconfirmed)",
        "cudnn": {"cu126": "9.10.2.21", "cu130": "9.20.0.48", "cu132": "9.20.0.48"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
    "2.14": {
        "variants": ["cu126", "cu130", "cu132"],
        "stable": ["cu126", "cu130", "cu132"],
        "experimental": [],
        "pypi_default": "cu130",
        "pypi_default_source": "googlecolab/colabtools#6093 ('CUDA 13.0 remains the default')",
        "cudnn": {"cu126": "9.10.2.21", "cu130": "9.24.0.43", "cu132": "9.24.0.43"},
        "status": "primary",
        "source": SRC_PYTORCH_RELEASE_MD,
    },
}

TORCH_WHEEL_ARCH_LISTS = {
    "source": (
        "pytorch .ci/manywheel/build_cuda.sh (pytorch/pytorch@00c7a380, forks KDr2, zhulu506/pytorch_gmlake, tinglvv, nWEIdia) + RELEASE.md "
        "'PyTorch CUDA Support Matrix'; measured outputs from issues"
    ),
    "cu118": {
        "2.4-2.7": {
            "torch_cuda_arch_list": "3.7;5.0;6.0;7.0;7.5;8.0;8.6;9.0",
            "get_arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_37", "sm_90"],
            "status": "primary",
            "note": "measured for 2.6.0+cu118 ; other releases same script - unconfirmed",
        },
    },
    "cu121": {"2.4-2.5": {"torch_cuda_arch_list": "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "status": "secondary", "note": "fork build script ~2.5"}},
    "cu124": {
        "2.4-2.6": {
            "torch_cuda_arch_list": "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
            "ptx": "unconfirmed",
            "status": "secondary",
            "note": "some script versions add +PTX on 9.0",
        },
    },
    "cu126": {
        "2.6-2.7": {"torch_cuda_arch_list": "5.0;6.0;7.0;7.5;8.0;8.6;9.0", "ptx": "unconfirmed", "status": "secondary"},
        "2.8-2.14": {
            "torch_cuda_arch_list": "5.0;6.0;7.0;7.5;8.0;8.6;9.0",
            "get_arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
            "status": "primary",
            "note": "measured 2.11.0+cu126 (pytorch/pytorch#182250)",
        },
    },
    "cu128": {
        "2.7": {
            "torch_cuda_arch_list": "7.5;8.0;8.6;9.0;10.0;12.0+PTX",
            "get_arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
            "status": "primary",
            "note": "measured 2.7.0/2.7.1+cu128 (multiple reports)",
        },
        "2.8-2.10": {
            "torch_cuda_arch_list": "7.0;7.5;8.0;8.6;9.0;10.0;12.0",
            "get_arch_list": ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
            "status": "primary",
            "note": "measured 2.10.0+cu128 (pytorch/pytorch#182250); Maxwell/Pascal removed, Volta re-added in 2.8",
        },
        "2.11": {
            "torch_cuda_arch_list": "7.5;8.0;8.6;9.0;10.0;12.0",
            "get_arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
            "status": "primary",
            "note": "measured 2.11.0+cu128 (pytorch/pytorch#182250); Volta dropped (PR #175253)",
        },
    },
    "cu129": {
        "2.8": {
            "torch_cuda_arch_list": "7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
            "status": "primary",
            "source": "build_cuda.sh @00c7a380; PR #158700 output",
        },
    },
    "cu130": {
        "2.9-2.14": {
            "torch_cuda_arch_list": "7.5;8.0;8.6;9.0;10.0;12.0+PTX",
            "ptx_on_pypi_wheel": "unconfirmed",
            "status": "primary",
            "note": "+PTX available on linux builds only (RELEASE.md); malfet: promoting 13.0 to PyPI would drop +PTX",
        },
        "aarch64": {"torch_cuda_arch_list": "8.0;9.0;10.0;11.0;12.0+PTX", "status": "primary", "source": "RELEASE.md; nWEIdia build_cuda.sh"},
    },
    "cu132": {"2.12-2.14": {"torch_cuda_arch_list": "7.5;8.0;8.6;9.0;10.0;12.0+PTX", "status": "primary", "source": "RELEASE.md (same as 13.0.2)"}},
}

EXTENSION_BUILD_RULES = {
    "torch_cpp_extension": {
        "source": "pytorch/pytorch torch/utils/cpp_extension.py _check_cuda_version (stored commit 0011ec5c)",
        "status": "primary",
        "compares": "nvcc --version 'release X.Y' vs torch.version.cuda",
        "major_mismatch": "error",
        "minor_mismatch": "warning",
        "called_from": "BuildExtension.build_extensions when any .cu source and not HIP; not on JIT load()/load_inline() path",
        "cuda_home_order": ["CUDA_HOME", "CUDA_PATH", "dirname(dirname(which nvcc))", "/usr/local/cuda (if exists)", None],
    },
    "apex": {
        "source": "NVIDIA/apex setup.py HEAD 6424da3b (2026-07-08)",
        "status": "primary",
        "compares": "packaging.version.parse(nvcc 'release X.Y') != parse(torch.version.cuda)",
        "any_mismatch": "error",
        "env_vars": [
            "APEX_CPP_EXT", "APEX_CUDA_EXT", "APEX_ALL_CONTRIB_EXT", "APEX_PARALLEL_BUILD", "TORCH_CUDA_ARCH_LIST", "APEX_XENTROPY",
            "APEX_FAST_LAYER_NORM", "APEX_DISTRIBUTED_ADAM", "APEX_DISTRIBUTED_LAMB", "APEX_BNP", "APEX_GROUP_NORM", "APEX_INDEX_MUL_2D",
            "APEX_DEPRECATED_FUSED_ADAM", "APEX_DEPRECATED_FUSED_LAMB", "APEX_PERMUTATION_SEARCH", "APEX_FOCAL_LOSS", "APEX_TRANSDUCER",
            "APEX_CUDNN_GBN", "APEX_PEER_MEMORY", "APEX_NCCL_P2P", "APEX_FAST_BOTTLENECK", "APEX_FUSED_CONV_BIAS_RELU", "APEX_NCCL_ALLOCATOR",
        ],
        "nvcc_append_flags": "read by nvcc itself, not by setup.py (README example only)",
        "default_arch_list_without_visible_gpu": {
            ">=13.0": "7.5;8.0;8.6;9.0;10.0;11.0;12.0",
            ">=12.8": "7.0;7.5;8.0;8.6;9.0;10.0;12.0",
            ">=11.8": "6.0;6.1;6.2;7.0;7.5;8.0;8.6;9.0",
            ">=11.1": "6.0;6.1;6.2;7.0;7.5;8.0;8.6",
            "==11.0": "6.0;6.1;6.2;7.0;7.5;8.0",
            "else": "6.0;6.1;6.2;7.0;7.5",
        },
    },
}

CUDNN = {
    "source": "https://docs.nvidia.com/deeplearning/cudnn/latest/support-matrix/index.html (9.17.0 and 9.10.2 versions), v9.5.x/v9.0.0 pages",
    "status": "primary",
    "9.17.0-cuda13": {"cuda": ["13.0", "13.1"], "linux_min_driver": "580.65.06", "cc": ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]},
    "9.17.0-cuda12": {
        "cuda": ["12.0", "12.9"],
        "linux_min_driver": "525.60.13",
        "cc": ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"],
        "note": "Blackwell footnoted (12.8+)",
    },
    "9.10.2-cuda12.8+": {
        "cuda": ["12.8", "12.9"],
        "linux_min_driver": "570.26",
        "cc": ["5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"],
        "note": "5.x/6.x/7.0 deprecated",
    },
    "9.10.2-cuda12": {
        "cuda": ["12.0", "12.9"],
        "linux_min_driver": "525.60.13",
        "cc": ["5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0"],
    },
    "9.x-cuda11": {"cuda": ["11.8"], "linux_min_driver": "450.80.02", "cc": ["5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0"]},
}

KERNEL_MODULE_FLAVOR = {
    "source": (
        "NVIDIA blog 'NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules' (verbatim quotes in many repos) + driver installation "
        "guide Kernel Modules page"
    ),
    "status": "primary",
    "open_required": ["Blackwell (CC 10.x, 11.x, 12.x)", "Grace Hopper"],
    "open_recommended": ["Turing", "Ampere", "Ada", "Hopper"],
    "open_default_from_branch": "560",
    "proprietary_required": ["Maxwell", "Pascal", "Volta", "mixed old+new GPUs in one system"],
    "open_min_cc": "7.5",
}

PARSING = {
    "nvidia_smi_banner_cuda": "CUDA(?:\\s+UMD)?\\s+Version:\\s*(\\d+)\\.(\\d+)",
    "nvidia_smi_banner_driver": "(?:Driver|KMD) Version:\\s*(\\d+(?:\\.\\d+)+)",
    "nvcc_release": "release (\\d+)\\.(\\d+), V(\\d+)\\.(\\d+)\\.(\\d+)",
    "proc_driver_version": "Kernel Module(?: for \\S+)?\\s+(\\d+(?:\\.\\d+)+)",
    "proc_driver_open_flavor": "Open Kernel Module",
    "query_gpu_unavailable_tokens": ["[N/A]", "[Not Supported]", "N/A", "[Unknown Error]", "[Insufficient Permissions]"],
    "compute_cap_unsupported_error": "Field \"compute_cap\" is not a valid field to query.",
    "source": "samples listed in cuda.md section 5 (sglang#27487, canonical/inference-snaps#128, nixGL#186, risc0#2449, huggingface/candle#733)",
}

# Compute capability -> architecture name. Longest matching prefix wins ("7.5" before "7").
GPU_GENERATIONS = {
    "source": "derived from GPU_COMPUTE_CAPABILITY (V100 7.0, T4 7.5, A100 8.0, L4 8.9, H100 9.0, B200 10.0) and KERNEL_MODULE_FLAVOR",
    "status": "secondary",
    "by_compute_capability": {
        "3": "Kepler",
        "5": "Maxwell",
        "6": "Pascal",
        "7": "Volta",
        "7.5": "Turing",
        "8": "Ampere",
        "8.9": "Ada",
        "9": "Hopper",
        "10": "Blackwell",
        "11": "Blackwell",
        "12": "Blackwell",
    },
}

# Driver branches that DRIVER_BRANCHES (the data file's section) lacks, each with its own source;
# driver_branches() of cuda/checks.py reads both. No end of life: their lifecycle is reported as unknown.
DRIVER_BRANCHES_ADDED = {
    "source": "per entry",
    "status": "primary",
    "R590": {
        "designation": "New Feature Branch",
        "eol": None,
        "max_cuda_major_without_fc": 13,
        "note": "New Feature Branches are short-lived and have no end-of-life date; the support matrices of the 615 and 620 "
                "docs no longer list R590 (R595 is the Production Branch after it)",
        "status": "primary",
        "source": "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html "
                  "(note under Table 2) and .../615/...; forums.developer.nvidia.com 'Current graphics driver releases' "
                  "(590.48.01: current new feature branch release)",
    },
    "R550": {
        "designation": None,
        "eol": None,
        "note": "the branch of Debian 13's archive; not in the support matrices of the 615 and 620 docs",
        "status": "primary",
        "source": "Debian 13 (trixie) non-free Packages index: nvidia-driver 550.163.01-2 (read with apt on 2026-12-06)",
    },
}
