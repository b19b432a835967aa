#pragma once

#include "search/search_engine.h"
#include "study/study_config.h"

#include <QHash>
#include <QList>
#include <QObject>

namespace autocomp {

class RunManager;

// Drives a study's runs through one RunManager (one LLM client and one set of evaluation slots for all),
// `parallel` at once. Before anything starts, plan() matches the study's runs with the store's (by label,
// StudyLabel): a run that has ended (finished, failed, or stopped by its budget) is not run again, one that did not end
// (killed, stopped, paused) is resumed through the engine's resume (paid answers reused, unfinished work redone), the
// others are started. So a study killed at any moment and started again pays nothing twice.
class StudyRunner : public QObject
{
    Q_OBJECT
public:
    enum class Action { Skip, Resume, Start };

    // setups: one per study.runs entry, in that order (prepareRun of each run's configuration, label set).
    StudyRunner(StudyConfig study, QList<RunSetup> setups, RunManager *manager, QObject *parent = nullptr);

    // Reads the store. False (nothing started) when a run of the study is driven by another process now, or
    // when the store has a run with a study run's label but another configuration (the base file changed:
    // give the study another name).
    bool plan(QString *error);
    Action action(int index) const { return m_actions.value(index, Action::Start); }
    qint64 storedRunId(int index) const { return m_runIds.value(index); }
    int count(Action action) const;

    // Starts the planned work; finished() follows once every run has ended or the study was stopped.
    void start();
    // Stops the running runs (resumable) and starts no more.
    void stop(const QString &reason);
    bool stopping() const { return m_stopping; }

    // Runs that did not start (index, error), and the final state of the runs this process drove.
    QList<std::pair<int, QString>> startFailures() const { return m_startFailures; }
    QHash<int, RunInfo> finals() const { return m_finals; }

Q_SIGNALS:
    void runStarted(int index, qint64 runId, bool resumed);
    void runEnded(int index, const autocomp::RunInfo &run);
    void logMessage(int index, qint64 runId, const QString &message);
    void finished();

private:
    void launchMore();

    StudyConfig m_study;
    QList<RunSetup> m_setups;
    RunManager *m_manager;
    QList<Action> m_actions;
    QList<qint64> m_runIds;
    QList<int> m_queue;
    QHash<SearchEngine *, int> m_running;
    QHash<int, RunInfo> m_finals;
    QList<std::pair<int, QString>> m_startFailures;
    bool m_stopping = false;
    bool m_finished = false;
};

} // namespace autocomp
