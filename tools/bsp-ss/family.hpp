// The AF_BSP family number in effect: the af_bsp module parameter "family"
// (BSP_FAMILY_PARAM_PATH) if the module is loaded, else the UAPI's AF_BSP.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace bsp_ss {

// The number in the text of the sysfs parameter file ("23\n"), if it is a
// decimal family number from 1 to 255 (sdiag_family is a __u8).
std::optional<int> parse_family_text(std::string_view text);

struct FamilyInEffect {
    int family = 0;
    bool from_sysfs = false;  // false: the file is absent, AF_BSP is used
    std::string error;        // the file exists but cannot be read or parsed
};

FamilyInEffect read_family(const std::string &path);

}  // namespace bsp_ss
