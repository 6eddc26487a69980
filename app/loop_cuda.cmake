# app/loop_cuda.cmake: the assembly loop's GPU kernels (tc_loop_cuda.cu) and
# the shared-node exchange on the GPU (tc_exchange_cuda.cu), added to
# tcmini_app when the CUDA backend is built. TC_HAVE_LOOP_CUDA tells
# tc_loop_cuda.h and tc_exchange_cuda.h that the real functions exist
# (without it the headers give inline fallbacks that return
# TC_ERR_UNSUPPORTED).
if(TCMINI_USE_CUDA)
  target_sources(tcmini_app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tc_loop_cuda.cu
    ${CMAKE_CURRENT_LIST_DIR}/tc_exchange_cuda.cu)
  target_compile_definitions(tcmini_app PUBLIC TC_HAVE_LOOP_CUDA)
  target_compile_options(tcmini_app PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  target_link_libraries(tcmini_app PUBLIC CUDA::cudart)
  set_target_properties(tcmini_app PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
endif()
