# Rewrites a CUDA source for the emulator (emu_kernel.hpp): each launch
#   name<targs><<<grid, block, shared, stream>>>(args...);
# becomes
#   ::px_emu::Launcher(grid, block, shared, stream).run(
#       [&](auto&&... px_args) { name<targs>(px_args...); }, args...);
# which a host C++ compiler accepts. Nothing else changes, so the emulator
# runs the plugin's own kernels. Usage: cmake -DIN=x.cu -DOUT=x.cpp -P <this>
file(READ ${IN} text)
set(launch "([A-Za-z_][A-Za-z0-9_]*(<[^<>;]*>)?)<<<([^;]*)>>>\\(")
string(REGEX MATCHALL "${launch}" found "${text}")
string(REGEX REPLACE "${launch}"
  "::px_emu::Launcher(\\3).run([&](auto&&... px_args) { \\1(px_args...); }, " text "${text}")
if(text MATCHES "<<<")
  message(FATAL_ERROR "${IN}: a launch the emulator's translation does not understand is left")
endif()
list(LENGTH found count)
file(WRITE ${OUT} "// Generated from ${IN} by translate_launches.cmake (${count} launches): do not edit.\n#line 1 \"${IN}\"\n${text}")
