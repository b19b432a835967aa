#include "study/study_runner.h"

#include "search/run_manager.h"
#include "store/run_store.h"
#include "study/study_report.h"

#include <QTimer>

namespace autocomp {

StudyRunner::StudyRunner(StudyConfig study, QList<RunSetup> setups, RunManager *manager, QObject *parent)
    : QObject(parent)
    , m_study(std::move(study))
    , m_setups(std::move(setups))
    , m_manager(manager)
{
    connect(m_manager, &RunManager::runFinished, this, [this](SearchEngine *engine, const RunInfo &run) {
        const auto it = m_running.constFind(engine);
        if (it == m_running.cend())
            return;
        const int index = it.value();
        m_running.erase(it);
        m_finals.insert(index, run);
        Q_EMIT runEnded(index, run);
        // The next run starts before the manager sees it idle.
        launchMore();
    });
    // A run paused from outside (autocomp pause, the workbench) ends its part in this process.
    connect(m_manager, &RunManager::idle, this, [this] {
        if (m_manager->active() == 0 && (m_queue.isEmpty() || m_stopping))
            QTimer::singleShot(0, this, &StudyRunner::launchMore);
    });
}

int StudyRunner::count(Action action) const { return int(std::count(m_actions.cbegin(), m_actions.cend(), action)); }

bool StudyRunner::plan(QString *error)
{
    if (m_setups.size() != m_study.runs.size()) {
        *error = QStringLiteral("internal: %1 setups for %2 runs").arg(m_setups.size()).arg(m_study.runs.size());
        return false;
    }
    const QString storePath = m_setups.isEmpty() ? QString() : m_setups.constFirst().storePath;
    QString openError;
    auto store = RunStore::open(storePath, {.create = true, .createFolders = true}, &openError);
    if (!store) {
        *error = openError;
        return false;
    }
    const QHash<QString, RunInfo> stored = StudyReport::runsByLabel(*store, m_study.name);
    m_actions.clear();
    m_runIds.clear();
    m_queue.clear();
    for (qsizetype i = 0; i < m_study.runs.size(); ++i) {
        const StudyRun &planned = m_study.runs.at(i);
        const auto it = stored.constFind(planned.label);
        if (it == stored.cend()) {
            m_actions << Action::Start;
            m_runIds << 0;
            m_queue << int(i);
            continue;
        }
        if (it->configYaml.toUtf8() != planned.configYaml) {
            *error =
                QStringLiteral(
                    "run %1 in %2 is study '%3''s %4 but was made from another configuration (the base or the study "
                    "changed since); give the study another name (name:) or another store")
                    .arg(it->id)
                    .arg(storePath, m_study.name, planned.label.section(QLatin1Char(' '), 1));
            return false;
        }
        if (const auto lease = store->lease(it->id); lease && lease->alive && it->state != RunState::Finished
            && it->state != RunState::Failed && it->state != RunState::Stopped && it->state != RunState::Paused) {
            *error = QStringLiteral("run %1 of the study is driven by %2 now; stop that process first")
                         .arg(it->id)
                         .arg(lease->describe());
            return false;
        }
        m_runIds << it->id;
        // A run its budget stopped has ended too: resumed, it would stop again at once.
        if (it->state == RunState::Finished || it->state == RunState::Failed
            || (it->state == RunState::Stopped && it->stopReason.startsWith(QLatin1String("budget:")))) {
            m_actions << Action::Skip;
        } else {
            m_actions << Action::Resume;
            m_queue << int(i);
        }
    }
    // Interrupted runs first: they hold paid work.
    std::stable_sort(m_queue.begin(), m_queue.end(), [this](int a, int b) {
        return (m_actions.at(a) == Action::Resume) > (m_actions.at(b) == Action::Resume);
    });
    return true;
}

void StudyRunner::start() { launchMore(); }

void StudyRunner::stop(const QString &reason)
{
    m_stopping = true;
    for (auto it = m_running.cbegin(); it != m_running.cend(); ++it)
        it.key()->stop(reason);
    if (m_running.isEmpty())
        launchMore();
}

void StudyRunner::launchMore()
{
    while (!m_stopping && m_running.size() < m_study.parallel && !m_queue.isEmpty()) {
        const int index = m_queue.takeFirst();
        SearchEngine *engine = m_manager->create(m_setups.at(index));
        connect(engine, &SearchEngine::logMessage, this,
                [this, index, engine](const QString &message) { Q_EMIT logMessage(index, engine->runId(), message); });
        connect(engine, &SearchEngine::runStateChanged, this, [this, engine, index](RunState state, const QString &) {
            // A pause from outside: this process leaves the run paused (the next study start resumes it).
            if (state == RunState::Paused && m_running.contains(engine)) {
                m_running.remove(engine);
                m_finals.insert(index, engine->runInfo());
                QTimer::singleShot(0, this, &StudyRunner::launchMore);
            }
        });
        m_running.insert(engine, index);
        QString error;
        const bool resumed = m_actions.at(index) == Action::Resume;
        const bool ok = resumed ? m_manager->resume(engine, m_runIds.at(index), &error)
                                : m_manager->start(engine, &error);
        if (!ok) {
            m_running.remove(engine);
            m_startFailures << std::make_pair(index, error);
            continue;
        }
        m_runIds[index] = engine->runId();
        Q_EMIT runStarted(index, engine->runId(), resumed);
    }
    if (!m_finished && m_running.isEmpty() && (m_queue.isEmpty() || m_stopping)) {
        m_finished = true;
        Q_EMIT finished();
    }
}

} // namespace autocomp
