// SPDX-License-Identifier: GPL-2.0
/*
 * xcuda-flood: a test-only module for Dom0 that stands for a backend
 * flooding a guest's event channel.  Loaded with irq=N (xcuda-back's
 * binding of a guest's control channel, from /proc/interrupts), it sends
 * events through that binding for ms= milliseconds, then loads (and does
 * nothing more until it is removed).  The guest must not spend that time
 * in its interrupt handler: its frontend binds the channel "late EOI" and
 * reports the events that found nothing as spurious, so that its kernel
 * delays the next ones (XSA-391).
 */
#define pr_fmt(fmt) "xcuda-flood: " fmt

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <xen/events.h>
#include <xen/xen.h>

static int irq = -1;
module_param(irq, int, 0444);
MODULE_PARM_DESC(irq, "the Dom0 irq bound to the guest's channel");

static unsigned int ms = 5000;
module_param(ms, uint, 0444);
MODULE_PARM_DESC(ms, "how long to send events, in milliseconds");

static int __init xfl_init(void)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned long sent = 0;

	if (!xen_initial_domain())
		return -ENODEV;
	if (irq < 0)
		return -EINVAL;
	while (time_before(jiffies, end)) {
		notify_remote_via_irq(irq);
		if (!(++sent % 256))
			cond_resched();
	}
	pr_info("sent %lu events through irq %d in %u ms\n", sent, irq, ms);
	return 0;
}

static void __exit xfl_exit(void)
{
}

module_init(xfl_init);
module_exit(xfl_exit);

MODULE_DESCRIPTION("xcuda: event channel flood, for tests only");
MODULE_LICENSE("GPL");
