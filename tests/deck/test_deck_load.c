/* test_deck_load: the collective tc_config_load at any rank count: rank 0
 * writes deck files, every rank loads them; a good deck gives the same
 * configuration everywhere, and every failure (missing or unreadable file,
 * a bad line, a bad override) returns the same code and the same exact
 * message on every rank, without a hang. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deck_test.h"
#include "tc_config.h"

/// Rank 0 writes text to path; every rank learns whether it worked.
static bool write_deck(const char *path, const char *text) {
  tc_err err = TC_SUCCESS;
  if (tc_rank(MPI_COMM_WORLD) == 0) {
    FILE *file = fopen(path, "w");
    bool written = file && fputs(text, file) >= 0;
    if (file && fclose(file) != 0)
      written = false;
    if (!written)
      err = tc_error_raise(TC_ERR_IO, __FILE__, __LINE__, __func__, "cannot write %s", path);
  }
  err = tc_parallel_agree(MPI_COMM_WORLD, err);
  EXPECT(err == TC_SUCCESS, "%s", tc_error_message());
  tc_error_clear();
  return err == TC_SUCCESS;
}

/// The message must be identical on every rank: compare with rank 0's.
static void expect_same_everywhere(const char *message) {
  char mine[1024] = {0}, root[1024] = {0};
  snprintf(mine, sizeof mine, "%s", message);
  memcpy(root, mine, sizeof root);
  EXPECT(tc_broadcast(MPI_COMM_WORLD, root, sizeof root, 0) == TC_SUCCESS, "broadcast");
  EXPECT_STREQ(mine, root);
}

/// Loads path (with at most one override) and expects code and message.
static void expect_load_error(const char *path, const char *override, tc_err code,
                              const char *message) {
  tc_config config;
  char *overrides[] = {(char *)override};
  tc_error_clear();
  tc_err err = tc_config_load(MPI_COMM_WORLD, path, override ? 1 : 0, overrides, &config);
  EXPECT(err == code, "loading %s: code %d, want %d (%s)", path ? path : "(none)", (int)err,
         (int)code, tc_error_message());
  EXPECT_STREQ(tc_error_message(), message);
  expect_same_everywhere(tc_error_message());
  tc_error_clear();
}

int main(int argc, char **argv) {
  deck_test_init(&argc, &argv);
  int ranks = tc_size(MPI_COMM_WORLD);
  char good[64], bad[64], directory[64], expected[256];
  snprintf(good, sizeof good, "deck_load_good_%d.in", ranks);
  snprintf(bad, sizeof bad, "deck_load_bad_%d.in", ranks);
  snprintf(directory, sizeof directory, "deck_load_dir_%d.in", ranks);

  if (write_deck(good, "[mesh]\ncells = 4 5 6   # small\n[run]\nbackend = serial\nsteps = 3\n")) {
    tc_config config;
    char *overrides[] = {"run.steps=4", "output.path=none"};
    tc_err err = tc_config_load(MPI_COMM_WORLD, good, 2, overrides, &config);
    EXPECT(err == TC_SUCCESS, "%s", tc_error_message());
    EXPECT(config.cells[0] == 4 && config.cells[1] == 5 && config.cells[2] == 6, "cells");
    EXPECT(config.backend == TC_BACKEND_SERIAL && config.steps == 4, "run");
    EXPECT_STREQ(config.path, "none");
    /* Every rank holds the same configuration: compare the printed decks. */
    char *deck = NULL;
    EXPECT(tc_config_deck_string(&config, &deck) == TC_SUCCESS, "deck string");
    int64_t length = deck ? (int64_t)strlen(deck) : 0, root_length = length;
    EXPECT(tc_broadcast(MPI_COMM_WORLD, &root_length, sizeof root_length, 0) == TC_SUCCESS,
           "broadcast");
    EXPECT(root_length == length, "deck length %lld on rank 0, %lld here",
           (long long)root_length, (long long)length);
    if (deck && root_length == length) {
      char *root = malloc((size_t)length + 1);
      memcpy(root, deck, (size_t)length + 1);
      EXPECT(tc_broadcast(MPI_COMM_WORLD, root, length + 1, 0) == TC_SUCCESS, "broadcast");
      EXPECT(strcmp(root, deck) == 0, "configuration differs from rank 0's");
      free(root);
    }
    free(deck);
  }

  /* No deck at all: the defaults and the overrides. */
  {
    tc_config config;
    char *overrides[] = {"run.threads=2", NULL};
    int count = 1 + deck_test_fallback(overrides + 1);
    EXPECT(tc_config_load(MPI_COMM_WORLD, NULL, count, overrides, &config) == TC_SUCCESS, "%s",
           tc_error_message());
    EXPECT(config.threads == 2 && config.cells[0] == 16, "defaults and override");
  }

  expect_load_error("deck_load_missing.in", NULL, TC_ERR_IO,
                    "cannot open deck 'deck_load_missing.in': No such file or directory");

  if (tc_rank(MPI_COMM_WORLD) == 0)
    mkdir(directory, 0755);
  snprintf(expected, sizeof expected, "cannot read deck '%s': Is a directory", directory);
  expect_load_error(directory, NULL, TC_ERR_IO, expected);

  if (write_deck(bad, "# the brief's example\n[mesh]\n\n\n\n\n  cells = 16 0 16\n")) {
    snprintf(expected, sizeof expected,
             "%s:7: [mesh] cells: expected 3 integers >= 1, got '16 0 16'", bad);
    expect_load_error(bad, NULL, TC_ERR_INPUT, expected);
  }
  expect_load_error(good, "mesh.cels=3", TC_ERR_INPUT,
                    "command line: 'mesh.cels=3': unknown key 'cels' in [mesh]");
  if (write_deck(bad, "[mesh]\ncells = 2 2 2\nnxx = 1\n")) {
    snprintf(expected, sizeof expected, "%s:3: unknown key 'nxx' in [mesh]", bad);
    expect_load_error(bad, NULL, TC_ERR_INPUT, expected);
  }

  if (tc_rank(MPI_COMM_WORLD) == 0) {
    remove(good);
    remove(bad);
    rmdir(directory);
  }
  return deck_test_finish("test_deck_load");
}
