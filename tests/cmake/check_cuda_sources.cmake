# No .cu file outside plugins/cuda/ (issue 38): CUDA code is compiled in one
# folder, with the settings and architectures made there, and a second
# folder compiling .cu files is how "CUDA_ARCHITECTURES is empty" came about.
# The source tree's own files only (git ls-files where it is a checkout).
find_program(GIT git)
if(GIT AND EXISTS ${SOURCE}/.git)
  execute_process(COMMAND ${GIT} -C ${SOURCE} ls-files --cached --others --exclude-standard -- "*.cu"
    OUTPUT_VARIABLE files RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "git ls-files failed in ${SOURCE}")
  endif()
  string(REGEX MATCHALL "[^\n]+" files "${files}")
else()
  file(GLOB_RECURSE files RELATIVE ${SOURCE} ${SOURCE}/*.cu)
  list(FILTER files EXCLUDE REGEX "^build")
endif()
set(outside ${files})
list(FILTER outside EXCLUDE REGEX "^plugins/cuda/")
list(LENGTH files total)
if(outside)
  list(JOIN outside "\n  " outside)
  message(FATAL_ERROR "CUDA sources outside plugins/cuda/ (move them there, as an OBJECT library if another target links them):\n  ${outside}")
endif()
message("${total} .cu files, all under plugins/cuda/")
