/*
 * An options file for a long-running command (recce agent --config
 * FILE): each line NAME VALUE, NAME = VALUE, or NAME alone (a flag) is
 * the command's --NAME; blank lines and lines starting with '#' are
 * skipped. The file's options go before the command line's, so the
 * command line wins for an option of one value and adds to a repeatable
 * one.
 *
 * Ownership: the vector and strings made are the process's until it
 * exits (a command's arguments).
 */
#ifndef RECCE_CLI_CONFIG_FILE_H
#define RECCE_CLI_CONFIG_FILE_H

/* argv (argv[0] the command) with its --config FILE (or --config=FILE,
 * before any "--") replaced by FILE's options. A file that cannot be
 * read, a malformed line, or, for root, a file another user could have
 * written, ends recce with a message. Returns the new argc; *out is the
 * new vector, argv itself when there is no --config. */
int config_expand(const char *cmd, int argc, char **argv, char ***out);

#endif
