/*
 * The subcommands: one cmd_NAME() per file cmd-NAME.c. Each parses its own
 * options, wires engine modules together, prints, and returns the exit
 * status (0 success, 1 runtime error, 2 usage error).
 */
#ifndef RECCE_BUILTIN_H
#define RECCE_BUILTIN_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_files(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_addr2line(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_seq(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_certs(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_help(int argc, char **argv);

#endif
