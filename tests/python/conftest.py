"""The pytest suite of the Python package (run through CTest: tests/python/CMakeLists.txt sets PYTHONPATH
to build/python). A test skips, with the reason, only where a dependency it needs is absent."""
import pytest


def need(module):
    """The module, or a skip naming the Debian package that brings it."""
    packages = {"numpy": "python3-numpy", "torch": "python3-torch", "PIL.Image": "python3-pil"}
    return pytest.importorskip(module, reason="%s is not installed (apt-get install %s)" % (
        module, packages.get(module, module)))
