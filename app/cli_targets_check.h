#pragma once

#include <QString>
#include <QStringList>
#include <QTextStream>

namespace autocomp::cli {

// Exit statuses of `autocomp targets check`.
enum TargetsCheckExit {
    TargetsCheckOk = 0,
    TargetsCheckInvalid =
        1, // backend.yaml does not load (the message names the file and line), or no evaluation possible
    TargetsCheckFailed =
        3, // a row of the table failed: a problem that does not load, or a verdict not the expected one
    TargetsCheckAbsent = 5, // the target is absent here (available_if, available_check): nothing was evaluated
};

// `autocomp targets check T`: for a target's author. Runs the target's availability (and hardware) check
// in the sandbox, then evaluates every problem's start code (expected ok, or no_hardware without the
// hardware) and the problem folder's checks/ files: checks/wrong_*.<ext> must be `incorrect`,
// checks/broken_*.<ext> `compile_error`. Prints one table row per evaluation (problem, file, expected,
// got, time, ok/FAIL) and, under it, each failure with its file and the first lines of its log.
// `problems`: only these (empty: all); `sandbox`: evaluation.sandbox.
int targetsCheck(const QString &targetName, const QStringList &problems, const QString &sandbox, QTextStream &out,
                 QTextStream &err);

} // namespace autocomp::cli
