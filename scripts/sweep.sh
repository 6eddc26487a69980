#!/usr/bin/env bash
# scripts/sweep.sh: runs tcmini once, or as a weak or strong scaling sweep over
# a list of rank counts, writing one YAML run report per run into an output
# directory, then collects them into a CSV and plots (scripts/collect.py).
# Inside a Slurm allocation it launches with srun (the batch scripts in
# scripts/slurm/ call it); outside, with mpirun on this node. docs/scaling.md
# is the guide.
#
# usage: scripts/sweep.sh single|weak|strong [section.key=value ...]
#   The words after the mode are passed to every run as deck overrides.
#
# Parameters (environment; defaults in brackets):
#   TCMINI_BACKEND    openmp | cuda | serial [openmp]. cuda launches one rank per GPU.
#   TCMINI_DECK       input deck [inputs/weak-cpu.in, inputs/strong-cpu.in, or
#                     the -gpu.in twins for cuda; inputs/hex.in for single]
#   TCMINI_RANKS      rank counts to run, e.g. "1 2 4 8" [sweeps: powers of two up
#                     to the allocation's tasks (Slurm) or to cores/threads (local);
#                     single: all of them]
#   TCMINI_RANKS_PER_NODE  ranks per node [Slurm: SLURM_NTASKS_PER_NODE, else the
#                     first count of SLURM_TASKS_PER_NODE; mpirun: all on this node]
#   TCMINI_THREADS    OpenMP threads per rank [SLURM_CPUS_PER_TASK, else 1]
#   TCMINI_CELLS_PER_RANK  weak: the box of one rank, "nx ny nz" [the deck's mesh.cells]
#   TCMINI_CELLS      strong, single: the whole box, "nx ny nz" [the deck's mesh.cells]
#   TCMINI_STEPS      assembly steps per run [the deck's run.steps]
#   TCMINI_REPEATS    runs per rank count [1]
#   TCMINI_OUT        output directory [results/MODE-BACKEND-<Slurm job id or time>]
#   TCMINI_RESULTS_FILE  1: also write each run's HDF5 results file [0]
#   TCMINI_GPU_BIND   cuda under srun: node (--gpus-per-node; each rank takes the
#                     GPU of its node-local rank) | task (--gpus-per-task=1) [node]
#   TCMINI_LAUNCHER   auto | srun | mpirun [auto: srun inside a Slurm job]
#   TCMINI_CORES_PER_NODE  cores per node [SLURM_CPUS_ON_NODE, else nproc]
#   TCMINI_SRUN_FLAGS, TCMINI_MPIRUN_FLAGS  extra launcher flags (e.g. --hostfile)
#   TCMINI_BIN        the tcmini binary [build/bin/tcmini]
# Default paths are in this repository; relative paths given are from the
# current directory.
#   TCMINI_SETUP      a file to source first (a site's module loads) [none]
#   TCMINI_COLLECT    1: run the collector after a sweep [1]
#   TCMINI_PYTHON     Python with PyYAML (and matplotlib for plots) [python3]
#   TCMINI_DRY_RUN    1: print the launch lines, run nothing, write nothing [0]
# Exit status: 0 if every run (and the collector) succeeded, 1 if any failed
# (a run fails when its launcher fails or it wrote no report), 2 for bad parameters.
set -euo pipefail

die() {
  echo "sweep.sh: error: $*" >&2
  exit 2
}

note() {
  echo "sweep.sh: $*" >&2
}

# A positive integer below a billion, or die naming the parameter.
positive() {
  if [[ ! $2 =~ ^[1-9][0-9]{0,8}$ ]]; then
    die "$1 must be a positive integer below 1000000000, got '$2'"
  fi
}

# 0 or 1, or die naming the parameter.
flag() {
  [[ $2 == 0 || $2 == 1 ]] || die "$1 must be 0 or 1, got '$2'"
}

# Prints the value of key in [section] of a deck file (comments and quotes
# removed, commas read as spaces).
deck_value() {
  awk -v section="$2" -v key="$3" '
    { sub(/[#;].*/, "") }
    /^[ \t]*\[/ { gsub(/[][ \t]/, ""); current = $0; next }
    current == section && $0 ~ "^[ \t]*" key "[ \t]*=" {
      sub(/^[^=]*=[ \t]*/, ""); gsub(/[",]/, " "); gsub(/[ \t]+/, " ");
      sub(/^ /, ""); sub(/ $/, ""); value = $0
    }
    END { print value }' "$1"
}

# Reads "nx ny nz" (spaces or commas) into the array named $2, or dies.
triple() {
  local -n target=$2
  read -r -a target <<<"${3//,/ }"
  ((${#target[@]} == 3)) || die "$1 must be three numbers, got '$3'"
}

# Weak scaling: prints "mx my mz", the factors by which the box of one rank
# grows along x, y, z for $1 ranks (mx*my*mz = $1). Each prime factor of the
# rank count, largest first, multiplies the axis grown least so far (x first
# on ties): 2 ranks 2 1 1, 4: 2 2 1, 8: 2 2 2, 16: 4 2 2, 6: 3 2 1.
weak_factors() {
  local n=$1 p=2 m=(1 1 1) primes=() i axis
  while ((p * p <= n)); do
    while ((n % p == 0)); do
      primes=("$p" "${primes[@]}")
      n=$((n / p))
    done
    p=$((p + 1))
  done
  ((n > 1)) && primes=("$n" "${primes[@]}") # the largest prime factor
  for i in "${primes[@]}"; do
    axis=0
    ((m[1] < m[axis])) && axis=1
    ((m[2] < m[axis])) && axis=2
    m[axis]=$((m[axis] * i))
  done
  echo "${m[@]}"
}

# Prints its arguments as one shell command line, quoting only the words
# that need it.
print_command() {
  local word line=""
  for word in "$@"; do
    [[ $word =~ ^[A-Za-z0-9_./=,:+@%-]+$ ]] || printf -v word '%q' "$word"
    line+="${line:+ }$word"
  done
  echo "$line"
}

# Powers of two from 1 up to $1.
powers_of_two() {
  local n=1 list=()
  while ((n <= $1)); do
    list+=("$n")
    n=$((n * 2))
  done
  echo "${list[@]}"
}

mode=${1:-}
case "$mode" in
  single | weak | strong) shift ;;
  -h | --help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *) die "usage: scripts/sweep.sh single|weak|strong [section.key=value ...] (see --help)" ;;
esac
user_overrides=("$@")
for word in "${user_overrides[@]}"; do
  [[ $word =~ ^[A-Za-z_]+\.[A-Za-z_]+= ]] ||
    die "'$word' is not a deck override (section.key=value); see --help"
done

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n ${TCMINI_SETUP:-} ]]; then
  [[ -f $TCMINI_SETUP && -r $TCMINI_SETUP ]] ||
    die "TCMINI_SETUP '$TCMINI_SETUP' is not a readable file"
  # shellcheck source=/dev/null
  source "$TCMINI_SETUP"
fi

dry_run=${TCMINI_DRY_RUN:-0}
flag TCMINI_DRY_RUN "$dry_run"
flag TCMINI_COLLECT "${TCMINI_COLLECT:-1}"
flag TCMINI_RESULTS_FILE "${TCMINI_RESULTS_FILE:-0}"
backend=${TCMINI_BACKEND:-openmp}
case "$backend" in
  serial | openmp) kind=cpu ;;
  cuda) kind=gpu ;;
  *) die "TCMINI_BACKEND must be serial, openmp or cuda, got '$backend'" ;;
esac
case "$mode" in
  single) deck=${TCMINI_DECK:-$root/inputs/hex.in} ;;
  *) deck=${TCMINI_DECK:-$root/inputs/$mode-$kind.in} ;;
esac
[[ -r $deck ]] || die "cannot read deck '$deck'"
bin=${TCMINI_BIN:-$root/build/bin/tcmini}
[[ -x $bin || $dry_run == 1 ]] || die "no tcmini binary at '$bin' (build it, or set TCMINI_BIN)"

in_slurm=0
[[ -n ${SLURM_JOB_ID:-} ]] && in_slurm=1
launcher=${TCMINI_LAUNCHER:-auto}
if [[ $launcher == auto ]]; then
  launcher=mpirun
  ((in_slurm)) && launcher=srun
fi
[[ $launcher == srun || $launcher == mpirun ]] ||
  die "TCMINI_LAUNCHER must be auto, srun or mpirun, got '$launcher'"
# srun starts Open MPI ranks only with an MPI plugin (pmix); a cluster whose
# default is none starts ranks that fail in MPI_Init: say what to set.
if [[ $launcher == srun && $dry_run != 1 && -z ${SLURM_MPI_TYPE:-} &&
      ${TCMINI_SRUN_FLAGS:-} != *--mpi* ]] &&
    grep -Eq '^MpiDefault += none$' <<<"$(scontrol show config 2>/dev/null)"; then
  note "warning: this cluster's srun starts no MPI plugin (MpiDefault=none), so MPI ranks" \
    "cannot start: set TCMINI_SRUN_FLAGS=--mpi=pmix (srun --mpi=list shows the plugins)"
fi
gpu_bind=${TCMINI_GPU_BIND:-node}
[[ $gpu_bind == node || $gpu_bind == task ]] ||
  die "TCMINI_GPU_BIND must be node or task, got '$gpu_bind'"

threads=${TCMINI_THREADS:-${SLURM_CPUS_PER_TASK:-1}}
positive TCMINI_THREADS "$threads"
cores=${TCMINI_CORES_PER_NODE:-${SLURM_CPUS_ON_NODE:-$(nproc)}}
positive TCMINI_CORES_PER_NODE "$cores"
if ((in_slurm)); then
  slurm_tasks_per_node=${SLURM_TASKS_PER_NODE:-1}
  ranks_per_node=${TCMINI_RANKS_PER_NODE:-${SLURM_NTASKS_PER_NODE:-${slurm_tasks_per_node%%[!0-9]*}}}
  positive TCMINI_RANKS_PER_NODE "$ranks_per_node"
  max_ranks=${SLURM_NTASKS:-$((${SLURM_JOB_NUM_NODES:-1} * ranks_per_node))}
else
  # 0: every rank on this node (a hostfile in TCMINI_MPIRUN_FLAGS and
  # TCMINI_RANKS_PER_NODE spread them over several).
  ranks_per_node=${TCMINI_RANKS_PER_NODE:-0}
  [[ $ranks_per_node == 0 ]] || positive TCMINI_RANKS_PER_NODE "$ranks_per_node"
  max_ranks=$((cores / threads))
  ((max_ranks >= 1)) || max_ranks=1
fi
if [[ $mode == single ]]; then
  read -r -a rank_counts <<<"${TCMINI_RANKS:-$max_ranks}"
else
  read -r -a rank_counts <<<"${TCMINI_RANKS:-$(powers_of_two "$max_ranks")}"
fi
((${#rank_counts[@]} >= 1)) || die "TCMINI_RANKS is empty"
for ranks in "${rank_counts[@]}"; do
  positive "each of TCMINI_RANKS" "$ranks"
done
repeats=${TCMINI_REPEATS:-1}
positive TCMINI_REPEATS "$repeats"

base_cells=()
base_length=()
if [[ $mode == weak ]]; then
  triple TCMINI_CELLS_PER_RANK base_cells "${TCMINI_CELLS_PER_RANK:-$(deck_value "$deck" mesh cells)}"
  triple "[mesh] length of $deck" base_length "$(deck_value "$deck" mesh length)"
else
  triple TCMINI_CELLS base_cells "${TCMINI_CELLS:-$(deck_value "$deck" mesh cells)}"
fi
for n in "${base_cells[@]}"; do
  positive "each cell count" "$n"
done
steps_override=()
if [[ -n ${TCMINI_STEPS:-} ]]; then
  positive TCMINI_STEPS "$TCMINI_STEPS"
  steps_override=("run.steps=$TCMINI_STEPS")
fi

out=${TCMINI_OUT:-results/$mode-$backend-${SLURM_JOB_ID:-$(date +%Y%m%d-%H%M%S)}}
if [[ $dry_run != 1 ]]; then
  mkdir -p "$out"
fi

# OpenMP placement: threads on the cores of their rank, packed. Not when ranks
# are not bound to cores (oversubscribed mpirun): all ranks would pin their
# threads to the same first cores.
omp_env=("OMP_NUM_THREADS=$threads" "OMP_PLACES=cores" "OMP_PROC_BIND=close")

# Sets the array `command` to the full launch line of one run with $1 ranks
# and the extra tcmini arguments after it.
launch_line() {
  local ranks=$1 per_node=$1 nodes=1
  shift
  if ((ranks_per_node > 0 && ranks > ranks_per_node)); then
    per_node=$ranks_per_node
    nodes=$(((ranks + ranks_per_node - 1) / ranks_per_node))
  fi
  local flags=() env_vars=("${omp_env[@]}") extra=() user_flags=() var
  if [[ $launcher == srun ]]; then
    flags=(srun "--nodes=$nodes" "--ntasks=$ranks" "--ntasks-per-node=$per_node"
           "--cpus-per-task=$threads" --cpu-bind=cores --kill-on-bad-exit=1)
    if [[ $kind == gpu && $gpu_bind == node ]]; then
      flags+=("--gpus-per-node=$per_node")
    elif [[ $kind == gpu ]]; then
      # Each rank sees only its own GPU, as device 0 of a node-local count of
      # one; tcmini's check that a node has a GPU per local rank must be told.
      flags+=(--gpus-per-task=1)
      extra=(run.gpu_sharing=true)
    fi
    read -r -a user_flags <<<"${TCMINI_SRUN_FLAGS:-}"
  else
    flags=(mpirun -n "$ranks")
    [[ $(id -u) == 0 ]] && flags+=(--allow-run-as-root)
    if ((per_node * threads <= cores)); then
      flags+=(--map-by "ppr:$per_node:node:PE=$threads" --bind-to core)
    else
      flags+=(--map-by "ppr:$per_node:node" --oversubscribe --bind-to none)
      env_vars=("OMP_NUM_THREADS=$threads" "OMP_PROC_BIND=false")
    fi
    for var in "${env_vars[@]}"; do
      flags+=(-x "${var%%=*}")
    done
    read -r -a user_flags <<<"${TCMINI_MPIRUN_FLAGS:-}"
  fi
  command=(env "${env_vars[@]}" "${flags[@]}" "${user_flags[@]}" "$bin" "$deck"
           "run.backend=$backend" "run.threads=$threads" "${steps_override[@]}"
           "${extra[@]}" "$@" "${user_overrides[@]}")
}

failed=()
for ranks in "${rank_counts[@]}"; do
  cells=("${base_cells[@]}")
  geometry=()
  if [[ $mode == weak ]]; then
    read -r -a factor <<<"$(weak_factors "$ranks")"
    for d in 0 1 2; do
      cells[d]=$((base_cells[d] * factor[d]))
    done
    length=$(awk -v l="${base_length[*]}" -v f="${factor[*]}" 'BEGIN {
      split(l, a, " "); split(f, b, " ");
      printf "%.17g,%.17g,%.17g", a[1] * b[1], a[2] * b[2], a[3] * b[3] }')
    geometry=("mesh.length=$length")
  fi
  for ((repeat = 1; repeat <= repeats; repeat++)); do
    name=$(printf '%s-r%05d' "$mode" "$ranks")
    ((repeats > 1)) && name+="-$repeat"
    results=none
    [[ ${TCMINI_RESULTS_FILE:-0} == 1 ]] && results=$out/$name.h5
    launch_line "$ranks" "mesh.cells=$(IFS=,; echo "${cells[*]}")" "${geometry[@]}" \
      "output.report=$out/$name.yaml" "output.path=$results" output.overwrite=true
    if [[ $dry_run == 1 ]]; then
      print_command "${command[@]}"
      continue
    fi
    print_command "${command[@]}" | tee -a "$out/commands.txt"
    rm -f "$out/$name.yaml"
    if ! "${command[@]}" 2>&1 | tee "$out/$name.log"; then
      failed+=("$name")
      note "run $name failed (log: $out/$name.log)"
    elif [[ ! -s $out/$name.yaml ]]; then
      # srun (Slurm 22.05) can return 0 when a step fails to launch.
      failed+=("$name")
      note "run $name wrote no report, though its launcher returned 0 (log: $out/$name.log)"
    fi
  done
done

[[ $dry_run == 1 ]] && exit 0
status=0
if ((${#failed[@]})); then
  note "${#failed[@]} run(s) failed: ${failed[*]}"
  status=1
fi
if [[ $mode != single && ${TCMINI_COLLECT:-1} == 1 ]]; then
  python=${TCMINI_PYTHON:-python3}
  if ! "$python" "$root/scripts/collect.py" --study "$mode" --csv "$out/scaling.csv" \
      --plots "$out" "$out"; then
    note "the collector failed; run it again with: $python scripts/collect.py --study $mode $out"
    status=1
  fi
fi
note "reports in $out"
exit "$status"
