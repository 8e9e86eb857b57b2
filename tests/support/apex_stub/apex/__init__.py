"""Stand-in for the ``apex`` package of NVIDIA APEX; see tests/support/apex_stub/README.md."""

__version__ = "0.1"
