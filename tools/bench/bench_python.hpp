// plexus-bench's python group: the Python package's figures (issue 39), each
// beside its baseline in the same run, measured by examples/python/bench.py
// with the interpreter and package folder the build made: a 1-element add
// from Python beside PyTorch's, a DLPack round trip NumPy -> Plexus -> NumPy
// beside NumPy's own copies, and a LeNet epoch from Python beside
// plexus-train's.
#pragma once

namespace pxbench {

// Says why and reports nothing where the Python package was not built.
// PLEXUS_PYTHON names another interpreter. False when the script failed.
bool bench_python(bool quick, bool json);

}  // namespace pxbench
