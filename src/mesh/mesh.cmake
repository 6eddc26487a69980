# src/mesh: the parallel synthetic hexahedral mesh (target tc_mesh).
add_library(tc_mesh STATIC ${CMAKE_CURRENT_SOURCE_DIR}/tc_mesh.c)
target_include_directories(tc_mesh PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tc_mesh PUBLIC tc_base PRIVATE m tcmini_flags)
