# tests/tcmini/loop_cuda.cmake: the GPU assembly loop (tc_loop_cuda) against
# its host twins; included from tests/tcmini/CMakeLists.txt. Skips (77)
# where no GPU is usable.
if(TCMINI_USE_CUDA)
  add_executable(test_loop_cuda ${CMAKE_CURRENT_LIST_DIR}/test_loop_cuda.c)
  target_link_libraries(test_loop_cuda PRIVATE tcmini_app tc_device tc_fem tc_mesh tc_base
    ${TCMINI_LIBM} tcmini_flags)
  tc_add_test(NAME loop_cuda TARGET test_loop_cuda RANKS 1 LABELS cuda)
  set_tests_properties(loop_cuda PROPERTIES SKIP_RETURN_CODE 77)
endif()
