// SPDX-License-Identifier: GPL-2.0
/*
 * bspvm_freeze: a test helper of the VM cases (tests/vm/cases/kernel_stall.sh),
 * never part of the product. Writing a number of milliseconds to
 *
 *   /sys/module/bspvm_freeze/parameters/freeze_ms
 *
 * stops the whole machine for that long: stop_machine() holds every CPU
 * with interrupts disabled while one of them waits out the time on the
 * clock. Nothing runs meanwhile (no process, no softirq, no timer), as when
 * a hypervisor deschedules a virtual machine; the clock goes on, so every
 * timer runs late afterwards. The write returns when the machine runs
 * again. At most 10 s (the soft-lockup and RCU stall detectors stay quiet).
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/stop_machine.h>
#include <linux/ktime.h>
#include <linux/processor.h>

#define BSPVM_FREEZE_MAX_MS	10000

static int bspvm_freeze_fn(void *data)
{
	ktime_t end = ktime_add_ms(ktime_get(), *(unsigned int *)data);

	while (ktime_before(ktime_get(), end))
		cpu_relax();
	return 0;
}

static int bspvm_freeze_set(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int err;

	err = kstrtouint(val, 0, &ms);
	if (err)
		return err;
	if (!ms || ms > BSPVM_FREEZE_MAX_MS)
		return -ERANGE;
	err = stop_machine(bspvm_freeze_fn, &ms, NULL);
	if (!err)
		*(unsigned int *)kp->arg = ms;
	return err;
}

static unsigned int bspvm_freeze_last_ms;

static const struct kernel_param_ops bspvm_freeze_ops = {
	.set = bspvm_freeze_set,
	.get = param_get_uint,
};

module_param_cb(freeze_ms, &bspvm_freeze_ops, &bspvm_freeze_last_ms, 0600);
MODULE_PARM_DESC(freeze_ms,
		 "write: stop every CPU for this many ms (1..10000); read: the last freeze");

MODULE_DESCRIPTION("af_bsp VM test helper: freezes the whole machine on request");
MODULE_LICENSE("GPL");
