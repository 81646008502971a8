/* SPDX-License-Identifier: MIT */
#ifndef PARTS_H
#define PARTS_H
/* Each part_*.cu is its own translation unit in whole-program mode, so
 * each carries its own fatbinary and registers it on its own. */
void part_a_run(int *d, int n);
int part_a_tag(void);
int part_a_calls(void);
void part_b_run(int *d, int n);
int part_b_tag(void);
int part_b_calls(void);
void part_c_run(double *d, int n);
#endif
