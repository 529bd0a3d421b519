// For the fault-throws test plugin: a C++ exception thrown out of a plugin
// slot, which the ABI forbids and the host must survive.
#include <stdexcept>

extern "C" void fault_throw(const char* what) { throw std::runtime_error(what); }
