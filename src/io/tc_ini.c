/* tc_ini: the INI-like line parser (sections, key = value, comments, quoted
 * values), keeping the line of every entry for error messages. */
#include "tc_ini.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct tc_ini {
  char *text;             ///< private copy, cut into NUL-terminated pieces in place
  tc_ini_entry *entries;
  int64_t count;
  int64_t capacity;
};

/// Removes leading and trailing whitespace; returns the first kept character.
static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  char *end = s + strlen(s);
  while (end > s && isspace((unsigned char)end[-1]))
    *--end = '\0';
  return s;
}

/// Cuts s at the first comment character outside double quotes.
static void strip_comment(char *s) {
  bool quoted = false;
  for (; *s; s++) {
    if (*s == '"')
      quoted = !quoted;
    else if (!quoted && (*s == '#' || *s == ';')) {
      *s = '\0';
      return;
    }
  }
}

char *tc_ini_unquote(char *value) {
  value = trim(value);
  if (value[0] != '"')
    return value;
  char *close = strchr(value + 1, '"');
  if (!close || *trim(close + 1) != '\0')
    return NULL;
  *close = '\0';
  return value + 1;
}

static tc_err append(tc_ini *ini, int line, const char *section, const char *key,
                     const char *value) {
  if (ini->count == ini->capacity) {
    int64_t capacity = ini->capacity ? 2 * ini->capacity : 32;
    tc_ini_entry *grown = realloc(ini->entries, (size_t)capacity * sizeof *grown);
    TC_CHECK(grown, TC_ERR_MEMORY, "out of memory growing the deck's entry list");
    ini->entries = grown;
    ini->capacity = capacity;
  }
  ini->entries[ini->count++] = (tc_ini_entry){line, section, key, value};
  return TC_SUCCESS;
}

/// Parses one line (already cut out of the text) into ini.
static tc_err parse_line(tc_ini *ini, const char *origin, int line_number, char *line,
                         const char **section) {
  char *raw = trim(line);
  if (raw[0] == '#' || raw[0] == ';' || raw[0] == '\0')
    return TC_SUCCESS;
  if (raw[0] == '[') {
    char *close = strchr(raw, ']');
    if (close) {
      char *rest = close + 1;
      strip_comment(rest);
      if (*trim(rest) == '\0') {
        *close = '\0';
        char *name = trim(raw + 1);
        TC_CHECK(name[0] != '\0', TC_ERR_INPUT, "%s:%d: empty section name '[]'", origin,
                 line_number);
        *section = name;
        return append(ini, line_number, name, NULL, NULL);
      }
    }
    strip_comment(raw);
    TC_FAIL(TC_ERR_INPUT, "%s:%d: expected '[section]', got '%s'", origin, line_number,
            trim(raw));
  }
  char *equals = strchr(raw, '=');
  if (!equals) {
    strip_comment(raw);
    TC_FAIL(TC_ERR_INPUT, "%s:%d: expected 'key = value', got '%s'", origin, line_number,
            trim(raw));
  }
  *equals = '\0';
  char *key = trim(raw);
  TC_CHECK(key[0] != '\0', TC_ERR_INPUT, "%s:%d: missing key before '='", origin,
           line_number);
  TC_CHECK(*section, TC_ERR_INPUT, "%s:%d: key '%s' comes before any [section]", origin,
           line_number, key);
  char *value_text = equals + 1;
  strip_comment(value_text);
  char *value = tc_ini_unquote(value_text);
  TC_CHECK(value, TC_ERR_INPUT, "%s:%d: [%s] %s: unterminated quote or text after the "
           "closing quote in '%s'", origin, line_number, *section, key, trim(value_text));
  return append(ini, line_number, *section, key, value);
}

tc_err tc_ini_parse(const char *origin, const char *text, tc_ini **ini) {
  *ini = NULL;
  tc_ini *parsed;
  TC_CALLOC(parsed, 1);
  size_t length = strlen(text);
  parsed->text = malloc(length + 1);
  if (!parsed->text) {
    tc_ini_destroy(&parsed);
    TC_FAIL(TC_ERR_MEMORY, "out of memory copying a %zu-byte deck", length);
  }
  memcpy(parsed->text, text, length + 1);

  const char *section = NULL;
  int line_number = 0;
  char *line = parsed->text;
  while (line) {
    line_number++;
    char *newline = strchr(line, '\n');
    if (newline)
      *newline = '\0';
    tc_err err = parse_line(parsed, origin, line_number, line, &section);
    if (err != TC_SUCCESS) {
      tc_ini_destroy(&parsed);
      return err;
    }
    line = newline ? newline + 1 : NULL;
  }
  *ini = parsed;
  return TC_SUCCESS;
}

void tc_ini_destroy(tc_ini **ini) {
  if (!*ini)
    return;
  free((*ini)->entries);
  free((*ini)->text);
  free(*ini);
  *ini = NULL;
}

int64_t tc_ini_count(const tc_ini *ini) { return ini->count; }

const tc_ini_entry *tc_ini_entry_at(const tc_ini *ini, int64_t i) { return &ini->entries[i]; }
