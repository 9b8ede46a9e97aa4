"""The version of dpgraph, in one place (read by setuptools and by every module that prints it)."""

__version__ = "0.6.0"
