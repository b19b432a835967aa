#pragma once

#include <QString>

namespace autocomp {

class RunStore;

// A run as JSON lines: one "run" object, then its candidates, LLM calls and evaluation steps, in id
// order. Candidate ids are rewritten on import, so an archive can be imported into any store.
bool exportRunJsonl(RunStore &store, qint64 runId, const QString &path, QString *error);
// The run's schedule (the menu items along its best trajectory, in order) as a YAML file that seeds a new
// run (`search: {schedule: PATH}`). False, with `error` saying why, when the run does not exist or has no
// schedule yet (no improvement along its best trajectory), or the file cannot be written.
bool exportSchedule(RunStore &store, qint64 runId, const QString &path, QString *error);
// Returns the new run id, or 0 with `error` naming the file and line.
qint64 importRunJsonl(RunStore &store, const QString &path, QString *error);

} // namespace autocomp
