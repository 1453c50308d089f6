# Another local user attacking a running job's UDP ports (Documentation/security.rst,
# "Authenticated packets"): the attacker tool, the victim program and the test that runs
# them. Included from ../CMakeLists.txt.
set(BSP_ATTACK_DIR ${CMAKE_CURRENT_LIST_DIR})
add_executable(udp_attacker ${BSP_ATTACK_DIR}/udp_attacker.cpp)
target_link_libraries(udp_attacker PRIVATE bsp_core bsp_engine)
add_executable(udp_victim ${BSP_ATTACK_DIR}/udp_victim.c)
target_link_libraries(udp_victim PRIVATE bsp)
add_executable(udp_trust_tests ${BSP_ATTACK_DIR}/udp_trust_test.cpp)
target_link_libraries(udp_trust_tests PRIVATE GTest::gtest_main bsp_engine)
target_compile_definitions(udp_trust_tests PRIVATE
  BSP_UDP_ATTACKER="$<TARGET_FILE:udp_attacker>"
  BSP_UDP_VICTIM="$<TARGET_FILE:udp_victim>")
add_dependencies(udp_trust_tests udp_attacker udp_victim)
# Label "threads": the victim's UDP transport runs a background thread (unit-tsan).
gtest_discover_tests(udp_trust_tests DISCOVERY_TIMEOUT 30
  PROPERTIES TIMEOUT 120 LABELS threads)
add_dependencies(threads_tests udp_trust_tests)
