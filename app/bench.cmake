# app/bench.cmake: tcmini-bench, the kernel benchmark. tcmini_bench_core holds
# its pieces (options, cases and verification, cache flush, roofline (the
# GPU's too in CUDA builds), table/CSV) so that tests/app can link them;
# tcmini_bench adds main() and the replay of HDF5 cases. Built once the contraction and device libraries exist.
if(TARGET tc_contract AND TARGET tc_device)
  add_library(tcmini_bench_core STATIC
    bench_options.c bench_case.c bench_flush.c bench_roofline.c bench_report.c)
  target_include_directories(tcmini_bench_core PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(tcmini_bench_core PUBLIC tc_device tc_contract tc_base PRIVATE tcmini_flags)
  if(TCMINI_LIBM)
    target_link_libraries(tcmini_bench_core PUBLIC ${TCMINI_LIBM})
  endif()
  if(TCMINI_ENABLE_OPENMP)
    target_link_libraries(tcmini_bench_core PRIVATE OpenMP::OpenMP_C)
  else()
    # Without OpenMP the flush and STREAM loops run on one thread; their
    # "omp" pragmas are then ignored on purpose.
    target_compile_options(tcmini_bench_core PRIVATE -Wno-unknown-pragmas)
  endif()
  # The FMA-peak loop writes a*b+c; ISO C mode (-std=c11) turns contraction
  # into fused multiply-adds off, so allow it where the peak is measured.
  set_source_files_properties(bench_roofline.c PROPERTIES COMPILE_OPTIONS -ffp-contract=fast)
  # The GPU's roofline (copy/triad kernels, FMA peak) for the CUDA backend's rows.
  if(TCMINI_USE_CUDA)
    target_sources(tcmini_bench_core PRIVATE bench_roofline_cuda.cu)
    target_compile_options(tcmini_bench_core PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
    target_link_libraries(tcmini_bench_core PUBLIC CUDA::cudart)
    set_target_properties(tcmini_bench_core PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
  endif()

  add_executable(tcmini_bench tcmini_bench.c)
  set_target_properties(tcmini_bench PROPERTIES OUTPUT_NAME tcmini-bench)
  target_link_libraries(tcmini_bench PRIVATE tcmini_bench_core tcmini_flags)
  if(TARGET tc_replay)
    target_link_libraries(tcmini_bench PRIVATE tc_replay)
    target_compile_definitions(tcmini_bench PRIVATE TC_HAVE_HDF5)
  endif()
  target_compile_definitions(tcmini_bench PRIVATE
    TCMINI_VERSION="${PROJECT_VERSION}" TCMINI_GIT_REVISION="${TCMINI_GIT_REVISION}")
endif()
