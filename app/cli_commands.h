#pragma once

#include "cli_common.h"

// The commands of `autocomp`, one function each, called by main (cli_main.cpp) once the command line has been
// parsed against the command's options. Each returns the process's exit status (ExitCode, cli::RunExit) and
// writes its output on out() and its errors and progress on err().
namespace autocomp::cli {

// cli_run.cpp: drive runs in this process, or ask the process that drives them.
int cmdRun(const Args &args);
int cmdResume(const Args &args);
int cmdControl(const Args &args); // pause, stop
int cmdStudy(const Args &args);

// cli_eval.cpp
int cmdEval(const Args &args);

// cli_runs.cpp: runs list, runs show; cli_watch.cpp: runs watch, on the store `runs` opened.
int cmdRuns(const Args &args);
int cmdWatch(RunStore &store, const Args &args);

// cli_exchange.cpp
int cmdExport(const Args &args);
int cmdImport(const Args &args);

// cli_catalog.cpp: `targets`, `problems` and `agents` without a subcommand list what is installed.
int cmdList(const Args &args);
int cmdTargetsCheck(const Args &args);

// cli_agents.cpp
int cmdAgentsBuild(const Args &args);
int cmdAgentsImport(const Args &args);

} // namespace autocomp::cli
