// The BSP_WIDE_TYPES entry points of bsp.h: this file sees bsp.h as a program compiled
// with -DBSP_WIDE_TYPES does, so each definition below (bsp_put, ...) takes the
// declaration's asm label and is emitted as the wide symbol (bsp_put_wide, version node
// BSPLIB_1.1 of libbsp.map), and the compiler checks it against the header's prototype.
// The calls are those of the int entry points (c_api.hpp), named as the program wrote
// them; only the types differ.
#define BSP_WIDE_TYPES 1
#include "bsp.h"

#include <type_traits>

#include "c_api.hpp"

static_assert(std::is_same_v<bsp_size_t, std::int64_t>, "bsp_size_t is the runtime's int64");

extern "C" {

void bsp_push_reg(const void *ident, bsp_size_t size) {
    bsp::capi::push_reg("bsp_push_reg", ident, size);
}
void bsp_pushregister(const void *ident, bsp_size_t size) {
    bsp::capi::push_reg("bsp_pushregister", ident, size);
}

void bsp_put(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes) {
    bsp::capi::put("bsp_put", pid, src, dst, offset, nbytes, false);
}
void bsp_hpput(int pid, const void *src, void *dst, bsp_size_t offset, bsp_size_t nbytes) {
    bsp::capi::put("bsp_hpput", pid, src, dst, offset, nbytes, true);
}
void bsp_get(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes) {
    bsp::capi::get("bsp_get", pid, src, offset, dst, nbytes);
}
void bsp_hpget(int pid, const void *src, bsp_size_t offset, void *dst, bsp_size_t nbytes) {
    bsp::capi::get("bsp_hpget", pid, src, offset, dst, nbytes);
}

void bsp_set_tagsize(bsp_size_t *tag_nbytes) {
    bsp::capi::set_tagsize("bsp_set_tagsize", tag_nbytes);
}
void bsp_set_tag_size(bsp_size_t *tag_nbytes) {
    bsp::capi::set_tagsize("bsp_set_tag_size", tag_nbytes);
}

void bsp_send(int pid, const void *tag, const void *payload, bsp_size_t payload_nbytes) {
    bsp::capi::send("bsp_send", pid, tag, payload, payload_nbytes);
}

void bsp_qsize(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) {
    bsp::capi::qsize("bsp_qsize", nmessages, accum_nbytes);
}
void bsp_bsmp_info(bsp_size_t *nmessages, bsp_size_t *accum_nbytes) {
    bsp::capi::qsize("bsp_bsmp_info", nmessages, accum_nbytes);
}

void bsp_get_tag(bsp_size_t *status, void *tag) {
    bsp::capi::get_tag("bsp_get_tag", status, tag);
}

void bsp_move(void *payload, bsp_size_t reception_nbytes) {
    bsp::capi::move("bsp_move", payload, reception_nbytes);
}

bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr) {
    return bsp::capi::hpmove<bsp_size_t>("bsp_hpmove", tag_ptr, payload_ptr);
}

}  // extern "C"
