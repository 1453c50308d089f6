// The secret every process of a job presents to the coordinator, so that stray or stale
// processes cannot join it.
#pragma once

#include <string>

namespace bsp::launch {

// 128 random bits as 32 hex digits. Throws std::system_error if getrandom() fails.
std::string make_job_token();

}  // namespace bsp::launch
