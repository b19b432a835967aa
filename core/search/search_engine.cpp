#include "search/search_engine.h"

#include "agents/edit_applier.h"
#include "agents/isa_filter.h"
#include "agents/prompt_builder.h"
#include "agents/response_parser.h"
#include "eval/evaluator.h"
#include "model/code_identity.h"
#include "platform/yaml_reader.h"
#include "search/example_selection.h"
#include "search/menu_strategy.h"
#include "store/run_store.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSet>
#include <QTimer>

#include <algorithm>

Q_LOGGING_CATEGORY(lcSearch, "autocomp.search", QtInfoMsg)

namespace autocomp {

namespace {

CandidateStatus statusFromResult(const EvalResult &result)
{
    if (result.correct)
        return CandidateStatus::Correct;
    if (result.status == QLatin1String("compile_error"))
        return CandidateStatus::CompileError;
    if (result.status == QLatin1String("incorrect"))
        return CandidateStatus::Incorrect;
    if (result.status == QLatin1String("no_hardware"))
        return CandidateStatus::NoHardware;
    return CandidateStatus::Failed;
}

bool fixable(CandidateStatus status)
{
    return status == CandidateStatus::CompileError || status == CandidateStatus::Incorrect;
}

} // namespace

SearchEngine::SearchEngine(RunSetup setup, QObject *parent) : SearchEngine(std::move(setup), nullptr, parent) {}

SearchEngine::SearchEngine(RunSetup setup, LlmClient *sharedClient, QObject *parent)
    : SearchEngine(std::move(setup), sharedClient, nullptr, parent)
{}

SearchEngine::SearchEngine(RunSetup setup, LlmClient *sharedClient, Evaluator *sharedEvaluator, QObject *parent)
    : QObject(parent)
    , m_setup(std::move(setup))
    , m_llm(sharedClient ? sharedClient : new LlmClient(this))
    , m_sharedEvaluator(sharedEvaluator)
{}

SearchEngine::~SearchEngine()
{
    // A run left paused (or running) when its process ends has no driver from now on: the lease says so at
    // once, so a workbench following the store can offer to drive it.
    if (m_store && m_run.id && !m_done && !m_halted)
        m_store->releaseLease(m_run.id);
    // A shared client outlives this engine: its requests for this run are cancelled and their replies,
    // whose handlers die with this object, are deleted when they finish.
    if (m_llm->parent() == this)
        return;
    for (const QPointer<LlmReply> &reply : std::as_const(m_replies)) {
        if (!reply)
            continue;
        connect(reply, &LlmReply::finished, reply, &QObject::deleteLater);
        reply->abort();
    }
}

void SearchEngine::log(const QString &message)
{
    qCDebug(lcSearch).noquote() << message;
    Q_EMIT logMessage(message);
}

std::mt19937_64 SearchEngine::rngFor(quint64 a, quint64 b, quint64 c) const
{
    // One generator per request, derived from the seed and the request's position: draws do not depend
    // on the order in which responses arrive, so the same seed and responses give the same run.
    std::seed_seq seq{quint32(m_setup.config.search.seed), quint32(m_setup.config.search.seed >> 32), quint32(a),
                      quint32(b), quint32(c)};
    return std::mt19937_64(seq);
}

QList<int> SearchEngine::dropoutDraw(int menuSize, double dropout, std::mt19937_64 &rng)
{
    QList<int> kept;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int i = 0; i < menuSize; ++i)
        if (uniform(rng) >= dropout)
            kept << i;
    if (kept.isEmpty() && menuSize > 0)
        kept << int(std::uniform_int_distribution<int>(0, menuSize - 1)(rng));
    return kept;
}

QStringList SearchEngine::scheduleOf(const QHash<qint64, Candidate> &candidates, qint64 candidateId)
{
    QStringList items;
    QSet<qint64> seen;
    for (qint64 id = candidateId; id > 0 && !seen.contains(id); id = candidates.value(id).parentId) {
        seen.insert(id);
        const Candidate c = candidates.value(id);
        if (c.origin != CandidateOrigin::Root && !c.menuItem.isEmpty())
            items.prepend(c.menuItem);
    }
    return items;
}

std::optional<QStringList> SearchEngine::loadSchedule(const QString &source, RunStore *store, QString *error)
{
    bool isId = false;
    const qint64 runId = source.toLongLong(&isId);
    if (isId) {
        const auto run = store ? store->run(runId) : std::nullopt;
        if (!run) {
            *error = QStringLiteral("search.schedule: no run %1 in the store").arg(runId);
            return std::nullopt;
        }
        if (run->schedule.isEmpty()) {
            *error = QStringLiteral("search.schedule: run %1 has no schedule (it has not finished with an improvement)")
                         .arg(runId);
            return std::nullopt;
        }
        return run->schedule;
    }
    QFile file(source);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("search.schedule: %1: cannot read: %2").arg(source, file.errorString());
        return std::nullopt;
    }
    YamlReader r(source);
    const auto root = r.parse(file.readAll());
    std::optional<QStringList> items;
    if (root) {
        const YAML::Node list = root->IsMap() ? (*root)["schedule"] : *root;
        if (!list || !list.IsSequence())
            r.error(*root,
                    QStringLiteral("a schedule file is a list of menu items, or a mapping with 'schedule: [...]'"));
        else
            items = r.stringList(list, QStringLiteral("schedule"));
    }
    if (!r.ok()) {
        *error = r.errors().join(QLatin1Char('\n'));
        return std::nullopt;
    }
    return items;
}

bool SearchEngine::open(QString *error)
{
    m_store = RunStore::open(m_setup.storePath, error);
    if (!m_store)
        return false;
    m_evaluator = m_sharedEvaluator ? m_sharedEvaluator : new Evaluator(m_setup.config.evaluation, this);
    if (!m_evaluator->configurationError().isEmpty()) {
        *error = m_evaluator->configurationError();
        return false;
    }
    if (!m_setup.config.search.schedule.isEmpty()) {
        const auto schedule = loadSchedule(m_setup.config.search.schedule, m_store.get(), error);
        if (!schedule)
            return false;
        m_schedule = *schedule;
    }
    if (!m_evaluator->sandboxNote().isEmpty())
        log(m_evaluator->sandboxNote());
    m_prices = PriceTable::loadDefault();
    m_controlTimer = new QTimer(this);
    m_controlTimer->setInterval(500);
    connect(m_controlTimer, &QTimer::timeout, this, &SearchEngine::pollControl);
    m_clock.start();
    return true;
}

bool SearchEngine::start(QString *error)
{
    if (!open(error))
        return false;
    m_run.target = m_setup.target.name;
    m_run.problem = m_setup.problem.name;
    m_run.agent = m_setup.agent.name;
    m_run.configYaml = QString::fromUtf8(m_setup.configYaml);
    m_run.state = RunState::Running;
    m_run.metric = m_setup.target.metric;
    m_run.label = m_setup.label;
    m_run.createdAt = QDateTime::currentDateTimeUtc();
    Candidate root;
    root.iteration = 0;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Pending;
    root.code = m_setup.problem.startCode();
    // The run, its lease and its root in one commit: a kill leaves either no run or one that resumes.
    m_store->beginBatch();
    m_run.id = m_store->createRun(m_run);
    const bool leased = m_run.id && m_store->acquireLease(m_run.id, nullptr);
    const qint64 rootId = leased && !root.code.isEmpty() ? addCandidate(root) : 0;
    if (!m_store->endBatch(leased) || !m_run.id) {
        *error = QStringLiteral("cannot record the run: %1").arg(m_store->lastError());
        m_halted = true; // nothing of it was stored
        return false;
    }
    if (root.code.isEmpty()) {
        *error = QStringLiteral("%1: the starting code is empty or unreadable").arg(m_setup.problem.startFile);
        finish(RunState::Failed, *error);
        return false;
    }
    if (m_setup.config.llm.reuseAcrossRuns)
        log(QStringLiteral(
            "answers paid for in other runs are reused for identical requests (llm.reuse_answers: across_runs)"));
    m_controlTimer->start();
    Q_EMIT runStateChanged(RunState::Running, {});
    if (!m_schedule.isEmpty())
        log(QStringLiteral("seeded with a schedule of %1 steps: %2")
                .arg(m_schedule.size())
                .arg(m_schedule.join(QLatin1String(" -> "))));
    log(QStringLiteral("run %1: %2/%3, evaluating the starting code").arg(m_run.id).arg(m_run.target, m_run.problem));
    ++m_outstanding;
    startWork([this, rootId] { evaluate(rootId); });
    return true;
}

bool SearchEngine::resume(qint64 runId, QString *error)
{
    if (!open(error))
        return false;
    const auto run = m_store->run(runId);
    if (!run) {
        *error = QStringLiteral("no run %1 in %2").arg(runId).arg(m_store->path());
        return false;
    }
    if (run->state == RunState::Failed) {
        *error = QStringLiteral("run %1 failed (%2); nothing to resume").arg(runId).arg(run->stopReason);
        return false;
    }
    if (run->state == RunState::Finished) {
        // Nothing left to do (e.g. it finished just before its process was killed): report it as it ended.
        m_run = *run;
        m_done = true;
        log(QStringLiteral("run %1 has already finished (%2)").arg(runId).arg(run->stopReason));
        QMetaObject::invokeMethod(
            this, [this] { Q_EMIT finished(m_run); }, Qt::QueuedConnection);
        return true;
    }
    RunLease holder;
    if (!m_store->acquireLease(runId, &holder)) {
        *error = holder.held()
            ? QStringLiteral(
                  "run %1 is already being driven by %2; stop it first (autocomp stop %1) or wait for it to end")
                  .arg(runId)
                  .arg(holder.describe())
            : QStringLiteral("cannot take run %1's lease: %2").arg(runId).arg(m_store->lastError());
        return false;
    }
    // Requests a killed process had in flight never got an answer: kept apart as unconfirmed (maybe billed).
    const int unconfirmedBefore = int(m_store->unconfirmedCalls(runId).size());
    m_run = *run;
    m_run.state = RunState::Running;
    m_run.stopReason.clear();
    if (!m_store->settleInFlightCalls(runId) || !m_store->requestState(runId, {})) {
        *error = QStringLiteral("cannot resume run %1: %2").arg(runId).arg(m_store->lastError());
        m_store->releaseLease(runId);
        return false;
    }
    if (unconfirmedBefore > 0)
        log(QStringLiteral("%1 request(s) were in flight when run %2 was interrupted: their cost is unconfirmed (see "
                           "`autocomp runs show %2`)")
                .arg(unconfirmedBefore)
                .arg(runId));
    if (m_setup.config.llm.reuseAcrossRuns)
        log(QStringLiteral(
            "answers paid for in other runs are reused for identical requests (llm.reuse_answers: across_runs)"));
    for (const Candidate &c : m_store->candidates(runId)) {
        m_candidates.insert(c.id, c);
        if (c.origin == CandidateOrigin::Fix && c.fixOf > 0)
            m_fixAttempts.insert(c.id, m_fixAttempts.value(c.fixOf) + 1);
    }
    persistRun();
    m_controlTimer->start();
    Q_EMIT runStateChanged(RunState::Running, QStringLiteral("resumed"));

    Candidate root;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.origin == CandidateOrigin::Root)
            root = c;
    if (root.id == 0) {
        *error = QStringLiteral("run %1 has no starting candidate; start it anew").arg(runId);
        finish(RunState::Failed, *error);
        return false;
    }
    log(QStringLiteral("resuming run %1 after iteration %2 (%3 candidates stored)")
            .arg(runId)
            .arg(m_run.iteration)
            .arg(m_candidates.size()));
    if (!isFinal(root.status)) {
        ++m_outstanding;
        startWork([this, id = root.id] { evaluate(id); });
        return true;
    }
    if (root.status != CandidateStatus::Correct && !unmeasuredRun(root)) {
        finish(RunState::Failed, startFailure(root));
        return true;
    }
    if (root.hasScore())
        m_run.baselineScore = root.score;
    // The beam as of the last finished selection (in_beam is written at selection time only).
    QList<Candidate> beam;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.inBeam)
            beam << c;
    std::sort(beam.begin(), beam.end(), [](const Candidate &a, const Candidate &b) {
        return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
    for (const Candidate &c : std::as_const(beam))
        m_beam << c.id;
    if (m_beam.isEmpty())
        m_beam = {root.id};
    // Translation ended early (translate_score) when the original already left the beam.
    m_translationDone = m_run.iteration >= m_setup.config.search.translateIters
        || (m_setup.config.search.translateScore && m_run.iteration > 0
            && std::none_of(m_beam.cbegin(), m_beam.cend(),
                            [this](qint64 id) { return m_candidates.value(id).origin == CandidateOrigin::Root; }));
    if (m_run.iteration >= m_setup.config.search.iterations) {
        finish(RunState::Finished, QStringLiteral("completed %1 iterations").arg(m_setup.config.search.iterations));
        return true;
    }
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(m_run.iteration + 1, true);
    return true;
}

qint64 SearchEngine::addCandidate(Candidate candidate)
{
    if (m_halted)
        return 0;
    candidate.runId = m_run.id;
    candidate.id = m_store->addCandidate(candidate);
    if (!candidate.id) {
        // Nothing acts on a candidate that is not stored: the run pauses instead.
        storeFailed(QStringLiteral("adding a candidate"));
        return 0;
    }
    m_candidates.insert(candidate.id, candidate);
    Q_EMIT candidateAdded(candidate);
    return candidate.id;
}

void SearchEngine::updateCandidate(const Candidate &candidate)
{
    if (m_halted || candidate.id <= 0)
        return;
    m_candidates.insert(candidate.id, candidate);
    if (!m_store->updateCandidate(candidate)) {
        storeFailed(QStringLiteral("updating candidate %1").arg(candidate.id));
        return;
    }
    Q_EMIT candidateUpdated(candidate);
}

void SearchEngine::persistRun()
{
    if (m_halted)
        return;
    if (!m_store->updateRun(m_run))
        storeFailed(QStringLiteral("updating the run"));
}

QString SearchEngine::budgetExceeded() const
{
    const BudgetConfig &b = m_setup.config.budget;
    if (b.maxLlmCalls && m_run.llmCalls >= *b.maxLlmCalls)
        return QStringLiteral("budget: %1 LLM calls reached (max_llm_calls)").arg(m_run.llmCalls);
    if (b.maxUsd && m_run.usd >= *b.maxUsd)
        return QStringLiteral("budget: $%1 spent (max_usd %2)").arg(m_run.usd, 0, 'f', 2).arg(*b.maxUsd);
    if (b.maxHours && m_previousSeconds + m_clock.elapsed() / 1000.0 >= *b.maxHours * 3600)
        return QStringLiteral("budget: %1 h of wall time reached (max_hours)").arg(*b.maxHours);
    return {};
}

bool SearchEngine::inTranslation() const
{
    return !m_translationDone && m_iteration <= m_setup.config.search.translateIters;
}

QString SearchEngine::forcedItem() const
{
    const int step = m_iteration - m_setup.config.search.translateIters - 1;
    return step >= 0 && step < m_schedule.size() && !inTranslation() ? m_schedule.at(step) : QString();
}

void SearchEngine::startWork(std::function<void()> work)
{
    if (m_halted || m_stopping)
        return;
    if (m_pausing) {
        m_deferred << std::move(work);
        checkPaused();
        return;
    }
    work();
}

void SearchEngine::pause()
{
    if (m_done || m_pausing)
        return;
    m_pausing = true;
    log(QStringLiteral("pausing: in-flight work finishes, nothing new starts"));
    checkPaused();
}

void SearchEngine::checkPaused()
{
    if (!m_pausing || m_done || m_run.state == RunState::Paused)
        return;
    if (!m_replies.isEmpty() || !m_jobs.isEmpty() || m_pendingCached > 0 || !m_pendingSends.isEmpty())
        return;
    m_run.state = RunState::Paused;
    m_run.stopReason = QStringLiteral("paused");
    persistRun();
    log(QStringLiteral("run %1 paused (%2 steps waiting)").arg(m_run.id).arg(m_deferred.size()));
    Q_EMIT runStateChanged(RunState::Paused, m_run.stopReason);
}

void SearchEngine::resumeWork()
{
    if (m_done || !m_pausing)
        return;
    m_pausing = false;
    m_run.state = RunState::Running;
    m_run.stopReason.clear();
    persistRun();
    log(QStringLiteral("run %1 resumed").arg(m_run.id));
    Q_EMIT runStateChanged(RunState::Running, QStringLiteral("resumed"));
    const auto deferred = std::exchange(m_deferred, {});
    for (const auto &work : deferred)
        work();
}

void SearchEngine::pollControl()
{
    if (m_done || !m_store || m_halted)
        return;
    // The lease's heartbeat (every 5 s by default): other processes see that this run is driven (runs list, resume).
    const int heartbeatTicks = qMax(1, RunLease::heartbeatIntervalMs() / m_controlTimer->interval());
    if (++m_heartbeatTick % heartbeatTicks == 0 && !m_store->heartbeat(m_run.id)) {
        storeFailed(QStringLiteral("renewing the run's lease"));
        return;
    }
    // A process stopped past the lease's timeout (SIGSTOP, a suspended machine) may find the run taken over:
    // it stops here, at the latest (its writes are refused anyway).
    if (!m_store->checkLease(m_run.id) && m_store->lostLease(m_run.id)) {
        leaseTakenOver();
        return;
    }
    takeRunRequests();
    const QString request = m_store->requestedState(m_run.id);
    if (request.isEmpty())
        return;
    m_store->requestState(m_run.id, {});
    if (request == QLatin1String("pause"))
        pause();
    else if (request == QLatin1String("resume"))
        resumeWork();
    else if (request == QLatin1String("stop"))
        stop(QStringLiteral("stopped on request"));
}

void SearchEngine::takeRunRequests()
{
    // Plans and edits written in a workbench that does not drive this run: taken as from this process's own window.
    for (const RunRequest &request : m_store->pendingRunRequests(m_run.id)) {
        QString error;
        const qint64 id = request.kind == RunRequest::Kind::Plan ? addHumanPlan(request.parentId, request.text, &error)
                                                                 : addHumanCode(request.parentId, request.text, &error);
        const QString from = QStringLiteral("pid %1 on %2").arg(request.fromPid).arg(request.fromHost);
        if (id)
            log(QStringLiteral("%1 from %2 taken (request %3)")
                    .arg(RunRequest::kindName(request.kind), from)
                    .arg(request.id));
        else
            log(QStringLiteral("%1 from %2 refused: %3 (request %4)")
                    .arg(RunRequest::kindName(request.kind), from, error)
                    .arg(request.id));
        if (!m_store->settleRunRequest(request.id, id, error)
            && !m_store->lastError().contains(QLatin1String("not pending"))) {
            storeFailed(QStringLiteral("recording what became of a plan or edit from another process"));
            return;
        }
    }
}

void SearchEngine::sendLlm(const QString &phase, const ModelSpec &spec, const QString &prompt, int sampleIndex,
                           qint64 candidateId, LlmCallback callback, std::optional<double> temperature)
{
    if (m_halted || m_stopping)
        return;
    LlmRequest request;
    request.spec = spec;
    request.owner = QStringLiteral("run %1").arg(m_run.id);
    request.maxAnswerBytes = m_setup.config.llm.maxAnswerBytes; // per request: the client may serve other runs
    request.resendBilled = m_setup.config.llm.resendBilled;
    request.maxTokens = m_setup.config.llm.maxTokens;
    request.system = PromptBuilder::systemPrompt(m_setup.target);
    request.prompt = prompt;
    request.sampleIndex = sampleIndex;
    request.temperature = temperature;
    const QString hash = request.hash();

    LlmCall base;
    base.runId = m_run.id;
    base.candidateId = candidateId;
    base.phase = phase;
    base.requestHash = hash;
    base.provider = request.spec.provider;
    base.model = request.spec.model;
    base.prompt = request.prompt;
    // Stores the outcome: a new row, or the row recorded before the request was sent (inFlightId).
    auto record = [this, base](const LlmResponse &response, qint64 inFlightId, bool sent) -> qint64 {
        LlmCall call = base;
        call.id = inFlightId;
        call.response = response.text;
        call.reasoning = response.reasoning;
        call.tokensIn = response.tokensIn;
        call.tokensOut = response.tokensOut;
        call.latencyMs = response.latencyMs;
        call.usd = response.fromCache ? 0.0 : response.usd;
        call.retries = response.retries;
        call.attempts = response.attempts.join(QLatin1Char('\n'));
        call.status = response.fromCache ? QStringLiteral("cached")
            : response.ok                ? QStringLiteral("ok")
                                         : QStringLiteral("error");
        call.error = response.error;
        const qint64 id = inFlightId ? (m_store->completeLlmCall(call) ? inFlightId : 0) : m_store->addLlmCall(call);
        if (!id) {
            storeFailed(QStringLiteral("recording an LLM answer"));
            return 0;
        }
        if (!response.fromCache) {
            response.ok ? ++m_okCalls : ++m_failedCalls;
            if (!response.ok)
                m_lastLlmError = response.error;
        }
        if (sent && !response.fromCache) {
            ++m_run.llmCalls;
            m_run.tokensIn += response.tokensIn;
            m_run.tokensOut += response.tokensOut;
            m_run.usd += response.usd;
            persistRun();
            Q_EMIT usageChanged(m_run.tokensIn, m_run.tokensOut, m_run.usd, m_run.llmCalls);
        }
        return id;
    };
    // An answer that comes back without being sent (reused, or refused here): handled from the event loop.
    auto answerLater = [this, record, callback](const LlmResponse &response) {
        ++m_pendingCached;
        QMetaObject::invokeMethod(
            this,
            [this, response, record, callback] {
                --m_pendingCached;
                if (m_done || m_halted || m_stopping)
                    return;
                inBatch([&] {
                    const qint64 id = record(response, 0, false);
                    if (id)
                        callback(response, id);
                });
            },
            Qt::QueuedConnection);
    };

    // A prompt past the limit (e.g. built around a runaway plan) is never sent.
    const qint64 promptBytes = request.prompt.toUtf8().size() + request.system.toUtf8().size();
    if (promptBytes > m_setup.config.llm.maxPromptBytes) {
        LlmResponse refused;
        refused.error = QStringLiteral("prompt of %1 bytes exceeds llm.max_prompt_bytes (%2); not sent")
                            .arg(promptBytes)
                            .arg(m_setup.config.llm.maxPromptBytes);
        log(QStringLiteral("%1 request not sent: %2").arg(phase, refused.error));
        answerLater(refused);
        return;
    }
    // A response already paid for (same provider, model, prompt, parameters and sample) is reused: from this
    // run (resume), or from any run when the configuration asks for it.
    if (auto cached = m_store->cachedResponse(hash, m_setup.config.llm.reuseAcrossRuns ? 0 : m_run.id)) {
        LlmResponse response;
        response.ok = true;
        response.fromCache = true;
        response.text = cached->response;
        response.reasoning = cached->reasoning;
        response.tokensIn = cached->tokensIn;
        response.tokensOut = cached->tokensOut;
        answerLater(response);
        return;
    }
    // An identical request already in flight is not sent again: its answer serves both.
    if (m_waitingOnHash.contains(hash)) {
        m_waitingOnHash[hash] << [record, callback](const LlmResponse &response) {
            LlmResponse shared = response;
            shared.fromCache = response.ok;
            const qint64 id = record(shared, 0, false);
            if (id)
                callback(shared, id);
        };
        return;
    }
    // Recorded before it is sent: a kill while it is in flight leaves a trace (model, prompt hash, time and
    // the likely cost), shown as unconfirmed.
    LlmCall inFlight = base;
    inFlight.status = QStringLiteral("in_flight");
    inFlight.usd = estimatedCost(spec, request.system + request.prompt);
    inFlight.tokensIn = (request.system.size() + request.prompt.size()) / 4;
    const qint64 callId = m_store->addLlmCall(inFlight);
    if (!callId) {
        storeFailed(QStringLiteral("recording an LLM request before sending it"));
        return;
    }
    m_waitingOnHash.insert(hash, {});
    auto launch = [this, request, record, callback, hash, callId] {
        LlmReply *reply = m_llm->send(request);
        m_replies << reply;
        connect(reply, &LlmReply::finished, this, [this, reply, record, callback, hash, callId] {
            reply->deleteLater();
            m_replies.removeAll(reply);
            const auto followers = m_waitingOnHash.take(hash);
            // Cut off by stop() or a store failure: not an answer. The call stays unconfirmed, its work not done.
            if (m_done || m_stopping || m_halted)
                return;
            LlmResponse response = reply->response();
            if (response.ok && response.text.toUtf8().size() > m_setup.config.llm.maxAnswerBytes) {
                response.ok = false;
                response.error = QStringLiteral("answer of %1 bytes exceeds llm.max_answer_bytes (%2); not used")
                                     .arg(response.text.toUtf8().size())
                                     .arg(m_setup.config.llm.maxAnswerBytes);
                response.text.clear();
            }
            // One commit: the paid answer, the run's totals and what the answer leads to (candidates, the next
            // prompts). Nothing acts on the answer before it is stored: requests made here leave after the commit.
            inBatch([&] {
                const qint64 id = record(response, callId, true);
                if (!id)
                    return;
                callback(response, id);
                for (const auto &follower : followers)
                    follower(response);
            });
        });
    };
    if (m_store->inBatch())
        m_pendingSends << launch;
    else
        launch();
}

void SearchEngine::inBatch(const std::function<void()> &work)
{
    const bool outer = !m_store->inBatch();
    m_store->beginBatch();
    work();
    const bool committed = m_store->endBatch(true);
    if (!outer)
        return;
    auto sends = std::exchange(m_pendingSends, {});
    const auto announcement = std::exchange(m_endAnnouncement, {});
    if (!committed) {
        if (announcement)
            endUnstored(m_store->lastError()); // the run ended inside the transaction that was lost
        else
            storeFailed(QStringLiteral("committing"));
        return;
    }
    if (announcement) {
        announcement();
        return;
    }
    if (m_halted || m_done || m_stopping)
        return;
    for (const auto &send : sends)
        send();
    checkPaused();
}

double SearchEngine::estimatedCost(const ModelSpec &spec, const QString &prompt) const
{
    if (!m_prices)
        return 0;
    // The input as sent (about 4 characters a token); the output as long as this run's answers so far, or 1000 tokens.
    const qint64 tokensOut = m_run.llmCalls > 0 ? qMax<qint64>(1, m_run.tokensOut / m_run.llmCalls) : 1000;
    return m_prices->cost(spec.provider, spec.model, prompt.size() / 4, tokensOut, 0).value_or(0.0);
}

void SearchEngine::evaluate(qint64 candidateId)
{
    // Where the target times a baseline beside the candidate, every candidate is timed alternately
    // with the starting code in the same window: the ratio of the two, not the absolute time, ranks
    // candidates (see evaluationFinished), so a slow phase of the machine moves both sides.
    if (m_halted || m_stopping || candidateId <= 0)
        return;
    const Candidate &candidate = m_candidates[candidateId];
    if (const qint64 original = duplicateOf(candidate)) {
        inBatch([&] { markDuplicate(candidateId, original); });
        return;
    }
    QString baseline;
    if (candidate.origin != CandidateOrigin::Root
        && std::any_of(m_setup.target.steps.cbegin(), m_setup.target.steps.cend(),
                       [](const TargetStep &s) { return !s.baselineWorker.isEmpty(); }))
        baseline = m_setup.problem.startCode();
    // The store, run and candidate name the evaluation: a remote executor finds a job that a killed
    // process left running (or its result) by this key instead of evaluating the candidate again.
    EvalRequest request;
    request.key = QStringLiteral("%1-r%2-c%3")
                      .arg(QString::fromLatin1(
                          QCryptographicHash::hash(m_store->path().toUtf8(), QCryptographicHash::Sha1).toHex().left(8)))
                      .arg(m_run.id)
                      .arg(candidateId);
    EvalJob *job = m_evaluator->evaluate(m_setup.target, m_setup.problem, candidate.code, baseline,
                                         &m_setup.config.evaluation, request);
    m_jobs << job;
    m_evaluating.insert(candidateId);
    connect(job, &EvalJob::statusChanged, this, [this, candidateId](CandidateStatus status) {
        auto it = m_candidates.find(candidateId);
        if (it == m_candidates.end() || it->status == status || m_done)
            return;
        // Compiling, testing, benchmarking: shown live, not stored. The store keeps the outcome, written
        // when the evaluation ends; an evaluation cut short by a crash is redone on resume anyway.
        it->status = status;
        Q_EMIT candidateUpdated(*it);
    });
    // Long steps say what they are doing (a 20-30 s extension build, or its reuse from the cache).
    connect(job, &EvalJob::stepStarted, this, [this, candidateId](const QString &step, const QString &note) {
        if (!note.isEmpty() && !m_done)
            log(QStringLiteral("candidate %1: %2: %3").arg(candidateId).arg(step, note));
    });
    connect(job, &EvalJob::finished, this, [this, candidateId, job](const EvalResult &result) {
        m_jobs.removeAll(job);
        m_evaluating.remove(candidateId);
        // Cancelled by stop() or a store failure: not a verdict; the candidate is evaluated again on resume.
        if (m_done || m_stopping || m_halted)
            return;
        // The evaluation, the candidate's outcome and whatever they start (beam selection, fix requests): one commit.
        inBatch([&] { evaluationFinished(candidateId, result); });
    });
}

void SearchEngine::evaluationFinished(qint64 candidateId, const EvalResult &result)
{
    Candidate c = m_candidates.value(candidateId);
    c.status = statusFromResult(result);
    c.metrics = result.metrics;
    c.feedback = result.feedback;
    c.flags = result.flags;
    c.score = result.correct ? result.metricValue(m_setup.target.metric) : std::numeric_limits<double>::quiet_NaN();
    // Paired timing: the score is the starting code's latency times this candidate's ratio to it, as
    // measured side by side; units and scale stay the root's, the noise is the ratio's.
    const double ratio =
        result.metrics.value(QStringLiteral("paired_ratio")).toObject().value(QStringLiteral("value")).toDouble();
    if (result.correct && ratio > 0 && m_run.baselineScore > 0 && c.origin != CandidateOrigin::Root)
        c.score = m_run.baselineScore * ratio;
    c.error = result.correct ? QString() : QStringLiteral("%1: %2").arg(result.status, result.log.trimmed());
    // The run-to-run noise of a timed metric, recorded with the candidate so that every view and every
    // ranking widens its interval alike (scoreInterval).
    const double floor = m_setup.config.search.noiseFloor.value_or(m_setup.target.noiseFloor);
    if (result.correct && floor > 0 && c.hasScore())
        c.metrics.insert(QStringLiteral("noise_floor"), floor);
    if (!m_store->addEvaluation(candidateId, result)) {
        storeFailed(QStringLiteral("recording an evaluation"));
        return;
    }
    updateCandidate(c);
    if (m_halted)
        return;

    if (c.origin == CandidateOrigin::Root) {
        rootEvaluated(c);
        return;
    }
    if (c.status == CandidateStatus::Correct) {
        log(QStringLiteral("candidate %1 (iteration %2, parent %3): correct, %4 %5 (%6x over the start)")
                .arg(c.id)
                .arg(c.iteration)
                .arg(c.parentId)
                .arg(c.score, 0, 'g', 4)
                .arg(m_setup.target.metricUnit)
                .arg(m_run.baselineScore / c.score, 0, 'f', 2));
        updateBest();
        if (inTranslation() && m_setup.config.search.translateScore
            && !c.metrics.contains(QStringLiteral("translation_score"))) {
            startWork([this, candidateId] { requestTranslationScore(candidateId); });
            return; // the score request carries this candidate's outstanding count
        }
    } else {
        log(QStringLiteral("candidate %1 (iteration %2): %3").arg(c.id).arg(c.iteration).arg(toString(c.status)));
        if (fixable(c.status) && m_fixAttempts.value(c.id) < m_setup.config.search.fixAttempts && !m_draining) {
            ++m_outstanding;
            startWork([this, candidateId] { requestFix(candidateId); });
        }
    }
    workDone();
}

qint64 SearchEngine::duplicateOf(const Candidate &c) const
{
    if (c.origin == CandidateOrigin::Root || c.code.isEmpty())
        return 0;
    auto keyOf = [&](const Candidate &o) -> const QString & {
        auto it = m_codeKeys.find(o.id);
        if (it == m_codeKeys.end())
            it = m_codeKeys.insert(o.id, normalizedCode(o.code));
        return *it;
    };
    const QString key = normalizedCode(c.code);
    qint64 original = 0;
    for (const Candidate &o : std::as_const(m_candidates)) {
        if (o.id == c.id || o.code.isEmpty() || o.status == CandidateStatus::Duplicate || (original && o.id > original))
            continue;
        // Evaluated, or being evaluated: a candidate still waiting (or cancelled, to be redone) is no original yet.
        if (!isFinal(o.status) && !m_evaluating.contains(o.id))
            continue;
        if (keyOf(o) == key)
            original = o.id;
    }
    return original;
}

void SearchEngine::markDuplicate(qint64 candidateId, qint64 originalId)
{
    Candidate c = m_candidates.value(candidateId);
    const Candidate original = m_candidates.value(originalId);
    c.status = CandidateStatus::Duplicate;
    c.metrics = {{QStringLiteral("duplicate_of"), originalId}};
    c.error = QStringLiteral("duplicate of #%1: its code is the same, whitespace aside (#%1: %2); not evaluated again")
                  .arg(originalId)
                  .arg(isFinal(original.status) ? statusWord(original) : QStringLiteral("being evaluated"));
    updateCandidate(c);
    log(QStringLiteral("candidate %1 (iteration %2): duplicate of #%3, not evaluated")
            .arg(c.id)
            .arg(c.iteration)
            .arg(originalId));
    workDone();
}

bool SearchEngine::clearlyBetter(const Candidate &c, const Candidate &incumbent, double slack)
{
    const auto ic = scoreInterval(c);
    const auto ii = scoreInterval(incumbent);
    if (!ic || !ii)
        return c.score < incumbent.score * slack;
    // Zero-width intervals (a deterministic metric) reduce this to the plain comparison.
    return ic->high < ii->low * slack;
}

void SearchEngine::updateBest()
{
    QList<qint64> ids = m_candidates.keys();
    std::sort(ids.begin(), ids.end());
    const Candidate *best = nullptr;
    for (qint64 id : std::as_const(ids)) {
        const Candidate &c = m_candidates[id];
        if (c.status != CandidateStatus::Correct || !c.hasScore())
            continue;
        if (!best || clearlyBetter(c, *best))
            best = &c;
    }
    if (!best || (best->id == m_run.bestCandidateId && best->score == m_run.bestScore))
        return;
    m_run.bestScore = best->score;
    m_run.bestCandidateId = best->id;
    persistRun();
}

QString SearchEngine::startFailure(const Candidate &root)
{
    // An evaluation `error` is the machine's (a setup step, the sandbox, a loader, an absent tool): no
    // verdict about the starting code, and the whole log is kept, lines and all.
    if (isMachineFault(root))
        return QStringLiteral(
                   "the starting code could not be evaluated on this machine; this is a problem of the machine, "
                   "not of the code:\n%1")
            .arg(root.error.mid(int(qstrlen("error: "))).left(20000));
    return QStringLiteral("the starting code does not pass its own harness (%1): %2")
        .arg(toString(root.status), root.error.left(2000));
}

bool SearchEngine::unmeasuredRun(const Candidate &root) const
{
    // With evaluation.compile_only the steps that need the hardware are left out: the start passing
    // everything else (compiling; on tpu, correctness in Pallas' interpreter) ends with no_hardware. The
    // search still plans, writes, checks and fixes candidates; with no score none of them is ranked.
    return m_setup.config.evaluation.compileOnly && root.status == CandidateStatus::NoHardware;
}

void SearchEngine::rootEvaluated(const Candidate &root)
{
    --m_outstanding;
    if (!unmeasuredRun(root) && (root.status != CandidateStatus::Correct || !root.hasScore())) {
        finish(RunState::Failed, startFailure(root));
        return;
    }
    m_run.bestCandidateId = root.id;
    if (root.hasScore()) {
        m_run.baselineScore = root.score;
        m_run.bestScore = root.score;
        log(QStringLiteral("starting code: %1 %2").arg(root.score, 0, 'g', 4).arg(m_setup.target.metricUnit));
    } else {
        log(QStringLiteral(
            "starting code: passes every step that runs without the hardware, not measured "
            "(evaluation.compile_only): candidates are checked, none is ranked, the beam stays the start"));
    }
    persistRun();
    m_beam = {root.id};
    Candidate r = root;
    r.inBeam = true;
    updateCandidate(r);
    if (!m_store->setBeam(m_run.id, m_beam)) {
        storeFailed(QStringLiteral("recording the beam"));
        return;
    }
    Q_EMIT beamChanged(m_beam);
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(1, false);
}

void SearchEngine::startIteration(int iteration, bool adopt)
{
    if (m_halted)
        return;
    m_iteration = iteration;
    m_iterationCandidates.clear();
    m_fixCounter = 0;
    const QString reason = budgetExceeded();
    if (!reason.isEmpty()) {
        finish(RunState::Stopped, reason);
        return;
    }
    log(QStringLiteral("iteration %1 of %2: beam %3%4")
            .arg(iteration)
            .arg(m_setup.config.search.iterations)
            .arg(m_beam.size())
            .arg(inTranslation() ? QStringLiteral(" (translation)") : QString()));
    const int n = m_setup.config.search.plansPerParent;
    // Count everything first, so an early cached answer cannot end the iteration while plans are still being issued.
    m_outstanding += int(m_beam.size()) * n + 1;
    int slot = 0;
    for (int p = 0; p < m_beam.size(); ++p) {
        for (int i = 0; i < n; ++i, ++slot) {
            if (adopt)
                adoptPlanSlot(m_beam.at(p), p, i, slot);
            else
                startWork([this, parent = m_beam.at(p), p, i, slot] { requestPlan(parent, p, i, slot); });
        }
    }
    if (adopt) {
        // Human candidates of the interrupted iteration take part too.
        for (const Candidate &c : std::as_const(m_candidates)) {
            if (c.iteration != iteration || c.origin != CandidateOrigin::Human || m_iterationCandidates.contains(c.id))
                continue;
            m_iterationCandidates << c.id;
            if (!isFinal(c.status)) {
                ++m_outstanding;
                if (c.code.isEmpty())
                    startWork([this, id = c.id] { requestCode(id); });
                else
                    startWork([this, id = c.id] { evaluate(id); });
            }
        }
    }
    workDone(); // the +1 above
}

void SearchEngine::adoptPlanSlot(qint64 parentId, int parentIndex, int planIndex, int slot)
{
    QList<Candidate> children;
    for (const Candidate &c : std::as_const(m_candidates))
        if (c.iteration == m_iteration && c.planSlot == slot && c.parentId == parentId
            && c.origin == CandidateOrigin::Llm)
            children << c;
    if (children.isEmpty()) {
        startWork(
            [this, parentId, parentIndex, planIndex, slot] { requestPlan(parentId, parentIndex, planIndex, slot); });
        return;
    }
    std::sort(children.begin(), children.end(),
              [](const Candidate &a, const Candidate &b) { return a.sample < b.sample; });
    const Candidate first = children.first();
    QSet<int> samples;
    // Adopt each stored child; each unfinished one gets its outstanding count and resumes where it stopped.
    auto adoptOne = [this](const Candidate &c) {
        m_iterationCandidates << c.id;
        if (!isFinal(c.status)) {
            ++m_outstanding;
            if (c.code.isEmpty() && c.origin == CandidateOrigin::Fix)
                startWork([this, id = c.id] { sendFixRequest(id); });
            else if (c.code.isEmpty())
                startWork([this, id = c.id] { requestCode(id); });
            else
                startWork([this, id = c.id] { evaluate(id); });
        }
    };
    for (const Candidate &c : std::as_const(children)) {
        samples.insert(c.sample);
        adoptOne(c);
        // Fixes of this child, and fixes that are still owed.
        qint64 tip = c.id;
        while (true) {
            Candidate fix;
            for (const Candidate &f : std::as_const(m_candidates))
                if (f.origin == CandidateOrigin::Fix && f.fixOf == tip)
                    fix = f;
            if (fix.id == 0)
                break;
            adoptOne(fix);
            tip = fix.id;
        }
        const Candidate last = m_candidates.value(tip);
        if (isFinal(last.status) && fixable(last.status)
            && m_fixAttempts.value(last.id) < m_setup.config.search.fixAttempts) {
            ++m_outstanding;
            startWork([this, id = last.id] { requestFix(id); });
        }
    }
    if (m_setup.config.search.skipPlanning) {
        // The samples not stored yet are asked again (the slot's count carries over); the others were adopted.
        if (samples.size() < m_setup.config.search.codePerPlan)
            startWork([this, parentId, parentIndex, planIndex, slot, samples] {
                requestPlan(parentId, parentIndex, planIndex, slot, samples);
            });
        else
            workDone();
        return;
    }
    if (first.status == CandidateStatus::Failed && first.plan.isEmpty()) {
        workDone(); // the plan request itself failed and was recorded
        return;
    }
    for (int k = 0; k < m_setup.config.search.codePerPlan; ++k) {
        if (samples.contains(k))
            continue;
        Candidate c = first;
        c.id = 0;
        c.sample = k;
        c.status = CandidateStatus::Coding;
        c.code.clear();
        c.score = std::numeric_limits<double>::quiet_NaN();
        c.metrics = {};
        c.feedback.clear();
        c.flags.clear();
        c.error.clear();
        c.inBeam = false;
        const qint64 id = addCandidate(c);
        m_iterationCandidates << id;
        ++m_outstanding;
        startWork([this, id] { requestCode(id); });
    }
    workDone(); // the plan slot
}

int SearchEngine::requestIndex(const Candidate &c, int attempt) const
{
    // The request's position in the run: identical prompts from different positions (two plan slots that
    // wrote the same plan) are different samples, and a resumed run asks each position the same way.
    const int position = c.planSlot >= 0 ? c.planSlot * m_setup.config.search.codePerPlan + c.sample
                                         : 50000 + int(c.id % 10000) * 4 + c.sample; // human plans
    return (c.iteration * 100000 + position) * 16 + attempt;
}

void SearchEngine::requestPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot,
                               const QSet<int> &skipSamples)
{
    if (m_draining) {
        workDone();
        return;
    }
    // What the parent's plan prompts need asked first (ISA filter, one-shot menu, example choice): once per
    // parent and phase, shared by its plan requests.
    const qint64 key = prepKey(parentId);
    if (const auto it = m_prep.constFind(key); it != m_prep.cend()) {
        sendPlan(parentId, parentIndex, planIndex, planSlot, *it, skipSamples);
        return;
    }
    const bool started = m_prepWaiting.contains(key);
    m_prepWaiting[key] << [this, key, parentId, parentIndex, planIndex, planSlot, skipSamples] {
        sendPlan(parentId, parentIndex, planIndex, planSlot, m_prep.value(key), skipSamples);
    };
    if (!started)
        prepareParent(parentId, key);
}

void SearchEngine::prepareParent(qint64 parentId, qint64 key)
{
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation() && !m_setup.agent.translationMenu.isEmpty();
    auto prep = std::make_shared<ParentPrep>();
    auto done = [this, key, prep] {
        m_prep.insert(key, *prep);
        const QList<std::function<void()>> waiting = m_prepWaiting.take(key);
        for (const auto &send : waiting)
            send();
    };
    auto examples = [this, parentId, prep, done] {
        if (!m_setup.config.search.exampleRate || m_setup.agent.codeExamples.isEmpty()) {
            done();
            return;
        }
        selectExamples(parentId, prep->isaDocs.value_or(m_setup.agent.isaDocs), [prep, done](const QList<int> &picked) {
            prep->examples = picked;
            done();
        });
    };
    auto menu = [this, parentId, prep, examples,
                 oneShot = s.menuStrategy == QLatin1String("one-shot") && !translation] {
        if (!oneShot) {
            examples();
            return;
        }
        proposeStrategies(parentId, prep->isaDocs.value_or(m_setup.agent.isaDocs),
                          [prep, examples](const QStringList &proposed) {
                              prep->proposed = proposed;
                              examples();
                          });
    };
    if (s.isaFilter && IsaFilter::parse(m_setup.agent.isaDocs).size() > 1) {
        filterIsa(parentId, [prep, menu](const QString &isa) {
            prep->isaDocs = isa;
            menu();
        });
    } else {
        menu();
    }
}

QStringList SearchEngine::menuFor(qint64 parentId) const
{
    if (inTranslation() && !m_setup.agent.translationMenu.isEmpty())
        return m_setup.agent.translationMenu;
    return m_setup.agent.menu + m_prep.value(prepKey(parentId)).proposed;
}

void SearchEngine::proposeStrategies(qint64 parentId, const QString &isaDocs,
                                     std::function<void(const QStringList &)> done)
{
    const Candidate parent = m_candidates.value(parentId);
    const QString prompt = MenuStrategy::oneShotPrompt(m_setup.agent, m_setup.problem, m_setup.target, parent.code,
                                                       m_setup.agent.menu, isaDocs);
    sendLlm(
        MenuStrategy::oneShotPhase(), m_setup.planModels.first(), prompt, 0, parentId,
        [this, parentId, done](const LlmResponse &response, qint64) {
            if (!response.ok) {
                log(QStringLiteral("one-shot menu for candidate %1 failed (%2); the agent's menu alone is used")
                        .arg(parentId)
                        .arg(response.error));
                done({});
                return;
            }
            const QStringList proposed = MenuStrategy::parse(response.text, m_setup.agent.menu);
            log(QStringLiteral("one-shot menu for candidate %1: %2 new strategies").arg(parentId).arg(proposed.size()));
            done(proposed);
        });
}

void SearchEngine::selectExamples(qint64 parentId, const QString &isaDocs, std::function<void(const QList<int> &)> done)
{
    const Candidate parent = m_candidates.value(parentId);
    const QList<CodeExample> &all = m_setup.agent.codeExamples;
    const QString prompt = ExampleSelection::prompt(all, m_setup.problem, m_setup.target, parent.code, isaDocs);
    sendLlm(
        ExampleSelection::phase(), m_setup.planModels.first(), prompt, 0, parentId,
        [this, parentId, done, count = int(all.size())](const LlmResponse &response, qint64) {
            if (!response.ok) {
                log(QStringLiteral("example choice for candidate %1 failed (%2); no examples are shown")
                        .arg(parentId)
                        .arg(response.error));
                done({});
                return;
            }
            done(ExampleSelection::parse(response.text, count));
        },
        0.0);
}

void SearchEngine::filterIsa(qint64 parentId, std::function<void(const QString &)> done)
{
    const QList<IsaFilter::Section> sections = IsaFilter::parse(m_setup.agent.isaDocs);
    const Candidate parent = m_candidates.value(parentId);
    const QString problem = m_setup.problem.name + QStringLiteral(": ") + m_setup.problem.description;
    const ModelSpec &model = m_setup.planModels.first();
    // Done: the selection is known (or the question failed: then the whole ISA is kept).
    auto finish = [done](const QString &isa) { done(isa); };
    sendLlm(QStringLiteral("isa"), model, IsaFilter::sectionPrompt(sections, problem, parent.code), 0, parentId,
            [this, sections, problem, parent, model, finish](const LlmResponse &response, qint64) {
                if (!response.ok) {
                    log(QStringLiteral("ISA filter for candidate %1 failed (%2); the whole ISA is used")
                            .arg(parent.id)
                            .arg(response.error));
                    finish(m_setup.agent.isaDocs);
                    return;
                }
                QList<int> kept;
                for (int n : IsaFilter::parseNumbers(response.text, int(sections.size())))
                    kept << n - 1;
                auto entries = std::make_shared<QHash<int, QList<int>>>();
                auto pending = std::make_shared<int>(0);
                for (int s : std::as_const(kept))
                    if (sections.at(s).entries.size() > 1)
                        ++*pending;
                if (*pending == 0) {
                    finish(IsaFilter::assemble(sections, kept, *entries));
                    return;
                }
                for (int s : std::as_const(kept)) {
                    if (sections.at(s).entries.size() <= 1)
                        continue;
                    sendLlm(QStringLiteral("isa"), model, IsaFilter::entryPrompt(sections.at(s), problem, parent.code),
                            0, parent.id, [sections, kept, entries, pending, s, finish](const LlmResponse &r, qint64) {
                                if (r.ok) {
                                    QList<int> chosen;
                                    for (int n : IsaFilter::parseNumbers(r.text, int(sections.at(s).entries.size())))
                                        chosen << n - 1;
                                    entries->insert(s, chosen);
                                }
                                if (--*pending == 0)
                                    finish(IsaFilter::assemble(sections, kept, *entries));
                            });
                }
            });
}

void SearchEngine::sendPlan(qint64 parentId, int parentIndex, int planIndex, int planSlot, const ParentPrep &prep,
                            const QSet<int> &skipSamples)
{
    if (m_draining) {
        workDone();
        return;
    }
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation() && !m_setup.agent.translationMenu.isEmpty();
    const QStringList fullMenu = menuFor(parentId);
    std::mt19937_64 rng = rngFor(quint64(m_iteration), quint64(parentIndex), quint64(planIndex));
    const QList<int> kept = dropoutDraw(int(fullMenu.size()), s.menuDropout, rng);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const bool newIdea = uniform(rng) < s.newIdeaProbability;
    QList<CodeExample> examples;
    if (s.exampleRate) // the examples a model picked for this parent, each kept with example_rate
        examples = ExampleSelection::sample(m_setup.agent.codeExamples, prep.examples, *s.exampleRate, rng);
    else
        for (const CodeExample &e : m_setup.agent.codeExamples)
            if (uniform(rng) < 0.25)
                examples << e;

    PlanPromptInput in;
    in.agent = &m_setup.agent;
    in.problem = &m_setup.problem;
    in.target = &m_setup.target;
    const Candidate parent = m_candidates.value(parentId);
    in.parent = &parent;
    in.forcedItem = forcedItem();
    if (!in.forcedItem.isEmpty()) {
        const qsizetype index = fullMenu.indexOf(in.forcedItem);
        in.menu << MenuEntry{index >= 0 ? int(index) + 1 : 1, in.forcedItem};
    } else {
        for (int index : kept)
            in.menu << MenuEntry{index + 1, fullMenu.at(index)};
        in.inviteNewIdea = newIdea && !translation;
    }
    in.translation = translation;
    in.feedback = s.feedback;
    in.examples = examples;
    in.iteration = m_iteration;
    in.iterations = s.iterations;
    in.isaDocs = prep.isaDocs;
    in.direct = s.skipPlanning;
    in.editMode = s.editMode;
    const QString prompt = PromptBuilder::planPrompt(in);
    if (s.skipPlanning) {
        sendDirect(parentId, planSlot, prompt, skipSamples);
        return;
    }
    const ModelSpec &model = m_setup.planModels.at(planSlot % m_setup.planModels.size());
    sendLlm(QStringLiteral("plan"), model, prompt, m_iteration * 100000 + planSlot, 0,
            [this, parentId, planSlot, model](const LlmResponse &response, qint64 callId) {
                planArrived(parentId, planSlot, model.text, response, callId);
            });
}

void SearchEngine::planArrived(qint64 parentId, int planSlot, const QString &model, const LlmResponse &response,
                               qint64 callId)
{
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Llm;
    c.planModel = model;
    c.planCallId = callId;
    c.planSlot = planSlot;
    if (!response.ok) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("plan request failed: %1").arg(response.error);
        m_iterationCandidates << addCandidate(c);
        log(QStringLiteral("plan request to %1 failed: %2").arg(model, response.error));
        workDone();
        return;
    }
    const QString forced = forcedItem();
    const ResponseParser::MenuChoice choice = ResponseParser::parseMenuChoice(response.text, menuFor(parentId));
    c.plan = response.text;
    c.menuItem = !forced.isEmpty() ? forced : choice.isNew ? QStringLiteral("new: ") + choice.text : choice.text;
    c.status = CandidateStatus::Coding;
    const int k = m_setup.config.search.codePerPlan;
    m_outstanding += k;
    for (int i = 0; i < k; ++i) {
        c.sample = i;
        const qint64 id = addCandidate(c);
        m_iterationCandidates << id;
        startWork([this, id] { requestCode(id); });
    }
    workDone(); // the plan itself
}

void SearchEngine::sendDirect(qint64 parentId, int planSlot, const QString &prompt, const QSet<int> &skipSamples)
{
    const int k = m_setup.config.search.codePerPlan;
    for (int i = 0; i < k; ++i) {
        if (skipSamples.contains(i))
            continue;
        ++m_outstanding;
        // The same rotation over the code models as code requests (plan slot, then sample).
        const ModelSpec &model = m_setup.codeModels.at((planSlot * k + i) % m_setup.codeModels.size());
        Candidate position;
        position.iteration = m_iteration;
        position.planSlot = planSlot;
        position.sample = i;
        sendLlm(QStringLiteral("direct"), model, prompt, requestIndex(position, 0), 0,
                [this, parentId, planSlot, i, model](const LlmResponse &response, qint64 callId) {
                    directArrived(parentId, planSlot, i, model.text, response, callId);
                });
    }
    workDone(); // the prompt slot; each sample carries its own count
}

void SearchEngine::directArrived(qint64 parentId, int planSlot, int sample, const QString &model,
                                 const LlmResponse &response, qint64 callId)
{
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Llm;
    c.planModel = model;
    c.codeModel = model;
    c.planCallId = callId;
    c.planSlot = planSlot;
    c.sample = sample;
    if (!response.ok) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("code request failed: %1").arg(response.error);
        if (const qint64 id = addCandidate(c))
            m_iterationCandidates << id;
        log(QStringLiteral("code request to %1 failed: %2").arg(model, response.error));
        workDone();
        return;
    }
    // The reasoning and the chosen item's line stand as the candidate's plan (what a fix is told it meant to do).
    const qsizetype fence = response.text.indexOf(QLatin1String("```"));
    c.plan = (fence >= 0 ? response.text.left(fence) : response.text).trimmed();
    const QString forced = forcedItem();
    const ResponseParser::MenuChoice choice = ResponseParser::parseMenuChoice(c.plan, menuFor(parentId));
    c.menuItem = !forced.isEmpty() ? forced : choice.isNew ? QStringLiteral("new: ") + choice.text : choice.text;
    c.status = CandidateStatus::Coding;
    const qint64 id = addCandidate(c);
    if (!id)
        return;
    m_iterationCandidates << id;
    codeArrived(id, response, false); // the sample's outstanding count carries over
}

void SearchEngine::requestCode(qint64 candidateId)
{
    Candidate c = m_candidates.value(candidateId);
    if (m_draining) {
        c.status = CandidateStatus::Failed;
        c.error = QStringLiteral("not started: %1").arg(m_drainReason);
        updateCandidate(c);
        workDone();
        return;
    }
    const Candidate parent = m_candidates.value(c.parentId);
    // Ensembling: code requests rotate across the code models over all requests of the iteration,
    // in a fixed order (plan slot, then sample), so every model writes code whatever N, K and B are.
    const int codeSlot = (c.planSlot >= 0 ? c.planSlot : 0) * m_setup.config.search.codePerPlan + c.sample;
    const ModelSpec &model = m_setup.codeModels.at(codeSlot % m_setup.codeModels.size());
    c.codeModel = model.text;
    updateCandidate(c);
    const QString prompt = PromptBuilder::codePrompt(m_setup.agent, m_setup.problem, m_setup.target, parent.code,
                                                     c.plan, m_setup.config.search.editMode);
    sendLlm(QStringLiteral("code"), model, prompt, requestIndex(c, 0), candidateId,
            [this, candidateId](const LlmResponse &response, qint64) { codeArrived(candidateId, response, false); });
}

void SearchEngine::codeArrived(qint64 candidateId, const LlmResponse &response, bool fix)
{
    Candidate c = m_candidates.value(candidateId);
    auto fail = [&](const QString &why) {
        c.status = CandidateStatus::Failed;
        c.error = why;
        updateCandidate(c);
        log(QStringLiteral("candidate %1: %2").arg(candidateId).arg(why.left(200)));
        workDone();
    };
    if (!response.ok) {
        fail(QStringLiteral("%1 request failed: %2")
                 .arg(fix ? QStringLiteral("fix") : QStringLiteral("code"), response.error));
        return;
    }
    // Cut at the output limit with no usable code: the model's limit, not a wrong answer; no fix is asked
    // for (it would be cut the same way).
    const QString cut = response.cutAtTokenLimit()
        ? QStringLiteral("the answer was cut at the model's output limit (max_tokens %1, stop reason '%2'); raise "
                         "llm.max_tokens in "
                         "the run's configuration to let the model finish")
              .arg(m_setup.config.llm.maxTokens)
              .arg(response.stopReason)
        : QString();
    if (m_setup.config.search.editMode && !fix) {
        const QString parentCode = m_candidates.value(c.parentId).code;
        const EditApplier::Result applied = EditApplier::apply(parentCode, EditApplier::parse(response.text));
        if (!applied.ok) {
            fail(cut.isEmpty() ? QStringLiteral("edit not applied: %1").arg(applied.error) : cut);
            return;
        }
        c.code = applied.code;
        if (applied.fuzzyBlocks > 0)
            c.flags << QStringLiteral("%1 edit block(s) applied with whitespace-normalized matching")
                           .arg(applied.fuzzyBlocks);
    } else {
        const auto code = ResponseParser::extractCode(response.text, m_setup.target.language);
        if (!code || code->trimmed().isEmpty()) {
            fail(cut.isEmpty()
                     ? QStringLiteral("the response contains no complete ```%1 code block").arg(m_setup.target.language)
                     : cut);
            return;
        }
        c.code = *code;
    }
    c.status = CandidateStatus::Pending;
    updateCandidate(c);
    startWork([this, candidateId] { evaluate(candidateId); }); // the outstanding count carries over
}

void SearchEngine::requestFix(qint64 failedId)
{
    const Candidate failed = m_candidates.value(failedId);
    Candidate c;
    c.parentId = failed.parentId;
    c.iteration = failed.iteration;
    c.origin = CandidateOrigin::Fix;
    c.plan = failed.plan;
    c.menuItem = failed.menuItem;
    c.planModel = failed.planModel;
    c.planCallId = failed.planCallId;
    c.planSlot = failed.planSlot;
    c.sample = failed.sample;
    c.fixOf = failedId;
    c.status = CandidateStatus::Coding;
    // Fixes rotate across the code models, starting after the model that wrote the failed code.
    const int codeSlot = (failed.planSlot >= 0 ? failed.planSlot : 0) * m_setup.config.search.codePerPlan
        + failed.sample;
    const int attempt = m_fixAttempts.value(failedId) + 1;
    const ModelSpec &model = m_setup.codeModels.at((codeSlot + attempt) % m_setup.codeModels.size());
    c.codeModel = model.text;
    const qint64 id = addCandidate(c);
    m_iterationCandidates << id;
    m_fixAttempts.insert(id, attempt);
    log(QStringLiteral("candidate %1 failed; asking %2 for a fix (candidate %3)")
            .arg(failedId)
            .arg(model.text)
            .arg(id));
    sendFixRequest(id);
}

void SearchEngine::sendFixRequest(qint64 fixId)
{
    const Candidate c = m_candidates.value(fixId);
    const Candidate failed = m_candidates.value(c.fixOf);
    // The failing steps' output, and the judge's verdict where they do not already carry it: a judge may
    // write its verdict only to its result file and exit quietly, and a fix prompt without it says nothing.
    QString errorLog;
    for (const StepResult &s : m_store->evaluationSteps(failed.id))
        if ((s.exitCode != 0 || s.timedOut || s.crashed) && !s.log.trimmed().isEmpty())
            errorLog += QStringLiteral("[%1]\n%2\n").arg(s.name, s.log);
    const QString verdict = failed.error.trimmed();
    if (errorLog.isEmpty())
        errorLog = failed.error;
    else if (!verdict.isEmpty() && !errorLog.contains(verdict))
        errorLog = QStringLiteral("[verdict]\n%1\n").arg(verdict) + errorLog;
    const QString prompt = PromptBuilder::fixPrompt(m_setup.agent, m_setup.problem, m_setup.target, failed.code,
                                                    failed.plan, errorLog);
    ModelSpec model = m_setup.codeModels.first();
    for (const ModelSpec &spec : std::as_const(m_setup.codeModels))
        if (spec.text == c.codeModel)
            model = spec;
    // Distinct per failed sample and attempt, so sibling fixes are separate samples.
    sendLlm(QStringLiteral("fix"), model, prompt, requestIndex(c, m_fixAttempts.value(fixId)), fixId,
            [this, fixId](const LlmResponse &response, qint64) { codeArrived(fixId, response, true); });
}

void SearchEngine::requestTranslationScore(qint64 candidateId)
{
    const Candidate c = m_candidates.value(candidateId);
    const QString prompt = PromptBuilder::translationScorePrompt(m_setup.problem, m_setup.target, c.code);
    sendLlm(
        QStringLiteral("score"), m_setup.planModels.first(), prompt, 0, candidateId,
        [this, candidateId](const LlmResponse &response, qint64) {
            Candidate c = m_candidates.value(candidateId);
            static const QRegularExpression s_number(QStringLiteral("(\\d+(?:\\.\\d+)?)"));
            const QRegularExpressionMatch m = s_number.match(response.text);
            const double score = response.ok && m.hasMatch() ? qBound(0.0, m.captured(1).toDouble(), 10.0) : 0.0;
            c.metrics.insert(QStringLiteral("translation_score"), score);
            if (!response.ok || !m.hasMatch())
                c.flags << QStringLiteral("translation score unavailable: %1")
                               .arg(response.ok ? QStringLiteral("no number in the answer") : response.error);
            updateCandidate(c);
            workDone();
        },
        0.0);
}

void SearchEngine::workDone()
{
    --m_outstanding;
    if (m_outstanding > 0 || m_done || m_halted || m_stopping)
        return;
    if (!m_draining) {
        const QString reason = budgetExceeded();
        if (!reason.isEmpty()) {
            m_draining = true;
            m_drainReason = reason;
        }
    }
    selectBeam();
}

void SearchEngine::selectBeam()
{
    const SearchConfig &s = m_setup.config.search;
    const bool translation = inTranslation();
    const double slack = s.slackFor(m_iteration);
    QList<Candidate> pool;
    for (qint64 id : std::as_const(m_beam))
        pool << m_candidates.value(id); // incumbents keep their place without the parent rule
    for (qint64 id : std::as_const(m_iterationCandidates)) {
        const Candidate c = m_candidates.value(id);
        if (c.status != CandidateStatus::Correct || !c.hasScore())
            continue;
        if (translation) {
            // Translated candidates below the completeness threshold are kept apart (translate_score), and so
            // are those more than translate_perf_threshold times slower than their parent.
            if (s.translateScore
                && c.metrics.value(QStringLiteral("translation_score")).toDouble() < s.translateThreshold)
                continue;
            const Candidate parent = m_candidates.value(c.parentId);
            if (parent.hasScore() && parent.score > 0 && c.score > parent.score * s.translatePerfThreshold)
                continue;
        } else {
            const Candidate parent = m_candidates.value(c.parentId);
            if (parent.hasScore() && !clearlyBetter(c, parent, slack))
                continue; // not fast enough against its parent, beyond the noise of both measurements
        }
        pool << c;
    }
    std::stable_sort(pool.begin(), pool.end(), [](const Candidate &a, const Candidate &b) {
        return a.score < b.score || (a.score == b.score && a.id < b.id);
    });
    // Within noise, the earlier candidate goes first: each place takes the fastest left, or the earliest
    // of those left that it cannot be told apart from.
    for (qsizetype i = 0; i < pool.size(); ++i) {
        qsizetype pick = i;
        for (qsizetype j = i + 1; j < pool.size(); ++j)
            if (pool.at(j).id < pool.at(pick).id && withinNoise(pool.at(j), pool.at(i)))
                pick = j;
        if (pick != i)
            pool.move(pick, i);
    }
    QList<qint64> beam;
    QSet<QString> codes;
    QSet<QString> parentPlans;
    for (const Candidate &c : std::as_const(pool)) {
        if (beam.size() >= s.beamWidth)
            break;
        if (beam.contains(c.id))
            continue;
        const QString code = normalizedCode(c.code);
        const QString parentPlan = c.origin == CandidateOrigin::Root
            ? QString()
            : QString::number(c.parentId) + QLatin1Char('\x1f') + c.plan;
        if (codes.contains(code) || (!parentPlan.isEmpty() && parentPlans.contains(parentPlan)))
            continue; // duplicate: same code, or same parent and same plan
        codes.insert(code);
        if (!parentPlan.isEmpty())
            parentPlans.insert(parentPlan);
        beam << c.id;
    }
    if (translation) {
        bool allTranslated = true;
        bool anyTranslated = false;
        for (qint64 id : std::as_const(beam)) {
            const Candidate c = m_candidates.value(id);
            if (c.origin == CandidateOrigin::Root)
                continue;
            anyTranslated = true;
            // Without scores (translate_score: false) translation runs its translate_iters.
            allTranslated = allTranslated && s.translateScore
                && c.metrics.value(QStringLiteral("translation_score")).toDouble() >= s.translateThreshold;
        }
        if (anyTranslated && (allTranslated || m_iteration >= s.translateIters)) {
            // The original leaves the beam at the end of the translation phase.
            beam.removeIf([this](qint64 id) { return m_candidates.value(id).origin == CandidateOrigin::Root; });
            m_translationDone = true;
            log(QStringLiteral("translation phase done after iteration %1%2")
                    .arg(m_iteration)
                    .arg(allTranslated && m_iteration < s.translateIters
                             ? QStringLiteral(" (early: every beam candidate scores at least %1)")
                                   .arg(s.translateThreshold)
                             : QString()));
        }
    }
    if (beam.isEmpty())
        beam = m_beam; // never empty
    for (auto it = m_candidates.begin(); it != m_candidates.end(); ++it)
        it->inBeam = beam.contains(it.key());
    m_beam = beam;
    if (!m_store->setBeam(m_run.id, m_beam)) {
        storeFailed(QStringLiteral("recording the beam"));
        return;
    }
    Q_EMIT beamChanged(m_beam);
    m_run.iteration = m_iteration;
    persistRun();
    if (m_halted)
        return;
    QStringList scores;
    for (qint64 id : std::as_const(m_beam))
        scores << QStringLiteral("#%1 %2").arg(id).arg(m_candidates.value(id).score, 0, 'g', 4);
    log(QStringLiteral("iteration %1 done: beam %2").arg(m_iteration).arg(scores.join(QLatin1String(", "))));
    Q_EMIT iterationFinished(m_iteration);
    if (m_draining) {
        finish(RunState::Stopped, m_drainReason);
        return;
    }
    if (m_iteration >= s.iterations) {
        finish(RunState::Finished, QStringLiteral("completed %1 iterations").arg(s.iterations));
        return;
    }
    if (s.earlyStop && !translation) {
        const double improvement = m_run.bestScore > 0 ? m_bestBeforeIteration / m_run.bestScore : 1.0;
        m_stale = improvement < *s.earlyStop ? m_stale + 1 : 0;
        if (m_stale >= s.earlyStopPatience) {
            finish(RunState::Finished,
                   QStringLiteral("early stop: best improved less than %1x in %2 iteration(s)")
                       .arg(*s.earlyStop)
                       .arg(m_stale));
            return;
        }
    }
    m_bestBeforeIteration = m_run.bestScore;
    startIteration(m_iteration + 1, false);
}

QString SearchEngine::humanEntryError(qint64 parentId, const QString &text, const QString &what) const
{
    if (m_done)
        return QStringLiteral("the run has ended");
    if (text.trimmed().isEmpty())
        return QStringLiteral("the %1 is empty").arg(what);
    if (!m_candidates.contains(parentId))
        return QStringLiteral("no candidate %1 in this run").arg(parentId);
    if (m_iteration == 0)
        return QStringLiteral("the starting code is still being evaluated");
    return {};
}

qint64 SearchEngine::addHumanPlan(qint64 parentId, const QString &plan, QString *error)
{
    *error = humanEntryError(parentId, plan, QStringLiteral("plan"));
    if (!error->isEmpty())
        return 0;
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Human;
    c.plan = plan;
    c.menuItem = ResponseParser::parseMenuChoice(plan, m_setup.agent.menu).text;
    c.planModel = QStringLiteral("human");
    c.status = CandidateStatus::Coding;
    qint64 first = 0;
    for (int k = 0; k < m_setup.config.search.codePerPlan; ++k) {
        c.sample = k;
        const qint64 id = addCandidate(c);
        first = first ? first : id;
        m_iterationCandidates << id;
        ++m_outstanding;
        startWork([this, id] { requestCode(id); });
    }
    log(QStringLiteral("human plan added under candidate %1 (candidates %2..)").arg(parentId).arg(first));
    return first;
}

qint64 SearchEngine::addHumanCode(qint64 parentId, const QString &code, QString *error)
{
    *error = humanEntryError(parentId, code, QStringLiteral("code"));
    if (!error->isEmpty())
        return 0;
    Candidate c;
    c.parentId = parentId;
    c.iteration = m_iteration;
    c.origin = CandidateOrigin::Human;
    c.code = code;
    c.plan = QStringLiteral("(code edited by hand)");
    c.codeModel = QStringLiteral("human");
    c.status = CandidateStatus::Pending;
    const qint64 id = addCandidate(c);
    m_iterationCandidates << id;
    ++m_outstanding;
    startWork([this, id] { evaluate(id); });
    log(QStringLiteral("human code added under candidate %1 (candidate %2)").arg(parentId).arg(id));
    return id;
}

void SearchEngine::cancelEvaluations()
{
    // Only this run's: a shared evaluator serves other runs too.
    const QList<QPointer<EvalJob>> jobs = m_jobs;
    for (const QPointer<EvalJob> &job : jobs)
        if (job)
            job->cancel();
}

void SearchEngine::cancelInFlight()
{
    m_stopping = true;
    m_pendingSends.clear();
    const auto replies = m_replies;
    for (const QPointer<LlmReply> &reply : replies)
        if (reply)
            reply->abort();
    cancelEvaluations();
}

void SearchEngine::stop(const QString &reason)
{
    if (m_done)
        return;
    cancelInFlight();
    finish(RunState::Stopped, reason);
}

void SearchEngine::suspend(const QString &reason)
{
    if (m_done)
        return;
    cancelInFlight();
    finish(RunState::Paused, reason);
}

void SearchEngine::storeFailed(const QString &what)
{
    if (m_store->lostLease(m_run.id)) {
        leaseTakenOver();
        return;
    }
    if (m_halted || m_done)
        return;
    m_halted = true;
    m_haltReason = m_store->lastError();
    log(QStringLiteral("store write failed while %1: %2; pausing the run (nothing that was not stored is acted on)")
            .arg(what, m_haltReason));
    // From the event loop: the handler that hit the failure unwinds first and its transaction is rolled back.
    QMetaObject::invokeMethod(
        this,
        [this] {
            if (m_done)
                return;
            cancelInFlight();
            finish(RunState::Paused, m_haltReason);
        },
        Qt::QueuedConnection);
}

void SearchEngine::leaseTakenOver()
{
    if (m_lostTo)
        return;
    m_lostTo = m_store->lostLease(m_run.id).value_or(RunLease());
    m_halted = true; // nothing is acted on or written any more
    m_endAnnouncement = {};
    log(QStringLiteral("run %1 was taken over by another process while this one was not heard from (%2): "
                       "this process stops and leaves the run to it, writing nothing more")
            .arg(m_run.id)
            .arg(m_lostTo->held() ? QStringLiteral("now driven by %1").arg(m_lostTo->describe())
                                  : QStringLiteral("no process drives it now")));
    // From the event loop: the handler that hit the refused write unwinds first and its transaction is rolled back.
    QMetaObject::invokeMethod(
        this,
        [this] {
            cancelInFlight();
            m_done = true;
            if (m_controlTimer)
                m_controlTimer->stop();
            Q_EMIT leaseLost(*m_lostTo);
            Q_EMIT finished(m_run);
        },
        Qt::QueuedConnection);
}

QString SearchEngine::failureOf() const
{
    int evaluated = 0;
    for (const Candidate &c : m_candidates)
        if (c.origin != CandidateOrigin::Root && !c.code.isEmpty() && isFinal(c.status))
            ++evaluated;
    if (evaluated > 0)
        return {};
    if (m_failedCalls > 0 && m_okCalls == 0)
        return QStringLiteral("every LLM call failed (%1 calls; the last: %2)").arg(m_failedCalls).arg(m_lastLlmError);
    if (m_failedCalls > 0)
        return QStringLiteral("no candidate was evaluated: %1 of %2 LLM calls failed (the last: %3)")
            .arg(m_failedCalls)
            .arg(m_failedCalls + m_okCalls)
            .arg(m_lastLlmError);
    // Say the most common reason the answers were unusable (e.g. every one cut at the output limit).
    QHash<QString, int> reasons;
    for (const Candidate &c : m_candidates)
        if (c.origin != CandidateOrigin::Root && c.code.isEmpty() && !c.error.isEmpty())
            ++reasons[c.error.section(QLatin1Char(';'), 0, 0)];
    const auto most = std::max_element(reasons.cbegin(), reasons.cend());
    if (most != reasons.cend())
        return QStringLiteral("no candidate was evaluated (no answer held usable code; %1 of them: %2)")
            .arg(*most)
            .arg(most.key());
    return QStringLiteral("no candidate was evaluated (no answer held usable code)");
}

void SearchEngine::finish(RunState state, const QString &reason)
{
    if (m_done)
        return;
    if (m_halted && state != RunState::Paused)
        return; // only the store failure's own pause ends a halted run
    m_done = true;
    if (m_controlTimer)
        m_controlTimer->stop();
    QString why = reason;
    if (state == RunState::Finished) {
        const QString failure = failureOf();
        if (!failure.isEmpty()) {
            state = RunState::Failed;
            why = failure;
        }
    }
    m_run.state = state;
    m_run.stopReason = why;
    // Candidates that never reached a verdict are marked, so the store never shows them as in progress.
    // A stopped or paused run can be resumed: its unfinished candidates are then done again.
    if (state != RunState::Stopped && state != RunState::Paused) {
        for (auto it = m_candidates.begin(); it != m_candidates.end(); ++it) {
            if (!isFinal(it->status)) {
                it->status = CandidateStatus::Failed;
                it->error = QStringLiteral("not finished: %1").arg(why);
                if (it->id > 0 && m_store)
                    m_store->updateCandidate(*it);
                Q_EMIT candidateUpdated(*it);
            }
        }
    }
    m_run.schedule = scheduleOf(m_candidates, m_run.bestCandidateId);
    bool stored = true;
    if (m_store && m_run.id) {
        // After a store failure this may fail again (the disk is still full): the run then shows as
        // interrupted once this process has ended, and resumes all the same.
        stored = m_store->updateRun(m_run);
        m_store->settleInFlightCalls(m_run.id);
        // Plans and edits sent from other processes and not taken yet will not be: said so, kept in the store.
        for (const RunRequest &request : m_store->pendingRunRequests(m_run.id))
            m_store->settleRunRequest(request.id, 0,
                                      QStringLiteral("the run has ended (%1)").arg(toString(m_run.state)));
        m_store->releaseLease(m_run.id);
    }
    if (m_store && m_store->lostLease(m_run.id)) {
        // Taken over by another process: none of the end was written, and none is announced.
        leaseTakenOver();
        return;
    }
    if (m_store && m_store->inBatch()) {
        // Announced once the enclosing transaction is committed (inBatch): an end that is not stored is not claimed.
        m_endAnnouncement = [this, state, why] { announceEnd(state, why); };
        return;
    }
    if (!stored && !m_halted)
        endUnstored(m_store->lastError());
    else
        announceEnd(state, why);
}

void SearchEngine::announceEnd(RunState state, const QString &reason)
{
    log(QStringLiteral("run %1 %2: %3").arg(m_run.id).arg(toString(state), reason));
    Q_EMIT runStateChanged(state, reason);
    Q_EMIT finished(m_run);
}

void SearchEngine::endUnstored(const QString &storeError)
{
    // The run's end could not be written: the store still says running (interrupted once this process is gone)
    // and `resume` completes it. Say so rather than claim an end the store does not show.
    log(QStringLiteral("the run's end (%1) could not be stored: %2").arg(toString(m_run.state), storeError));
    m_halted = true;
    m_haltReason = storeError;
    m_run.state = RunState::Paused;
    m_run.stopReason = storeError;
    announceEnd(RunState::Paused, storeError);
}

} // namespace autocomp
