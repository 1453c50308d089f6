# libbsp tests, included from userlib/CMakeLists.txt when it is built by the test
# superproject (tests/CMakeLists.txt). Not a CMakeLists.txt of its own: the superproject's
# glob would add it with the binary directory "userlib", which libbsp itself already uses.
# Unit tests of the runtime over an in-process test transport, and multi-process tests of
# whole BSPlib programs (tests/userlib/programs/).
set(BSP_UT_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(userlib_unit_tests
  ${BSP_UT_DIR}/components_test.cpp
  ${BSP_UT_DIR}/misuse_test.cpp
  ${BSP_UT_DIR}/runtime_test.cpp
)
target_link_libraries(userlib_unit_tests PRIVATE bsp_core GTest::gtest_main Threads::Threads)
target_include_directories(userlib_unit_tests PRIVATE ${BSP_UT_DIR})
gtest_discover_tests(userlib_unit_tests DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 60)

if(EXISTS ${BSP_UT_DIR}/programs/programs.cmake)
  include(${BSP_UT_DIR}/programs/programs.cmake)
endif()
