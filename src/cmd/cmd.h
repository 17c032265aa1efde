/* cmd.h: every command of caliber, as listed by main.c's command table.
 * Each returns the process exit status (CB_EXIT_*); on failure it has filled
 * err, which main() prints as "caliber: <command>: <message>". argv[0] is
 * the command name; a command reads its arguments and never writes them,
 * so argv is const, and demo can call the others with its own lists. */
#ifndef CB_CMD_H
#define CB_CMD_H

#include "caliber.h"

int cmd_prepare(int argc, const char **argv, struct cb_err *err);
int cmd_verify(int argc, const char **argv, struct cb_err *err);
int cmd_digest(int argc, const char **argv, struct cb_err *err);
int cmd_topology(int argc, const char **argv, struct cb_err *err);
int cmd_reaccount(int argc, const char **argv, struct cb_err *err);
int cmd_plan(int argc, const char **argv, struct cb_err *err);
int cmd_run(int argc, const char **argv, struct cb_err *err);
int cmd_demo(int argc, const char **argv, struct cb_err *err);
int cmd_worker(int argc, const char **argv, struct cb_err *err);
int cmd_inventory(int argc, const char **argv, struct cb_err *err);
int cmd_report(int argc, const char **argv, struct cb_err *err);
int cmd_diff(int argc, const char **argv, struct cb_err *err);
int cmd_compare(int argc, const char **argv, struct cb_err *err);
int cmd_export(int argc, const char **argv, struct cb_err *err);
int cmd_merge(int argc, const char **argv, struct cb_err *err);
int cmd_slurm(int argc, const char **argv, struct cb_err *err);
int cmd_pin(int argc, const char **argv, struct cb_err *err);

#endif
