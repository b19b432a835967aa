#pragma once

#include "model/agent.h"
#include "model/problem.h"
#include "model/run_info.h"
#include "model/target.h"

#include <QStringList>

#include <optional>

namespace autocomp {

// Finds and loads the shipped data: targets in backends/, problems in sols/, agents in agents/.
// Search order: $AUTOCOMP_DATA_DIR, the user dir ($XDG_DATA_HOME/autocomp-workbench, whose copies
// shadow the shipped ones), then the shipped data (shippedDataDir()).
class Repository
{
public:
    Repository();
    explicit Repository(QStringList dataDirs);

    QStringList dataDirs() const { return m_dataDirs; }
    static QString userDataDir();
    // Where the shipped agents/, backends/, sols/ and resources/ are: <bin>/../share/autocomp-workbench
    // next to the running executable when it exists (an installed or relocated copy), else the source
    // tree for a program in the build tree (or with no QCoreApplication), else the configured prefix.
    static QString shippedDataDir();

    QStringList targetNames() const;
    QStringList problemNames(const QString &target) const;
    QStringList agentNames() const;

    std::optional<Target> target(const QString &name, QString *error) const;
    std::optional<Problem> problem(const QString &target, const QString &name, QString *error) const;
    std::optional<Agent> agent(const QString &name, QString *error) const;
    // The unit the run's target declares for the run's metric (backend.yaml `unit:`), for a run stored without one
    // (before schema 7; see RunStore::fillMetricUnits()); empty when the target is gone or now measures another
    // metric (a setting changed it).
    QString metricUnitOf(const RunInfo &run) const;

    // The keys each file accepts (anything else is an error naming the file and the key); the
    // reference for target authors, backends/README.md, documents every one of them.
    static QStringList backendKeys(); // backend.yaml, top level
    static QStringList stepKeys(); // backend.yaml, an entry of steps:
    static QStringList setupStepKeys(); // backend.yaml, an entry of setup:
    static QStringList problemKeys(); // problem.yaml
    // agent_config.yaml: ours (name, version, target, description, sources, and what our agent builder
    // records) and those Autocomp's agent builder writes (agent_name, built_at, build). Menus take `optimizations:` or
    // Autocomp's `strategies:`.
    static QStringList agentConfigKeys();

    static std::optional<Target> loadTarget(const QString &dir, QString *error);
    static std::optional<Problem> loadProblem(const QString &dir, const QString &target, QString *error);
    static std::optional<Agent> loadAgent(const QString &dir, QString *error);

private:
    QString findDir(const QString &sub, const QString &name) const;
    QStringList m_dataDirs;
};

} // namespace autocomp
