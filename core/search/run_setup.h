#pragma once

#include "catalog/repository.h"
#include "search/search_engine.h"

#include <QStringList>

#include <optional>

namespace autocomp {

// Resolves a run configuration against the shipped data: target, problem, agent and model strings.
// Every problem is reported (file, key and reason), not only the first.
std::optional<RunSetup> prepareRun(const RunConfig &config, const QByteArray &configYaml, const Repository &repository,
                                   const QString &storePath, QStringList *errors);

} // namespace autocomp
