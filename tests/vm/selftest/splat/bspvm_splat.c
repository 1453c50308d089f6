// SPDX-License-Identifier: GPL-2.0
/*
 * bspvm_splat: a deliberately broken module for the VM harness self-test
 * (tests/vm/selftest.sh). Loading it produces the kernel log report selected
 * by the "kind" parameter, which the harness must treat as a failed run:
 *
 *   warn      WARN_ON(1)
 *   refcount  refcount_t decremented to 0 ("decrement hit 0; leaking memory")
 *   redzone   one byte written past a kmalloc() object; with slub_debug=FZPU
 *             SLUB reports "Redzone overwritten" when the object is freed
 *   stuck     insmod sleeps uninterruptibly for stuck_ms milliseconds, so
 *             neither timeout(1) nor SIGKILL can end it (tests the runner's
 *             watchdog for cases stuck in the kernel)
 *   none      nothing (the module loads and unloads cleanly)
 *
 * Every kind leaves the kernel usable: SLUB repairs the red zone, the
 * refcount saturates, WARN_ON only warns.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/refcount.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/delay.h>

static char *kind = "warn";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "report to produce at load: warn, refcount, redzone, stuck, none");

static unsigned int stuck_ms = 90000;
module_param(stuck_ms, uint, 0444);
MODULE_PARM_DESC(stuck_ms, "how long kind=stuck blocks insmod, in milliseconds");

static noinline void bspvm_splat_redzone(void)
{
	size_t size = 32;
	char *p = kmalloc(size, GFP_KERNEL);

	if (!p)
		return;
	/* Hide the overflow from the compiler's bounds checks. */
	OPTIMIZER_HIDE_VAR(size);
	p[size] = 0x5a;
	kfree(p);
}

static int __init bspvm_splat_init(void)
{
	refcount_t ref = REFCOUNT_INIT(1);

	pr_info("bspvm_splat: producing '%s'\n", kind);
	if (!strcmp(kind, "warn")) {
		WARN_ON(1);
	} else if (!strcmp(kind, "refcount")) {
		refcount_dec(&ref);
	} else if (!strcmp(kind, "redzone")) {
		bspvm_splat_redzone();
	} else if (!strcmp(kind, "stuck")) {
		msleep(stuck_ms);
	} else if (strcmp(kind, "none")) {
		pr_err("bspvm_splat: unknown kind '%s'\n", kind);
		return -EINVAL;
	}
	return 0;
}

static void __exit bspvm_splat_exit(void)
{
	pr_info("bspvm_splat: unloaded\n");
}

module_init(bspvm_splat_init);
module_exit(bspvm_splat_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Deliberately broken module for the AF_BSP VM harness self-test");
