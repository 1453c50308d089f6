# Unit tests of the user-space tools (tools/*). One test file per source file
# under test; fuzz_bsp_diag.cpp is the libFuzzer target of the sock_diag parser,
# also replayed here over mutated answers (LLVMFuzzerTestOneInput is plain C++).
#
# Included from tools/bsp-ss/CMakeLists.txt rather than being a
# tests/tools/CMakeLists.txt: the superproject builds ../tools into
# ${CMAKE_BINARY_DIR}/tools, the binary directory a tests/tools subdirectory
# would also get, and CMake refuses the second use.
set(BSP_TOOLS_TESTS_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(tools_tests
  ${BSP_TOOLS_TESTS_DIR}/diag_parser_test.cpp
  ${BSP_TOOLS_TESTS_DIR}/diag_request_test.cpp
  ${BSP_TOOLS_TESTS_DIR}/family_test.cpp
  ${BSP_TOOLS_TESTS_DIR}/options_test.cpp
  ${BSP_TOOLS_TESTS_DIR}/render_test.cpp
  ${BSP_TOOLS_TESTS_DIR}/fuzz_bsp_diag.cpp
)
target_link_libraries(tools_tests PRIVATE bsp_ss_core GTest::gtest_main)
gtest_discover_tests(tools_tests DISCOVERY_TIMEOUT 30)
