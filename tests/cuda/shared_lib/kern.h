/* SPDX-License-Identifier: MIT */
#ifndef SL_KERN_H
#define SL_KERN_H
/* libxct_sl_kern.so, linked into the program. */
extern "C" int sl_lib_run(int *d, int n, int k);
extern "C" int sl_lib_counter(void);
/* libxct_sl_plugin.so, loaded with dlopen; returns a CUDA error code. */
typedef int (*sl_plugin_fn)(int *d, int n, int *value_before);
#endif
