#pragma once

#include "catalog/repository.h"
#include "llm/model_spec.h"
#include "model/agent.h"
#include "model/problem.h"
#include "model/run_config.h"
#include "model/target.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

// Everything a run needs, resolved and validated before the engine starts.
struct RunSetup
{
    RunConfig config;
    QByteArray configYaml;
    Target target;
    Problem problem;
    Agent agent;
    QList<ModelSpec> planModels;
    QList<ModelSpec> codeModels;
    QString storePath;
    QString label;
};

// Resolves a run configuration against the shipped data: target, problem, agent and model strings.
// Every problem is reported (file, key and reason), not only the first.
std::optional<RunSetup> prepareRun(const RunConfig &config, const QByteArray &configYaml, const Repository &repository,
                                   const QString &storePath, QStringList *errors);

} // namespace autocomp
