/* tc_fault: TCMINI_FAULT parsing and the injected failures; the temporary-file
 * registry and the fatal-signal record (see tc_fault.h). */
#include "tc_fault.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- fault injection ---- */

typedef struct {
  const char *name;
  tc_err code;
  const char *what; /* what the failure stands for, in the message */
} fault_point;

static const fault_point points[] = {
    {"alloc", TC_ERR_MEMORY, "out of memory"},
    {"step", TC_ERR_INTERNAL, "an assembly step failed"},
    {"io", TC_ERR_IO, "I/O error writing the results file"},
    {"publish", TC_ERR_IO, "I/O error publishing the results file"},
    {"peer_map", TC_ERR_CUDA, "this rank's GPU buffers cannot be shared"},
    /* Deliberately wrong kernels (tc_fault_wrong), one per contraction. */
    {"wrong_FieldFieldScalar", TC_SUCCESS, NULL}, {"wrong_FieldFieldVector", TC_SUCCESS, NULL},
    {"wrong_FieldFieldTensor", TC_SUCCESS, NULL}, {"wrong_DataFieldScalar", TC_SUCCESS, NULL},
    {"wrong_DataFieldVector", TC_SUCCESS, NULL},  {"wrong_DataFieldTensor", TC_SUCCESS, NULL},
    {"wrong_DataDataScalar", TC_SUCCESS, NULL},   {"wrong_DataDataVector", TC_SUCCESS, NULL},
    {"wrong_DataDataTensor", TC_SUCCESS, NULL},
};
enum { NUM_POINTS = sizeof points / sizeof points[0], MAX_FAULTS = 12, SETTING_MAX = 256 };

enum { MARK_MAX = 256 };

typedef struct {
  int point;     /* index into points */
  int rank;      /* -1: every rank */
  long at;       /* fail on this arrival (1-based) */
  long arrivals; /* arrivals so far */
  char mark[MARK_MAX]; /* "": fail; else create this file instead of failing */
  bool stop;           /* stop this process (SIGSTOP) instead of failing */
} fault;

static struct {
  bool read;      /* TCMINI_FAULT has been read */
  bool malformed; /* ... and could not be parsed */
  int count;
  fault faults[MAX_FAULTS];
  char setting[SETTING_MAX]; /* TCMINI_FAULT as given, for messages */
} injection;

static int point_index(const char *name, size_t length) {
  for (int p = 0; p < NUM_POINTS; ++p)
    if (strlen(points[p].name) == length && strncmp(points[p].name, name, length) == 0)
      return p;
  return -1;
}

/* Reads a decimal number >= minimum that fills text up to end. */
static bool parse_count(const char *text, const char *end, long minimum, long *value) {
  char *stop;
  long parsed = strtol(text, &stop, 10);
  if (stop != end || stop == text || parsed < minimum)
    return false;
  *value = parsed;
  return true;
}

/* Parses one "point[:rank=R][:at=N][:mark=FILE][:stop]" item of length bytes. */
static bool parse_fault(const char *item, size_t length, fault *parsed) {
  const char *end = item + length, *colon = memchr(item, ':', length);
  const char *name_end = colon ? colon : end;
  *parsed = (fault){.point = point_index(item, (size_t)(name_end - item)), .rank = -1, .at = 1};
  if (parsed->point < 0)
    return false;
  while (colon) {
    const char *field = colon + 1;
    colon = memchr(field, ':', (size_t)(end - field));
    const char *field_end = colon ? colon : end;
    long value;
    if (strncmp(field, "rank=", 5) == 0 && parse_count(field + 5, field_end, 0, &value))
      parsed->rank = (int)value;
    else if (strncmp(field, "at=", 3) == 0 && parse_count(field + 3, field_end, 1, &value))
      parsed->at = value;
    else if (strncmp(field, "mark=", 5) == 0 && field_end - field > 5 &&
             field_end - field - 5 < MARK_MAX)
      snprintf(parsed->mark, sizeof parsed->mark, "%.*s", (int)(field_end - field - 5), field + 5);
    else if (field_end - field == 4 && strncmp(field, "stop", 4) == 0)
      parsed->stop = true;
    else
      return false;
  }
  return true;
}

static void read_setting(void) {
  injection.read = true;
  const char *setting = getenv("TCMINI_FAULT");
  if (!setting || !setting[0])
    return;
  size_t length = strlen(setting);
  snprintf(injection.setting, sizeof injection.setting, "%s", setting);
  for (const char *item = setting; item < setting + length;) {
    const char *comma = strchr(item, ',');
    size_t item_length = comma ? (size_t)(comma - item) : strlen(item);
    if (injection.count == MAX_FAULTS ||
        !parse_fault(item, item_length, &injection.faults[injection.count])) {
      injection.malformed = true;
      return;
    }
    injection.count++;
    item += item_length + 1;
  }
}

/* This process's rank in MPI_COMM_WORLD, told by tc_parallel_init (0 before
 * it and without MPI), so that fault injection itself needs no MPI. */
static int process_rank;

void tc_fault_set_rank(int rank) { process_rank = rank; }

static volatile sig_atomic_t fatal_signal; /* 0: none received */

tc_err tc_fault_check(const char *point) {
  const int signal_number = fatal_signal;
  TC_CHECK(signal_number == 0, TC_ERR_INTERRUPTED, "interrupted by %s (stopped at '%s')",
           signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal",
           point);
  if (!injection.read)
    read_setting();
  if (injection.count == 0 && !injection.malformed)
    return TC_SUCCESS;
  TC_CHECK(!injection.malformed, TC_ERR_ARGUMENT,
           "TCMINI_FAULT='%s': expected a comma-separated list of point[:rank=R][:at=N][:mark=FILE][:stop] with "
           "point alloc, step, io, publish, peer_map or wrong_<Kernel> (at most %d)",
           injection.setting, MAX_FAULTS);
  int index = point_index(point, strlen(point));
  TC_CHECK(index >= 0 && points[index].what != NULL, TC_ERR_INTERNAL,
           "tc_fault_check: unknown fault point '%s'", point);
  const int rank = process_rank;
  for (int i = 0; i < injection.count; ++i) {
    fault *f = &injection.faults[i];
    if (f->point != index || (f->rank >= 0 && f->rank != rank))
      continue;
    f->arrivals++;
    if (f->mark[0] || f->stop) { /* a test waits for the run to get this far */
      if (f->arrivals == f->at && f->mark[0]) {
        FILE *mark = fopen(f->mark, "w");
        TC_CHECK(mark && fclose(mark) == 0, TC_ERR_IO, "TCMINI_FAULT=%s: cannot create '%s'",
                 injection.setting, f->mark);
      }
      if (f->arrivals == f->at && f->stop)
        (void)raise(SIGSTOP); /* until the test sends SIGCONT */
      continue;
    }
    TC_CHECK(f->arrivals != f->at, points[index].code,
             "%s (fault injected at '%s', arrival %ld, by TCMINI_FAULT=%s)", points[index].what,
             point, f->at, injection.setting);
  }
  return TC_SUCCESS;
}

bool tc_fault_wrong(const char *point) {
  if (!injection.read)
    read_setting();
  if (injection.count == 0 || injection.malformed)
    return false;
  const int index = point_index(point, strlen(point)), rank = process_rank;
  for (int i = 0; i < injection.count; ++i)
    if (injection.faults[i].point == index &&
        (injection.faults[i].rank < 0 || injection.faults[i].rank == rank))
      return true;
  return false;
}

/* ---- temporary files a fatal signal must remove ---- */

/* A slot is written only while disarmed and armed after its path is complete
 * (the fences keep the compiler from reordering around a signal handler). */
static struct {
  volatile sig_atomic_t armed;
  char path[TC_FAULT_PATH_MAX];
} temporaries[TC_FAULT_MAX_TEMPORARIES];

tc_err tc_fault_track_temporary(const char *path) {
  size_t length = strlen(path);
  TC_CHECK(length < TC_FAULT_PATH_MAX, TC_ERR_ARGUMENT,
           "tc_fault_track_temporary: path of %zu bytes is too long", length);
  for (int i = 0; i < TC_FAULT_MAX_TEMPORARIES; ++i) {
    if (temporaries[i].armed)
      continue;
    memcpy(temporaries[i].path, path, length + 1);
    atomic_signal_fence(memory_order_seq_cst);
    temporaries[i].armed = 1;
    return TC_SUCCESS;
  }
  TC_FAIL(TC_ERR_ARGUMENT, "tc_fault_track_temporary: %d temporary files are registered already",
          TC_FAULT_MAX_TEMPORARIES);
}

void tc_fault_untrack_temporary(const char *path) {
  for (int i = 0; i < TC_FAULT_MAX_TEMPORARIES; ++i)
    if (temporaries[i].armed && strcmp(temporaries[i].path, path) == 0) {
      temporaries[i].armed = 0;
      atomic_signal_fence(memory_order_seq_cst);
    }
}

void tc_fault_signal_received(int signal_number) {
  fatal_signal = signal_number;
  for (int i = 0; i < TC_FAULT_MAX_TEMPORARIES; ++i)
    if (temporaries[i].armed) {
      atomic_signal_fence(memory_order_seq_cst);
      unlink(temporaries[i].path);
      temporaries[i].armed = 0;
    }
}
