"""listrx-bench: sweeps, counter backends, peers and reports for listrx."""

__version__ = "0.1.0"
