# libbsp's process bootstrap, compiled into libbsp (userlib/CMakeLists.txt) and into
# bsprun's bsp_launch library (tools/bsprun/CMakeLists.txt).
set(BSP_LAUNCH_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/client_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coordinator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/coordinator_thread.cpp
  ${CMAKE_CURRENT_LIST_DIR}/job_token.cpp
  ${CMAKE_CURRENT_LIST_DIR}/join_environment.cpp
  ${CMAKE_CURRENT_LIST_DIR}/local_children.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rendezvous_address.cpp
  ${CMAKE_CURRENT_LIST_DIR}/slurm_pmi.cpp
  ${CMAKE_CURRENT_LIST_DIR}/slurm_step.cpp
  ${CMAKE_CURRENT_LIST_DIR}/spawn_local.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wait_status.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wire.cpp
)
