// The secret every process of a job presents to the coordinator, so that stray or stale
// processes cannot join it.
#pragma once

#include <string>
#include <string_view>

namespace bsp::launch {

// 128 random bits as 32 hex digits. Throws std::system_error if getrandom() fails.
std::string make_job_token();

// Whether two tokens are equal, in a time that depends only on their lengths (never on
// where they differ): a stranger learns nothing about the token from how long the
// coordinator takes to refuse it.
bool same_token(std::string_view a, std::string_view b);

}  // namespace bsp::launch
