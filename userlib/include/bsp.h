/*
 * bsp.h - the BSPlib programming interface (Hill, McColl, Stefanescu, Goudreau,
 * Lang, Rao, Suel, Tsantilas, Bisseling: "BSPlib: The BSP programming library",
 * 1998), as implemented by libbsp of the AF_BSP project.
 *
 * Usable from C and C++. Sizes, offsets and process ids are `int`, exactly as in
 * the 1998 standard, so existing BSPlib programs compile unchanged. The older
 * names used in the literature (bsp_pushregister, bsp_popregister,
 * bsp_set_tag_size, bsp_bsmp_info) are provided as well.
 *
 * Wide types (opt-in): a program that defines BSP_WIDE_TYPES before including this
 * header (or compiles with -DBSP_WIDE_TYPES) gets every size, offset, byte count and
 * message count as bsp_size_t = int64_t; process ids stay int. The functions with
 * sizes are then other symbols of libbsp (bsp_put is bsp_put_wide, version node
 * BSPLIB_1.1), bound by GNU asm labels, so the int ABI (BSPLIB_1.0) never changes.
 * Without the macro bsp_size_t is int and the declarations are those of the standard.
 *
 * Each function is documented below: what it does, when it takes effect, and the
 * misuse it detects. Documentation/bsplib.rst adds the rationale and every error message.
 *
 * Supersteps: a program is a sequence of supersteps separated by bsp_sync. Puts, gets,
 * sends, registrations and a new tag size are requested during a superstep and take effect
 * together at its end (the effect of each call is stated with the call).
 *
 * Errors: libbsp never reports misuse through return values. Misuse ends every process of
 * the program with one line on standard error and a non-zero exit status:
 *
 *     BSPlib error: <call> on process <pid>: <reason>
 *
 * The "Errors:" paragraph of each function lists what it detects. Every function except
 * bsp_init, bsp_begin, bsp_nprocs and bsp_abort ends the program when called before
 * bsp_begin ("called before bsp_begin") or after bsp_end ("called after bsp_end"). A failure
 * of the transport (a peer unreachable, a peer process that died) ends the program the same
 * way from whatever call noticed it.
 */
#ifndef BSP_H
#define BSP_H

/* bsp_size_t: the type of sizes, offsets and counts; BSP_WIDE(name) binds a function
 * with sizes to its wide symbol name_wide (nothing without BSP_WIDE_TYPES). */
#ifdef BSP_WIDE_TYPES
#include <stdint.h>
typedef int64_t bsp_size_t; /* signed: bsp_get_tag and bsp_hpmove report -1 */
#if defined(__GNUC__) || defined(__clang__)
#define BSP_WIDE(name) __asm__(#name "_wide")
#else
#error "BSP_WIDE_TYPES needs a compiler with GNU asm labels (GCC, Clang)"
#endif
#else
typedef int bsp_size_t;
#define BSP_WIDE(name)
#endif

/* bsp_pid_t, bsp_nprocs_t: process ids and counts (the names of BSPonMPI and MulticoreBSP
 * for C). int in both modes: the 1998 prototypes use int, and a job has at most 65535
 * processes, which an int holds whatever the size type. */
typedef int bsp_pid_t;
typedef int bsp_nprocs_t;

#ifdef __cplusplus
extern "C" {
#endif

#define BSPLIB_VERSION 1998 /* the standard this header follows */

/*
 * Registration identifiers and the remote source of a get are addresses that libbsp
 * compares but never reads through: tell GCC, so that registering a variable before
 * its first assignment (as [SHM97]'s examples do) draws no -Wmaybe-uninitialized.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define BSP_ADDRESS_ONLY(i) __attribute__((access(none, i)))
#else
#define BSP_ADDRESS_ONLY(i)
#endif

/* ---- Initialisation ------------------------------------------------------------------ */

/*
 * bsp_init - name the SPMD function (bsp_init mode)
 *
 * Called first in main, before anything else, when the SPMD part is not main itself:
 * spmd_part starts with bsp_begin and ends with bsp_end. Process 0 goes on with main's
 * sequential part, which calls spmd_part; under a launcher (bsprun, Slurm) the other
 * processes run spmd_part at once and exit after it. argc and argv are main's.
 * Takes effect: at once.
 * Errors: spmd_part is NULL; called after bsp_begin.
 */
void bsp_init(void (*spmd_part)(void), int argc, char **argv);

/*
 * bsp_begin - start the SPMD part with up to maxprocs processes
 *
 * The first statement of the SPMD part (main, or the function named by bsp_init). Run
 * directly, the program forks maxprocs processes on this machine; under a launcher the job
 * has a fixed number P of processes and only process 0's maxprocs counts: it asks for
 * min(maxprocs, P) processes, and processes beyond that leave quietly (they wait for the
 * job to end and exit with status 0). Collective: returns on every process once all of
 * them are connected; superstep 0 starts.
 * Errors: maxprocs < 1 (on process 0); called twice (one bsp_begin/bsp_end pair per
 * program); the processes cannot be started or connected.
 */
void bsp_begin(int maxprocs);

/*
 * bsp_end - end the SPMD part
 *
 * The last statement of the SPMD part. Collective: it ends the last superstep as bsp_sync
 * does (its puts and gets are completed). Afterwards only process 0 continues (the others
 * exit with status 0) and no other BSPlib call is allowed.
 * Errors: another process called bsp_sync instead (every process must end in the same
 * superstep); a process that returns from main or exits without calling bsp_end ends the
 * program ("the process is ending without calling bsp_end").
 */
void bsp_end(void);

/* ---- Enquiry ------------------------------------------------------------------------- */

/*
 * bsp_pid - this process's id, 0 .. bsp_nprocs() - 1
 *
 * Errors: called before bsp_begin or after bsp_end.
 */
bsp_pid_t bsp_pid(void);

/*
 * bsp_nprocs - the number of processes
 *
 * Between bsp_begin and bsp_end: the number of processes of the SPMD part. Before
 * bsp_begin: the number of processes available, the launcher's P (BSP_NPROCS), else the
 * number of online processors (what bsp_begin(bsp_nprocs()) would start).
 * Errors: called after bsp_end.
 */
bsp_nprocs_t bsp_nprocs(void);

/*
 * bsp_time - seconds elapsed on this process since its bsp_begin
 *
 * A monotonic clock; the clocks of different processes are not synchronised.
 * Errors: called before bsp_begin or after bsp_end.
 */
double bsp_time(void);

/* ---- Synchronisation ----------------------------------------------------------------- */

/*
 * bsp_sync - end the superstep (barrier)
 *
 * Collective. Returns when every process has called it and the superstep's communication
 * is complete, in this order: registrations of bsp_push_reg become usable; gets read their
 * sources (as the remote process left them when it entered bsp_sync) and are written in the
 * order they were issued; puts are applied by source pid, then in issue order (the last
 * wins); messages sent in the superstep form the new queue of bsp_send (the previous queue,
 * and what was not moved from it, is discarded); areas of bsp_pop_reg are deregistered; a
 * tag size set by bsp_set_tagsize in this superstep applies to the messages sent after it.
 * Errors: another process called bsp_end instead; the processes disagree on the
 * registrations (bsp_push_reg/bsp_pop_reg counts and order) or on the tag size set in this
 * superstep (reported once, by the process that differs from process 0); a transport
 * failure.
 */
void bsp_sync(void);

/*
 * bsp_abort - end the whole program with a message
 *
 * Prints the printf-style message as one line on standard error and ends every process of
 * the program with a non-zero exit status, at once (no barrier). Callable by one process
 * alone, at any time. Does not return.
 */
void bsp_abort(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* ---- DRMA: registration -------------------------------------------------------------- */

/*
 * bsp_push_reg - register a memory area for remote access
 *
 * Makes the size bytes at ident reachable by the puts and gets of other processes. The
 * i-th registration of every process names the same area (registration slot), whatever the
 * addresses; sizes may differ between processes, and remote accesses are checked against
 * the size the remote process registered. NULL with size 0 registers "no memory here". The
 * same address may be registered again: the most recent registration is the one used.
 * Every process must call it the same number of times in a superstep.
 * Takes effect: at the next bsp_sync (the area is usable in the following superstep).
 * Errors: negative size; a different number of registrations on another process (at
 * bsp_sync).
 */
void bsp_push_reg(const void *ident, bsp_size_t size) BSP_WIDE(bsp_push_reg) BSP_ADDRESS_ONLY(1);

/*
 * bsp_pop_reg - deregister a memory area
 *
 * Removes the most recent registration of ident at the time of the call (which may be a
 * bsp_push_reg of the same superstep). Every process must pop the same slots in the same
 * order.
 * Takes effect: at the end of the next bsp_sync: puts and gets of this superstep still use
 * the area.
 * Errors: ident is not registered; it was already deregistered in this superstep; the
 * processes pop different slots (at bsp_sync).
 */
void bsp_pop_reg(const void *ident) BSP_ADDRESS_ONLY(1);

/* ---- DRMA: puts and gets ------------------------------------------------------------- */

/*
 * bsp_put - copy nbytes from src into process pid's area dst, at offset
 *
 * dst is a registered area, named by this process's address of it; the bytes go to offset
 * .. offset + nbytes - 1 of the area as process pid registered it. Buffered: src is copied
 * at the call and may be reused at once.
 * Takes effect: at the end of the superstep (bsp_sync), after the superstep's gets have
 * read their values; several puts to the same bytes are applied by source pid, then in
 * issue order.
 * Errors: pid out of range; dst not registered, or registered only in this superstep;
 * negative offset or nbytes; offset + nbytes beyond the area process pid registered; src
 * NULL with nbytes > 0.
 */
void bsp_put(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes)
    BSP_WIDE(bsp_put);

/*
 * bsp_get - copy nbytes from process pid's area src, at offset, into dst
 *
 * src is a registered area, named by this process's address of it. dst must stay valid
 * until the end of the superstep.
 * Takes effect: at the end of the superstep: the value read is the one process pid's area
 * held when that process entered bsp_sync, before any put of the superstep; gets are
 * written in the order they were issued (where destinations overlap, the later get wins).
 * Errors: pid out of range; src not registered, or registered only in this superstep;
 * negative offset or nbytes; offset + nbytes beyond the area process pid registered; dst
 * NULL with nbytes > 0.
 */
void bsp_get(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes)
    BSP_WIDE(bsp_get) BSP_ADDRESS_ONLY(2);

/*
 * bsp_hpput - bsp_put without buffering
 *
 * As bsp_put, but src is read during the bsp_sync that ends the superstep, not at the
 * call: neither src nor the destination may change until then.
 * Takes effect and errors: as bsp_put.
 */
void bsp_hpput(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes)
    BSP_WIDE(bsp_hpput);

/*
 * bsp_hpget - bsp_get without buffering
 *
 * As bsp_get (gets are never buffered at the source in libbsp: both read their value at
 * the end of the superstep).
 * Takes effect and errors: as bsp_get.
 */
void bsp_hpget(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes)
    BSP_WIDE(bsp_hpget) BSP_ADDRESS_ONLY(2);

/* ---- BSMP: bulk synchronous message passing ------------------------------------------ */

/*
 * bsp_set_tagsize - set the size in bytes of message tags
 *
 * Collective: every process calls it in the same superstep with the same value. On return
 * *tag_nbytes holds the tag size that would otherwise apply then, so that a procedure can
 * set a size and restore it. The initial tag size is 0.
 * Takes effect: for messages sent after the next bsp_sync (a message keeps the tag size it
 * was sent with).
 * Errors: tag_nbytes is NULL; negative size, or larger than 2147483647; another process
 * sets a different size (at bsp_sync).
 */
void bsp_set_tagsize(bsp_size_t *tag_nbytes) BSP_WIDE(bsp_set_tagsize);

/*
 * bsp_send - send a message to process pid
 *
 * The message is a tag of the current tag size, read from tag, and payload_nbytes bytes
 * read from payload; both are copied at the call.
 * Takes effect: the message is in process pid's queue in the next superstep (after the
 * bsp_sync that ends this one), in a deterministic order: by source pid, then send order.
 * Errors: pid out of range; negative payload_nbytes; tag NULL with a tag size > 0;
 * payload NULL with payload_nbytes > 0.
 */
void bsp_send(int pid, const void *tag, const void *payload, bsp_size_t payload_nbytes)
    BSP_WIDE(bsp_send);

/*
 * bsp_qsize - the size of the message queue
 *
 * Sets *nmessages to the number of messages not yet moved and *accum_nbytes to the sum of
 * their payload sizes (tags not counted). Takes effect at once.
 * Errors: nmessages or accum_nbytes is NULL; with the int API, a queue holding more than
 * INT_MAX payload bytes (compile with BSP_WIDE_TYPES).
 */
void bsp_qsize(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) BSP_WIDE(bsp_qsize);

/*
 * bsp_get_tag - look at the first message of the queue
 *
 * Sets *status to the payload size of the first message, or to -1 if the queue is empty,
 * and copies its tag (of the size it was sent with) to tag. Does not advance the queue.
 * Errors: status is NULL; tag NULL with a tag size > 0; with the int API, a payload of
 * more than INT_MAX bytes.
 */
void bsp_get_tag(bsp_size_t *status, void *tag) BSP_WIDE(bsp_get_tag);

/*
 * bsp_move - take the first message of the queue
 *
 * Copies at most reception_nbytes bytes of the first message's payload to payload and
 * removes the message from the queue.
 * Errors: the queue is empty; negative reception_nbytes; payload NULL when bytes are to be
 * copied.
 */
void bsp_move(void *payload, bsp_size_t reception_nbytes) BSP_WIDE(bsp_move);

/*
 * bsp_hpmove - take the first message of the queue without copying
 *
 * Sets *tag_ptr and *payload_ptr to the first message's tag and payload inside the queue,
 * removes the message from the queue and returns its payload size; returns -1 (and sets
 * nothing) if the queue is empty. The pointers stay valid until the next bsp_sync.
 * Errors: tag_ptr or payload_ptr is NULL; with the int API, a payload of more than INT_MAX
 * bytes.
 */
bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr) BSP_WIDE(bsp_hpmove);

/*
 * Older names (the BSP literature, Oxford BSP toolset): the same functions.
 * bsp_pushregister = bsp_push_reg, bsp_popregister = bsp_pop_reg,
 * bsp_set_tag_size = bsp_set_tagsize, bsp_bsmp_info = bsp_qsize. Their error messages
 * name the call as the program wrote it.
 */
void bsp_pushregister(const void *ident, bsp_size_t size) BSP_WIDE(bsp_pushregister)
    BSP_ADDRESS_ONLY(1);
void bsp_popregister(const void *ident) BSP_ADDRESS_ONLY(1);
void bsp_set_tag_size(bsp_size_t *tag_nbytes) BSP_WIDE(bsp_set_tag_size);
void bsp_bsmp_info(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) BSP_WIDE(bsp_bsmp_info);

#undef BSP_WIDE

#ifdef __cplusplus
}
#endif

#endif /* BSP_H */
