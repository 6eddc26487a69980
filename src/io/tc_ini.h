/* tc_ini: a small INI-like text parser that keeps file:line for every entry.
 * Syntax: "[section]" headers, "key = value" entries, comments from '#' or ';'
 * to the end of a line, blank lines, leading whitespace allowed anywhere. A
 * value may be double-quoted ("a # b") to keep '#', ';' or outer spaces. It
 * knows nothing of what keys mean: tc_config does. */
#ifndef TC_INI_H
#define TC_INI_H

#include <stdint.h>

#include "tc_error.h"

/// One "[section]" header or "key = value" line, in file order. Strings are
/// owned by the tc_ini.
typedef struct {
  int line;            ///< 1-based line number in the text
  const char *section; ///< the header's or the enclosing section's name, as written
  const char *key;     ///< as written, surrounding whitespace removed; NULL for a header
  const char *value;   ///< comment and surrounding whitespace removed, quotes stripped;
                       ///< NULL for a header
} tc_ini_entry;

typedef struct tc_ini tc_ini;

/// Parses text (NUL-terminated). origin names the text in error messages,
/// which read "origin:line: what is wrong" (TC_ERR_INPUT): a line that is
/// neither a header, an entry nor a comment, a malformed header, an empty key,
/// an entry before any section, an unterminated quoted value. Not collective.
tc_err tc_ini_parse(const char *origin, const char *text, tc_ini **ini);

/// Releases the parse and sets *ini to NULL. NULL is fine.
void tc_ini_destroy(tc_ini **ini);

/// Number of entries (headers and key = value lines).
int64_t tc_ini_count(const tc_ini *ini);

/// Entry i (0 <= i < tc_ini_count), in text order.
const tc_ini_entry *tc_ini_entry_at(const tc_ini *ini, int64_t i);

/// Strips surrounding whitespace from value in place and, when it is wrapped
/// in double quotes, the quotes. Returns a pointer into value, or NULL when a
/// quote is left unterminated or text follows the closing quote. For values
/// that do not come from a file (command-line overrides). Not collective.
char *tc_ini_unquote(char *value);

#endif
