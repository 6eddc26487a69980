# src/device: the CUDA operations of tc_device (tc_device_cuda.c, plain C
# against the CUDA runtime), added when the CUDA backend is built.
target_sources(tc_device PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tc_device_cuda.c)
target_link_libraries(tc_device PRIVATE CUDA::cudart)
