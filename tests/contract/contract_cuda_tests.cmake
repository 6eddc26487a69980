# tests/contract: the CUDA backend's own test (what the backend-generic
# conformance test does not cover); included from
# tests/contract/CMakeLists.txt when the CUDA backend is built. Its timings
# are tcmini-bench's (--backend cuda --variant all).
add_executable(test_contract_cuda ${CMAKE_CURRENT_LIST_DIR}/test_contract_cuda.c)
target_link_libraries(test_contract_cuda PRIVATE tc_device tc_contract tc_base
  ${TCMINI_LIBM} tcmini_flags)
tc_add_test(NAME contract_cuda TARGET test_contract_cuda RANKS 1 LABELS cuda)
set_tests_properties(contract_cuda PROPERTIES SKIP_RETURN_CODE 77)
