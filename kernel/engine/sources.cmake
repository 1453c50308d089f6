# The protocol engine's source files, for the user-space CMake builds (libbsp's bsp_engine
# and the engine fuzzer). kernel/Kbuild lists the same files for af_bsp.ko: a new
# kernel/engine/bspe_*.c goes into both lists.
set(BSP_ENGINE_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bspe_ack.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_ep.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_inc.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_rx.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_siphash.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_timer.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_tx.c
  ${CMAKE_CURRENT_LIST_DIR}/bspe_wire.c
)
