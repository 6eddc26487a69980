# src/io/deck.cmake: target tc_deck: the input deck (tc_ini, tc_config), the
# phase timers (tc_timers) and the run report (tc_report), with the build facts
# the report records passed as compile definitions.
add_library(tc_deck STATIC
  ${CMAKE_CURRENT_LIST_DIR}/tc_ini.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_config.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_timers.c
  ${CMAKE_CURRENT_LIST_DIR}/tc_report.c)
target_include_directories(tc_deck PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(tc_deck PUBLIC tc_base tc_contract PRIVATE tcmini_flags)
if(TCMINI_LIBM)
  target_link_libraries(tc_deck PRIVATE ${TCMINI_LIBM})
endif()

string(TOUPPER "${CMAKE_BUILD_TYPE}" tc_deck_build_type)
set(tc_deck_c_flags "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_${tc_deck_build_type}} -Wall -Wextra")
if(TCMINI_NATIVE)
  string(APPEND tc_deck_c_flags " -march=native")
endif()
string(STRIP "${tc_deck_c_flags}" tc_deck_c_flags)
if(TCMINI_ENABLE_HDF5)
  set(tc_deck_have_hdf5 1)
else()
  set(tc_deck_have_hdf5 0)
endif()
target_compile_definitions(tc_deck PRIVATE
  "TCMINI_VERSION=\"${PROJECT_VERSION}\""
  "TCMINI_GIT_REVISION=\"${TCMINI_GIT_REVISION}\""
  "TCMINI_COMPILER=\"${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}\""
  "TCMINI_BUILD_TYPE=\"${CMAKE_BUILD_TYPE}\""
  "TCMINI_C_FLAGS=\"${tc_deck_c_flags}\""
  TCMINI_HAVE_HDF5=${tc_deck_have_hdf5})
