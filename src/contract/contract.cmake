# src/contract: the contraction library tc_contract (public API, serial
# reference backend, OpenMP backend); the CUDA backend adds itself from
# contract_cuda.cmake when CUDA is enabled.
add_library(tc_contract STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tc_contract.c
  ${CMAKE_CURRENT_LIST_DIR}/contract_serial.c)
target_include_directories(tc_contract PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tc_contract PUBLIC tc_base PRIVATE tcmini_flags)
if(TCMINI_LIBM)
  target_link_libraries(tc_contract PUBLIC ${TCMINI_LIBM})
endif()

if(TCMINI_ENABLE_OPENMP)
  target_sources(tc_contract PRIVATE ${CMAKE_CURRENT_LIST_DIR}/contract_openmp.c)
  target_link_libraries(tc_contract PRIVATE OpenMP::OpenMP_C)
  target_compile_definitions(tc_contract PRIVATE TC_HAVE_OPENMP)
  # -std=c11 turns GCC's FMA contraction off; the tuned kernels rely on it.
  include(CheckCCompilerFlag)
  check_c_compiler_flag(-ffp-contract=fast TC_HAVE_FP_CONTRACT_FAST)
  if(TC_HAVE_FP_CONTRACT_FAST)
    set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/contract_openmp.c
      TARGET_DIRECTORY tc_contract PROPERTIES COMPILE_OPTIONS -ffp-contract=fast)
  endif()
endif()

if(TCMINI_USE_CUDA)
  include(${CMAKE_CURRENT_LIST_DIR}/contract_cuda.cmake OPTIONAL)
endif()
