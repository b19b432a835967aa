#include "search/run_manager.h"

#include "eval/evaluator.h"
#include "llm/llm_client.h"

namespace autocomp {

RunManager::RunManager(QObject *parent) : QObject(parent), m_llm(new LlmClient(this)) {}

RunManager::~RunManager()
{
    // Engines first, those that failed to start included: they cancel their requests on the shared
    // client, which must still exist.
    m_engines.clear();
    qDeleteAll(findChildren<SearchEngine *>(Qt::FindDirectChildrenOnly));
}

Evaluator *RunManager::evaluator(const EvaluationConfig &config)
{
    if (!m_evaluator)
        m_evaluator = new Evaluator(config, this);
    return m_evaluator;
}

SearchEngine *RunManager::create(const RunSetup &setup)
{
    auto *engine = new SearchEngine(setup, m_llm, evaluator(setup.config.evaluation), this);
    m_engines << engine;
    watch(engine);
    return engine;
}

void RunManager::watch(SearchEngine *engine)
{
    connect(engine, &SearchEngine::finished, this, [this, engine](const RunInfo &run) {
        Q_EMIT runFinished(engine, run);
        m_engines.removeAll(engine);
        engine->deleteLater();
        if (active() == 0)
            Q_EMIT idle();
    });
    connect(engine, &SearchEngine::runStateChanged, this, [this](RunState state, const QString &) {
        if (state == RunState::Paused && active() == 0)
            Q_EMIT idle();
    });
}

bool RunManager::start(SearchEngine *engine, QString *error)
{
    if (engine->start(error))
        return true;
    m_engines.removeAll(engine);
    engine->deleteLater();
    return false;
}

bool RunManager::resume(SearchEngine *engine, qint64 runId, QString *error)
{
    if (engine->resume(runId, error))
        return true;
    m_engines.removeAll(engine);
    engine->deleteLater();
    return false;
}

QList<SearchEngine *> RunManager::engines() const
{
    QList<SearchEngine *> engines;
    for (const QPointer<SearchEngine> &engine : m_engines)
        if (engine)
            engines << engine;
    return engines;
}

SearchEngine *RunManager::engine(qint64 runId) const
{
    for (SearchEngine *engine : engines())
        if (engine->runId() == runId)
            return engine;
    return nullptr;
}

int RunManager::active() const
{
    int n = 0;
    for (SearchEngine *engine : engines())
        if (engine->state() == RunState::Running || engine->state() == RunState::Created)
            ++n;
    return n;
}

void RunManager::pauseAll()
{
    for (SearchEngine *engine : engines())
        engine->pause();
}

void RunManager::stopAll(const QString &reason)
{
    for (SearchEngine *engine : engines())
        engine->stop(reason);
}

} // namespace autocomp
