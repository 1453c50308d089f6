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
 * Kinds for the debug kernel (tests/vm/debug-kernel.config), each caught by
 * one of its checkers:
 *   kasan     read of a kmalloc() object after kfree() (KASAN
 *             "use-after-free"; never a KFENCE object)
 *   kfence    the same on an object KFENCE sampled (KFENCE "use-after-free")
 *   kmemleak  kmalloc() an object and drop the only pointer to it
 *             (kmemleak "unreferenced object" at the harness's next scan)
 *   lockdep   take two mutexes in the order A-B, then B-A (lockdep
 *             "possible circular locking dependency"; no deadlock: one thread)
 *   softirq   take a spinlock in a timer (softirq) and in process context
 *             without _bh (lockdep "inconsistent lock state")
 *   sleep     kmalloc(GFP_KERNEL) under a spinlock (DEBUG_ATOMIC_SLEEP "sleeping
 *             function called from invalid context")
 *   odebug    kfree() an object holding an armed timer (debug objects
 *             "ODEBUG: free active"; the fixup deactivates the timer)
 * Lockdep switches itself off after its first report, and after any report
 * that taints the kernel as lockdep-unreliable (KASAN's does): one lockdep
 * kind per boot, before any KASAN kind.
 *
 * Every kind leaves the kernel usable: SLUB repairs the red zone, the
 * refcount saturates, WARN_ON only warns, the KASAN/KFENCE reads hit memory
 * that stays mapped, the leaked object is 64 bytes.
 */
#include <linux/module.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/refcount.h>
#include <linux/string.h>
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/kfence.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/jiffies.h>

static char *kind = "warn";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "report to produce at load: warn, refcount, redzone, stuck, none, kasan, kfence, kmemleak, lockdep, softirq, sleep, odebug");

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

/* kasan: a use-after-free that KASAN (not KFENCE) sees. */
static noinline void bspvm_splat_kasan(void)
{
	char *p;
	int i;

	for (i = 0; i < 100; i++) {
		p = kmalloc(32, GFP_KERNEL);
		if (!p)
			return;
		if (!is_kfence_address(p))
			break;
		kfree(p);
		p = NULL;
	}
	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("bspvm_splat: read after free: %d\n", READ_ONCE(p[0]));
}

/*
 * kfence: allocate until KFENCE samples one of our objects (one allocation
 * per sample interval, 100 ms by default), then read it after kfree().
 */
static noinline void bspvm_splat_kfence(void)
{
	char *p;
	int i;

	for (i = 0; i < 600; i++) {
		p = kmalloc(32, GFP_KERNEL);
		if (!p)
			return;
		if (is_kfence_address(p))
			break;
		kfree(p);
		p = NULL;
		msleep(20);
	}
	if (!p) {
		pr_err("bspvm_splat: KFENCE never sampled an allocation\n");
		return;
	}
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("bspvm_splat: read after free: %d\n", READ_ONCE(p[0]));
}

static void *bspvm_leak_hint;

/* kmemleak: nothing points to the object once this returns. */
static noinline void bspvm_splat_kmemleak(void)
{
	void *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	memset(p, 0x6b, 64);
	/* An address kmemleak cannot follow: the object is unreferenced. */
	WRITE_ONCE(bspvm_leak_hint, (void *)((unsigned long)p ^ 0x5a5a5a5aUL));
}

static DEFINE_MUTEX(bspvm_mutex_a);
static DEFINE_MUTEX(bspvm_mutex_b);

static noinline void bspvm_splat_lockdep(void)
{
	mutex_lock(&bspvm_mutex_a);
	mutex_lock(&bspvm_mutex_b);
	mutex_unlock(&bspvm_mutex_b);
	mutex_unlock(&bspvm_mutex_a);

	mutex_lock(&bspvm_mutex_b);
	mutex_lock(&bspvm_mutex_a);
	mutex_unlock(&bspvm_mutex_a);
	mutex_unlock(&bspvm_mutex_b);
}

static DEFINE_SPINLOCK(bspvm_lock);
static struct timer_list bspvm_timer;
static bool bspvm_timer_ran;

static void bspvm_timer_fn(struct timer_list *t)
{
	spin_lock(&bspvm_lock);
	WRITE_ONCE(bspvm_timer_ran, true);
	spin_unlock(&bspvm_lock);
}

static noinline void bspvm_splat_softirq(void)
{
	timer_setup(&bspvm_timer, bspvm_timer_fn, 0);
	mod_timer(&bspvm_timer, jiffies + 1);
	while (!READ_ONCE(bspvm_timer_ran))
		msleep(20);
	del_timer_sync(&bspvm_timer);
	/* Process context, softirqs enabled: inconsistent with the timer. */
	spin_lock(&bspvm_lock);
	spin_unlock(&bspvm_lock);
}

/* A GFP_KERNEL allocation (may sleep) under a spinlock. */
static noinline void bspvm_splat_sleep(void)
{
	spin_lock(&bspvm_lock);
	kfree(kmalloc(16, GFP_KERNEL));
	spin_unlock(&bspvm_lock);
}

struct bspvm_timed {
	struct timer_list timer;
};

static void bspvm_timed_fn(struct timer_list *t)
{
}

static noinline void bspvm_splat_odebug(void)
{
	struct bspvm_timed *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return;
	timer_setup(&o->timer, bspvm_timed_fn, 0);
	mod_timer(&o->timer, jiffies + 3600 * HZ);
	kfree(o);
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
	} else if (!strcmp(kind, "kasan")) {
		bspvm_splat_kasan();
	} else if (!strcmp(kind, "kfence")) {
		bspvm_splat_kfence();
	} else if (!strcmp(kind, "kmemleak")) {
		bspvm_splat_kmemleak();
	} else if (!strcmp(kind, "lockdep")) {
		bspvm_splat_lockdep();
	} else if (!strcmp(kind, "softirq")) {
		bspvm_splat_softirq();
	} else if (!strcmp(kind, "sleep")) {
		bspvm_splat_sleep();
	} else if (!strcmp(kind, "odebug")) {
		bspvm_splat_odebug();
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
