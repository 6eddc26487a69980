# tcmini_install.cmake: what `cmake --install` puts under the prefix.
#   bin/                      tcmini, tcmini-bench, tcmini-compare
#   share/tcmini/inputs/      the decks and their expected outputs
#   share/tcmini/scripts/     setup, sweep, collect, Slurm batch scripts
#   share/doc/tcmini/         README, LICENSE, CHANGELOG, CITATION.cff, docs/
#   include/tcmini/           tc_contract.h and the headers it includes, tc_build.h
#   lib/libtcmini_contract.a  the contraction library (tcmini::contract), and
#   lib/libtcmini_base.a      the error layer it links (tcmini::base; no MPI)
#   lib/cmake/tcmini/         the CMake package: find_package(tcmini)
#   lib/pkgconfig/tcmini.pc   the same library for pkg-config
# Included from the top-level CMakeLists.txt after every target exists.
include(CMakePackageConfigHelpers)

set(TCMINI_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcmini)
set(TCMINI_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/tcmini)

# ---- programs, decks, scripts, documents ----
install(TARGETS tcmini tcmini_bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/tcmini-compare DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/inputs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tcmini/inputs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tcmini/scripts
        USE_SOURCE_PERMISSIONS)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
              ${PROJECT_SOURCE_DIR}/CHANGELOG.md ${PROJECT_SOURCE_DIR}/CITATION.cff
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# ---- the contraction library ----
# Installed names that cannot clash in a shared prefix, and the names of the
# imported targets (tcmini::contract, tcmini::base).
set_target_properties(tc_contract PROPERTIES OUTPUT_NAME tcmini_contract EXPORT_NAME contract)
set_target_properties(tc_core PROPERTIES OUTPUT_NAME tcmini_base EXPORT_NAME base)
# The OpenMP backend's vendor variant links libxsmm through an interface
# target, exported with the library (tcmini::libxsmm).
set(tc_exported_libxsmm "")
if(TARGET tcmini_libxsmm)
  set_target_properties(tcmini_libxsmm PROPERTIES EXPORT_NAME libxsmm)
  set(tc_exported_libxsmm tcmini_libxsmm)
endif()
install(TARGETS tc_contract tc_core ${tc_exported_libxsmm} EXPORT tcmini-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${TCMINI_INSTALL_INCLUDEDIR})
# tc_contract.h includes tc_error.h; tc_build.h says which backends are in.
install(FILES ${PROJECT_SOURCE_DIR}/src/contract/tc_contract.h
              ${PROJECT_SOURCE_DIR}/src/base/tc_error.h
              ${PROJECT_BINARY_DIR}/src/base/tc_build.h
        DESTINATION ${TCMINI_INSTALL_INCLUDEDIR})
install(EXPORT tcmini-targets NAMESPACE tcmini:: DESTINATION ${TCMINI_INSTALL_CMAKEDIR})

# The CMake package. It finds again what the static libraries link: OpenMP
# and, in CUDA builds, the CUDA toolkit (cudart, cuBLAS), pointed at the
# toolkit this build used. (No MPI: the contractions do not use it.)
set(TCMINI_PACKAGE_OPENMP ${TCMINI_ENABLE_OPENMP})
set(TCMINI_PACKAGE_LIBXSMM ${TCMINI_USE_LIBXSMM})
set(TCMINI_PACKAGE_CUDA ${TCMINI_USE_CUDA})
set(TCMINI_PACKAGE_CUDA_ROOT "")
if(TCMINI_USE_CUDA)
  get_filename_component(TCMINI_PACKAGE_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tcminiConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tcminiConfig.cmake INSTALL_DESTINATION ${TCMINI_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tcminiConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tcminiConfig.cmake ${PROJECT_BINARY_DIR}/tcminiConfigVersion.cmake
        DESTINATION ${TCMINI_INSTALL_CMAKEDIR})

# pkg-config: static libraries, so Libs carries everything they link.
set(tc_pc_libs "")
if(TCMINI_ENABLE_OPENMP)
  string(APPEND tc_pc_libs " ${OpenMP_C_FLAGS}")
endif()
if(TCMINI_USE_LIBXSMM)
  # By name, so the file holds no path of this machine where libxsmm sits in
  # a directory the linker searches anyway (Debian's /usr/lib).
  get_filename_component(tc_xsmm_dir "${TCMINI_LIBXSMM_LIBRARY}" DIRECTORY)
  if(NOT tc_xsmm_dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND tc_pc_libs " -L${tc_xsmm_dir}")
  endif()
  string(APPEND tc_pc_libs " -lxsmm -lxsmmnoblas -lpthread -ldl -lrt")
endif()
if(TCMINI_USE_CUDA)
  # nvcc-compiled objects need the C++ runtime beside cudart and cuBLAS; the
  # rpath finds the toolkit's libraries where ld.so is not told about them.
  string(APPEND tc_pc_libs " -L${CUDAToolkit_LIBRARY_DIR} -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR}"
         " -lcublas -lcudart -lstdc++")
endif()
string(APPEND tc_pc_libs " -lm")
string(STRIP "${tc_pc_libs}" TCMINI_PC_LIBS)
file(RELATIVE_PATH TCMINI_PC_PREFIX_FROM_PCFILEDIR
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/tcmini.pc.in ${PROJECT_BINARY_DIR}/tcmini.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tcmini.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
