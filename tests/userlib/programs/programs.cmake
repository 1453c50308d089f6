# BSPlib test programs (C, linked against libbsp exactly as users link) and the driver
# that runs them as separate processes. Included from ../userlib_tests.cmake.
set(BSP_PROG_DIR ${CMAKE_CURRENT_LIST_DIR})
set(BSP_TEST_PROGRAMS allsums_v1 allsums_v2 allsums_array misuse primitives compat collectives
  longstep)
foreach(p ${BSP_TEST_PROGRAMS})
  add_executable(bsptest_${p} ${BSP_PROG_DIR}/${p}.c)
  target_link_libraries(bsptest_${p} PRIVATE bsp)
  set_target_properties(bsptest_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)
endforeach()

# The soak of tests/vm/soak.sh (supersteps for a given time, every byte checked).
add_executable(bsptest_soak ${BSP_PROG_DIR}/soak.c)
target_link_libraries(bsptest_soak PRIVATE bsp)
set_target_properties(bsptest_soak PROPERTIES OUTPUT_NAME soak
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)

# Programs with the opt-in 64-bit sizes of bsp.h: the same libbsp, its BSPLIB_1.1 symbols.
set(BSP_WIDE_TEST_PROGRAMS wide misuse_wide)
foreach(p ${BSP_WIDE_TEST_PROGRAMS})
  add_executable(bsptest_${p} ${BSP_PROG_DIR}/${p}.c)
  target_compile_definitions(bsptest_${p} PRIVATE BSP_WIDE_TYPES)
  target_link_libraries(bsptest_${p} PRIVATE bsp)
  set_target_properties(bsptest_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)
endforeach()

add_executable(bsptest_cxx_api ${BSP_PROG_DIR}/cxx_api.cpp)
target_link_libraries(bsptest_cxx_api PRIVATE bsp)
set_target_properties(bsptest_cxx_api PROPERTIES OUTPUT_NAME cxx_api
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)
add_executable(bsptest_cxx_api_wide ${BSP_PROG_DIR}/cxx_api.cpp)
target_compile_definitions(bsptest_cxx_api_wide PRIVATE BSP_WIDE_TYPES)
target_link_libraries(bsptest_cxx_api_wide PRIVATE bsp)
set_target_properties(bsptest_cxx_api_wide PROPERTIES OUTPUT_NAME cxx_api_wide
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)

# The collectives of bsc.h through their _wide entry points.
add_executable(bsptest_collectives_wide ${BSP_PROG_DIR}/collectives.c)
target_compile_definitions(bsptest_collectives_wide PRIVATE BSP_WIDE_TYPES)
target_link_libraries(bsptest_collectives_wide PRIVATE bsp)
set_target_properties(bsptest_collectives_wide PROPERTIES OUTPUT_NAME collectives_wide
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/userlib-test-programs)

add_executable(userlib_program_tests
  ${BSP_PROG_DIR}/program_runner.cpp
  ${BSP_PROG_DIR}/program_test.cpp
  ${BSP_PROG_DIR}/wide_test.cpp
)
target_link_libraries(userlib_program_tests PRIVATE GTest::gtest_main)
target_compile_definitions(userlib_program_tests PRIVATE
  BSP_PROGRAMS_DIR="${CMAKE_BINARY_DIR}/userlib-test-programs"
  BSP_EXAMPLES_DIR="${CMAKE_BINARY_DIR}/examples")
foreach(p ${BSP_TEST_PROGRAMS} ${BSP_WIDE_TEST_PROGRAMS} cxx_api cxx_api_wide collectives_wide)
  add_dependencies(userlib_program_tests bsptest_${p})
endforeach()
foreach(ex inprod sort matvec)
  add_dependencies(userlib_program_tests bsp_example_${ex})
endforeach()
if(TARGET bsp_probe)
  target_compile_definitions(userlib_program_tests PRIVATE
    BSPPROBE_PATH="$<TARGET_FILE:bsp_probe>")
  add_dependencies(userlib_program_tests bsp_probe)
endif()
if(TARGET bsp_exchange)
  target_compile_definitions(userlib_program_tests PRIVATE
    BSP_EXCHANGE_PATH="$<TARGET_FILE:bsp_exchange>")
  add_dependencies(userlib_program_tests bsp_exchange)
endif()
gtest_discover_tests(userlib_program_tests DISCOVERY_TIMEOUT 30
  PROPERTIES TIMEOUT 120 LABELS threads)
add_dependencies(threads_tests userlib_program_tests)

# bspprof (tools/bspprof, a script copied into the build tree) for the profiling test, and
# bsprun to run the programs as a launcher does (tools/ is configured before tests/).
target_compile_definitions(userlib_program_tests PRIVATE
  BSPPROF_PATH="${CMAKE_BINARY_DIR}/tools/bspprof/bspprof" BSPRUN_PATH="$<TARGET_FILE:bsprun>")
add_dependencies(userlib_program_tests bsprun bspprof)
