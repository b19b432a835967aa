#include "run_controller.h"

#include "settings.h"

#include <QLoggingCategory>
#include <QThread>
#include <QTimer>

namespace autocomp {

Q_LOGGING_CATEGORY(lcRunController, "autocomp.views.run")

RunController::RunController(QObject *parent)
    : QObject(parent)
    , m_repository(workbenchRepository())
    , m_thread(new QThread(this))
    , m_flushTimer(new QTimer(this))
    , m_pollTimer(new QTimer(this))
{
    // Keys from the OS keychain, read without blocking; the environment still wins at request time.
    m_secrets = new SecretStore(this);
    connect(m_secrets, &SecretStore::keyRead, this, [this](const QString &provider, const QString &key, KeyStatus status, const QString &) {
        if (status == KeyStatus::Stored && !key.isEmpty())
            m_keychainKeys.insert(provider, key);
    });
    for (const QString &provider : SecretStore::providers())
        m_secrets->readStoredKey(provider);

    qRegisterMetaType<RunState>("autocomp::RunState");
    qRegisterMetaType<Candidate>();
    qRegisterMetaType<RunInfo>();
    qRegisterMetaType<QList<qint64>>();
    m_thread->setObjectName(QStringLiteral("search engine"));
    m_thread->start();

    m_flushTimer->setSingleShot(true);
    m_flushTimer->setInterval(BatchIntervalMs);
    connect(m_flushTimer, &QTimer::timeout, this, &RunController::flush);
    // In-flight counts live on the engine thread; they are fetched rather than read across threads.
    m_pollTimer->setInterval(500);
    connect(m_pollTimer, &QTimer::timeout, this, &RunController::pollInFlight);
}

RunController::~RunController()
{
    if (m_engine) {
        SearchEngine *engine = std::exchange(m_engine, nullptr);
        engine->disconnect(this);
        QMetaObject::invokeMethod(
            engine,
            [engine] {
                engine->suspend(QStringLiteral("paused: the workbench was closed"));
                delete engine;
            },
            Qt::BlockingQueuedConnection);
    }
    m_thread->quit();
    m_thread->wait();
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

bool RunController::start(const RunSetup &setup, QString *error)
{
    return launch(setup, 0, error);
}

bool RunController::resume(qint64 runId, const RunSetup &setup, QString *error)
{
    return launch(setup, runId, error);
}

bool RunController::launch(const RunSetup &setup, qint64 resumeRunId, QString *error)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_engine) {
        *error = tr("Run %1 is still active; stop it before starting another.").arg(m_status.runId);
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

    // The user's provider settings: base URLs for models named without one, and concurrency limits.
    RunSetup configured = setup;
    Settings settings;
    for (QList<ModelSpec> *models : {&configured.planModels, &configured.codeModels})
        for (ModelSpec &spec : *models)
            if (!spec.text.section(QStringLiteral("::"), 0, 0).contains(QLatin1Char('@')) && !settings.providerBaseUrl(spec.provider).isEmpty())
                spec.baseUrl = QUrl(settings.providerBaseUrl(spec.provider));
    m_engine = new SearchEngine(configured);
    for (const QString &provider : Settings::providers())
        m_engine->llmClient()->setMaxInFlightFor(provider, settings.providerConcurrency(provider));
    m_engine->llmClient()->setApiKeyLookup(SecretStore::lookup(m_keychainKeys));
    m_engine->moveToThread(m_thread);
    connectEngine();
    SearchEngine *engine = m_engine;
    QMetaObject::invokeMethod(engine, [this, engine, resumeRunId] {
        QString failure;
        const bool ok = resumeRunId ? engine->resume(resumeRunId, &failure) : engine->start(&failure);
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
    return true;
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
    QMetaObject::invokeMethod(engine, [this, engine] {
        const int requests = engine->inFlightRequests();
        const int evaluations = engine->inFlightEvaluations();
        QMetaObject::invokeMethod(this, [this, engine, requests, evaluations] {
            if (engine != m_engine)
                return;
            // While the clock runs the status is refreshed anyway, for the elapsed time.
            if (m_status.inFlightRequests == requests && m_status.inFlightEvaluations == evaluations && !m_clock.isValid())
                return;
            m_status.inFlightRequests = requests;
            m_status.inFlightEvaluations = evaluations;
            Q_EMIT statusChanged();
        });
    });
}

void RunController::pause()
{
    if (m_engine)
        QMetaObject::invokeMethod(m_engine, &SearchEngine::pause);
}

void RunController::resumeWork()
{
    if (m_engine)
        QMetaObject::invokeMethod(m_engine, &SearchEngine::resumeWork);
}

void RunController::stop(const QString &reason)
{
    if (m_engine)
        QMetaObject::invokeMethod(m_engine, [engine = m_engine, reason] { engine->stop(reason); });
}

void RunController::addHumanPlan(qint64 parentId, const QString &plan)
{
    if (!m_engine) {
        Q_EMIT humanInputFailed(tr("No run is active."));
        return;
    }
    SearchEngine *engine = m_engine;
    QMetaObject::invokeMethod(engine, [this, engine, parentId, plan] {
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
    SearchEngine *engine = m_engine;
    QMetaObject::invokeMethod(engine, [this, engine, parentId, code] {
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
    if (SearchEngine *engine = std::exchange(m_engine, nullptr)) {
        engine->disconnect(this);
        engine->deleteLater(); // on its own thread
    }
}

} // namespace autocomp
