#include "search/run_setup.h"

#include <algorithm>

namespace autocomp {

std::optional<RunSetup> prepareRun(const RunConfig &config, const QByteArray &configYaml, const Repository &repository,
                                   const QString &storePath, QStringList *errors)
{
    RunSetup setup;
    setup.config = config;
    setup.configYaml = configYaml.isEmpty() ? config.toYaml() : configYaml;
    setup.storePath = storePath;
    QStringList problems;
    QString error;
    if (auto target = repository.target(config.target, &error)) {
        setup.target = *target;
        // A target whose tools are missing is absent, never simulated: the run does not start.
        if (!target->available())
            problems << target->absenceReason();
        // Without its hardware a target can only compile: a run says so up front rather than failing
        // every candidate, unless it asked for exactly that.
        else if (const QString absent = target->hardwareAbsence(); !absent.isEmpty() && !config.evaluation.compileOnly
                 && std::any_of(target->steps.cbegin(), target->steps.cend(),
                                [](const TargetStep &s) { return s.needsHardware; }))
            problems << QStringLiteral("target '%1' has no hardware on this machine for its timed steps (%2); set "
                                       "evaluation.compile_only: true for a search that leaves those steps out")
                            .arg(target->name, absent);
    } else {
        problems << error;
    }
    if (problems.isEmpty()) {
        if (auto problem = repository.problem(config.target, config.problem, &error))
            setup.problem = *problem;
        else
            problems << error;
    }
    if (auto agent = repository.agent(config.effectiveAgent(), &error)) {
        setup.agent = *agent;
        if (setup.agent.menu.isEmpty())
            problems << QStringLiteral("agent '%1' has an empty optimization menu").arg(agent->name);
    } else {
        problems << error;
    }
    for (const QString &text : config.planModels) {
        if (auto spec = ModelSpec::parse(text, &error))
            setup.planModels << *spec;
        else
            problems << QStringLiteral("models.plan: ") + error;
    }
    for (const QString &text : config.effectiveCodeModels()) {
        if (auto spec = ModelSpec::parse(text, &error))
            setup.codeModels << *spec;
        else
            problems << QStringLiteral("models.code: ") + error;
    }
    if (setup.planModels.isEmpty() && problems.isEmpty())
        problems << QStringLiteral("models.plan: no model given");
    if (!problems.isEmpty()) {
        if (errors)
            *errors << problems;
        return std::nullopt;
    }
    return setup;
}

} // namespace autocomp
