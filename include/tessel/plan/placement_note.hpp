#pragma once
// Where the devices are placed (the runtime sets it when it makes them: "0..7 on GPU 0"), for
// explain's last line. Plans do not depend on it.
#include <string>

namespace tessel::plan {

void set_placement_note(std::string note);
std::string placement_note();

}  // namespace tessel::plan
