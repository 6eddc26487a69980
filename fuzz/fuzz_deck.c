/* fuzz_deck: libFuzzer target for the input deck parser (tc_ini and
 * tc_config). Each input is parsed as a deck and its first line as a
 * command-line override. A parse must either fail with a recorded message or
 * succeed; a deck that parses must print (tc_config_deck_string) as a deck
 * that parses to the same printout. Any other outcome, a crash, undefined
 * behaviour or a leak stops the fuzzer (abort). See docs/hardening.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_config.h"

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_deck: %s: %s\n", what, detail);
  abort();
}

/* A failed parse must say why; a successful one must survive a round trip. */
static void check_parse(tc_err err, const tc_config *config) {
  if (err != TC_SUCCESS) {
    if (tc_error_code() != err || tc_error_message()[0] == '\0')
      fail("a failed parse recorded no message", tc_err_name(err));
    tc_error_clear();
    return;
  }
  char *printed = NULL, *reprinted = NULL;
  if (tc_config_deck_string(config, &printed) != TC_SUCCESS)
    fail("cannot print a parsed deck", tc_error_message());
  tc_config again;
  if (tc_config_parse("printed deck", printed, 0, NULL, &again) != TC_SUCCESS)
    fail("the printed deck does not parse", tc_error_message());
  if (tc_config_deck_string(&again, &reprinted) != TC_SUCCESS)
    fail("cannot print a reparsed deck", tc_error_message());
  if (strcmp(printed, reprinted) != 0)
    fail("the printed deck does not parse back to itself", printed);
  free(printed);
  free(reprinted);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  tc_error_clear();
  tc_config config;
  check_parse(tc_config_parse("fuzz.in", text, 0, NULL, &config), &config);

  char *override = text;
  override[strcspn(override, "\n")] = '\0';
  check_parse(tc_config_parse(NULL, NULL, 1, &override, &config), &config);
  free(text);
  return 0;
}
