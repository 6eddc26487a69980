# src/io/output.cmake: target tc_output, the parallel HDF5 results file and
# its XDMF companion (tc_output, tc_xdmf).
# Built with HDF5 and the mesh library present.
if(TCMINI_ENABLE_HDF5 AND TARGET tc_mesh)
  add_library(tc_output STATIC
    ${CMAKE_CURRENT_LIST_DIR}/tc_output.c
    ${CMAKE_CURRENT_LIST_DIR}/tc_xdmf.c)
  target_include_directories(tc_output PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(tc_output PUBLIC tc_base tc_mesh tc_h5 HDF5::HDF5 PRIVATE tcmini_flags)
  # link, gmtime_r, clock_gettime: POSIX beside strict C11.
  target_compile_definitions(tc_output PRIVATE _POSIX_C_SOURCE=200809L)
endif()
