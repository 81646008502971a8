/* SPDX-License-Identifier: MIT */
/*
 * Launch attributes on the wire (LAUNCH_EX and the cluster occupancy
 * commands, spec/cudart-launch.calls): one record per attribute, the
 * value in the layout of CUDA's cudaLaunchAttributeValue except that an
 * event is the session's u64 event handle rather than a pointer.
 */
#ifndef XCUDA_LAUNCH_H
#define XCUDA_LAUNCH_H

#include <stdint.h>

#define XCUDA_LAUNCH_MAX_ATTRS	64
#define XCUDA_LAUNCH_ATTR_VAL	64

struct xcuda_launch_attr {
	uint32_t id;		/* cudaLaunchAttributeID */
	uint32_t rsvd;
	uint8_t val[XCUDA_LAUNCH_ATTR_VAL];
};

_Static_assert(sizeof(struct xcuda_launch_attr) == 72, "launch attribute");

#endif /* XCUDA_LAUNCH_H */
