// The subcommands of the spmmc tool, one per *_command.cpp file.
#pragma once

#include "tools/spmmc/cli.h"

namespace spmmc::cli {

Command inspect_command();  // inspect_command.cpp
Command gen_command();      // gen_command.cpp
Command plan_command();     // plan_command.cpp
Command compile_command();  // compile_command.cpp
Command verify_command();   // verify_command.cpp
Command collect_command();  // collect_command.cpp
Command train_ranker_command();  // train_ranker_command.cpp

}  // namespace spmmc::cli
