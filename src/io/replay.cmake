# src/io/replay.cmake: tc_replay, HDF5 files holding one contraction's inputs
# or result (tcmini-bench --replay). Built only with HDF5 and the contraction
# library present.
if(TCMINI_ENABLE_HDF5 AND TARGET tc_contract)
  add_library(tc_replay STATIC tc_replay.c)
  target_include_directories(tc_replay PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(tc_replay PUBLIC tc_contract PRIVATE tc_h5 tcmini_flags)
endif()
