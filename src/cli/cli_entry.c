/* SPDX-License-Identifier: Apache-2.0 */
/* The dpas executable: the command line runs in dpas_cli_main (main.c), which never exits, so
 * that tests and the fuzzer can run it in-process. */
#include "cli.h"

int main(int argc, char **argv) { return dpas_cli_main(argc, argv, stdin, stdout, stderr); }
