# src/device: target tc_device (the X of MPI+X). The CUDA operations are added
# by device_cuda.cmake when CUDA is enabled.
add_library(tc_device STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tc_device.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_device_host.c)
target_include_directories(tc_device PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tc_device PUBLIC tc_base tc_contract PRIVATE tcmini_flags)
if(TCMINI_ENABLE_OPENMP)
  target_link_libraries(tc_device PRIVATE OpenMP::OpenMP_C)
endif()
if(TCMINI_USE_CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/device_cuda.cmake OPTIONAL)
endif()
