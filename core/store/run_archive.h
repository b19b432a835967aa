#pragma once

#include <QString>

namespace autocomp {

class RunStore;

// A run as JSON lines: one "run" object, then its candidates, LLM calls and evaluation steps, in id
// order. Candidate ids are rewritten on import, so an archive can be imported into any store.
bool exportRunJsonl(RunStore &store, qint64 runId, const QString &path, QString *error);
// Returns the new run id, or 0 with `error` naming the file and line.
qint64 importRunJsonl(RunStore &store, const QString &path, QString *error);

} // namespace autocomp
