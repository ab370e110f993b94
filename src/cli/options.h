/*
 * Declarative option tables, in the way of git's and perf's
 * parse-options: each subcommand describes its options once, in one
 * array of struct opt, and that array drives parsing (GNU getopt_long
 * underneath, so long names, abbreviations, "--opt=value", clustered
 * short flags and "--" behave as users of perf and git expect), the
 * usage line printed with a usage error, `recce CMD --list-options`
 * (read by the bash completion script and by the test that holds every
 * option and its page in docs/ together).
 *
 * An option also says what it makes the command do that the agent's
 * scopes govern (cli/grant.h): a file it writes (OPT_OUTPUT_), a scope
 * it needs (OPT_FLAG_NEEDS_, OPT_STRING_NEEDS_). options_parse asks for
 * them as it takes each option, so that the agent's decision comes from
 * this one parse, however the option was spelled.
 *
 * Program side only: a bad value is a usage error that exits 2.
 */
#ifndef RECCE_CLI_OPTIONS_H
#define RECCE_CLI_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum opt_kind {
	OPT_END,
	OPT_FLAG,   /* no value: the int at offset in ctx = set (1 if set is 0) */
	OPT_STRING, /* the const char * at offset in ctx = the argument */
	OPT_CALL,   /* cb(ctx, the argument or NULL, the option) */
};

struct opt;
typedef void (*opt_cb)(void *ctx, const char *arg, const struct opt *o);

struct opt {
	enum opt_kind kind;
	char short_name;       /* 0: none */
	const char *long_name; /* NULL: none */
	const char *arg_name;  /* "N", "FILE"; NULL when it takes no value */
	size_t offset;	       /* OPT_FLAG, OPT_STRING: of the field in ctx */
	opt_cb cb;	       /* OPT_CALL */
	int set;	       /* OPT_FLAG's value, or a tag an OPT_CALL reads */
	const char *help;      /* one line */
	unsigned needs;	       /* the scopes it needs (remote/scopes.h) */
	int writes;	       /* its value is a file the command writes */
};

/* T is the type of ctx, F the field an option sets. */
#define OPT_FLAG_(s, l, T, F, h)                                                                   \
	{                                                                                          \
		OPT_FLAG, (s), (l), NULL, offsetof(T, F), NULL, 1, (h), 0, 0                       \
	}
#define OPT_SET_(s, l, T, F, n, h)                                                                 \
	{                                                                                          \
		OPT_FLAG, (s), (l), NULL, offsetof(T, F), NULL, (n), (h), 0, 0                     \
	}
#define OPT_STRING_(s, l, a, T, F, h)                                                              \
	{                                                                                          \
		OPT_STRING, (s), (l), (a), offsetof(T, F), NULL, 0, (h), 0, 0                      \
	}
#define OPT_CALL_(s, l, a, f, t, h)                                                                \
	{                                                                                          \
		OPT_CALL, (s), (l), (a), 0, (f), (t), (h), 0, 0                                    \
	}
/* The same, for an option whose value is a file the command writes. */
#define OPT_OUTPUT_(s, l, a, T, F, h)                                                              \
	{                                                                                          \
		OPT_STRING, (s), (l), (a), offsetof(T, F), NULL, 0, (h), 0, 1                      \
	}
#define OPT_CALL_OUTPUT_(s, l, a, f, t, h)                                                         \
	{                                                                                          \
		OPT_CALL, (s), (l), (a), 0, (f), (t), (h), 0, 1                                    \
	}
/* The same, for an option that needs the scopes n through the agent. */
#define OPT_FLAG_NEEDS_(s, l, T, F, n, h)                                                          \
	{                                                                                          \
		OPT_FLAG, (s), (l), NULL, offsetof(T, F), NULL, 1, (h), (n), 0                     \
	}
#define OPT_STRING_NEEDS_(s, l, a, T, F, n, h)                                                     \
	{                                                                                          \
		OPT_STRING, (s), (l), (a), offsetof(T, F), NULL, 0, (h), (n), 0                    \
	}
#define OPT_END_()                                                                                 \
	{                                                                                          \
		OPT_END, 0, NULL, NULL, 0, NULL, 0, NULL, 0, 0                                     \
	}

/* flags of options_parse: stop at the first operand (a command's name). */
#define OPTIONS_IN_ORDER 1u

/*
 * Parses argv[1..] of subcommand cmd against opts. Options may be mixed
 * with operands (GNU order) unless flags has OPTIONS_IN_ORDER; parsing
 * stops at "--". Returns the index of
 * the first operand, options moved before it; *dashdash (if not NULL) is
 * set to the index of "--", or argc when there is none. An unknown option
 * or a missing value is a usage error (exit 2). `--list-options` prints
 * the table (options_list) and exits 0.
 */
int options_parse(const char *cmd, const struct opt *opts, unsigned flags, int argc, char **argv,
		  void *ctx, int *dashdash);

/* One line an option: "-p, --pid PID\thelp". */
void options_list(const struct opt *opts, FILE *out);

#endif
