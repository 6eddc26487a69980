# src/contract: the CUDA backend (contract_cuda.cu and its kernels) and the
# cuBLAS yardstick for benchmarks, added to tc_contract by contract.cmake when
# CUDA is enabled. Built for CMAKE_CUDA_ARCHITECTURES (90, Hopper, unless the
# configure line says otherwise).
target_sources(tc_contract PRIVATE ${CMAKE_CURRENT_LIST_DIR}/contract_cuda.cu
  ${CMAKE_CURRENT_LIST_DIR}/contract_cuda_yardstick.cu)
target_compile_definitions(tc_contract PUBLIC TC_HAVE_CUDA)
target_compile_options(tc_contract PRIVATE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
target_link_libraries(tc_contract PUBLIC CUDA::cudart PRIVATE CUDA::cublas)
set_target_properties(tc_contract PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
