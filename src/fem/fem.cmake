# src/fem: target tc_fem, the other half of Intrepid: Gauss quadrature,
# Lagrange bases on the hex, cell geometry and HGRAD field transforms.
add_library(tc_fem STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tc_quadrature.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_basis.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_geometry.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_fem_array.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_function_space.c)
target_include_directories(tc_fem PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tc_fem PUBLIC tc_base tc_contract PRIVATE tcmini_flags)
if(TCMINI_LIBM)
  target_link_libraries(tc_fem PUBLIC ${TCMINI_LIBM})
endif()
if(TCMINI_ENABLE_OPENMP)
  target_link_libraries(tc_fem PRIVATE OpenMP::OpenMP_C)
endif()
