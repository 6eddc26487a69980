# test_bench_check.cmake: runs tcmini-bench (cmake -P, singleton MPI) and
# judges its output and exit code, for checks CTest's properties cannot make.
#   -DBENCH=path  -DMODE=kernels|bad-options|help|replay-wrong-kernel
#   [-DBACKENDS=serial,openmp (kernels)]  [-DFILE=h5 (replay-wrong-kernel)]
cmake_minimum_required(VERSION 3.22)

function(run_bench)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "kernels")
  # A tiny case of every kernel, layout and precision on every CPU backend and
  # variant: exit 0, no FAIL, and a verified row per kernel and backend.
  run_bench(--preset small --backend ${BACKENDS} --threads 1,2 --variant all
            --layout all --precision all --reps 2 --warmup 1)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tcmini-bench exited with ${rc}: ${err}")
  endif()
  if(out MATCHES "FAIL" OR NOT out MATCHES "\n([0-9]+) rows, ([0-9]+) verified, 0 failed")
    message(FATAL_ERROR "not every row verified")
  endif()
  if(NOT CMAKE_MATCH_1 EQUAL CMAKE_MATCH_2)
    message(FATAL_ERROR "${CMAKE_MATCH_1} rows but ${CMAKE_MATCH_2} verified")
  endif()
  foreach(kernel FieldFieldScalar FieldFieldVector FieldFieldTensor DataFieldScalar
          DataFieldVector DataFieldTensor DataDataScalar DataDataVector DataDataTensor)
    string(REPLACE "," ";" backend_list "${BACKENDS}")
    foreach(backend IN LISTS backend_list)
      foreach(layout right left)
        foreach(precision double float)
          if(NOT out MATCHES "\n${kernel} +small +${backend} [^\n]* ${layout} +${precision} [^\n]* ok *\n")
            message(FATAL_ERROR "no verified ${kernel} row on ${backend}, ${layout}, ${precision}")
          endif()
        endforeach()
      endforeach()
    endforeach()
  endforeach()

elseif(MODE STREQUAL "bad-options")
  # Each bad command line: exit code 2, one error line naming the problem, no
  # table. A case is "arguments separated by commas|expected message".
  set(cases
    "--reps,0|--reps: must be >= 1"
    "--kernel,NoSuchKernel|--kernel: unknown kernel 'NoSuchKernel'"
    "--frobnicate|unknown option '--frobnicate'"
    "--layout,diagonal|--layout: unknown layout 'diagonal'"
    "--reps|--reps needs a value"
    "--memory,lots|--memory: expected an integer"
    "--preset,p8,--left,4,--points,3|--preset cannot be combined"
    "--left,4|needs --left L >= 1 and --points P >= 1"
    "--data-points,2|--data-points: expected 1 or P"
    "--replay-output,x.h5|--replay-output needs --replay"
    "stray|unexpected argument 'stray'")
  foreach(case IN LISTS cases)
    string(REPLACE "|" ";" parts "${case}")
    list(POP_BACK parts expected)
    string(REPLACE "," ";" parts "${parts}")
    run_bench(${parts})
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    if(NOT rc EQUAL 2 OR NOT lines EQUAL 1 OR NOT out STREQUAL ""
       OR NOT err MATCHES "^tcmini-bench: error: [^\n]*${expected}")
      message(FATAL_ERROR "'${parts}': exit ${rc}, stderr '${err}', stdout '${out}'; "
                          "expected exit 2 and one line with '${expected}'")
    endif()
  endforeach()

elseif(MODE STREQUAL "help")
  run_bench(--help)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "--kernel LIST" OR NOT out MATCHES "--replay FILE"
     OR NOT out MATCHES "p125 +L=R=125 P=216")
    message(FATAL_ERROR "--help: exit ${rc}, output '${out}'")
  endif()

elseif(MODE STREQUAL "replay-wrong-kernel")
  # A file's dims that do not fit the named kernel: exit 1 and a shape message.
  run_bench(--replay ${FILE} --kernel DataDataScalar --reps 1 --warmup 0)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "dataset 'right' has rank 4 but DataDataScalar needs 2")
    message(FATAL_ERROR "exit ${rc}, stderr '${err}'")
  endif()

else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
