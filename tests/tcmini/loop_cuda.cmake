# tests/tcmini/loop_cuda.cmake: the GPU assembly loop (tc_loop_cuda) against
# its host twins, and the shared-node exchange on the GPU against the host's;
# included from tests/tcmini/CMakeLists.txt. Skip (77) where no GPU is usable.
if(TCMINI_USE_CUDA)
  add_executable(test_loop_cuda ${CMAKE_CURRENT_LIST_DIR}/test_loop_cuda.c)
  target_link_libraries(test_loop_cuda PRIVATE tc_loop tc_device tc_fem tc_mesh tc_base
    ${TCMINI_LIBM} tcmini_flags)
  tc_add_test(NAME loop_cuda TARGET test_loop_cuda RANKS 1 LABELS cuda)
  set_tests_properties(loop_cuda PROPERTIES SKIP_RETURN_CODE 77)
  if(TCMINI_ENABLE_HDF5 AND TC_PYTHON)
    add_test(NAME exchange_cuda
      COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/exchange_cuda.sh ${CMAKE_CURRENT_BINARY_DIR}/exchange_cuda
              $<TARGET_FILE:tcmini> ${TC_DECK} ${MPIEXEC_EXECUTABLE} ${TC_MPIEXEC_FLAGS})
    set_tests_properties(exchange_cuda PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
      LABELS "cuda;mpi" ENVIRONMENT "OMP_NUM_THREADS=1;TC_PYTHON=${TC_PYTHON}")
  endif()
endif()
