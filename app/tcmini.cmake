# app/tcmini.cmake: the mini-app. The assembly loop, physics and checks form
# a library so that tests can drive them; tcmini is the driver.
add_library(tcmini_app STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tc_assembly.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_physics.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_loop.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_checks.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_memory.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_signals.c)
target_include_directories(tcmini_app PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tcmini_app PUBLIC tc_base tc_contract tc_device tc_mesh tc_fem tc_deck
  PRIVATE tcmini_flags ${TCMINI_LIBM})
if(TCMINI_ENABLE_OPENMP)
  target_link_libraries(tcmini_app PRIVATE OpenMP::OpenMP_C)
endif()

add_executable(tcmini ${CMAKE_CURRENT_LIST_DIR}/tcmini.c)
target_link_libraries(tcmini PRIVATE tcmini_app tcmini_flags)
if(TCMINI_ENABLE_HDF5)
  target_link_libraries(tcmini PRIVATE tc_output)
  target_compile_definitions(tcmini PRIVATE TCMINI_HAVE_HDF5)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/loop_cuda.cmake OPTIONAL)
