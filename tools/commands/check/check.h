/* SPDX-License-Identifier: MIT */
/*
 * `ringtrace check`: what its files share (internal to tools/commands/check/).
 */
#ifndef RTR_TOOLS_CHECK_H
#define RTR_TOOLS_CHECK_H

/*
 * `check --repair`: repair input ("-": standard input) into output (NULL: the
 * default name, see cli_default_output(); "-": standard output; gzip when it ends in
 * .gz), with a progress bar, the reader's warnings and a report on standard error.
 * Returns the exit status: CLI_OK, or CLI_ERROR.
 */
int check_repair(const char *input, const char *output);

#endif /* RTR_TOOLS_CHECK_H */
