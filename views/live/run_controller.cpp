#include "live/run_controller.h"

#include "live/engine_host.h"
#include "common/settings.h"

#include "search/run_manager.h"

#include <QLoggingCategory>
#include <QThread>
#include <QTimer>

namespace autocomp {

Q_LOGGING_CATEGORY(lcRunController, "autocomp.views.run")

RunController::RunController(QObject *parent, EngineHost *host)
    : QObject(parent)
    , m_repository(workbenchRepository())
    , m_host(host ? host : new EngineHost(this))
    , m_flushTimer(new QTimer(this))
    , m_pollTimer(new QTimer(this))
{
    qRegisterMetaType<RunState>("autocomp::RunState");
    qRegisterMetaType<Candidate>();
    qRegisterMetaType<RunInfo>();
    qRegisterMetaType<QList<qint64>>();

    m_flushTimer->setSingleShot(true);
    m_flushTimer->setInterval(BatchIntervalMs);
    connect(m_flushTimer, &QTimer::timeout, this, &RunController::flush);
    // In-flight counts live on the engine thread; they are fetched rather than read across threads.
    m_pollTimer->setInterval(500);
    connect(m_pollTimer, &QTimer::timeout, this, &RunController::pollInFlight);
}

RunController::~RunController()
{
    if (SearchEngine *engine = std::exchange(m_engine, nullptr)) {
        RunManager *manager = m_host->manager();
        // The manager deletes it once it has ended.
        QMetaObject::invokeMethod(
            manager,
            [manager, engine, self = this] {
                if (!manager->engines().contains(engine))
                    return;
                engine->disconnect(self);
                engine->suspend(QStringLiteral("paused: the workbench was closed"));
            },
            Qt::BlockingQueuedConnection);
    }
}

Repository RunController::workbenchRepository()
{
    QStringList dirs = Repository().dataDirs();
    const QString user = Repository::userDataDir();
    dirs.removeAll(user);
    dirs.prepend(user);
    return Repository(dirs);
}

RunController::Status RunController::status() const
{
    Status s = m_status;
    s.elapsedMs = m_elapsedBefore + (m_clock.isValid() && m_engine ? m_clock.elapsed() : 0);
    return s;
}

bool RunController::start(const RunSetup &setup, QString *error) { return launch(setup, 0, error); }

bool RunController::resume(qint64 runId, const RunSetup &setup, QString *error) { return launch(setup, runId, error); }

bool RunController::launch(const RunSetup &setup, qint64 resumeRunId, QString *error)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (isActive()) {
        *error = tr("Run %1 is still active in this controller.").arg(m_status.runId);
        return false;
    }
    m_pending.clear();
    m_pendingIndex.clear();
    m_status = {};
    m_status.runId = resumeRunId;
    m_status.iterations = setup.config.search.iterations;
    m_status.maxUsd = setup.config.budget.maxUsd;
    m_elapsedBefore = 0;
    m_clock.invalidate();
    // The keychain's keys are in hand before the first request leaves.
    m_launching = true;
    m_host->whenKeysReady(this, [this, setup, resumeRunId] {
        m_launching = false;
        launchEngine(setup, resumeRunId);
    });
    return true;
}

void RunController::launchEngine(const RunSetup &setup, qint64 resumeRunId)
{
    // The user's provider settings: base URLs for models named without one, concurrency limits, the proxy.
    RunSetup configured = setup;
    Settings settings;
    for (QList<ModelSpec> *models : {&configured.planModels, &configured.codeModels})
        for (ModelSpec &spec : *models)
            if (!spec.text.section(QStringLiteral("::"), 0, 0).contains(QLatin1Char('@'))
                && !settings.providerBaseUrl(spec.provider).isEmpty())
                spec.baseUrl = QUrl(settings.providerBaseUrl(spec.provider));
    QHash<QString, int> limits;
    for (const QString &provider : Settings::providers())
        limits.insert(provider, settings.providerConcurrency(provider));
    const QString proxy = settings.proxy();
    const auto keys = m_host->keyLookup();
    RunManager *manager = m_host->manager();
    SearchEngine *created = nullptr;
    QMetaObject::invokeMethod(
        manager,
        [&] {
            LlmClient *client = manager->llmClient();
            for (auto it = limits.cbegin(); it != limits.cend(); ++it)
                client->setMaxInFlightFor(it.key(), it.value());
            client->setApiKeyLookup(keys);
            client->setProxy(proxy); // checked when it was saved
            created = manager->create(configured);
        },
        Qt::BlockingQueuedConnection);
    m_engine = created;
    connectEngine();
    SearchEngine *engine = m_engine;
    QMetaObject::invokeMethod(engine, [this, engine, resumeRunId] {
        QString failure;
        RunManager *manager = qobject_cast<RunManager *>(engine->parent());
        const bool ok = resumeRunId ? manager->resume(engine, resumeRunId, &failure) : manager->start(engine, &failure);
        const qint64 id = engine->runId();
        const RunInfo info = engine->runInfo();
        QMetaObject::invokeMethod(this, [this, engine, ok, id, info, failure] {
            if (engine != m_engine)
                return;
            if (!ok) {
                destroyEngine();
                m_status.state = RunState::Failed;
                m_status.reason = failure;
                Q_EMIT statusChanged();
                Q_EMIT startFailed(failure);
                return;
            }
            m_status.runId = id;
            m_status.iteration = info.iteration;
            m_status.tokensIn = info.tokensIn;
            m_status.tokensOut = info.tokensOut;
            m_status.usd = info.usd;
            m_status.calls = info.llmCalls;
            m_clock.start();
            m_pollTimer->start();
            // Candidates the engine announced before its run id was known belong to this run.
            for (Candidate &c : m_pending)
                c.runId = id;
            Q_EMIT started(id);
            Q_EMIT statusChanged();
        });
    });
}

void RunController::connectEngine()
{
    SearchEngine *engine = m_engine;
    // The lambdas run on the GUI thread (queued: the context object lives there).
    connect(engine, &SearchEngine::runStateChanged, this, [this, engine](RunState state, const QString &reason) {
        if (engine != m_engine)
            return;
        flush();
        m_status.state = state;
        m_status.reason = reason;
        if (state == RunState::Paused && m_clock.isValid()) {
            m_elapsedBefore += m_clock.elapsed();
            m_clock.invalidate();
        } else if (state == RunState::Running && !m_clock.isValid()) {
            m_clock.start();
        }
        Q_EMIT stateChanged(state, reason);
        Q_EMIT statusChanged();
    });
    connect(engine, &SearchEngine::candidateAdded, this, [this, engine](const Candidate &c) {
        if (engine == m_engine)
            queueCandidate(c);
    });
    connect(engine, &SearchEngine::candidateUpdated, this, [this, engine](const Candidate &c) {
        if (engine == m_engine)
            queueCandidate(c);
    });
    connect(engine, &SearchEngine::beamChanged, this, [this, engine](const QList<qint64> &beam) {
        if (engine != m_engine)
            return;
        flush();
        Q_EMIT beamChanged(m_status.runId, beam);
    });
    connect(engine, &SearchEngine::iterationFinished, this, [this, engine](int iteration) {
        if (engine != m_engine)
            return;
        flush();
        m_status.iteration = iteration;
        Q_EMIT iterationFinished(m_status.runId, iteration);
        Q_EMIT statusChanged();
    });
    connect(engine, &SearchEngine::usageChanged, this, [this, engine](qint64 in, qint64 out, double usd, qint64 calls) {
        if (engine != m_engine)
            return;
        m_status.tokensIn = in;
        m_status.tokensOut = out;
        m_status.usd = usd;
        m_status.calls = calls;
        if (!m_flushTimer->isActive())
            m_flushTimer->start(); // the status is refreshed with the next batch
    });
    connect(engine, &SearchEngine::logMessage, this, &RunController::logMessage);
    // Another process took the run over while this one was not heard from (suspended, cut off): the engine
    // stopped and wrote nothing; the run goes on there, and this window follows it from the store.
    connect(engine, &SearchEngine::leaseLost, this, [this, engine](const RunLease &holder) {
        if (engine == m_engine)
            m_takenOverBy = holder.pid > 0 ? tr("pid %1 on %2").arg(holder.pid).arg(holder.host) : tr("no process");
    });
    connect(engine, &SearchEngine::finished, this, [this, engine](const RunInfo &run) {
        if (engine == m_engine)
            engineFinished(run);
    });
}

void RunController::queueCandidate(const Candidate &candidate)
{
    const auto it = m_pendingIndex.constFind(candidate.id);
    if (it != m_pendingIndex.constEnd()) {
        m_pending[*it] = candidate;
    } else {
        m_pendingIndex.insert(candidate.id, int(m_pending.size()));
        m_pending << candidate;
    }
    if (!m_flushTimer->isActive())
        m_flushTimer->start();
}

void RunController::flush()
{
    m_flushTimer->stop();
    if (!m_pending.isEmpty() && m_status.runId != 0) {
        const QList<Candidate> batch = std::exchange(m_pending, {});
        m_pendingIndex.clear();
        Q_EMIT candidatesChanged(m_status.runId, batch);
    }
    Q_EMIT statusChanged();
}

void RunController::pollInFlight()
{
    if (!m_engine)
        return;
    SearchEngine *engine = m_engine;
    onEngine([this, engine](SearchEngine *) {
        const int requests = engine->inFlightRequests();
        const int evaluations = engine->inFlightEvaluations();
        QMetaObject::invokeMethod(this, [this, engine, requests, evaluations] {
            if (engine != m_engine)
                return;
            // While the clock runs the status is refreshed anyway, for the elapsed time.
            if (m_status.inFlightRequests == requests && m_status.inFlightEvaluations == evaluations
                && !m_clock.isValid())
                return;
            m_status.inFlightRequests = requests;
            m_status.inFlightEvaluations = evaluations;
            Q_EMIT statusChanged();
        });
    });
}

void RunController::onEngine(std::function<void(SearchEngine *)> work)
{
    // Through the manager: the engine may have ended (and been deleted on its thread) while its last
    // signals are still on their way here.
    if (!m_engine)
        return;
    RunManager *manager = m_host->manager();
    QMetaObject::invokeMethod(manager, [manager, engine = m_engine, work = std::move(work)] {
        if (manager->engines().contains(engine))
            work(engine);
    });
}

void RunController::pause()
{
    onEngine([](SearchEngine *engine) { engine->pause(); });
}

void RunController::resumeWork()
{
    onEngine([](SearchEngine *engine) { engine->resumeWork(); });
}

void RunController::stop(const QString &reason)
{
    onEngine([reason](SearchEngine *engine) { engine->stop(reason); });
}

void RunController::addHumanPlan(qint64 parentId, const QString &plan)
{
    if (!m_engine) {
        Q_EMIT humanInputFailed(tr("No run is active."));
        return;
    }
    onEngine([this, parentId, plan](SearchEngine *engine) {
        QString error;
        const qint64 id = engine->addHumanPlan(parentId, plan, &error);
        QMetaObject::invokeMethod(this, [this, id, error] {
            if (id)
                Q_EMIT humanCandidateAdded(id);
            else
                Q_EMIT humanInputFailed(error);
        });
    });
}

void RunController::addHumanCode(qint64 parentId, const QString &code)
{
    if (!m_engine) {
        Q_EMIT humanInputFailed(tr("No run is active."));
        return;
    }
    onEngine([this, parentId, code](SearchEngine *engine) {
        QString error;
        const qint64 id = engine->addHumanCode(parentId, code, &error);
        QMetaObject::invokeMethod(this, [this, id, error] {
            if (id)
                Q_EMIT humanCandidateAdded(id);
            else
                Q_EMIT humanInputFailed(error);
        });
    });
}

void RunController::engineFinished(const RunInfo &run)
{
    flush();
    m_status.state = run.state;
    m_status.reason = run.stopReason;
    if (!m_takenOverBy.isEmpty()) {
        m_status.reason =
            tr("taken over by %1 while this workbench was not heard from: it drives the run now, and this "
               "window follows it")
                .arg(std::exchange(m_takenOverBy, QString()));
        Q_EMIT logMessage(tr("run %1 %2").arg(run.id).arg(m_status.reason));
    }
    m_status.iteration = run.iteration;
    m_status.usd = run.usd;
    m_status.tokensIn = run.tokensIn;
    m_status.tokensOut = run.tokensOut;
    m_status.calls = run.llmCalls;
    m_status.inFlightRequests = 0;
    m_status.inFlightEvaluations = 0;
    if (m_clock.isValid())
        m_elapsedBefore += m_clock.elapsed();
    m_clock.invalidate();
    destroyEngine();
    qCDebug(lcRunController) << "run" << run.id << "ended:" << toString(run.state) << run.stopReason;
    Q_EMIT statusChanged();
    Q_EMIT finished(run);
}

void RunController::destroyEngine()
{
    m_pollTimer->stop();
    // The RunManager deletes the engine on its own thread once it has ended; its connections go with it.
    m_engine = nullptr;
}

} // namespace autocomp
