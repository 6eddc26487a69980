# test_bench_check.cmake: runs tcmini-bench (cmake -P, singleton MPI) and
# judges its output and exit code, for checks CTest's properties cannot make.
#   -DBENCH=path  -DMODE=kernels|bad-options|help|replay-wrong-kernel|replay-swapped|
#                       replay-clobber|replay-refusals|sweep|tune
#   [-DBACKENDS=serial,openmp (kernels)]  [-DDIR=dir of the replay files (replay-*)]
#   [-DVENDOR=ON|OFF (sweep, tune: the OpenMP vendor variant is built)]
#   [-DWORKDIR=dir (tune: where its files go)]
cmake_minimum_required(VERSION 3.22)

function(run_bench)
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

# Each case "ARG,ARG,...|TEXT" (with any further arguments given after the
# cases) is refused: exit `status` (2: bad input, 1: a file that cannot be
# written), no output, one error line containing TEXT.
function(expect_refusals status cases)
  foreach(case IN LISTS cases)
    string(REPLACE "|" ";" parts "${case}")
    list(POP_BACK parts expected)
    string(REPLACE "," ";" parts "${parts}")
    run_bench(${parts} ${ARGN})
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    if(NOT rc EQUAL status OR NOT lines EQUAL 1 OR NOT out STREQUAL ""
       OR NOT err MATCHES "^tcmini-bench: error: [^\n]*${expected}")
      message(FATAL_ERROR "'${parts}': exit ${rc}, stderr '${err}', stdout '${out}'; "
                          "expected exit ${status} and one line with '${expected}'")
    endif()
  endforeach()
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
    "--memory,999999999999|--memory 999999999999 MB is more than this machine's memory"
    "--preset,p8,--left,4,--points,3|--preset cannot be combined"
    "--left,4|needs --left L >= 1 and --points P >= 1"
    "--data-points,2|--data-points: expected 1 or P"
    "--replay-output,x.h5|--replay-output needs --replay"
    "--sweep,3,--kernel,FieldFieldScalar|--sweep draws FieldField kernels itself: drop --kernel"
    "--sweep,3,--variant,flat|--sweep times auto against its reference: drop --variant"
    "--sweep,3,--preset,p8|give the shapes one way"
    "--sweep,3,--no-yardstick|--sweep compares layout right with the vendor row: drop --no-yardstick"
    "--tuning-on-error,rules|--tuning-on-error needs --tuning"
    "--tuning,t.txt,--tuning-on-error,warn|--tuning-on-error: expected fail or rules"
    "--tune,t.txt,--variant,flat|--tune times every variant the backend runs: drop --variant"
    "--tune,t.txt,--tuning,u.txt|--tune measures every variant itself: drop --tuning"
    "--shapes,81x81|--shapes: expected LxRxP with whole numbers >= 1 [^\n]* got '81x81'"
    "--shapes,0x1x1|--shapes: expected LxRxP with whole numbers >= 1"
    "--shapes,99999999999999999999x4x4|--shapes: expected LxRxP with whole numbers >= 1 that fit in 64 bits"
    "--deck,no-such-deck.in|--deck: cannot open deck 'no-such-deck.in'"
    "stray|unexpected argument 'stray'")
  expect_refusals(2 "${cases}")

elseif(MODE STREQUAL "help")
  run_bench(--help)
  # ... with the replay file's dataset shapes of every kernel.
  if(NOT rc EQUAL 0 OR NOT out MATCHES "--kernel LIST" OR NOT out MATCHES "--replay FILE"
     OR NOT out MATCHES "p125 +L=R=125 P=216"
     OR NOT out MATCHES "\n  FieldFieldTensor +\\(C,L,P,D1,D2\\) +\\(C,R,P,D1,D2\\) +\\(C,L,R\\)\n"
     OR NOT out MATCHES "\n  DataFieldScalar +data \\(C,P\\) or \\(C,1\\) +fields \\(C,F,P\\) +\\(C,F\\)\n"
     OR NOT out MATCHES "\n  DataDataVector +\\(C,P,D1\\) +\\(C,P,D1\\) +\\(C\\)\n")
    message(FATAL_ERROR "--help: exit ${rc}, output '${out}'")
  endif()

elseif(MODE STREQUAL "replay-wrong-kernel")
  # A file's dims that do not fit the named kernel: exit 2 (bad input) and the
  # dims expected and found.
  run_bench(--replay ${DIR}/bench_replay_double_in.h5 --kernel DataDataScalar --reps 1 --warmup 0)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "DataDataScalar needs left = \\(C,P\\) and right = \\(C,P\\); found left \\(2,2,2,2\\) and right \\(2,3,2,2\\)")
    message(FATAL_ERROR "exit ${rc}, stderr '${err}'")
  endif()

elseif(MODE STREQUAL "replay-swapped")
  # A DataField file with its inputs swapped: exit 2 before anything is
  # measured (nothing on stdout), one line with the dims expected and found
  # in the letters of --help, no internal names, no source location.
  run_bench(--replay ${DIR}/bench_replay_swapped.h5)
  set(expected "tcmini-bench: error: '[^']*bench_replay_swapped.h5': DataFieldScalar needs left = data \\(C,P\\) or \\(C,1\\) and right = fields \\(C,F,P\\); found left \\(4,3,5\\) and right \\(4,5\\) \\('left' and 'right' look swapped\\)\n$")
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^${expected}" OR NOT out STREQUAL ""
     OR err MATCHES "num_|\\.c:[0-9]")
    message(FATAL_ERROR "exit ${rc}, stdout '${out}', stderr '${err}'; expected exit 2 and '${expected}'")
  endif()

elseif(MODE STREQUAL "replay-clobber")
  # --replay-output never replaces the input, nor any existing file without
  # --overwrite; each refusal comes before anything is measured and leaves
  # the file as it was.
  set(input ${DIR}/bench_replay_double_in.h5)
  set(other ${DIR}/bench_replay_clobber_other.h5)
  file(WRITE ${other} "an earlier result\n")
  file(SHA256 ${input} input_before)
  set(quick --reps 1 --warmup 0 --no-roofline --no-flush --backend serial)
  run_bench(--replay ${input} --replay-output ${input} --overwrite ${quick})
  file(SHA256 ${input} input_after)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "is the replay's input file" OR NOT out STREQUAL ""
     OR NOT input_before STREQUAL input_after)
    message(FATAL_ERROR "replay onto its input: exit ${rc}, stdout '${out}', stderr '${err}'")
  endif()
  run_bench(--replay ${input} --replay-output ${other} ${quick})
  file(READ ${other} other_text)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "exists; give --overwrite" OR NOT out STREQUAL ""
     OR NOT other_text STREQUAL "an earlier result\n")
    message(FATAL_ERROR "replay onto an existing file: exit ${rc}, stdout '${out}', stderr '${err}'")
  endif()
  run_bench(--replay ${input} --replay-output ${other} --overwrite ${quick})
  file(READ ${other} other_text LIMIT 8 HEX)
  if(NOT rc EQUAL 0 OR NOT other_text STREQUAL "894844460d0a1a0a")
    message(FATAL_ERROR "--overwrite: exit ${rc}, stderr '${err}', file starts ${other_text}")
  endif()
  file(GLOB leftovers ${DIR}/bench_replay_clobber_other.h5.tmp.*)
  if(leftovers)
    message(FATAL_ERROR "temporary files left: ${leftovers}")
  endif()

elseif(MODE STREQUAL "replay-refusals")
  # Bad replay requests: exit 2 before anything is measured, one line each.
  set(quick --reps 1 --warmup 0 --backend serial)
  set(cases
    "--replay,${DIR}/no_such_file.h5|no file '[^']*no_such_file.h5'"
    "--replay,${DIR}/bench_replay_double_in.h5,--replay-group,/nope/deeper|has no group '/nope'"
    "--replay,${DIR}/bench_replay_double_in.h5,--sum-into|has no dataset 'output' for the contraction to add to"
    "--replay,${DIR}/bench_replay_float_in.h5,--precision,double|--precision double: '[^']*' holds float data"
    "--replay-group,/g|--replay-group needs --replay"
    "--replay,${DIR}/bench_replay_double_in.h5,--overwrite|--overwrite needs --replay-output"
    "--replay,${DIR}/bench_replay_nan.h5|dataset 'left' of '[^']*bench_replay_nan.h5' holds NaN at entry [0-9]+ \\(of 16, in storage order\\)")
  expect_refusals(2 "${cases}" ${quick})
  # Damaged files: HDF5 fails on them, or crashes in them; either way one
  # error line and exit 2. All but the superblock zeroed; 16 bytes zeroed at
  # 128 (HDF5 1.10's failed open leaves objects it cannot close, and its
  # library printed "infinite loop closing library" at exit); 8 bytes of
  # 0xff at 688 (HDF5 1.10 corrupts the heap, and glibc printed its own
  # line before aborting).
  file(SIZE ${DIR}/bench_replay_double_in.h5 size)
  math(EXPR rest "${size} - 96")
  set(damages "96 ${rest} 000" "128 16 000" "688 8 377")
  set(index 0)
  foreach(damage IN LISTS damages)
    separate_arguments(damage)
    list(GET damage 0 seek)
    list(GET damage 1 count)
    list(GET damage 2 byte)
    math(EXPR index "${index} + 1")
    set(damaged ${DIR}/bench_replay_damaged_${index}.h5)
    file(COPY_FILE ${DIR}/bench_replay_double_in.h5 ${damaged})
    execute_process(COMMAND sh -c "head -c ${count} /dev/zero | tr '\\000' '\\${byte}' | dd of='${damaged}' bs=1 seek=${seek} conv=notrunc"
                    RESULT_VARIABLE made OUTPUT_QUIET ERROR_QUIET)
    run_bench(--replay ${damaged} ${quick})
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    # Under AddressSanitizer (scripts/test-sanitizers.sh) HDF5's heap
    # overflow on a damaged file is the sanitizer's report, before any crash.
    if(DEFINED ENV{ASAN_OPTIONS} AND rc EQUAL 1 AND err MATCHES "AddressSanitizer")
      continue()
    endif()
    if(NOT made EQUAL 0 OR NOT rc EQUAL 2 OR NOT lines EQUAL 1
       OR NOT err MATCHES "^tcmini-bench: error: [^\n]*bench_replay_damaged_${index}.h5")
      message(FATAL_ERROR "a damaged replay file (${count} bytes ${byte} at ${seek}): exit ${rc}, "
                          "stderr '${err}'")
    endif()
  endforeach()

elseif(MODE STREQUAL "sweep")
  # A tiny sweep on one OpenMP thread: every row verified, the distribution
  # and the worst shape with its command; the same shapes for the same seed.
  set(args --sweep 3 --seed 5 --backend openmp --threads 1 --memory 1 --reps 1 --warmup 0)
  # Layout left: against AUTO in layout right on the same shapes, no vendor
  # library needed, no vendor row to drop; the left rows' shapes are those
  # of layout right's.
  run_bench(${args} --layout left --no-yardstick)
  message("${out}")
  if(NOT rc EQUAL 0 OR out MATCHES "FAIL" OR NOT out MATCHES "\n6 rows, 6 verified, 0 failed"
     OR out MATCHES "\nFieldField[^\n]* yardstick ")
    message(FATAL_ERROR "left sweep: exit ${rc}: ${err}")
  endif()
  foreach(expected "layout left/right time ratio of AUTO over 3 shapes \\(below 1: layout left faster\\)"
          "layout left slower than layout right on [0-3] shapes"
          "worst: shape [0-2], FieldField[^\n]* auto in layout right "
          "rerun it: tcmini-bench --backend openmp --threads 1 --kernel FieldField[^\n]* --layout left,right ")
    if(NOT out MATCHES "${expected}")
      message(FATAL_ERROR "left sweep: no '${expected}' in the output")
    endif()
  endforeach()
  # Each left row's kernel, C, L, R and P match a right row's, in order.
  foreach(layout left right)
    string(REGEX MATCHALL "\nFieldField[A-Za-z]+ +sweep +openmp +1 +[a-z0-9-]+ +[a-z]+ +${layout} +double +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+" rows "${out}")
    set(${layout}_rows "")
    foreach(row IN LISTS rows)
      string(REGEX REPLACE "^\n(FieldField[A-Za-z]+) .* double +([0-9]+) +([0-9]+) +([0-9]+) +([0-9]+)$" "\\1 \\2 \\3 \\4 \\5" row "${row}")
      list(APPEND ${layout}_rows "${row}")
    endforeach()
  endforeach()
  list(LENGTH left_rows count)
  if(NOT count EQUAL 3 OR NOT left_rows STREQUAL right_rows)
    message(FATAL_ERROR "left sweep: layout left's rows '${left_rows}' against layout right's '${right_rows}'")
  endif()
  run_bench(${args})
  if(NOT VENDOR)
    if(NOT rc EQUAL 2 OR NOT err MATCHES "--sweep compares AUTO in layout right with the vendor variant, and this build has no libxsmm")
      message(FATAL_ERROR "without libxsmm: exit ${rc}, stderr '${err}'")
    endif()
    return()
  endif()
  message("${out}")
  if(NOT rc EQUAL 0 OR out MATCHES "FAIL" OR NOT out MATCHES "\n6 rows, 6 verified, 0 failed")
    message(FATAL_ERROR "sweep: exit ${rc}: ${err}")
  endif()
  foreach(expected "AUTO/vendor time ratio over 3 shapes" "worst: shape [0-2], FieldField"
          "rerun it: tcmini-bench --backend openmp --threads 1 --kernel FieldField")
    if(NOT out MATCHES "${expected}")
      message(FATAL_ERROR "sweep: no '${expected}' in the output")
    endif()
  endforeach()
  string(REGEX MATCHALL "\nFieldField[A-Za-z]+ +sweep +openmp [^\n]* no " first "${out}")
  run_bench(${args})
  string(REGEX MATCHALL "\nFieldField[A-Za-z]+ +sweep +openmp [^\n]* no " second "${out}")
  list(LENGTH first rows)
  if(NOT rows EQUAL 6 OR NOT first STREQUAL second)
    message(FATAL_ERROR "the sweep's shapes differ between two runs of one seed:\n${first}\n${second}")
  endif()

elseif(MODE STREQUAL "tune")
  # --tune writes a tuning file that --tuning then uses; a file that cannot
  # be used fails the run with one line and exit 2 (bad input), or warns with
  # --tuning-on-error rules.
  set(file ${WORKDIR}/bench_tuned.txt)
  file(REMOVE ${file})
  set(shape --kernel FieldFieldScalar,DataDataScalar --preset p8 --backend openmp --threads 1
      --memory 1 --reps 1 --warmup 0)
  run_bench(--tune ${file} ${shape})
  message("${out}")
  if(NOT rc EQUAL 0 OR NOT EXISTS ${file})
    message(FATAL_ERROR "--tune: exit ${rc}: ${err}")
  endif()
  file(READ ${file} tuned)
  if(NOT tuned MATCHES "\ntcmini-tuning 1\nbackend openmp\ndevice [^\n]+\n"
     OR NOT tuned MATCHES "\nkernel=FieldFieldScalar layout=right precision=double L=5-8 R=5-8 K=5-8 variant=[a-z]+"
     OR NOT tuned MATCHES "\nkernel=DataDataScalar layout=right precision=double K=5-8 variant=[a-z]+")
    message(FATAL_ERROR "unexpected tuning file:\n${tuned}")
  endif()
  if(VENDOR AND NOT out MATCHES "\nFieldFieldScalar p8 +openmp +1 vendor +asked")
    message(FATAL_ERROR "--tune did not time the vendor variant")
  endif()
  run_bench(--tuning ${file} ${shape})
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\nFieldFieldScalar p8 +openmp +1 [a-z-]+ +tuning"
     OR NOT out MATCHES "\nDataDataScalar +p8 +openmp +1 [a-z-]+ +tuning")
    message(FATAL_ERROR "--tuning: AUTO rows must say 'tuning': exit ${rc}\n${out}\n${err}")
  endif()
  string(REPLACE "backend openmp" "backend cuda" foreign "${tuned}")
  string(REGEX REPLACE "\ndevice [^\n]+" "\ndevice No Such Processor 9000" other_device "${tuned}")
  file(WRITE ${WORKDIR}/bench_tuned_other_device.txt "${other_device}")
  string(ASCII 1 2 control)
  file(WRITE ${WORKDIR}/bench_tuned_corrupt.txt "tcmini-tuning 1\nbackend openmp\n${control}\n")
  # name|message|exit status: 2 for a file that is wrong or cannot be read (bad input, as
  # tcmini's run.tuning)
  foreach(case "bench_tuned_other_device.txt|the file was tuned on 'No Such Processor 9000'|2"
               "bench_tuned_corrupt.txt|bench_tuned_corrupt.txt:3: not a tcmini tuning file|2"
               "bench_no_such_tuning.txt|cannot open tuning file|2")
    string(REPLACE "|" ";" parts "${case}")
    list(GET parts 0 name)
    list(GET parts 1 expected)
    list(GET parts 2 status)
    run_bench(--tuning ${WORKDIR}/${name} ${shape})
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    if(NOT rc EQUAL status OR NOT lines EQUAL 1 OR NOT err MATCHES "^tcmini-bench: error: [^\n]*${expected}")
      message(FATAL_ERROR "--tuning ${name}: exit ${rc}, stderr '${err}'; expected one line with '${expected}'")
    endif()
    run_bench(--tuning ${WORKDIR}/${name} --tuning-on-error rules ${shape})
    if(NOT rc EQUAL 0 OR NOT err MATCHES "^tcmini-bench: warning: [^\n]*${expected}[^\n]*; AUTO uses the built-in rules\n$"
       OR NOT out MATCHES "\nFieldFieldScalar p8 +openmp +1 [a-z-]+ +rule")
      message(FATAL_ERROR "--tuning ${name} --tuning-on-error rules: exit ${rc}, stderr '${err}'")
    endif()
  endforeach()
  # --tune measures one backend at one thread count.
  run_bench(--tune ${file} ${shape} --threads 1,2)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "--tune measures one backend at one thread count")
    message(FATAL_ERROR "--tune on two thread counts: exit ${rc}, stderr '${err}'")
  endif()
  # The files a run writes are checked before anything is measured: one
  # line, exit 1, nothing printed on stdout.
  set(missing ${WORKDIR}/bench_no_such_dir)
  set(directory ${WORKDIR}/bench_a_directory)
  file(MAKE_DIRECTORY ${directory})
  set(cases
    "--tune,${missing}/t.txt|cannot write tuning file '[^']*/t.txt': directory"
    "--tune,${directory}|tuning file '[^']*bench_a_directory' is a directory"
    "--csv,${missing}/t.csv|cannot write CSV file '[^']*/t.csv': directory"
    "--csv,${directory}|CSV file '[^']*bench_a_directory' is a directory")
  expect_refusals(1 "${cases}" ${shape})
  # A run that fails leaves an existing CSV file as it was (the table goes to
  # a temporary file, renamed into place when the run ends well), and leaves
  # no temporary file; one that succeeds replaces it.
  set(csv ${WORKDIR}/bench_kept.csv)
  file(WRITE ${csv} "an earlier run's table\n")
  run_bench(--backend serial --kernel FieldFieldScalar --shapes 4611686018427387904x4x4
            --cells 1 --reps 1 --warmup 1 --no-roofline --csv ${csv})
  file(READ ${csv} kept)
  file(GLOB leftovers ${csv}.tmp.*)
  if(rc EQUAL 0 OR NOT kept STREQUAL "an earlier run's table\n" OR leftovers)
    message(FATAL_ERROR "a failed run changed '${csv}' or left '${leftovers}': exit ${rc}, "
                        "stderr '${err}', file '${kept}'")
  endif()
  run_bench(--csv ${csv} ${shape})
  file(READ ${csv} replaced)
  if(NOT rc EQUAL 0 OR NOT replaced MATCHES "^kernel,preset,backend,[^\n]*\nFieldFieldScalar,p8,openmp,")
    message(FATAL_ERROR "a run that ends well must replace '${csv}': exit ${rc}, file '${replaced}'")
  endif()

else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
