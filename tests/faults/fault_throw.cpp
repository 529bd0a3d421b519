// For the fault-throws test plugin: a C++ exception thrown out of a plugin
// slot, which the ABI forbids and the host must survive.
#include <stdexcept>

#include <string>

extern "C" void fault_throw(const char* slot) { throw std::runtime_error(std::string("simulated C++ exception in ") + slot); }
