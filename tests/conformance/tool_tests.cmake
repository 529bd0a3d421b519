# The CTest tests that run plexus-conformance (tools/conformance) and its
# suite (this folder), written here with the suite. Included by
# tools/conformance/CMakeLists.txt where tests are built, since
# catch_discover_tests must be called in the folder that makes its target;
# nothing of the suite is compiled there (it is plexus-conformance-suite).

# Under ASan, a test whose point is the signal a plugin dies of: ASan would
# catch the SIGSEGV itself and exit 1 after its report, so it leaves SIGSEGV
# alone there, the run's other ASAN_OPTIONS kept (tools/run-sanitizers.sh:
# leak checks, and the TLS setting without which LeakSanitizer faults in a
# process with two CPU devices).
function(asan_leaves_segv_alone test)
  if(NOT PLEXUS_SANITIZE MATCHES "address")
    return()
  endif()
  if(CMAKE_VERSION VERSION_LESS 3.22)  # no ENVIRONMENT_MODIFICATION: these options alone
    set_tests_properties(${test} PROPERTIES ENVIRONMENT "ASAN_OPTIONS=handle_segv=0:intercept_tls_get_addr=0")
  else()
    set_tests_properties(${test} PROPERTIES ENVIRONMENT_MODIFICATION "ASAN_OPTIONS=string_append::handle_segv=0")
  endif()
endfunction()

# ---- the conformance suite, registered once per device ----
# Each test case is its own CTest test; one more test runs the whole suite
# through plexus-conformance's table and JSON.
add_dependencies(plexus-conformance plexus-cpu)
foreach(dev cpu:0 cpu:1)
  string(REPLACE ":" "" prefix ${dev})
  catch_discover_tests(plexus-conformance
    TEST_PREFIX "conformance.${prefix}."
    EXTRA_ARGS --warn NoTests --device ${dev}
    PROPERTIES ENVIRONMENT "PLEXUS_CPU_DEVICES=2"
               LABELS "conformance;${prefix}")
endforeach()
# The runs above give each of the two devices half the cores: one thread
# each on a 2-core machine, where the CPU plugin's parallel paths (split
# sums and extremes, tiled copies, chunked loops) would never run. One
# device with four threads, whatever the machine, runs them.
add_test(NAME conformance.cpu0.four_threads COMMAND plexus-conformance --device cpu:0)
set_tests_properties(conformance.cpu0.four_threads PROPERTIES LABELS "conformance;cpu0"
  ENVIRONMENT "PLEXUS_CPU_DEVICES=1;OMP_NUM_THREADS=4;OMP_WAIT_POLICY=passive")
# The CUDA devices: `ctest -R cuda`. On a machine without a GPU each test
# is reported as skipped, with the plugin's reason in its output.
if(PLEXUS_HAVE_CUDA)
  add_dependencies(plexus-conformance plexus-cuda)
  foreach(dev gpu:0)
    string(REPLACE ":" "" prefix ${dev})
    catch_discover_tests(plexus-conformance
      TEST_PREFIX "conformance.cuda.${prefix}."
      EXTRA_ARGS --warn NoTests --device ${dev} --skip-absent
      PROPERTIES SKIP_RETURN_CODE 4 LABELS "conformance;cuda")
  endforeach()
endif()
# The CPU plugin's other compiled loops and conv path, each through the nn
# and reduction tests (the reductions' column and row loops are compiled per
# instruction set too).
foreach(variant "baseline;direct" "avx2;direct" "avx512;direct" "best;im2col")
  list(GET variant 0 isa)
  list(GET variant 1 conv)
  add_test(NAME conformance.cpu0.nn_and_reduce_with_${isa}_loops_${conv}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/run_cpu_variant.sh ${isa} ${conv} $<TARGET_FILE:plexus-conformance>
            --device cpu:0 "[nn],[reduce]")
  set_tests_properties(conformance.cpu0.nn_and_reduce_with_${isa}_loops_${conv} PROPERTIES
    SKIP_RETURN_CODE 77 LABELS "conformance;cpu0")
endforeach()
add_test(NAME conformance.tool.every_device_json
  COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DOUT=${CMAKE_CURRENT_BINARY_DIR}/conformance.json
          -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_json.cmake)
set_tests_properties(conformance.tool.every_device_json PROPERTIES
  ENVIRONMENT "PLEXUS_CPU_DEVICES=2" LABELS "conformance;tool")
add_test(NAME conformance.tool.json_after_a_crash
  COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DPLUGIN=$<TARGET_FILE:fault-accept-all>
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/conformance-crash.json
          -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_crash.cmake)
set_tests_properties(conformance.tool.json_after_a_crash PROPERTIES LABELS "conformance;tool;tools")
asan_leaves_segv_alone(conformance.tool.json_after_a_crash)  # the signal is the point


# The tool's own failure paths: a plugin with a wrong result fails (exit 1,
# citing the requirement), bad arguments and unloadable plugins exit 2.
set(threads ${PROJECT_SOURCE_DIR}/examples/threads-plugin)
plexus_add_plugin(threads-wrong-exp ${threads}/plugin.cpp ${threads}/arena.cpp ${threads}/worker.cpp
                  ${threads}/kernels.cpp)
target_compile_definitions(threads-wrong-exp PRIVATE THREADS_PLUGIN_WRONG_EXP)
target_link_libraries(threads-wrong-exp PRIVATE Threads::Threads)
set_target_properties(threads-wrong-exp PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(plexus-conformance threads-wrong-exp)

set(check ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_exit.cmake)
set(tool $<TARGET_FILE:plexus-conformance>)
function(conformance_tool_test name rc expect args)
  add_test(NAME conformance.tool.${name}
    COMMAND ${CMAKE_COMMAND} -DTOOL=${tool} "-DARGS=${args}" -DRC=${rc} "-DEXPECT=${expect}" -P ${check})
  set_tests_properties(conformance.tool.${name} PROPERTIES LABELS "conformance;tool")
endfunction()
conformance_tool_test(fails_a_plugin_with_a_wrong_exp 1
  "exp +FAIL +FAIL.*FAIL R10: unary math on floats.*threads\\(0\\): op x dtype [0-9]+ pass, 2 fail"
  "--plugin $<TARGET_FILE:threads-wrong-exp> --device accel:0")
# Process groups (R17) on the test plugin that has them; its accel(0) runs
# none of the other requirements' ops, so only R17 is asked.
conformance_tool_test(checks_process_groups_on_the_test_plugin 0 "All tests passed.*checks 1 pass, 0 fail, 0 skipped"
  "--plugin $<TARGET_FILE:fault-group> --device accel:0 [R17]")
add_dependencies(plexus-conformance fault-group)
conformance_tool_test(perf_times_every_supported_op 0
  "PERF OP.*add +float32 +4M \\+ 4M.*matmul +float64 +512\\^3 .*GFLOP/s.*op x dtype 0 pass, 0 fail"
  "--device cpu:0 --perf [R1]")
conformance_tool_test(json_to_stdout 0 "^{\"devices\":\\[{\"device\":\"cpu\\(0\\)\".*\"failures\":0}"
  "--device cpu:0 --json - [R1]")
# Before the suite runs (nothing on stdout), and without the usage text.
conformance_tool_test(reports_an_unwritable_json_file 2
  "^plexus-conformance: --json /nonexistent/dir/out.json: no such folder /nonexistent/dir\n$"
  "--device cpu:0 --json /nonexistent/dir/out.json [R1]")
conformance_tool_test(refuses_a_folder_as_the_json_file 2 "^plexus-conformance: --json /tmp: is a folder\n$"
  "--device cpu:0 --json /tmp [R1]")
# A misspelt tag or name must not pass a CI job.
conformance_tool_test(fails_a_filter_that_matches_no_check 2
  "No tests ran.*plexus-conformance: no check matches the filters given" "--device cpu:0 [nosuchtag]")
conformance_tool_test(fails_a_name_that_matches_no_check 2
  "^plexus-conformance: no check matches the filters given" "--device cpu:0 --json - typo-name")
# Catch's file tags, which only its run() resolves, still select checks (in this process).
conformance_tool_test(runs_the_checks_a_file_tag_selects 0 "cpu[(]0[)]: op x dtype .*checks 1 pass, 0 fail"
  "--device cpu:0 -# [#conformance_guards]")
conformance_tool_test(rejects_an_unknown_device 2 "'warp:0': no plugin of this runtime gives 'warp' devices" "--device warp:0")
conformance_tool_test(rejects_a_malformed_index 2 "'cpu:1[)]' does not name a device: the index '1[)]' is not a whole number" "--device cpu:1)")
conformance_tool_test(rejects_a_missing_device 2 "gpu\\(3\\)" "--device gpu:3")
# --skip-absent skips an accelerator or a plugin's named kind with no device
# as it skips gpu:3 (both had been usage errors, exit 2): a vendor's CI
# machine without the board reports the test skipped.
conformance_tool_test(skips_an_absent_accelerator 4 "skipped: .*accel" "--device accel:0 --skip-absent")
conformance_tool_test(skips_an_absent_named_kind 4 "skipped: .*no plugin of this runtime gives 'acme' devices"
  "--device acme:0 --skip-absent")
conformance_tool_test(needs_a_value 2 "--json needs a value" "--json")
conformance_tool_test(rejects_an_unknown_option 2 "Unrecognised token: --frobnicate" "--device cpu:0 --frobnicate")
conformance_tool_test(reports_a_plugin_that_did_not_load 2
  "the plugin .*libfault-create-fails.so did not load: .*simulated init failure[^\n]*\n$"
  "--plugin ${PROJECT_BINARY_DIR}/tests/fault-plugins/libfault-create-fails.so")
conformance_tool_test(reports_a_missing_plugin 2 "--plugin /nonexistent/libx.so: no such file"
  "--plugin /nonexistent/libx.so")

# Isolation: each check runs in a child process, so a plugin that crashes,
# aborts, exits, hangs, writes past its output or leaks in one op (the
# misbehave plugin, tests/plugins/misbehave) fails that op's cell and check,
# naming what happened, and the run still ends with the table, the JSON and
# exit status 1.
add_dependencies(plexus-conformance misbehave)
function(conformance_misbehave_test how op cell detail args)
  set(name isolates_${how}_in_${op})
  if(ARGC GREATER 5)  # a name of its own
    set(name ${ARGV5})
  endif()
  add_test(NAME conformance.tool.${name}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DPLUGIN=$<TARGET_FILE:misbehave>
            -DHOW=${how} -DOP=${op} "-DCELL=${cell}" "-DDETAIL=${detail}" "-DARGS=${args}"
            -DOUT=${CMAKE_CURRENT_BINARY_DIR}/conformance-${name}.json
            -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_misbehave.cmake)
  set_tests_properties(conformance.tool.${name} PROPERTIES LABELS "conformance;tool")
endfunction()
conformance_misbehave_test(segv exp "exp float32" "^crashed: SIGSEGV .* in exp float32$" "")
asan_leaves_segv_alone(conformance.tool.isolates_segv_in_exp)
conformance_misbehave_test(abort exp "exp float32" "^crashed: SIGABRT .* in exp float32$" "")
conformance_misbehave_test(exit exp "exp float32" "^the process exited with status 3 .* in exp float32$" "")
conformance_misbehave_test(hang exp "exp float32" "^timed out after 1.0 s .* in exp float32$" "--timeout 1")
conformance_misbehave_test(overrun add "add int32" "after == 0" "")
conformance_misbehave_test(leak exp "" "^R6: 4096 bytes of misbehave.0. still in use" "")
# A message without its NUL is read no further than its buffer, and shown
# as the plugin wrote it after the failing call.
conformance_misbehave_test(unterminated exp "exp float32" "the plugin said: zzzzzzzzzzzzzzzz+\\]$" ""
  shows_a_message_without_its_nul_within_its_buffer)
# A plugin that, like CUDA, cannot make a context in a process forked from
# one that made one: the children are fresh programs, so every check runs.
conformance_tool_test(isolates_without_inheriting_a_context 0 "All tests passed.*misbehave\\(0\\): op x dtype [1-9][0-9]* pass, 0 fail"
  "--plugin $<TARGET_FILE:misbehave> --device accel:0 [R1],[R6],[R10]")
set_tests_properties(conformance.tool.isolates_without_inheriting_a_context PROPERTIES ENVIRONMENT "MISBEHAVE=fork")
# Every op hangs: each check that runs one times out (0.1 s each: the run is
# one check after another) and the report still comes. The budget (5 s here;
# 540 s by default) gives no check less than min(1 s, --timeout), so it does
# not bind at this time-out.
conformance_misbehave_test(hang all "add float32" "^timed out after 0.1 s" "--timeout 0.1 --budget 5")
# Where the budget binds: three checks, each hanging in its first op, may
# take 4 s, so the first gets 2 s of its 3 s time-out (4 s less a second
# kept for each of the two after it) and the others the 1 s floor.
conformance_misbehave_test(hang all "pow float32" "^timed out after 2.0 s .* in pow float32$"
  "--timeout 3 --budget 4 'pow on floats,unary math on floats,where selects with a broadcast uint8 condition'"
  budget_shortens_the_time_outs)
conformance_tool_test(rejects_a_child_pipe_that_is_not_a_descriptor 2
  "--isolated-fd .the parent's pipe. is not a file descriptor: '1'" "--isolated-fd 1 --isolated-device cpu:0 --isolated-check x")
conformance_tool_test(rejects_a_child_without_its_check 2 "--isolated-fd needs --isolated-device and --isolated-check"
  "--isolated-fd 5")
conformance_tool_test(rejects_a_timeout_that_is_not_a_number 2 "--timeout needs a number of seconds above 0, not 'soon'"
  "--timeout soon")

# docs/semantics.md has a section for every op row of the op table.
add_test(NAME conformance.tool.semantics_page_covers_every_op
  COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DPAGE=${PROJECT_SOURCE_DIR}/docs/semantics.md
          -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_semantics_page.cmake)
set_tests_properties(conformance.tool.semantics_page_covers_every_op PROPERTIES LABELS "conformance;tool")

# The suite's own bugs (issue 41), each shown on the misbehave plugin with
# ops taken out of its supports() or misbehaving (check_tool_withheld.cmake).
function(conformance_withheld_test name)
  cmake_parse_arguments(W "" "WITHHELD;HOW;OP;RC;MAX_FAILED;REQUIREMENT;ARGS" "FAILED;SKIPPED;UNTESTED;ROWS" ${ARGN})
  foreach(list FAILED SKIPPED UNTESTED ROWS)  # one argument each: '|' between items
    string(REPLACE ";" "|" W_${list} "${W_${list}}")
  endforeach()
  add_test(NAME conformance.tool.${name}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DPLUGIN=$<TARGET_FILE:misbehave>
            "-DWITHHELD=${W_WITHHELD}" "-DHOW=${W_HOW}" "-DOP=${W_OP}" -DRC=${W_RC} -DMAX_FAILED=${W_MAX_FAILED}
            "-DREQUIREMENT=${W_REQUIREMENT}" "-DARGS=${W_ARGS}" "-DFAILED=${W_FAILED}" "-DSKIPPED=${W_SKIPPED}"
            "-DUNTESTED=${W_UNTESTED}" "-DROWS=${W_ROWS}" -DOUT=${CMAKE_CURRENT_BINARY_DIR}/conformance-${name}.json
            -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_withheld.cmake)
  set_tests_properties(conformance.tool.${name} PROPERTIES LABELS "conformance;tool")
endfunction()
# Without cast the checks that read values through it are skipped, none
# failed; the pairs it offers are "untested", never "unsup"; every op row
# has its cells (gemm, the activation gradients, the backward ops).
conformance_withheld_test(skips_what_needs_a_missing_cast WITHHELD cast RC 0 MAX_FAILED 0
  UNTESTED "fill int32" "conv2d float32"
  ROWS "gemm float32" "relu_backward float64" "conv2d_backward_input float32" "max_pool2d_backward float32"
       "log_softmax_backward float64" "avg_pool2d_backward float32")
# COPY is mandatory: its absence fails one check; the checks that call it
# at the plugin boundary are skipped.
conformance_withheld_test(fails_a_missing_copy_once WITHHELD copy RC 1 MAX_FAILED 1
  FAILED "copy is offered on every dtype"
  SKIPPED "execute refuses malformed operands and what it does not implement"
          "execute refuses operands outside their buffer or device, and calls of the wrong form")
# An exception escaping a plugin is an R2 failure, whichever check met it.
conformance_withheld_test(files_an_escaping_exception_under_r2 HOW throw OP exp RC 1 MAX_FAILED 20
  FAILED "unary math on floats" REQUIREMENT R2 ARGS "[R10]")
# One op giving wrong values fails its own check; the checks that only use
# it are skipped, naming it, not failed.
conformance_withheld_test(counts_a_failing_helper_op_once HOW wrong OP arange RC 1 MAX_FAILED 2
  FAILED "creation functions fill the right values")

# plexus_add_conformance_test (cmake/PlexusPlugin.cmake) in this tree, where
# Plexus::conformance is the tool built here, on the plugin template
# (examples/plugin-template) built here too (so its source is in the compile
# database clang-tidy reads): the whole suite passes. Its test failing on a
# failing plugin, and the installed package's helper and tool, are checked by
# downstream.installed_package.
plexus_add_plugin(plugin-template ${PROJECT_SOURCE_DIR}/examples/plugin-template/plugin.cpp)
set_target_properties(plugin-template PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(plexus-conformance plugin-template)
plexus_add_conformance_test(plugin-template NAME conformance.helper.passes_the_plugin_template)

# The tool's verdicts on a plugin with one flaw at a time (flawed_plugin.cpp,
# FLAWED=<flaw>): each filed once, under the requirement it breaks alone, in
# words that name it (check_tool_flawed.cmake).
plexus_add_plugin(conformance-flawed ${PROJECT_SOURCE_DIR}/tests/conformance/flawed_plugin.cpp)
set_target_properties(conformance-flawed PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
add_dependencies(plexus-conformance conformance-flawed)
function(conformance_flawed_test name)
  cmake_parse_arguments(F "" "FLAWED;ARGS;RC;MAX_FAILED;CHECK;DETAIL;SKIPPED_DETAIL" "REQUIREMENTS" ${ARGN})
  string(REPLACE ";" "|" F_REQUIREMENTS "${F_REQUIREMENTS}")
  add_test(NAME conformance.tool.${name}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-conformance> -DPLUGIN=$<TARGET_FILE:conformance-flawed>
            -DFLAWED=${F_FLAWED} "-DARGS=${F_ARGS}" -DRC=${F_RC} -DMAX_FAILED=${F_MAX_FAILED} "-DCHECK=${F_CHECK}"
            "-DREQUIREMENTS=${F_REQUIREMENTS}" "-DDETAIL=${F_DETAIL}" "-DSKIPPED_DETAIL=${F_SKIPPED_DETAIL}"
            -DOUT=${CMAKE_CURRENT_BINARY_DIR}/conformance-${name}.json
            -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_flawed.cmake)
  set_tests_properties(conformance.tool.${name} PROPERTIES LABELS "conformance;tool")
endfunction()
# Without its flaw it passes every check it can run: none of what follows is
# the suite's own doing.
conformance_tool_test(passes_the_flawed_plugin_without_a_flaw 0
  "flawed\\(0\\): op x dtype [0-9]+ pass, 0 fail.*checks [0-9]+ pass, 0 fail" "--plugin $<TARGET_FILE:conformance-flawed>")
# R9.1: the op named as a word of its own; "integer division by zero"
# contains "div" but does not name it.
conformance_flawed_test(fails_r9_1_for_a_message_without_the_op_name FLAWED div_unnamed ARGS "[R9]" RC 1 MAX_FAILED 1
  CHECK "a failure on the device is reported at the next wait, then the device works" REQUIREMENTS R9
  DETAIL "names_op.*R9.1: it must name the op div")
# supports() says yes to sub, execute refuses it: R5 alone, and once, though
# the checks that call execute directly (R2's, R19's) meet it too.
conformance_flawed_test(files_a_supports_lie_once_under_r5 FLAWED supports_lie ARGS "[R10],[R2],[R19]" RC 1 MAX_FAILED 1
  CHECK "add, sub, mul broadcast on every dtype" REQUIREMENTS R5
  DETAIL "^supports\\(\\) said yes to sub and execute refused it as unsupported: .*sub"
  SKIPPED_DETAIL "^not counted: supports\\(\\) said yes to sub, execute refused it")
# An exception escaping execute called directly: R2 (as through the host),
# saying execute let it escape, not Catch's "Unknown exception" under R19.
conformance_flawed_test(files_an_exception_from_a_direct_call_under_r2 FLAWED throw_execute ARGS "[R19]" RC 1 MAX_FAILED 1
  CHECK "elementwise ops write every element of their output and nothing around it" REQUIREMENTS R2
  DETAIL "the plugin let an exception that is not a std::exception escape execute\\(\\)")
# A wait that fails without a message, around every check: R2, once (not
# "R6: the device failed outside the check" in every check).
conformance_flawed_test(files_a_wait_without_a_message_once_under_r2 FLAWED silent_sync RC 1 MAX_FAILED 1
  CHECK "waits outside the checks" REQUIREMENTS R2
  DETAIL "^a failure with no message, met at the waits around [0-9]+ checks, first at 'the table: .*the plugin gave no message"
  SKIPPED_DETAIL "^not counted: a failure with no message")
# A failure reported at every later wait: R9's "once", filed once.
conformance_flawed_test(files_a_failure_reported_again_once_under_r9 FLAWED sticky ARGS "[R9]" RC 1 MAX_FAILED 1
  CHECK "waits outside the checks" REQUIREMENTS R9
  DETAIL "^a failure reported again at a later wait, .*div: integer division by zero"
  SKIPPED_DETAIL "^not counted: a failure reported again at a later wait")
# Memory figures that do not add up: R4 alone, not R3 as well.
conformance_flawed_test(files_wrong_memory_figures_under_r4_alone FLAWED free_over_total ARGS "[R4]" RC 1 MAX_FAILED 1
  CHECK "contexts are independent and devices describe themselves" REQUIREMENTS R4
  DETAIL "memory_free <= info.memory_total")
# A destroy() that throws or crashes, met at the end of every check that
# opens the plugin: said to be destroy(), under R2, once.
conformance_flawed_test(names_a_destroy_that_throws FLAWED throw_destroy ARGS "[abi]" RC 1 MAX_FAILED 1
  CHECK "the table: versions, name and every ABI 1.0 slot" REQUIREMENTS R2
  DETAIL "^destroy\\(\\) let a C\\+\\+ exception \\(destroy blew up .* escape through the C ABI"
  SKIPPED_DETAIL "^not counted: destroy\\(\\) let a C\\+\\+ exception escape")
conformance_flawed_test(names_a_crash_in_destroy FLAWED crash_destroy ARGS "[abi]" RC 1 MAX_FAILED 1
  CHECK "the table: versions, name and every ABI 1.0 slot" REQUIREMENTS R2
  DETAIL "^crashed: SIGSEGV .* in destroy\\(\\)$" SKIPPED_DETAIL "^not counted: destroy\\(\\) crashed: SIGSEGV")
asan_leaves_segv_alone(conformance.tool.names_a_crash_in_destroy)  # the signal is the point
# A plugin that loads with no devices (a CI machine without the board): its
# own reason, and with --skip-absent the "skipped" exit (4), as
# plexus_add_conformance_test(... ARGS --skip-absent) expects; without it, or
# asked for its device by name, the reason too, not the usage text or "no
# plugin gives 'flawed' devices".
set(no_board "the plugin flawed \\([^)]*libconformance-flawed.so\\) loaded with no devices: flawed plugin: no flawed board in this machine")
conformance_tool_test(skips_a_plugin_with_no_devices_naming_its_reason 4 "^plexus-conformance: skipped: ${no_board}"
  "--plugin $<TARGET_FILE:conformance-flawed> --skip-absent")
conformance_tool_test(refuses_a_plugin_with_no_devices_naming_its_reason 2
  "^plexus-conformance: ${no_board} .FLAWED=no_devices. .--skip-absent skips it.\n$" "--plugin $<TARGET_FILE:conformance-flawed>")
conformance_tool_test(skips_a_named_device_of_a_plugin_with_none 4 "skipped: 'flawed:0': ${no_board}"
  "--plugin $<TARGET_FILE:conformance-flawed> --device flawed:0 --skip-absent")
conformance_tool_test(refuses_a_named_device_of_a_plugin_with_none 2 "^plexus-conformance: --device 'flawed:0': ${no_board}"
  "--plugin $<TARGET_FILE:conformance-flawed> --device flawed:0")
set_tests_properties(conformance.tool.skips_a_plugin_with_no_devices_naming_its_reason
  conformance.tool.refuses_a_plugin_with_no_devices_naming_its_reason
  conformance.tool.skips_a_named_device_of_a_plugin_with_none conformance.tool.refuses_a_named_device_of_a_plugin_with_none
  PROPERTIES ENVIRONMENT "FLAWED=no_devices")
# --plugin takes a file: a folder is refused as a folder, not "not found"; a
# second path to a file already given (a link) is the same plugin, tested once.
conformance_tool_test(refuses_a_folder_as_the_plugin 2 "--plugin ${CMAKE_CURRENT_BINARY_DIR}: is a folder; name the plugin's file"
  "--plugin ${CMAKE_CURRENT_BINARY_DIR}")
set(flawed_link ${CMAKE_CURRENT_BINARY_DIR}/conformance-flawed-link.so)
file(CREATE_LINK ${CMAKE_CURRENT_BINARY_DIR}/libconformance-flawed.so ${flawed_link} SYMBOLIC)  # the target's file
conformance_tool_test(tests_a_plugin_given_twice_once 0
  "flawed\\(0\\): op x dtype.*--plugin [^ ]*libconformance-flawed.so: the same file as ${flawed_link}, tested once"
  "--plugin ${flawed_link} --plugin $<TARGET_FILE:conformance-flawed> [R1]")

# plexus-smi with a plugin whose destroy() never returns, its output piped
# (as here): the report comes out, the plugin is named, and it exits 0 after
# its few seconds' wait instead of hanging with the report still buffered.
if(TARGET plexus-smi)
  add_test(NAME tools.smi_with_a_plugin_whose_destroy_hangs
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-smi> -DRC=0
            "-DEXPECT=flawed\\(0\\) +flawed.*plexus-smi: the plugin flawed \\([^)]*libconformance-flawed.so\\): its destroy\\(\\) has not returned after [0-9]+ s"
            -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_exit.cmake)
  set_tests_properties(tools.smi_with_a_plugin_whose_destroy_hangs PROPERTIES LABELS "tools;conformance" TIMEOUT 30
    ENVIRONMENT "FLAWED=hang_destroy;PLEXUS_PLUGIN_PATH=$<TARGET_FILE:conformance-flawed>")
  # The guide's numbering (R1): CPU-kind devices of every plugin in load
  # order, the one on PLEXUS_PLUGIN_PATH first, the CPU plugin's after it.
  add_test(NAME tools.smi_numbers_cpu_devices_of_plugins_in_load_order
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:plexus-smi> -DRC=0
            "-DEXPECT=  cpu\\(0\\) +flawed .*  cpu\\(1\\) +cpu "
            -P ${PROJECT_SOURCE_DIR}/tests/conformance/check_tool_exit.cmake)
  set_tests_properties(tools.smi_numbers_cpu_devices_of_plugins_in_load_order PROPERTIES LABELS "tools;conformance"
    ENVIRONMENT "FLAWED_KIND=cpu;PLEXUS_PLUGIN_PATH=$<TARGET_FILE:conformance-flawed>")
  add_dependencies(plexus-smi conformance-flawed)
endif()
